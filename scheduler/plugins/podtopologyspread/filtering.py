"""PreFilter, its AddPod/RemovePod extensions and Filter of PodTopologySpread (hard constraints).

Upstream: `pkg/scheduler/framework/plugins/podtopologyspread/filtering.go`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from scheduler.api.objects import Node, Pod
from scheduler.framework.nodeinfo import NodeInfo
from scheduler.framework.types import (
    BatchFilterResult,
    Code,
    Status,
    success,
    unresolvable,
    unschedulable,
)
from scheduler.plugins.podtopologyspread.common import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    MAX_INT32,
    Constraint,
    Domains,
    InclusionMasks,
    add_counts,
    match_node_inclusion_policies,
    node_has_all_keys,
    node_rows,
    required_node_affinity,
    selected_counts,
)

if TYPE_CHECKING:
    from scheduler.framework.snapshot import Snapshot

PRE_FILTER_STATE_KEY = "PreFilterPodTopologySpread"


@dataclass(slots=True)
class PreFilterState:
    """How matching pods spread over each hard constraint's domains (`preFilterState`).

    `domains[i]` holds constraint i's per-value counts; `min_match[i]` is the global minimum over
    its domains (MaxInt32 when it has none), kept exact through AddPod/RemovePod.
    """

    constraints: tuple[Constraint, ...]
    domains: list[Domains]
    min_match: list[int]

    def clone(self) -> PreFilterState:
        """A copy for preemption's dry runs (constraints are shared, counts copied)."""
        return PreFilterState(self.constraints, [d.clone() for d in self.domains], list(self.min_match))

    def global_min(self, index: int) -> int:
        """The minimum used for skew, 0 when there are fewer domains than minDomains."""
        domains = self.domains[index]
        if int(np.count_nonzero(domains.present)) < self.constraints[index].min_domains:
            return 0
        return self.min_match[index]

    def refresh_min(self, index: int) -> None:
        """Recompute one constraint's global minimum from its counts."""
        domains = self.domains[index]
        present = domains.counts[domains.present]
        self.min_match[index] = int(present.min()) if present.size else MAX_INT32


def compute_pre_filter_state(
    constraints: list[Constraint], pod: Pod, nodes: list[NodeInfo], snapshot: Snapshot
) -> PreFilterState:
    """Count matching pods per domain over the eligible nodes (`calPreFilterState`).

    A node is eligible for a constraint when it carries every constraint's topology key and
    passes that constraint's node inclusion policies. Eligibility comes from the snapshot's label
    and taint indexes; matching pods per node from the snapshot's selector counters.
    """
    rows = node_rows(nodes, snapshot)
    keyed = [snapshot.label_codes(c.topology_key) for c in constraints]
    node_codes = [codes[rows] for codes, _ in keyed]
    has_keys = np.logical_and.reduce([codes >= 0 for codes in node_codes])
    inclusion = InclusionMasks(pod, snapshot)
    eligible = [has_keys & inclusion.mask(c)[rows] for c in constraints]
    wanted = np.flatnonzero(np.logical_or.reduce(eligible) & (snapshot.pod_count[rows] > 0))
    counts = selected_counts(snapshot, nodes, rows, wanted, [c.selector for c in constraints], pod.namespace)
    domains = []
    for (_, values), codes, mask, count in zip(keyed, node_codes, eligible, counts, strict=True):
        table = Domains(values)
        add_counts(table, codes[mask].astype(np.int64), count[mask])
        domains.append(table)
    state = PreFilterState(tuple(constraints), domains, [MAX_INT32] * len(constraints))
    for i in range(len(constraints)):
        state.refresh_min(i)
    return state


def update_with_pod(state: PreFilterState, updated: Pod, preemptor: Pod, node: Node | None, delta: int) -> None:
    """Add (+1) or remove (-1) one pod's contribution on a node (`updateWithPod`)."""
    if updated.namespace != preemptor.namespace or node is None:
        return
    if not node_has_all_keys(node.labels, state.constraints):
        return
    require = required_node_affinity(preemptor)
    for i, c in enumerate(state.constraints):
        if not c.matches(updated.labels):
            continue
        if not match_node_inclusion_policies(c, preemptor, node, require):
            continue
        domains = state.domains[i]
        slot = domains.slot(node.labels[c.topology_key])
        domains.present[slot] = True
        domains.counts[slot] += delta
        state.refresh_min(i)


def filter_node(state: PreFilterState, pod: Pod, node: Node) -> Status:
    """Filter one node: missing topology label, then skew = matching + self - minimum > maxSkew."""
    labels = node.labels
    for i, c in enumerate(state.constraints):
        value = labels.get(c.topology_key)
        if value is None:
            return unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH)
        self_match = 1 if c.matches(pod.labels) else 0
        skew = state.domains[i].count_of(value) + self_match - state.global_min(i)
        if skew > c.max_skew:
            return unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH)
    return success()


_REASONS = {
    int(Code.UNSCHEDULABLE): (ERR_REASON_CONSTRAINTS_NOT_MATCH,),
    int(Code.UNSCHEDULABLE_AND_UNRESOLVABLE): (ERR_REASON_NODE_LABEL_NOT_MATCH,),
}


def filter_positions(state: PreFilterState, pod: Pod, snapshot: Snapshot, positions: npt.NDArray[np.int64]) -> BatchFilterResult:
    """`filter_node` for many snapshot rows at once; the first failing constraint decides."""
    codes = np.full(len(positions), int(Code.SUCCESS), dtype=np.int8)
    # Walk constraints backwards so an earlier constraint's verdict overwrites a later one's.
    for i in range(len(state.constraints) - 1, -1, -1):
        c = state.constraints[i]
        label_codes, values = snapshot.label_codes(c.topology_key)
        node_codes = label_codes[positions]
        domains = state.domains[i]
        matching = domains.counts_at(domains.slots_for(node_codes, values))
        self_match = 1 if c.matches(pod.labels) else 0
        too_skewed = matching + self_match - state.global_min(i) > c.max_skew
        codes[too_skewed] = int(Code.UNSCHEDULABLE)
        codes[node_codes < 0] = int(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
    frozen = codes.copy()

    def reasons(index: int) -> tuple[str, ...]:
        return _REASONS.get(int(frozen[index]), ())

    return BatchFilterResult(codes, reasons)
