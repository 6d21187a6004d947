"""Which fields each built-in kind has, and which of them are int32 or int64, as kube-apiserver knows them.

`fieldschema.json` is cut from kube-apiserver v1.35's OpenAPI v3 documents (`/openapi/v3/api/v1`,
`/openapi/v3/apis/<group>/<version>`) by `python -m scheduler.api.fieldschema FILE...`: for each
type, its fields, each either a type name, `[T` (a list of T), `{T` (a map of T), `i32`, `i64`
or `` (anything else: strings, booleans, free-form values). Two uses, both reading the document
once, without recursion:

- unknown fields, as strict decoding names them (`unknown field "spec.foo"`);
- numbers that Go cannot decode into the field (`json: cannot unmarshal number 2147483648 into
  Go struct field PodSpec.spec.priority of type int32`), refused by kube-apiserver with 400
  whatever `fieldValidation` says.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

SCHEMA_FILE = Path(__file__).with_name("fieldschema.json")
INT32 = (-(2**31), 2**31 - 1)
INT64 = (-(2**63), 2**63 - 1)


@dataclass(frozen=True, slots=True)
class FieldProblem:
    """One problem at one path: an unknown field, or a number its Go type cannot hold."""

    path: str
    unknown: bool
    message: str


@cache
def _schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(SCHEMA_FILE.read_text())
    return loaded


def knows(kind: str) -> bool:
    """Whether the kind's fields are known (built-in kinds; not Koordinator's or other CRDs)."""
    return kind in _schema()["kinds"]


def check(kind: str, doc: Any, *, prune: bool = False) -> list[FieldProblem]:
    """Unknown fields and out-of-range integers of one object, in document order. With `prune`,
    the unknown fields are also removed from `doc` (kube-apiserver drops what it does not know
    unless `fieldValidation` is Strict)."""
    schema = _schema()
    top = schema["kinds"].get(kind)
    if top is None or not isinstance(doc, dict):
        return []
    types: dict[str, dict[str, str]] = schema["types"]
    problems: list[FieldProblem] = []
    unknown: list[tuple[dict[Any, Any], Any]] = []
    # (value, its spec, its path with indices, its Go path without them, the Go type holding it)
    stack: list[tuple[Any, str, str, str, str]] = [(doc, top, "", "", kind)]
    while stack:
        value, spec, path, go_path, holder = stack.pop()
        if spec == "":
            continue
        if spec in ("i32", "i64"):
            problem = _integer_problem(value, spec, go_path, holder)
            if problem:
                problems.append(FieldProblem(path, False, problem))
            continue
        if spec[0] in "[{":
            inner = spec[1:]
            if spec[0] == "[" and isinstance(value, list):
                stack.extend((item, inner, f"{path}[{i}]", go_path, holder) for i, item in reversed(list(enumerate(value))))
            elif spec[0] == "{" and isinstance(value, dict):
                stack.extend((item, inner, f"{path}[{key}]", go_path, holder) for key, item in reversed(list(value.items())))
            continue
        fields = types.get(spec)
        if fields is None or not isinstance(value, dict):
            continue
        short = spec.rsplit(".", 1)[-1]
        children = []
        for key, item in value.items():
            child = f"{path}.{key}" if path else str(key)
            go_child = f"{go_path}.{key}" if go_path else str(key)
            sub = fields.get(key) if isinstance(key, str) else None
            if sub is None:
                problems.append(FieldProblem(child, True, f"unknown field {json.dumps(child)}"))
                unknown.append((value, key))
                continue
            if item is not None:
                children.append((item, sub, child, go_child, short))
        stack.extend(reversed(children))
    if prune:
        for holder_dict, key in unknown:
            del holder_dict[key]
    return problems


def _integer_problem(value: Any, spec: str, go_path: str, holder: str) -> str:
    go_type = "int32" if spec == "i32" else "int64"
    low, high = INT32 if spec == "i32" else INT64
    where = f"into Go struct field {holder}.{go_path} of type {go_type}"
    if isinstance(value, bool):
        return f"json: cannot unmarshal bool {where}"
    if isinstance(value, str):
        return f"json: cannot unmarshal string {where}"
    if isinstance(value, float):
        if value.is_integer() and low <= value <= high:
            return ""
        return f"json: cannot unmarshal number {value!r} {where}"
    if isinstance(value, int) and not low <= value <= high:
        return f"json: cannot unmarshal number {value} {where}"
    if isinstance(value, list | dict):
        return f"json: cannot unmarshal {'array' if isinstance(value, list) else 'object'} {where}"
    return ""


# ----- generating fieldschema.json from kube-apiserver's OpenAPI v3 documents -----------------------
def _spec_of(node: dict[str, Any], schemas: dict[str, Any]) -> str:
    ref = node.get("$ref") or next((part["$ref"] for part in node.get("allOf", []) if "$ref" in part), None)
    if ref:
        name = ref.rsplit("/", 1)[-1]
        target = schemas.get(name, {})
        return _short(name) if target.get("properties") else _spec_of(target, schemas) if "$ref" in target else ""
    kind = node.get("type")
    if kind == "integer":
        return "i32" if node.get("format") == "int32" else "i64"
    if kind == "array" and isinstance(node.get("items"), dict):
        inner = _spec_of(node["items"], schemas)
        return "[" + inner if inner else ""
    if kind == "object" and isinstance(node.get("additionalProperties"), dict):
        inner = _spec_of(node["additionalProperties"], schemas)
        return "{" + inner if inner else ""
    return ""


def _short(name: str) -> str:
    return name.removeprefix("io.k8s.api.").removeprefix("io.k8s.apimachinery.pkg.apis.")


def generate(documents: list[dict[str, Any]], kinds: list[str]) -> dict[str, Any]:
    """The compact schema of the named kinds (and every type they reach) from OpenAPI v3 documents."""
    schemas: dict[str, Any] = {}
    for doc in documents:
        schemas.update(doc.get("components", {}).get("schemas", {}))
    tops: dict[str, str] = {}
    for name, node in schemas.items():
        for gvk in node.get("x-kubernetes-group-version-kind", []):
            if gvk.get("kind") in kinds and node.get("properties") and name.startswith("io.k8s.api."):
                tops[gvk["kind"]] = _short(name)
    by_short = {_short(name): node for name, node in schemas.items()}
    types: dict[str, dict[str, str]] = {}
    todo = list(tops.values())
    while todo:
        name = todo.pop()
        if name in types:
            continue
        props = by_short[name].get("properties", {})
        types[name] = {key: _spec_of(prop, schemas) for key, prop in sorted(props.items())}
        todo.extend(spec.lstrip("[{") for spec in types[name].values() if spec.lstrip("[{") in by_short)
    return {"kinds": dict(sorted(tops.items())), "types": dict(sorted(types.items()))}


KINDS = [
    "Pod",
    "Node",
    "Namespace",
    "PriorityClass",
    "PodDisruptionBudget",
    "Service",
    "ReplicationController",
    "ReplicaSet",
    "StatefulSet",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "StorageClass",
    "CSINode",
    "CSIDriver",
    "CSIStorageCapacity",
    "Lease",
    "Binding",
]
"""The built-in kinds the engine reads or `/k8s` serves."""


if __name__ == "__main__":  # pragma: no cover - a maintenance tool
    docs = [json.loads(Path(arg).read_text()) for arg in sys.argv[1:]]
    SCHEMA_FILE.write_text(json.dumps(generate(docs, KINDS), separators=(",", ":"), sort_keys=True) + "\n")
