"""Label selectors, node selector terms, taints and tolerations with upstream matching rules."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from scheduler.api.fields import fail, join, mapping, sequence, shown, string, string_map

LABEL_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
_GO_INT = re.compile(r"^[+-]?[0-9]+$")
_INT64 = 2**63
NODE_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


def parse_go_int(text: str) -> int | None:
    """`strconv.ParseInt(text, 10, 64)`: digits with an optional sign, within int64; else None."""
    if not _GO_INT.match(text):
        return None
    value = int(text)
    return value if -_INT64 <= value < _INT64 else None


@dataclass(frozen=True, slots=True)
class Requirement:
    """One `key operator values` requirement of a label or node selector."""

    key: str
    operator: str
    values: tuple[str, ...]

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether the labels satisfy the requirement."""
        op = self.operator
        if op == "In":
            return self.key in labels and labels[self.key] in self.values
        if op == "NotIn":
            return self.key not in labels or labels[self.key] not in self.values
        if op == "Exists":
            return self.key in labels
        if op == "DoesNotExist":
            return self.key not in labels
        if self.key not in labels:
            return False
        have, want = parse_go_int(labels[self.key]), parse_go_int(self.values[0])
        if have is None or want is None:
            return False
        return have > want if op == "Gt" else have < want


def _requirements(raw: Any, path: str, operators: tuple[str, ...]) -> tuple[Requirement, ...]:
    out = []
    for i, item in enumerate(sequence(raw, path)):
        where = join(path, i)
        entry = mapping(item, where)
        key = string(entry.get("key"), join(where, "key"))
        if not key:
            fail(join(where, "key"), "must be non-empty")
        op = string(entry.get("operator"), join(where, "operator"))
        if op not in operators:
            fail(join(where, "operator"), f"unsupported operator {shown(op)}; valid: {', '.join(operators)}")
        values = tuple(
            string(v, join(join(where, "values"), j)) for j, v in enumerate(sequence(entry.get("values"), join(where, "values")))
        )
        if op in ("In", "NotIn") and not values:
            fail(join(where, "values"), f"must be non-empty for operator {op}")
        if op in ("Exists", "DoesNotExist") and values:
            fail(join(where, "values"), f"must be empty for operator {op}")
        if op in ("Gt", "Lt"):
            if len(values) != 1:
                fail(join(where, "values"), f"must have exactly one integer value for operator {op}")
            if parse_go_int(values[0]) is None:
                fail(join(where, "values"), f"value {shown(values[0])} is not an integer")
        out.append(Requirement(key, op, values))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class LabelSelector:
    """metav1.LabelSelector: matchLabels and matchExpressions, all must hold."""

    requirements: tuple[Requirement, ...]

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether the labels satisfy every requirement (an empty selector matches all)."""
        return all(r.matches(labels) for r in self.requirements)

    @property
    def empty(self) -> bool:
        """An empty selector: it matches every object."""
        return not self.requirements


EVERYTHING = LabelSelector(())


def parse_label_selector(raw: Any, path: str) -> LabelSelector:
    """Parse a metav1.LabelSelector."""
    data = mapping(raw, path)
    reqs = [Requirement(k, "In", (v,)) for k, v in sorted(string_map(data.get("matchLabels"), join(path, "matchLabels")).items())]
    reqs += _requirements(data.get("matchExpressions"), join(path, "matchExpressions"), LABEL_OPERATORS)
    return LabelSelector(tuple(reqs))


def selector_from_map(labels: Mapping[str, str]) -> LabelSelector:
    """A selector that matches exactly these labels (as `labels.SelectorFromSet`)."""
    return LabelSelector(tuple(Requirement(k, "In", (v,)) for k, v in sorted(labels.items())))


@dataclass(frozen=True, slots=True)
class NodeSelectorTerm:
    """One term of a node selector: its label expressions and field expressions all must hold."""

    match_expressions: tuple[Requirement, ...]
    match_fields: tuple[Requirement, ...]

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        """Whether a node with these labels and name satisfies the term.

        A term with no requirements matches nothing, as upstream's `nodeaffinity` helper says.
        """
        if not self.match_expressions and not self.match_fields:
            return False
        if not all(r.matches(labels) for r in self.match_expressions):
            return False
        fields = {"metadata.name": node_name}
        return all(r.matches(fields) for r in self.match_fields)


def parse_node_selector_term(raw: Any, path: str) -> NodeSelectorTerm:
    """Parse a v1.NodeSelectorTerm."""
    data = mapping(raw, path)
    fields = _requirements(data.get("matchFields"), join(path, "matchFields"), NODE_OPERATORS)
    for i, req in enumerate(fields):
        if req.key != "metadata.name":
            fail(join(join(path, "matchFields"), i), f"field {shown(req.key)} is not supported; valid: metadata.name")
        if req.operator not in ("In", "NotIn"):
            fail(join(join(path, "matchFields"), i), f"operator {shown(req.operator)} is not supported for metadata.name")
    return NodeSelectorTerm(_requirements(data.get("matchExpressions"), join(path, "matchExpressions"), NODE_OPERATORS), fields)


@dataclass(frozen=True, slots=True)
class NodeSelector:
    """v1.NodeSelector: the node must match any of its terms."""

    terms: tuple[NodeSelectorTerm, ...]

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        """Whether any term matches the node."""
        return any(t.matches(labels, node_name) for t in self.terms)


def parse_node_selector(raw: Any, path: str) -> NodeSelector:
    """Parse a v1.NodeSelector."""
    data = mapping(raw, path)
    terms_path = join(path, "nodeSelectorTerms")
    return NodeSelector(
        tuple(
            parse_node_selector_term(t, join(terms_path, i))
            for i, t in enumerate(sequence(data.get("nodeSelectorTerms"), terms_path))
        )
    )


TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


@dataclass(frozen=True, slots=True)
class Taint:
    """A node taint."""

    key: str
    value: str
    effect: str


@dataclass(frozen=True, slots=True)
class Toleration:
    """A pod toleration, with `ToleratesTaint` semantics."""

    key: str
    operator: str
    value: str
    effect: str
    toleration_seconds: int | None = None

    def tolerates(self, taint: Taint) -> bool:
        """Whether this toleration tolerates the taint (v1 `Toleration.ToleratesTaint`)."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        return self.value == taint.value


def parse_taints(raw: Any, path: str) -> tuple[Taint, ...]:
    """Parse a node's spec.taints."""
    out = []
    for i, item in enumerate(sequence(raw, path)):
        where = join(path, i)
        entry = mapping(item, where)
        effect = string(entry.get("effect"), join(where, "effect"))
        if effect not in TAINT_EFFECTS:
            fail(join(where, "effect"), f"unsupported effect {shown(effect)}; valid: {', '.join(TAINT_EFFECTS)}")
        key = string(entry.get("key"), join(where, "key"))
        if not key:
            fail(join(where, "key"), "must be non-empty")
        out.append(Taint(key, string(entry.get("value"), join(where, "value")), effect))
    return tuple(out)


_TOLERATIONS: dict[tuple[tuple[Any, ...], ...], tuple[Toleration, ...]] = {}
_TOLERATIONS_MAX = 4096


def _tolerations_key(raw: list[Any]) -> tuple[tuple[Any, ...], ...] | None:
    """What parse_tolerations reads of a list, as a key for the lists seen before; None when
    an entry is not a mapping. Unhashable values make the lookup fail (then the list is parsed)."""
    key = []
    for entry in raw:
        if type(entry) is not dict:
            return None
        seconds = entry.get("tolerationSeconds")
        # The type tells 300 from 300.0 and True from 1, which compare equal but are not all valid.
        key.append((entry.get("operator"), entry.get("effect"), entry.get("key"), entry.get("value"), seconds, type(seconds)))
    return tuple(key)


def parse_tolerations(raw: Any, path: str) -> tuple[Toleration, ...]:
    """Parse a pod's spec.tolerations (pods of one workload repeat theirs: each list is parsed once)."""
    if type(raw) is not list or not raw:
        return _parse_tolerations(raw, path)
    key = _tolerations_key(raw)
    if key is None:
        return _parse_tolerations(raw, path)
    try:
        found = _TOLERATIONS.get(key)
    except TypeError:  # a list or mapping where a scalar belongs: the parser names it
        return _parse_tolerations(raw, path)
    if found is None:
        found = _parse_tolerations(raw, path)  # raises on a bad list, which is never stored
        if len(_TOLERATIONS) >= _TOLERATIONS_MAX:
            _TOLERATIONS.clear()
        _TOLERATIONS[key] = found
    return found


def _parse_tolerations(raw: Any, path: str) -> tuple[Toleration, ...]:
    out = []
    for i, item in enumerate(sequence(raw, path)):
        where = join(path, i)
        entry = mapping(item, where)
        op = string(entry.get("operator"), join(where, "operator"), "Equal") or "Equal"
        if op not in ("Equal", "Exists"):
            fail(join(where, "operator"), f"unsupported operator {shown(op)}; valid: Equal, Exists")
        effect = string(entry.get("effect"), join(where, "effect"))
        if effect and effect not in TAINT_EFFECTS:
            fail(join(where, "effect"), f"unsupported effect {shown(effect)}; valid: {', '.join(TAINT_EFFECTS)}")
        key = string(entry.get("key"), join(where, "key"))
        value = string(entry.get("value"), join(where, "value"))
        if op == "Exists" and value:
            fail(join(where, "value"), "must be empty when operator is Exists")
        if not key and op != "Exists":
            fail(join(where, "operator"), "must be Exists when key is empty")
        seconds = entry.get("tolerationSeconds")
        if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, int)):
            fail(join(where, "tolerationSeconds"), f"expected an integer, got {shown(seconds)}")
        out.append(Toleration(key, op, value, effect, seconds))
    return tuple(out)


def tolerates_all(tolerations: tuple[Toleration, ...], taints: tuple[Taint, ...], effects: tuple[str, ...]) -> Taint | None:
    """The first taint with one of `effects` that no toleration tolerates, or None."""
    for taint in taints:
        if taint.effect in effects and not any(t.tolerates(taint) for t in tolerations):
            return taint
    return None
