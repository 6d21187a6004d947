"""PreScore, Score and NormalizeScore of PodTopologySpread (soft constraints).

Upstream: `pkg/scheduler/framework/plugins/podtopologyspread/scoring.go`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from scheduler.api.objects import Pod
from scheduler.framework.helpers import go_div
from scheduler.framework.nodeinfo import NodeInfo
from scheduler.framework.types import MAX_NODE_SCORE
from scheduler.plugins.podtopologyspread.common import (
    HOSTNAME_LABEL,
    Constraint,
    Domains,
    InclusionMasks,
    add_counts,
    count_pods_match,
    node_rows,
    round_half_away,
    round_half_away_array,
    score_for_count,
    selected_counts,
    topology_normalizing_weight,
)

if TYPE_CHECKING:
    from scheduler.framework.snapshot import Snapshot

PRE_SCORE_STATE_KEY = "PreScorePodTopologySpread"


@dataclass(slots=True)
class PreScoreState:
    """What Score and NormalizeScore need (`preScoreState`).

    For a hostname constraint the per-node count is taken at Score time (upstream does so too);
    `host_counts[i]` holds those counts by snapshot row for the batch form. For other keys,
    `domains[i]` holds the matching pods per topology value of the candidate nodes.
    `ignored` names the candidates lacking a topology key; `ignored_rows` marks them by snapshot
    row and `ignored_in_order` follows the node list given to PreScore (NormalizeScore's order).
    """

    constraints: tuple[Constraint, ...]
    ignored: set[str]
    ignored_rows: npt.NDArray[np.bool_]
    ignored_in_order: npt.NDArray[np.bool_]
    domains: list[Domains | None]
    host_counts: list[npt.NDArray[np.int64] | None]
    weights: list[float]

    def clone(self) -> PreScoreState:
        """Score state is read-only after PreScore, so it is shared (as upstream does)."""
        return self


def compute_pre_score_state(
    constraints: list[Constraint],
    pod: Pod,
    filtered: list[NodeInfo],
    all_nodes: list[NodeInfo],
    snapshot: Snapshot,
    require_all_topologies: bool,
) -> PreScoreState:
    """Domains of the candidates, their weights and the matching pods per domain over all nodes.

    (`initPreScoreState` and `PreScore`.) `all_nodes` must be the snapshot's rows in order.
    """
    n = snapshot.num_nodes
    keyed = [snapshot.label_codes(c.topology_key) for c in constraints]
    rows = node_rows(filtered, snapshot)
    if require_all_topologies:
        ignored_in_order = ~np.logical_and.reduce([codes[rows] >= 0 for codes, _ in keyed])
    else:
        ignored_in_order = np.zeros(len(rows), dtype=np.bool_)
    ignored = {filtered[j].node.name for j in np.flatnonzero(ignored_in_order).tolist()}
    ignored_rows = np.zeros(n, dtype=np.bool_)
    ignored_rows[rows[ignored_in_order]] = True
    kept = np.zeros(n, dtype=np.bool_)
    kept[rows[~ignored_in_order]] = True

    # Rows whose pods count for each constraint, and the slot they count in (domain constraints).
    with_pods = snapshot.pod_count > 0
    counted_rows = with_pods.copy()
    if require_all_topologies:
        counted_rows &= np.logical_and.reduce([codes >= 0 for codes, _ in keyed])
    inclusion = InclusionMasks(pod, snapshot)
    domains: list[Domains | None] = []
    slots_of: list[npt.NDArray[np.int64] | None] = []
    wanted: list[npt.NDArray[np.bool_]] = []
    weights = []
    for c, (codes, values) in zip(constraints, keyed, strict=True):
        if c.topology_key == HOSTNAME_LABEL:
            # Hostname counts are per node and taken at Score time upstream (no inclusion policy):
            # gather them for the candidates so the batch form can read them.
            domains.append(None)
            slots_of.append(None)
            wanted.append(kept & (codes >= 0) & with_pods)
            weights.append(topology_normalizing_weight(len(filtered) - len(ignored)))
            continue
        table = Domains(values)
        kept_codes = codes[kept]
        table.present[kept_codes[kept_codes >= 0]] = True
        if (kept_codes < 0).any():
            # A missing key reads as "" in Go: it makes a domain of its own for sizing.
            empty_slot = table.slot("")
            table.present[empty_slot] = True
        empty = table.lookup("")
        slots = np.where(codes >= 0, codes, -1 if empty is None else empty).astype(np.int64)
        # Only the pods of domains holding a candidate are counted.
        in_domain = (slots >= 0) & np.append(table.present, False)[slots]
        domains.append(table)
        slots_of.append(slots)
        wanted.append(counted_rows & in_domain & inclusion.mask(c))
        weights.append(topology_normalizing_weight(int(np.count_nonzero(table.present))))

    counts = selected_counts(
        snapshot,
        all_nodes,
        node_rows(all_nodes, snapshot),
        np.flatnonzero(np.logical_or.reduce(wanted)),
        [c.selector for c in constraints],
        pod.namespace,
    )
    host_counts: list[npt.NDArray[np.int64] | None] = []
    for counted, counted_slots, mask, count in zip(domains, slots_of, wanted, counts, strict=True):
        if counted is None or counted_slots is None:
            host_counts.append(np.where(mask, count, 0))
        else:
            host_counts.append(None)
            add_counts(counted, counted_slots[mask], count[mask])
    return PreScoreState(tuple(constraints), ignored, ignored_rows, ignored_in_order, domains, host_counts, weights)


def score_node(state: PreScoreState, pod: Pod, info: NodeInfo) -> int:
    """The raw score of one node: Σ count × weight + (maxSkew − 1) over its constraints, rounded."""
    node = info.node
    if node.name in state.ignored:
        return 0
    total = 0.0
    labels = node.labels
    for i, c in enumerate(state.constraints):
        value = labels.get(c.topology_key)
        if value is None:
            continue
        table = state.domains[i]
        if table is None:
            count = count_pods_match(info.pods, c.selector, pod.namespace)
        else:
            count = table.count_of(value)
        total += score_for_count(count, c.max_skew, state.weights[i])
    return round_half_away(total)


def score_positions(state: PreScoreState, snapshot: Snapshot, positions: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """`score_node` for many snapshot rows at once (same float operations, same order)."""
    total = np.zeros(len(positions), dtype=np.float64)
    for i, c in enumerate(state.constraints):
        label_codes, values = snapshot.label_codes(c.topology_key)
        node_codes = label_codes[positions]
        table = state.domains[i]
        if table is None:
            host = state.host_counts[i]
            assert host is not None
            counts = host[positions] if len(host) == snapshot.num_nodes else np.zeros(len(positions), np.int64)
        else:
            counts = table.counts_at(table.slots_for(node_codes, values))
        term = counts.astype(np.float64) * state.weights[i] + float(c.max_skew - 1)
        total = np.where(node_codes >= 0, total + term, total)
    scores = round_half_away_array(total)
    if len(state.ignored_rows) == snapshot.num_nodes:
        scores[state.ignored_rows[positions]] = 0
    return scores


def normalize(state: PreScoreState, scores: npt.NDArray[np.int64]) -> None:
    """Rescale in place: best (fewest matches) gets 100; ignored nodes get 0 (`NormalizeScore`)."""
    valid = ~state.ignored_in_order
    if valid.any():
        min_score = int(scores[valid].min())
        max_score = max(0, int(scores[valid].max()))
    else:
        min_score, max_score = 2**63 - 1, 0
    if max_score == 0:
        scores[:] = np.where(valid, MAX_NODE_SCORE, 0)
        return
    scaled = go_div(MAX_NODE_SCORE * (max_score + min_score - scores), max_score)
    scores[:] = np.where(valid, scaled, 0)
