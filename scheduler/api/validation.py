"""New objects checked as kube-apiserver checks them on create and update, worded as it words them.

- `metadata` as `ValidateObjectMeta`: name (or generateName) by the kind's rule (a DNS-1123
  subdomain for most kinds, a DNS-1123 label for namespaces, a DNS-1035 label for services), the
  namespace, label keys and values, annotation keys and their total size;
- the fields of built-in kinds and the integers Go could not decode (`fieldschema`);
- what this console cannot hold although kube-apiserver stores it: a `metadata.uid` longer than
  the 64 characters the database keeps, NUL characters and NaN (PostgreSQL refuses them in text
  and JSON), and cpu amounts whose millicores do not fit int64 (kube-apiserver caps a quantity at
  int64 units; kube-scheduler's `MilliValue()` of such an amount wraps around).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from fractions import Fraction
from functools import lru_cache
from typing import Any

from scheduler.api import fieldschema
from scheduler.api.fielderrors import FieldIssue, forbidden, invalid, required, too_long
from scheduler.api.names import is_dns1035_label, is_dns1123_label, is_dns1123_subdomain, is_qualified_name, is_valid_label_value
from scheduler.api.quantity import MAX_INT64, QuantityError, parse_quantity

CLUSTER_SCOPED = frozenset(
    {"Node", "Namespace", "PriorityClass", "PersistentVolume", "StorageClass", "CSINode", "CSIDriver", "NodeMetric"}
    | {"NodeResourceTopology", "Reservation"}
)
ANNOTATIONS_MAX = 256 * 1024  # apimachinery's TotalAnnotationSizeLimitB
UID_MAX = 64
"""Longest `metadata.uid` the console stores (kube-apiserver assigns 36-character UUIDs)."""
USER_PRIORITY_MAX = 1_000_000_000  # scheduling.HighestUserDefinablePriority
MAX_MILLI_CPU = MAX_INT64 // 1000
_LONG_NUMBER = re.compile(r"\d{19}")
_NAME_RULES: dict[str, Callable[[str], list[str]]] = {"Namespace": is_dns1123_label, "Service": is_dns1035_label}


def check_object(kind: str, doc: Any, *, fields: bool = True) -> list[FieldIssue]:
    """Every reason kube-apiserver (or this console's store) would refuse the object, first found first.

    With `fields`, unknown fields of built-in kinds are among them (strict field validation)."""
    if not isinstance(doc, dict):
        return []
    issues = [
        FieldIssue(p.path, p.message if p.unknown else f"{p.path}: {p.message}")
        for p in fieldschema.check(kind, doc)
        if fields or not p.unknown
    ]
    meta = doc.get("metadata")
    if isinstance(meta, dict):
        issues += meta_issues(kind, meta)
    issues += unstorable_issues(doc)
    issues += cpu_issues(kind, doc)
    if kind == "PriorityClass":
        issues += _priority_class_issues(doc)
    return issues


def refusal(kind: str, doc: Any) -> str:
    """kube-apiserver's `field.ErrorList` text for what is wrong with the object (unknown fields
    aside), `""` when nothing is: one error alone, several as `[a, b]`."""
    texts = [issue.text for issue in check_object(kind, doc, fields=False)]
    return texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]" if texts else ""


def meta_issues(kind: str, meta: dict[str, Any]) -> list[FieldIssue]:
    """`ValidateObjectMeta` for a new object of the kind."""
    rule = _NAME_RULES.get(kind, is_dns1123_subdomain)
    issues: list[FieldIssue] = []
    name, generate = meta.get("name"), meta.get("generateName")
    if not name and not generate:
        issues.append(required("metadata.name", "name or generateName is required"))
    if isinstance(generate, str) and generate:
        # A prefix may end with '-' (the generated suffix follows it).
        masked = generate[:-1] if len(generate) > 1 and generate.endswith("-") else generate
        issues += [invalid("metadata.generateName", generate, msg) for msg in _cached(rule, masked)]
    if isinstance(name, str) and name:
        issues += [invalid("metadata.name", name, msg) for msg in _cached(rule, name)]
    namespace = meta.get("namespace")
    if isinstance(namespace, str) and namespace:
        if kind in CLUSTER_SCOPED:
            issues.append(forbidden("metadata.namespace", "not allowed on this type"))
        else:
            issues += [invalid("metadata.namespace", namespace, msg) for msg in _cached(is_dns1123_label, namespace)]
    uid = meta.get("uid")
    if isinstance(uid, str) and len(uid.encode()) > UID_MAX:
        issues.append(too_long("metadata.uid", UID_MAX))
    labels = meta.get("labels")
    if isinstance(labels, dict):
        for key, value in labels.items():
            if isinstance(key, str):
                issues += [invalid("metadata.labels", key, msg) for msg in _cached(is_qualified_name, key)]
            if isinstance(value, str):
                issues += [invalid("metadata.labels", value, msg) for msg in _cached(is_valid_label_value, value)]
    annotations = meta.get("annotations")
    if isinstance(annotations, dict):
        size = 0
        for key, value in annotations.items():
            if isinstance(key, str):
                issues += [invalid("metadata.annotations", key, msg) for msg in _cached(is_qualified_name, key.lower())]
                size += len(key.encode())
            if isinstance(value, str):
                size += len(value.encode())
        if size > ANNOTATIONS_MAX:
            issues.append(too_long("metadata.annotations", ANNOTATIONS_MAX))
    return issues


@lru_cache(maxsize=8192)
def _cached(rule: Callable[[str], list[str]], value: str) -> tuple[str, ...]:
    # Files repeat a few namespaces, label keys and values thousands of times.
    return tuple(rule(value))


def unstorable_issues(doc: Any) -> list[FieldIssue]:
    """NUL characters (in keys or values), non-finite numbers and integers beyond 64 bits:
    PostgreSQL stores no NUL in text or JSON, JSON has no NaN, the store's encoder no big integers."""
    text = json.dumps(doc)
    if "\\u0000" not in text and "NaN" not in text and "Infinity" not in text and not _LONG_NUMBER.search(text):
        return []
    stack: list[tuple[Any, str]] = [(doc, "")]
    while stack:
        value, path = stack.pop()
        if isinstance(value, str) and "\x00" in value:
            return [invalid(path, value, "must not contain NUL characters (the database cannot store them)")]
        if isinstance(value, float) and not math.isfinite(value):
            return [invalid(path, value, "must be a finite number (JSON has no NaN or Infinity)")]
        if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**63:
            return [invalid(path, value, "must fit in a 64-bit integer")]
        if isinstance(value, dict):
            for key, item in value.items():
                if isinstance(key, str) and "\x00" in key:
                    return [invalid(path or "<root>", key, "field names must not contain NUL characters")]
                stack.append((item, f"{path}.{key}" if path else str(key)))
        elif isinstance(value, list):
            stack.extend((item, f"{path}[{i}]") for i, item in enumerate(value))
    return []


def cpu_issues(kind: str, doc: dict[str, Any]) -> list[FieldIssue]:
    """cpu amounts whose millicores do not fit int64 (what the engine and kube-scheduler count in)."""
    issues = []
    for path, amounts in _resource_lists(kind, doc):
        value = amounts.get("cpu") if isinstance(amounts, dict) else None
        if value is None:
            continue
        try:
            amount = parse_quantity(value)
        except QuantityError:
            continue  # the object's parser says what is wrong with it
        if amount * 1000 > Fraction(MAX_INT64):
            issues.append(
                invalid(
                    f"{path}.cpu",
                    str(value),
                    f"must be no more than {MAX_MILLI_CPU}m (the scheduler counts cpu in int64 millicores)",
                )
            )
    return issues


def _resource_lists(kind: str, doc: dict[str, Any]) -> list[tuple[str, Any]]:
    spec: dict[str, Any] = doc["spec"] if isinstance(doc.get("spec"), dict) else {}
    out: list[tuple[str, Any]] = []
    if kind == "Pod":
        for group in ("containers", "initContainers"):
            for i, container in enumerate(spec.get(group) or []):
                resources = container.get("resources") if isinstance(container, dict) else None
                if isinstance(resources, dict):
                    out += [(f"spec.{group}[{i}].resources.{k}", resources.get(k)) for k in ("requests", "limits")]
        out.append(("spec.overhead", spec.get("overhead")))
        pod_level = spec.get("resources")
        if isinstance(pod_level, dict):
            out += [(f"spec.resources.{k}", pod_level.get(k)) for k in ("requests", "limits")]
    elif kind == "Node":
        status: dict[str, Any] = doc["status"] if isinstance(doc.get("status"), dict) else {}
        out += [(f"status.{k}", status.get(k)) for k in ("capacity", "allocatable")]
    return out


def _priority_class_issues(doc: dict[str, Any]) -> list[FieldIssue]:
    value = doc.get("value")
    name = str((doc.get("metadata") or {}).get("name") or "")
    if isinstance(value, int) and value > USER_PRIORITY_MAX and not name.startswith("system-"):
        return [forbidden("value", f"maximum allowed value of a user defined priority is {USER_PRIORITY_MAX}")]
    return []


def detail(issue: FieldIssue) -> str:
    """An issue's text without its leading path (for messages that put the path elsewhere)."""
    prefix = f"{issue.field}: "
    return issue.text[len(prefix) :] if issue.field and issue.text.startswith(prefix) else issue.text
