"""NodeAffinity: pod nodeSelector, required and preferred node affinity, plus the profile's addedAffinity.

Upstream: kubernetes/kubernetes `pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go` and the
term matching of `staging/src/k8s.io/component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity.go`:
a term with no requirements matches nothing; a term that fails to parse as a label/field selector
(bad label key or value, non-integer Gt/Lt operand, a field requirement without exactly one value)
matches nothing in required affinity and makes preferred affinity an error; Gt/Lt compare labels
parsed as base-10 int64 and never match a label that does not parse.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from scheduler.api.affinity import PreferredSchedulingTerm
from scheduler.api.fielderrors import invalid
from scheduler.api.fields import join
from scheduler.api.names import is_qualified_name, is_valid_label_value
from scheduler.api.objects import Node, Pod
from scheduler.api.selectors import NodeSelector, NodeSelectorTerm, Requirement, parse_go_int
from scheduler.config.args import NodeAffinityArgs
from scheduler.framework import signers
from scheduler.framework.helpers import default_normalize_score
from scheduler.framework.interface import Handle
from scheduler.framework.nodeinfo import NodeInfo
from scheduler.framework.types import (
    ActionType,
    BatchFilterResult,
    ClusterEvent,
    Code,
    CycleState,
    PreFilterResult,
    QueueingHint,
    Status,
    error,
    skip,
    success,
    unresolvable,
)

if TYPE_CHECKING:
    from scheduler.framework.snapshot import Snapshot

NAME = "NodeAffinity"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME
REASON_POD = "node(s) didn't match Pod's node affinity/selector"
REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
REASON_CONFLICT = "pod affinity terms conflict"
OBJECT_NAME_FIELD = "metadata.name"

BoolArray = npt.NDArray[np.bool_]
PosArray = npt.NDArray[np.int64]


# ----- selector parsing, as labels.NewRequirement and the field selector builder check it -----------
def parse_int64(text: str) -> int | None:
    """`strconv.ParseInt(text, 10, 64)` (the shared selector parser)."""
    return parse_go_int(text)


def aggregate(messages: list[str]) -> str:
    """`utilerrors.NewAggregate(...).Error()`: one message as is, several deduplicated in brackets."""
    unique = list(dict.fromkeys(messages))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


def requirement_errors(req: Requirement, path: str) -> list[str]:
    """What `labels.NewRequirement` rejects in a node selector expression."""
    errs: list[str] = []
    key_errors = is_qualified_name(req.key)
    if key_errors:
        errs.append(str(invalid(join(path, "key"), req.key, "; ".join(key_errors))))
    values_path = join(path, "values")
    values = list(req.values)
    op = req.operator
    if op in ("In", "NotIn") and not values:
        errs.append(str(invalid(values_path, values, "for 'in', 'notin' operators, values set can't be empty")))
    elif op in ("Exists", "DoesNotExist") and values:
        errs.append(str(invalid(values_path, values, "values set must be empty for exists and does not exist")))
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            errs.append(str(invalid(values_path, values, "for 'Gt', 'Lt' operators, exactly one value is required")))
        for i, value in enumerate(values):
            if parse_int64(value) is None:
                detail = "for 'Gt', 'Lt' operators, the value must be an integer"
                errs.append(str(invalid(join(values_path, i), value, detail)))
    for i, value in enumerate(values):
        value_errors = is_valid_label_value(value)
        if value_errors:
            # validateLabelValue reports at `values[i][<key>]`.
            errs.append(str(invalid(f"{join(values_path, i)}[{req.key}]", value, "; ".join(value_errors))))
    return errs


def term_parse_error(term: NodeSelectorTerm, path: str = "") -> str | None:
    """Why component-helpers cannot parse this term, or None (it stops at the first bad requirement)."""
    for j, req in enumerate(term.match_expressions):
        errs = requirement_errors(req, join(join(path, "matchExpressions"), j))
        if errs:
            return aggregate(errs)
    for req in term.match_fields:
        if req.operator not in ("In", "NotIn"):
            return f'"{req.operator}" is not a valid node field selector operator'
        if len(req.values) != 1:
            return f'unexpected number of value ({len(req.values)}) for node field selector operator "{req.operator}"'
    return None


# ----- per-node matching --------------------------------------------------------------------
def requirement_matches(req: Requirement, labels: Mapping[str, str]) -> bool:
    """`labels.Requirement.Matches` for one parsed node selector requirement."""
    return req.matches(labels)


@dataclass(frozen=True, slots=True)
class CompiledTerm:
    """A node selector term with its parse verdict decided once."""

    term: NodeSelectorTerm
    parse_error: str | None

    @classmethod
    def of(cls, term: NodeSelectorTerm, path: str = "") -> CompiledTerm:
        """Compile a term; `path` prefixes field paths in parse errors."""
        return cls(term, term_parse_error(term, path))

    @property
    def empty(self) -> bool:
        """A term without requirements, which selects nothing."""
        return not self.term.match_expressions and not self.term.match_fields

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        """Whether the node satisfies every requirement of the term."""
        if self.empty or self.parse_error is not None:
            return False
        if not all(requirement_matches(r, labels) for r in self.term.match_expressions):
            return False
        for req in self.term.match_fields:
            equal = node_name == req.values[0]
            if equal != (req.operator == "In"):
                return False
        return True


@dataclass(frozen=True, slots=True)
class WeightedTerm:
    """A parsed preferred term and its weight."""

    weight: int
    term: CompiledTerm


def compile_selector(selector: NodeSelector) -> tuple[CompiledTerm, ...]:
    """The terms of a required node selector (`NewLazyErrorNodeSelector`; empty terms dropped)."""
    return tuple(CompiledTerm.of(t) for t in selector.terms if t.match_expressions or t.match_fields)


def compile_preferred(terms: tuple[PreferredSchedulingTerm, ...]) -> tuple[tuple[WeightedTerm, ...], str | None]:
    """`NewPreferredSchedulingTerms`: terms with weight 0 or no requirements dropped; parse errors aggregated."""
    out: list[WeightedTerm] = []
    errs: list[str] = []
    for i, pref in enumerate(terms):
        if pref.weight == 0 or not (pref.term.match_expressions or pref.term.match_fields):
            continue
        compiled = CompiledTerm.of(pref.term, f"[{i}]")
        if compiled.parse_error is not None:
            errs.append(compiled.parse_error)
        else:
            out.append(WeightedTerm(pref.weight, compiled))
    return tuple(out), (aggregate(errs) if errs else None)


def selector_matches(terms: tuple[CompiledTerm, ...], labels: Mapping[str, str], node_name: str) -> bool:
    """Terms are ORed; no terms match nothing."""
    return any(t.matches(labels, node_name) for t in terms)


@dataclass(frozen=True, slots=True)
class RequiredNodeAffinity:
    """The pod's nodeSelector and required node affinity (`nodeaffinity.GetRequiredNodeAffinity`)."""

    node_selector: tuple[tuple[str, str], ...]
    terms: tuple[CompiledTerm, ...] | None

    @classmethod
    def of(cls, pod: Pod) -> RequiredNodeAffinity:
        """Build from the pod spec."""
        required = pod.affinity.node_required if pod.affinity is not None else None
        return cls(
            tuple(sorted(pod.node_selector.items())),
            compile_selector(required) if required is not None else None,
        )

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        """Both the nodeSelector and (when set) the required terms match; parse errors just fail."""
        if any(labels.get(k) != v for k, v in self.node_selector):
            return False
        return self.terms is None or selector_matches(self.terms, labels, node_name)


@dataclass(frozen=True, slots=True)
class PreScoreState:
    """The pod's parsed preferred terms; None when it has none."""

    preferred: tuple[WeightedTerm, ...] | None


def pod_preferred(pod: Pod) -> tuple[tuple[WeightedTerm, ...] | None, str | None]:
    """The pod's preferred terms (None when it has none) and a parse error, if any."""
    if pod.affinity is None or not pod.affinity.node_preferred:
        return None, None
    return compile_preferred(pod.affinity.node_preferred)


# ----- batch matching over the snapshot's label indexes ---------------------------------------------
def _compare_table(snapshot: Snapshot, key: str, op: str, operand: int) -> npt.NDArray[np.bool_]:
    """Per label-value code of `key`: whether the value compares Gt/Lt true (each value parsed once)."""

    def build() -> npt.NDArray[np.bool_]:
        _, values = snapshot.label_codes(key)
        table = np.zeros(len(values), dtype=np.bool_)
        for value, code in values.items():
            have = parse_int64(value)
            table[code] = have is not None and (have > operand if op == "Gt" else have < operand)
        return table

    return snapshot.cached((NAME, "compare", key, op, operand), build)  # type: ignore[return-value]


def requirement_mask(req: Requirement, snapshot: Snapshot, positions: PosArray) -> BoolArray:
    """`requirement_matches` for the nodes at `positions`."""
    codes_all, values = snapshot.label_codes(req.key)
    codes = codes_all[positions]
    op = req.operator
    if op in ("In", "NotIn"):
        wanted = np.fromiter((values[v] for v in set(req.values) if v in values), dtype=np.int32)
        hit = np.isin(codes, wanted)
        return hit if op == "In" else ~hit
    if op == "Exists":
        return codes >= 0
    if op == "DoesNotExist":
        return codes < 0
    operand = parse_int64(req.values[0])
    if operand is None or not values:
        return np.zeros(len(positions), dtype=np.bool_)
    table = _compare_table(snapshot, req.key, op, operand)
    return (codes >= 0) & table[np.maximum(codes, 0)]


def term_mask(term: CompiledTerm, snapshot: Snapshot, positions: PosArray) -> BoolArray:
    """`CompiledTerm.matches` for the nodes at `positions`."""
    mask = np.full(len(positions), not term.empty and term.parse_error is None, dtype=np.bool_)
    if not mask.any():
        return mask
    for req in term.term.match_expressions:
        mask &= requirement_mask(req, snapshot, positions)
    for req in term.term.match_fields:
        named = positions == snapshot.position.get(req.values[0], -1)
        mask &= named if req.operator == "In" else ~named
    return mask


def selector_mask(terms: tuple[CompiledTerm, ...], snapshot: Snapshot, positions: PosArray) -> BoolArray:
    """`selector_matches` for the nodes at `positions`."""
    mask = np.zeros(len(positions), dtype=np.bool_)
    for term in terms:
        mask |= term_mask(term, snapshot, positions)
    return mask


def required_mask(required: RequiredNodeAffinity, snapshot: Snapshot, positions: PosArray) -> BoolArray:
    """`RequiredNodeAffinity.matches` for the nodes at `positions`."""
    mask = np.ones(len(positions), dtype=np.bool_)
    for key, value in required.node_selector:
        codes, values = snapshot.label_codes(key)
        mask &= codes[positions] == values.get(value, -2)
    if required.terms is not None:
        mask &= selector_mask(required.terms, snapshot, positions)
    return mask


def preferred_scores(terms: tuple[WeightedTerm, ...], snapshot: Snapshot, positions: PosArray) -> npt.NDArray[np.int64]:
    """Sum of the weights of the matching terms for the nodes at `positions`."""
    total = np.zeros(len(positions), dtype=np.int64)
    for weighted in terms:
        total += np.where(term_mask(weighted.term, snapshot, positions), weighted.weight, 0)
    return total


# ----- the plugin -----------------------------------------------------------------------------
class NodeAffinity:
    """Filter by nodeSelector/required affinity; score by matching preferred terms."""

    name = NAME

    def sign_pod(self, pod: Pod) -> signers.Signed:
        """Node affinity (required and preferred terms) and spec.nodeSelector."""
        return signers.signed(
            (signers.NODE_AFFINITY, signers.node_affinity(pod)), (signers.NODE_SELECTOR, signers.node_selector(pod))
        )

    def __init__(
        self,
        handle: Handle | None = None,
        added_required: tuple[CompiledTerm, ...] | None = None,
        added_preferred: tuple[WeightedTerm, ...] | None = None,
    ) -> None:
        self.handle = handle
        self.added_required = added_required
        self.added_preferred = added_preferred

    def events_to_register(self) -> list[ClusterEvent]:
        """Node added or relabelled (queueing hints on, as upstream's default)."""
        return [ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_LABEL, hint=self.is_schedulable_after_node_change)]

    def is_schedulable_after_node_change(self, pod: Pod, old: Node | None, new: Node | None) -> QueueingHint:
        """`isSchedulableAfterNodeChange`: Queue when the node now matches the args' added affinity
        and the pod's nodeSelector and required terms, and was added or did not match before."""
        assert new is not None
        if self.added_required is not None and not selector_matches(self.added_required, new.labels, new.name):
            return QueueingHint.QUEUE_SKIP
        required = RequiredNodeAffinity.of(pod)
        if not required.matches(new.labels, new.name):
            return QueueingHint.QUEUE_SKIP
        if old is None or not required.matches(old.labels, old.name):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    # ----- PreFilter / Filter -------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        """Skip when nothing constrains the pod; narrow to node names given by matchFields metadata.name In."""
        required = pod.affinity.node_required if pod.affinity is not None else None
        if required is None and self.added_required is None and not pod.node_selector:
            return None, skip()
        state.write(PRE_FILTER_STATE_KEY, RequiredNodeAffinity.of(pod))
        if required is None or not required.terms:
            return None, success()
        names: set[str] | None = None
        for term in required.terms:
            term_names: set[str] | None = None
            for req in term.match_fields:
                if req.key == OBJECT_NAME_FIELD and req.operator == "In":
                    # Requirements of a term are ANDed, so their name sets intersect.
                    term_names = set(req.values) if term_names is None else term_names & set(req.values)
            if term_names is None:
                # Terms are ORed: one term without a name requirement admits every node.
                return None, success()
            names = term_names if names is None else names | term_names
        if not names:
            return None, unresolvable(REASON_CONFLICT)
        return PreFilterResult(frozenset(names)), success()

    def pre_filter_extensions(self) -> None:
        """None: the state does not depend on other pods."""

    def _required(self, state: CycleState, pod: Pod) -> RequiredNodeAffinity:
        value = state.get(PRE_FILTER_STATE_KEY)
        # Without PreFilter (disabled), compute here as upstream falls back to.
        return value if isinstance(value, RequiredNodeAffinity) else RequiredNodeAffinity.of(pod)

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """UnschedulableAndUnresolvable when the addedAffinity or the pod's own selection rejects the node."""
        node = node_info.node
        if self.added_required is not None and not selector_matches(self.added_required, node.labels, node.name):
            return unresolvable(REASON_ENFORCED)
        if not self._required(state, pod).matches(node.labels, node.name):
            return unresolvable(REASON_POD)
        return success()

    def filter_batch(self, state: CycleState, pod: Pod, snapshot: Snapshot, positions: PosArray) -> BatchFilterResult:
        """The same verdicts through the snapshot's label indexes."""
        if self.added_required is not None:
            enforced_fail = ~selector_mask(self.added_required, snapshot, positions)
        else:
            enforced_fail = np.zeros(len(positions), dtype=np.bool_)
        pod_fail = ~required_mask(self._required(state, pod), snapshot, positions)
        codes = np.where(enforced_fail | pod_fail, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.SUCCESS).astype(np.int8)

        def reasons(i: int) -> tuple[str, ...]:
            return (REASON_ENFORCED,) if enforced_fail[i] else (REASON_POD,)

        return BatchFilterResult(codes, reasons)

    # ----- PreScore / Score ---------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status:
        """Skip when neither the pod nor the addedAffinity prefers anything; Error on unparsable terms."""
        preferred, err = pod_preferred(pod)
        if err is not None:
            return error(err)
        if preferred is None and self.added_preferred is None:
            return skip()
        state.write(PRE_SCORE_STATE_KEY, PreScoreState(preferred))
        return success()

    def _preferred(self, state: CycleState, pod: Pod) -> tuple[tuple[WeightedTerm, ...] | None, str | None]:
        value = state.get(PRE_SCORE_STATE_KEY)
        if isinstance(value, PreScoreState):
            return value.preferred, None
        return pod_preferred(pod)

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        """Sum of the weights of matching preferred terms, the pod's and the addedAffinity's."""
        node = node_info.node
        total = 0
        if self.added_preferred is not None:
            total += sum(w.weight for w in self.added_preferred if w.term.matches(node.labels, node.name))
        preferred, err = self._preferred(state, pod)
        if err is not None:
            return 0, error(err)
        if preferred is not None:
            total += sum(w.weight for w in preferred if w.term.matches(node.labels, node.name))
        return total, success()

    def score_batch(self, state: CycleState, pod: Pod, snapshot: Snapshot, positions: PosArray) -> npt.NDArray[np.int64]:
        """The same raw scores through the label indexes; ValueError on unparsable terms."""
        preferred, err = self._preferred(state, pod)
        if err is not None:
            raise ValueError(err)
        total = np.zeros(len(positions), dtype=np.int64)
        if self.added_preferred is not None:
            total += preferred_scores(self.added_preferred, snapshot, positions)
        if preferred is not None:
            total += preferred_scores(preferred, snapshot, positions)
        return total

    def score_extensions(self) -> NodeAffinity:
        """This plugin normalizes its own scores."""
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: npt.NDArray[np.int64]) -> Status:
        """Scale to 0..100 by the highest score."""
        default_normalize_score(scores, reverse=False)
        return success()


def new(args: object | None, handle: Handle) -> NodeAffinity:
    """Build the plugin from NodeAffinityArgs (None: defaults, no addedAffinity); unparsable terms are errors."""
    if args is None:
        args = NodeAffinityArgs()
    if not isinstance(args, NodeAffinityArgs):
        raise TypeError(f"args are not of type NodeAffinityArgs, got {type(args).__name__}")
    added_required = None
    if args.required is not None:
        added_required = compile_selector(args.required)
        errs = [t.parse_error for t in added_required if t.parse_error is not None]
        if errs:
            raise ValueError(f"parsing addedAffinity.requiredDuringSchedulingIgnoredDuringExecution: {aggregate(errs)}")
    added_preferred = None
    if args.preferred:
        added_preferred, err = compile_preferred(args.preferred)
        if err is not None:
            raise ValueError(f"parsing addedAffinity.preferredDuringSchedulingIgnoredDuringExecution: {err}")
    return NodeAffinity(handle, added_required, added_preferred)
