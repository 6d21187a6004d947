"""Label and field selectors as list and watch requests write them (`?labelSelector=`, `?fieldSelector=`),
k8s.io/apimachinery `pkg/labels` and `pkg/fields` syntax."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any


class SelectorError(ValueError):
    """A selector that does not parse (the API server's 400)."""


@dataclass(frozen=True, slots=True)
class LabelRequirement:
    """One term: key, operator (=, !=, in, notin, exists, !), values."""

    key: str
    op: str
    values: tuple[str, ...]

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether the labels satisfy this term."""
        present = self.key in labels
        if self.op == "exists":
            return present
        if self.op == "!":
            return not present
        if self.op in ("=", "in"):
            return present and labels[self.key] in self.values
        if self.op in ("!=", "notin"):
            return not present or labels[self.key] not in self.values
        raise SelectorError(f"unknown operator {self.op}")


_TERM = re.compile(
    r"\s*(?:(?P<not>!)\s*(?P<nkey>[^\s,!=()]+)"
    r"|(?P<key>[^\s,!=()]+)\s*(?:(?P<op>==|=|!=)\s*(?P<value>[^\s,()]*)"
    r"|\s+(?P<setop>in|notin)\s*\((?P<set>[^)]*)\))?)\s*(?:,|$)"
)


def parse_label_selector(text: str) -> tuple[LabelRequirement, ...]:
    """`a=b,c!=d,e in (x,y),f notin (z),g,!h` as requirements (empty selects everything)."""
    out: list[LabelRequirement] = []
    pos, text = 0, text.strip()
    while pos < len(text):
        m = _TERM.match(text, pos)
        if m is None or m.end() == pos:
            raise SelectorError(f"unable to parse requirement: {text[pos:]!r}")
        pos = m.end()
        if m.group("not"):
            out.append(LabelRequirement(m.group("nkey"), "!", ()))
        elif m.group("op"):
            op = "=" if m.group("op") == "==" else m.group("op")
            out.append(LabelRequirement(m.group("key"), op, (m.group("value"),)))
        elif m.group("setop"):
            values = tuple(v.strip() for v in m.group("set").split(",") if v.strip())
            out.append(LabelRequirement(m.group("key"), m.group("setop"), values))
        else:
            out.append(LabelRequirement(m.group("key"), "exists", ()))
    return tuple(out)


def labels_match(requirements: tuple[LabelRequirement, ...], labels: Mapping[str, str]) -> bool:
    """Whether every requirement holds."""
    return all(r.matches(labels) for r in requirements)


def _path_value(doc: Mapping[str, Any], path: str) -> str:
    node: Any = doc
    for part in path.split("."):
        node = node.get(part) if isinstance(node, Mapping) else None
    if node is None:
        return ""
    if isinstance(node, bool):
        return "true" if node else "false"
    return str(node)


# Fields each kind may be selected by (the API server refuses others), beyond metadata.name/namespace.
FIELD_LABELS: dict[str, frozenset[str]] = {
    "Pod": frozenset(
        {
            "spec.nodeName",
            "spec.schedulerName",
            "status.phase",
            "spec.restartPolicy",
            "spec.serviceAccountName",
            "status.nominatedNodeName",
        }
    ),
    "Node": frozenset({"spec.unschedulable"}),
    "Event": frozenset(
        {"involvedObject.kind", "involvedObject.name", "involvedObject.namespace", "involvedObject.uid", "reason", "type"}
    ),
}


def parse_field_selector(text: str, kind: str) -> Callable[[Mapping[str, Any]], bool]:
    """`spec.nodeName=n1,status.phase!=Failed` as a predicate over documents."""
    terms: list[tuple[str, bool, str]] = []
    allowed = FIELD_LABELS.get(kind, frozenset()) | {"metadata.name", "metadata.namespace"}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        m = re.fullmatch(r"([A-Za-z0-9_.]+)\s*(==|=|!=)\s*(.*)", part)
        if m is None:
            raise SelectorError(f"invalid selector: {part!r}; expected field=value or field!=value")
        field, op, value = m.groups()
        if field not in allowed:
            raise SelectorError(f"field label not supported: {field}; {kind} supports {', '.join(sorted(allowed))}")
        terms.append((field, op == "!=", value))

    def matches(doc: Mapping[str, Any]) -> bool:
        for field, negate, value in terms:
            if (_path_value(doc, field) == value) == negate:
                return False
        return True

    return matches
