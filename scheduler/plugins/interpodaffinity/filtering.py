"""InterPodAffinity PreFilter/Filter: required pod affinity and anti-affinity (`filtering.go`).

PreFilter counts, per topology pair (key, value), (a) existing pods whose required anti-affinity
terms match the incoming pod, (b) existing pods matching all of the incoming pod's required
affinity terms and (c) existing pods matching each of its required anti-affinity terms. Filter
then only looks the node's labels up in those counts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from itertools import repeat

import numpy as np
import numpy.typing as npt

from scheduler.api.affinity import PodAffinityTerm
from scheduler.api.objects import Node, Pod
from scheduler.framework.nodeinfo import NodeInfo, PodInfo, term_matches
from scheduler.framework.snapshot import Snapshot
from scheduler.framework.types import (
    BatchFilterResult,
    Code,
    CycleState,
    Status,
    error,
    unresolvable,
    unschedulable,
)

PRE_FILTER_STATE_KEY = "PreFilterInterPodAffinity"

ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_REASON_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"

TopologyPair = tuple[str, str]
"""(topology key, node label value)."""

TopologyCounts = dict[TopologyPair, int]

# Nil namespace labels (`labels.Set(nil)`) behave as an empty set when a selector reads them.
NO_LABELS: Mapping[str, str] = {}

# Which check rejected a node, in the order Filter runs them.
_PASSED, _AFFINITY, _ANTI_AFFINITY, _EXISTING_ANTI_AFFINITY = 0, 1, 2, 3
_REASONS = {
    _AFFINITY: (ERR_REASON_AFFINITY_RULES_NOT_MATCH,),
    _ANTI_AFFINITY: (ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,),
    _EXISTING_ANTI_AFFINITY: (ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,),
}
_CODES = {
    _AFFINITY: Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
    _ANTI_AFFINITY: Code.UNSCHEDULABLE,
    _EXISTING_ANTI_AFFINITY: Code.UNSCHEDULABLE,
}


def merge_term_namespaces(term: PodAffinityTerm, namespaces: Mapping[str, Mapping[str, str]]) -> PodAffinityTerm:
    """`mergeAffinityTermNamespacesIfNotEmpty`: unroll a non-empty namespaceSelector into names.

    Only for the incoming pod's terms: afterwards the selector is nil (matches nothing) or empty
    (matches every namespace), so matching never needs the other pod's namespace labels.
    """
    selector = term.namespace_selector
    if selector is None or selector.empty:
        return term
    selected = {name for name, labels in namespaces.items() if selector.matches(labels)}
    return replace(term, namespaces=term.namespaces | selected, namespace_selector=None)


def incoming_pod_info(pod: Pod, namespaces: Mapping[str, Mapping[str, str]]) -> PodInfo:
    """The incoming pod's PodInfo with every term's namespaceSelector merged into its namespaces."""
    info = PodInfo.of(pod)
    return PodInfo(
        pod,
        tuple(merge_term_namespaces(t, namespaces) for t in info.required_affinity_terms),
        tuple(merge_term_namespaces(t, namespaces) for t in info.required_anti_affinity_terms),
        tuple(replace(w, term=merge_term_namespaces(w.term, namespaces)) for w in info.preferred_affinity_terms),
        tuple(replace(w, term=merge_term_namespaces(w.term, namespaces)) for w in info.preferred_anti_affinity_terms),
    )


def namespace_labels(snapshot: Snapshot, namespace: str) -> Mapping[str, str]:
    """`GetNamespaceLabelsSnapshot`: the namespace's labels, empty when it is unknown."""
    return snapshot.namespaces.get(namespace, NO_LABELS)


def pod_matches_all_terms(terms: tuple[PodAffinityTerm, ...], pod: Pod) -> bool:
    """Whether the pod matches every (merged) term; False when there are no terms."""
    return bool(terms) and all(term_matches(t, pod, NO_LABELS) for t in terms)


def _bump(counts: TopologyCounts, node: Node, key: str, delta: int) -> None:
    value = node.labels.get(key)
    if value is None:
        return
    pair = (key, value)
    total = counts.get(pair, 0) + delta
    # Removing pods may bring a pair down to zero; drop it so emptiness checks stay exact.
    if total == 0:
        counts.pop(pair, None)
    else:
        counts[pair] = total


def add_affinity_matches(counts: TopologyCounts, terms: tuple[PodAffinityTerm, ...], pod: Pod, node: Node, delta: int) -> None:
    """Count every term's topology pair on `node` when `pod` matches ALL the (merged) terms."""
    if pod_matches_all_terms(terms, pod):
        for term in terms:
            _bump(counts, node, term.topology_key, delta)


def add_anti_affinity_matches(
    counts: TopologyCounts,
    terms: tuple[PodAffinityTerm, ...],
    pod: Pod,
    ns_labels: Mapping[str, str],
    node: Node,
    delta: int,
) -> None:
    """Count the topology pair on `node` of each term that `pod` matches."""
    for term in terms:
        if term_matches(term, pod, ns_labels):
            _bump(counts, node, term.topology_key, delta)


_WHICH = ("existing", "affinity", "anti")


class PreFilterState:
    """What PreFilter computed for one pod; AddPod/RemovePod keep it current during preemption.

    Counts found through the snapshot's counters stay as sums per label code of a topology key
    (`add_sums`) until something asks for the (key, value) -> count dicts: batch Filter reads
    the sums directly as its lookup tables, so a cycle over a hostname key does not build and
    then unbuild a dict of thousands of entries.
    """

    __slots__ = ("_counts", "_generation", "_sums", "namespace_labels", "pod_info", "tables")

    def __init__(
        self,
        pod_info: PodInfo,
        namespace_labels: Mapping[str, str],
        existing_anti_affinity_counts: TopologyCounts | None = None,
        affinity_counts: TopologyCounts | None = None,
        anti_affinity_counts: TopologyCounts | None = None,
    ) -> None:
        self.pod_info = pod_info
        self.namespace_labels = namespace_labels
        self._counts: dict[str, TopologyCounts] = {
            "existing": existing_anti_affinity_counts if existing_anti_affinity_counts is not None else {},
            "affinity": affinity_counts if affinity_counts is not None else {},
            "anti": anti_affinity_counts if anti_affinity_counts is not None else {},
        }
        # which -> [(topology key, value names by label code, sums by label code)] not yet in _counts.
        self._sums: dict[str, list[tuple[str, list[str], npt.NDArray[np.int64]]]] = {}
        self._generation = -1
        # Batch Filter's lookup tables (count per label code, per topology key) built from the
        # counts once per cycle: (which counts, node generation) -> key -> table. Dropped when
        # counts change.
        self.tables: dict[tuple[str, int], dict[str, npt.NDArray[np.int64]]] = {}

    def add_sums(self, which: str, key: str, names: list[str], sums: npt.NDArray[np.int64], generation: int) -> None:
        """Add per-label-code counts of `key` (what `_add_counted` would add pair by pair)."""
        if self._sums and self._generation != generation:
            self._materialize_all()
        self._generation = generation
        self._sums.setdefault(which, []).append((key, names, sums))
        self.tables = {}

    def _materialize(self, which: str) -> TopologyCounts:
        counts = self._counts[which]
        pending = self._sums.pop(which, None)
        if pending:
            for key, names, sums in pending:
                hit = np.flatnonzero(sums)
                for value, count in zip(map(names.__getitem__, hit.tolist()), sums[hit].tolist(), strict=True):
                    pair = (key, value)
                    counts[pair] = counts.get(pair, 0) + count
        return counts

    def _materialize_all(self) -> None:
        for which in _WHICH:
            self._materialize(which)

    def has(self, which: str) -> bool:
        """Whether the counts hold any pair (without building the dict)."""
        if self._counts[which]:
            return True
        return any(bool(sums.any()) for _key, _names, sums in self._sums.get(which, ()))

    def pending_tables(self, which: str, generation: int) -> dict[str, npt.NDArray[np.int64]] | None:
        """Lookup tables straight from the sums, when every count of `which` is still in them."""
        if self._counts[which] or which not in self._sums or generation != self._generation:
            return None
        tables: dict[str, npt.NDArray[np.int64]] = {}
        for key, _names, sums in self._sums[which]:
            table = tables.get(key)
            if table is None:
                # One spare slot at the end: code -1 (label absent) reads it and gets 0.
                table = tables[key] = np.zeros(len(sums) + 1, dtype=np.int64)
            table[: len(sums)] += sums
        return tables

    @property
    def existing_anti_affinity_counts(self) -> TopologyCounts:
        """Topology pairs of existing pods' anti-affinity terms the incoming pod matches."""
        return self._materialize("existing")

    @existing_anti_affinity_counts.setter
    def existing_anti_affinity_counts(self, counts: TopologyCounts) -> None:
        self._sums.pop("existing", None)
        self._counts["existing"] = counts
        self.tables = {}

    @property
    def affinity_counts(self) -> TopologyCounts:
        """Topology pairs of existing pods matching the incoming pod's required affinity terms."""
        return self._materialize("affinity")

    @affinity_counts.setter
    def affinity_counts(self, counts: TopologyCounts) -> None:
        self._sums.pop("affinity", None)
        self._counts["affinity"] = counts
        self.tables = {}

    @property
    def anti_affinity_counts(self) -> TopologyCounts:
        """Topology pairs of existing pods matching the incoming pod's required anti-affinity terms."""
        return self._materialize("anti")

    @anti_affinity_counts.setter
    def anti_affinity_counts(self, counts: TopologyCounts) -> None:
        self._sums.pop("anti", None)
        self._counts["anti"] = counts
        self.tables = {}

    def clone(self) -> PreFilterState:
        """A copy whose counts can change independently (the pod info never changes)."""
        twin = PreFilterState(self.pod_info, self.namespace_labels, *(dict(self._counts[w]) for w in _WHICH))
        twin._sums = {which: list(pending) for which, pending in self._sums.items()}
        twin._generation = self._generation
        return twin

    def update_with_pod(self, other: PodInfo, node: Node, multiplier: int) -> None:
        """Account (`multiplier` 1) or forget (-1) an existing pod placed on `node`."""
        self._materialize_all()
        self.tables = {}
        incoming = self.pod_info
        add_anti_affinity_matches(
            self._counts["existing"],
            other.required_anti_affinity_terms,
            incoming.pod,
            self.namespace_labels,
            node,
            multiplier,
        )
        add_affinity_matches(self._counts["affinity"], incoming.required_affinity_terms, other.pod, node, multiplier)
        add_anti_affinity_matches(
            self._counts["anti"], incoming.required_anti_affinity_terms, other.pod, NO_LABELS, node, multiplier
        )


def existing_anti_affinity_counts(pod: Pod, ns_labels: Mapping[str, str], nodes: Iterable[NodeInfo]) -> TopologyCounts:
    """Topology pairs of existing pods' required anti-affinity terms that the incoming pod matches."""
    counts: TopologyCounts = {}
    for info in nodes:
        for existing in info.pods_with_required_anti_affinity:
            add_anti_affinity_matches(counts, existing.required_anti_affinity_terms, pod, ns_labels, info.node, 1)
    return counts


MAX_COUNTED_NAMESPACES = 8
"""Terms naming more namespaces than this are matched pod by pod (each namespace costs a counter)."""


def per_value_counts(snapshot: Snapshot, topology_key: str, per_node: npt.NDArray[np.int64]) -> list[tuple[str, int]]:
    """Per-node counts summed per value of the nodes' `topology_key` label (non-zero sums only)."""
    codes, values = snapshot.label_codes(topology_key)
    labelled = codes >= 0
    if not labelled.any():
        return []
    sums = np.bincount(codes[labelled], weights=per_node[labelled], minlength=len(values)).astype(np.int64)
    names = list(values)
    hit = np.flatnonzero(sums)
    # Built by C-level iteration: a term over a hostname label yields one entry per busy node.
    return list(zip(map(names.__getitem__, hit.tolist()), sums[hit].tolist(), strict=True))


def term_counts_per_node(snapshot: Snapshot, term: PodAffinityTerm) -> npt.NDArray[np.int64] | None:
    """Per node, its pods that a merged incoming term selects, from the snapshot's selector
    counters; None when the counters cannot say (terminating pods, which they leave out but
    matching counts, a namespace selector, or too many namespaces)."""
    if snapshot.terminating_pods or term.namespace_selector is not None or len(term.namespaces) > MAX_COUNTED_NAMESPACES:
        return None
    total = np.zeros(snapshot.num_nodes, dtype=np.int64)
    for namespace in sorted(term.namespaces):
        total += snapshot.selector_counts(namespace, term.selector)
    return total


def _code_sums(snapshot: Snapshot, key: str, per_node: npt.NDArray[np.int64]) -> tuple[list[str], npt.NDArray[np.int64]] | None:
    """Per-node counts summed per label code of `key` (None when no node has the label)."""
    codes, values = snapshot.label_codes(key)
    labelled = codes >= 0
    if not labelled.any():
        return None
    return list(values), np.bincount(codes[labelled], weights=per_node[labelled], minlength=len(values)).astype(np.int64)


def _add_counted(counts: TopologyCounts, snapshot: Snapshot, term: PodAffinityTerm, per_node: npt.NDArray[np.int64]) -> None:
    key = term.topology_key
    found = per_value_counts(snapshot, key, per_node)
    if not counts:
        counts.update(zip(zip(repeat(key), (value for value, _ in found)), (count for _, count in found), strict=True))
        return
    for value, count in found:
        pair = (key, value)
        counts[pair] = counts.get(pair, 0) + count


def counted_incoming_affinity_counts(pod_info: PodInfo, snapshot: Snapshot) -> tuple[TopologyCounts, TopologyCounts] | None:
    """`incoming_affinity_counts` from the selector counters; None when they cannot say (also
    for several required affinity terms, which a pod must match all at once)."""
    state = PreFilterState(pod_info, NO_LABELS)
    if not count_incoming_affinity(state, snapshot):
        return None
    return state.affinity_counts, state.anti_affinity_counts


def count_incoming_affinity(state: PreFilterState, snapshot: Snapshot) -> bool:
    """Add the incoming pod's affinity and anti-affinity counts to `state` as per-code sums from
    the selector counters; False (nothing added) when the counters cannot say."""
    pod_info = state.pod_info
    aff_terms, anti_terms = pod_info.required_affinity_terms, pod_info.required_anti_affinity_terms
    if len(aff_terms) > 1:
        return False
    found: list[tuple[str, str, list[str], npt.NDArray[np.int64]]] = []
    for which, terms in (("affinity", aff_terms), ("anti", anti_terms)):
        for term in terms:
            per_node = term_counts_per_node(snapshot, term)
            if per_node is None:
                return False
            sums = _code_sums(snapshot, term.topology_key, per_node)
            if sums is not None:
                found.append((which, term.topology_key, *sums))
    for which, key, names, code_sums in found:
        state.add_sums(which, key, names, code_sums, snapshot.node_generation)
    return True


def grouped_existing_anti_affinity_counts(pod: Pod, ns_labels: Mapping[str, str], snapshot: Snapshot) -> TopologyCounts:
    """`existing_anti_affinity_counts` over the snapshot's affinity groups: each group's terms
    are matched against the pod once, then counted per topology value."""
    state = PreFilterState(PodInfo(pod), ns_labels)
    count_existing_anti_affinity(state, pod, snapshot)
    return state.existing_anti_affinity_counts


def count_existing_anti_affinity(state: PreFilterState, pod: Pod, snapshot: Snapshot) -> None:
    """Add existing pods' anti-affinity counts the pod matches to `state`, as per-code sums."""
    ns_labels = state.namespace_labels
    for info, per_node in snapshot.affinity_groups():
        for term in info.required_anti_affinity_terms:
            if term_matches(term, pod, ns_labels):
                sums = _code_sums(snapshot, term.topology_key, per_node)
                if sums is not None:
                    state.add_sums("existing", term.topology_key, *sums, snapshot.node_generation)


def incoming_affinity_counts(pod_info: PodInfo, nodes: Iterable[NodeInfo]) -> tuple[TopologyCounts, TopologyCounts]:
    """Topology pairs of existing pods matching the incoming pod's required (anti-)affinity terms."""
    affinity: TopologyCounts = {}
    anti: TopologyCounts = {}
    aff_terms, anti_terms = pod_info.required_affinity_terms, pod_info.required_anti_affinity_terms
    if not aff_terms and not anti_terms:
        return affinity, anti
    for info in nodes:
        for existing in info.pods:
            add_affinity_matches(affinity, aff_terms, existing.pod, info.node, 1)
            add_anti_affinity_matches(anti, anti_terms, existing.pod, NO_LABELS, info.node, 1)
    return affinity, anti


def compute_pre_filter_state(pod: Pod, snapshot: Snapshot, all_nodes: Iterable[NodeInfo]) -> PreFilterState:
    """Build the PreFilter state from the snapshot (namespaces, nodes with anti-affinity pods)."""
    info = incoming_pod_info(pod, snapshot.namespaces)
    ns_labels = namespace_labels(snapshot, pod.namespace)
    state = PreFilterState(info, ns_labels)
    count_existing_anti_affinity(state, pod, snapshot)
    if not (_all_nodes(all_nodes, snapshot) and count_incoming_affinity(state, snapshot)):
        state.affinity_counts, state.anti_affinity_counts = incoming_affinity_counts(info, all_nodes)
    return state


def _all_nodes(nodes: Iterable[NodeInfo], snapshot: Snapshot) -> bool:
    """Whether `nodes` is the snapshot's whole node list (what the counters cover)."""
    return nodes is snapshot.node_infos or (
        isinstance(nodes, list)
        and len(nodes) == snapshot.num_nodes
        and all(a is b for a, b in zip(nodes, snapshot.node_infos, strict=True))
    )


def should_skip(state: PreFilterState) -> bool:
    """PreFilter's Skip rule: no existing anti-affinity match and no required terms of its own."""
    info = state.pod_info
    return not state.has("existing") and not info.required_affinity_terms and not info.required_anti_affinity_terms


def read_state(cycle: CycleState) -> PreFilterState | Status:
    """The PreFilter state, or the Error status upstream returns when it is missing."""
    try:
        value = cycle.read(PRE_FILTER_STATE_KEY)
    except KeyError:
        return error(f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
    if not isinstance(value, PreFilterState):
        return error(f"{value!r}  convert to interpodaffinity.state error")
    return value


def satisfies_pod_affinity(state: PreFilterState, labels: Mapping[str, str]) -> bool:
    """Every required affinity term's topology holds a matching pod (or this is the group's first pod)."""
    pods_exist = True
    for term in state.pod_info.required_affinity_terms:
        value = labels.get(term.topology_key)
        if value is None:
            # All topology labels must exist on the node.
            return False
        if state.affinity_counts.get((term.topology_key, value), 0) <= 0:
            pods_exist = False
    if pods_exist:
        return True
    # The first pod of a group with affinity to itself: nothing matches anywhere yet.
    info = state.pod_info
    return not state.has("affinity") and pod_matches_all_terms(info.required_affinity_terms, info.pod)


def satisfies_pod_anti_affinity(state: PreFilterState, labels: Mapping[str, str]) -> bool:
    """No required anti-affinity term's topology (of this node) holds a matching pod."""
    if not state.has("anti"):
        return True
    for term in state.pod_info.required_anti_affinity_terms:
        value = labels.get(term.topology_key)
        if value is not None and state.anti_affinity_counts.get((term.topology_key, value), 0) > 0:
            return False
    return True


def satisfies_existing_pods_anti_affinity(state: PreFilterState, labels: Mapping[str, str]) -> bool:
    """No existing pod's anti-affinity term matching the incoming pod covers this node."""
    counts = state.existing_anti_affinity_counts
    if not counts:
        return True
    return not any(counts.get(pair, 0) > 0 for pair in labels.items())


def filter_node(state: PreFilterState, node: Node) -> Status:
    """The per-node Filter verdict."""
    labels = node.labels
    if not satisfies_pod_affinity(state, labels):
        return unresolvable(ERR_REASON_AFFINITY_RULES_NOT_MATCH)
    if not satisfies_pod_anti_affinity(state, labels):
        return unschedulable(ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
    if not satisfies_existing_pods_anti_affinity(state, labels):
        return unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)
    return Status()


def _by_key(counts: TopologyCounts) -> dict[str, dict[str, int]]:
    keys = {key for key, _ in counts}
    if len(keys) == 1:
        # One topology key (the usual case): a C-level rebuild instead of a loop.
        (only,) = keys
        return {only: dict(zip((value for _, value in counts), counts.values(), strict=True))}
    grouped: dict[str, dict[str, int]] = {}
    for (key, value), count in counts.items():
        grouped.setdefault(key, {})[value] = count
    return grouped


def _tables(state: PreFilterState, which: str, snapshot: Snapshot) -> dict[str, npt.NDArray[np.int64]]:
    """Per topology key of the `which` counts, the count of each label code (built once per cycle)."""
    cache_key = (which, snapshot.node_generation)
    built = state.tables.get(cache_key)
    if built is not None:
        return built
    built = state.pending_tables(which, snapshot.node_generation)
    if built is not None:
        # A key whose every count went back to 0 reads as an absent key (as the dicts have it).
        built = {key: table for key, table in built.items() if table.any()}
        state.tables[cache_key] = built
        return built
    built = {}
    counts = {
        "existing": state.existing_anti_affinity_counts,
        "affinity": state.affinity_counts,
        "anti": state.anti_affinity_counts,
    }[which]
    for key, values in _by_key(counts).items():
        _, code_of = snapshot.label_codes(key)
        # One spare slot at the end: code -1 (label absent) reads it and gets 0; values no node
        # carries any more are written there too, then it is cleared.
        spare = len(code_of)
        table = np.zeros(spare + 1, dtype=np.int64)
        at = np.fromiter(map(code_of.get, values, repeat(spare)), dtype=np.int64, count=len(values))
        table[at] = np.fromiter(values.values(), dtype=np.int64, count=len(values))
        table[spare] = 0
        built[key] = table
    state.tables[cache_key] = built
    return built


def _counts_at(
    snapshot: Snapshot, positions: npt.NDArray[np.int64], key: str, tables: Mapping[str, npt.NDArray[np.int64]]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
    """Per position: the count of the node's value for `key`, and whether the node has the key."""
    codes, _ = snapshot.label_codes(key)
    at = codes[positions]
    table = tables.get(key)
    if table is None:
        return np.zeros(len(positions), dtype=np.int64), at >= 0
    return table[at], at >= 0


def filter_batch(state: PreFilterState, snapshot: Snapshot, positions: npt.NDArray[np.int64]) -> BatchFilterResult:
    """Filter over many snapshot positions at once; same verdicts as `filter_node`."""
    n = len(positions)
    failed = np.zeros(n, dtype=np.int8)
    info = state.pod_info

    if info.required_affinity_terms:
        tables = _tables(state, "affinity", snapshot)
        has_all = np.ones(n, dtype=np.bool_)
        pods_exist = np.ones(n, dtype=np.bool_)
        for term in info.required_affinity_terms:
            count, present = _counts_at(snapshot, positions, term.topology_key, tables)
            has_all &= present
            pods_exist &= count > 0
        first_of_group = not state.has("affinity") and pod_matches_all_terms(info.required_affinity_terms, info.pod)
        ok = has_all & (pods_exist | first_of_group)
        failed[~ok] = _AFFINITY

    if info.required_anti_affinity_terms and state.has("anti"):
        tables = _tables(state, "anti", snapshot)
        violated = np.zeros(n, dtype=np.bool_)
        for term in info.required_anti_affinity_terms:
            count, present = _counts_at(snapshot, positions, term.topology_key, tables)
            violated |= present & (count > 0)
        failed[violated & (failed == _PASSED)] = _ANTI_AFFINITY

    if state.has("existing"):
        violated = np.zeros(n, dtype=np.bool_)
        tables = _tables(state, "existing", snapshot)
        for key in tables:
            count, present = _counts_at(snapshot, positions, key, tables)
            violated |= present & (count > 0)
        failed[violated & (failed == _PASSED)] = _EXISTING_ANTI_AFFINITY

    codes = np.zeros(n, dtype=np.int8)
    for which, code in _CODES.items():
        codes[failed == which] = int(code)
    captured = failed.copy()

    def reasons(i: int) -> tuple[str, ...]:
        return _REASONS.get(int(captured[i]), ())

    return BatchFilterResult(codes, reasons)


def error_batch(status: Status, count: int) -> BatchFilterResult:
    """Every position gets the same Error status (the PreFilter state was missing)."""
    codes = np.full(count, int(Code.ERROR), dtype=np.int8)
    message = status.reasons

    def reasons(i: int) -> tuple[str, ...]:
        return message

    return BatchFilterResult(codes, reasons)
