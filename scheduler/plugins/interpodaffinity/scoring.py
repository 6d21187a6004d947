"""InterPodAffinity PreScore/Score/NormalizeScore: preferred pod (anti-)affinity (`scoring.go`).

PreScore sums weights per topology pair (key -> value -> score) from the incoming pod's
preferred terms, and from existing pods' preferred terms and required affinity terms (weighted
by `hardPodAffinityWeight`) that the incoming pod matches. A node's score is the sum over the
topology keys it carries; NormalizeScore rescales min..max onto 0..100.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import numpy.typing as npt

from scheduler.api.affinity import PodAffinityTerm, WeightedPodAffinityTerm
from scheduler.api.objects import Node, Pod
from scheduler.framework.nodeinfo import NodeInfo, PodInfo, term_matches
from scheduler.framework.snapshot import Snapshot
from scheduler.framework.types import MAX_NODE_SCORE, CycleState, Status, error, skip
from scheduler.plugins.interpodaffinity.filtering import (
    NO_LABELS,
    incoming_pod_info,
    namespace_labels,
    term_counts_per_node,
)

PRE_SCORE_STATE_KEY = "PreScoreInterPodAffinity"

ScoreMap = dict[str, dict[str, int]]
"""Topology key -> node label value -> summed weight."""


CodeScores = dict[str, tuple[list[str], npt.NDArray[np.int64], npt.NDArray[np.bool_]]]
"""Topology key -> (label values by code, summed weight per code, whether a term counted there)."""


class PreScoreState:
    """What PreScore computed for one pod; never changed afterwards.

    Scores found through the snapshot's counters stay as arrays per label code (`code_scores`)
    until `topology_score` is asked for; batch Score reads the arrays directly.
    """

    __slots__ = ("_topology_score", "code_scores", "generation", "namespace_labels", "pod_info")

    def __init__(self, pod_info: PodInfo, namespace_labels: Mapping[str, str], topology_score: ScoreMap | None = None) -> None:
        self.pod_info = pod_info
        self.namespace_labels = namespace_labels
        self._topology_score: ScoreMap | None = topology_score if topology_score is not None else {}
        self.code_scores: CodeScores | None = None
        self.generation = -1

    @property
    def topology_score(self) -> ScoreMap:
        """Topology key -> label value -> summed weight (every value a term counted, even if 0)."""
        if self._topology_score is None:
            built: ScoreMap = {}
            for key, (names, scores, touched) in (self.code_scores or {}).items():
                at = np.flatnonzero(touched).tolist()
                built[key] = dict(zip(map(names.__getitem__, at), scores[at].tolist(), strict=True))
            self._topology_score = built
        return self._topology_score

    @topology_score.setter
    def topology_score(self, scores: ScoreMap) -> None:
        self._topology_score = scores
        self.code_scores = None

    @property
    def empty(self) -> bool:
        """Whether no term counted anywhere (PreScore then Skips)."""
        if self.code_scores is not None and self._topology_score is None:
            return not self.code_scores
        return not self.topology_score

    def clone(self) -> PreScoreState:
        """Upstream shares the state between clones: nothing mutates it after PreScore."""
        return self


def _add_term(
    scores: ScoreMap,
    term: PodAffinityTerm,
    weight: int,
    pod: Pod,
    ns_labels: Mapping[str, str],
    node: Node,
    multiplier: int,
) -> None:
    if not term_matches(term, pod, ns_labels):
        return
    value = node.labels.get(term.topology_key)
    if value is None:
        return
    by_value = scores.setdefault(term.topology_key, {})
    by_value[value] = by_value.get(value, 0) + weight * multiplier


def _add_terms(
    scores: ScoreMap,
    terms: tuple[WeightedPodAffinityTerm, ...],
    pod: Pod,
    ns_labels: Mapping[str, str],
    node: Node,
    multiplier: int,
) -> None:
    for weighted in terms:
        _add_term(scores, weighted.term, weighted.weight, pod, ns_labels, node, multiplier)


def add_existing_pod(
    scores: ScoreMap, state: PreScoreState, existing: PodInfo, node: Node, hard_pod_affinity_weight: int
) -> None:
    """`processExistingPod`: the five ways an existing pod on `node` moves the topology scores."""
    if not node.labels:
        return
    incoming = state.pod_info
    # The incoming pod's terms have their namespaceSelector merged, so no namespace labels needed.
    _add_terms(scores, incoming.preferred_affinity_terms, existing.pod, NO_LABELS, node, 1)
    _add_terms(scores, incoming.preferred_anti_affinity_terms, existing.pod, NO_LABELS, node, -1)
    if hard_pod_affinity_weight > 0:
        for term in existing.required_affinity_terms:
            _add_term(scores, term, hard_pod_affinity_weight, incoming.pod, state.namespace_labels, node, 1)
    _add_terms(scores, existing.preferred_affinity_terms, incoming.pod, state.namespace_labels, node, 1)
    _add_terms(scores, existing.preferred_anti_affinity_terms, incoming.pod, state.namespace_labels, node, -1)


def _add_per_value(scores: CodeScores, snapshot: Snapshot, key: str, per_node: npt.NDArray[np.int64], weight: int) -> None:
    codes, values = snapshot.label_codes(key)
    labelled = codes >= 0
    if not labelled.any():
        return
    counts = np.bincount(codes[labelled], weights=per_node[labelled], minlength=len(values)).astype(np.int64)
    counted = counts != 0
    if not counted.any():
        return
    entry = scores.get(key)
    if entry is None:
        scores[key] = (list(values), weight * counts, counted)
    else:
        names, summed, touched = entry
        scores[key] = (names, summed + weight * counts, touched | counted)


def _counted_topology_score(
    state: PreScoreState, snapshot: Snapshot, has_constraints: bool, hard_pod_affinity_weight: int
) -> CodeScores | None:
    """The topology scores `add_existing_pod` sums over every pod, from counters: the incoming
    pod's preferred terms through the selector counters, existing pods' terms through the
    affinity groups (each group's terms matched once), as arrays per label code. None when the
    counters cannot say."""
    scores: CodeScores = {}
    incoming = state.pod_info
    if has_constraints:
        for terms, sign in ((incoming.preferred_affinity_terms, 1), (incoming.preferred_anti_affinity_terms, -1)):
            for weighted in terms:
                per_node = term_counts_per_node(snapshot, weighted.term)
                if per_node is None:
                    return None
                _add_per_value(scores, snapshot, weighted.term.topology_key, per_node, weighted.weight * sign)
    pod, ns_labels = incoming.pod, state.namespace_labels
    for info, per_node in snapshot.affinity_groups():
        if hard_pod_affinity_weight > 0:
            for term in info.required_affinity_terms:
                if term_matches(term, pod, ns_labels):
                    _add_per_value(scores, snapshot, term.topology_key, per_node, hard_pod_affinity_weight)
        for terms, sign in ((info.preferred_affinity_terms, 1), (info.preferred_anti_affinity_terms, -1)):
            for weighted in terms:
                if term_matches(weighted.term, pod, ns_labels):
                    _add_per_value(scores, snapshot, weighted.term.topology_key, per_node, weighted.weight * sign)
    return scores


def has_preferred_terms(pod: Pod) -> bool:
    """Whether the pod has preferred pod affinity or anti-affinity terms."""
    aff = pod.affinity
    return aff is not None and bool(aff.pod_preferred or aff.anti_preferred)


def compute_pre_score(
    pod: Pod,
    snapshot: Snapshot,
    nodes: Iterable[NodeInfo],
    hard_pod_affinity_weight: int,
    ignore_preferred_terms_of_existing_pods: bool,
) -> tuple[PreScoreState | None, Status]:
    """PreScore: the state, or None with Skip when no term can move any node's score."""
    has_constraints = has_preferred_terms(pod)
    if ignore_preferred_terms_of_existing_pods and not has_constraints:
        return None, skip()
    state = PreScoreState(incoming_pod_info(pod, snapshot.namespaces), namespace_labels(snapshot, pod.namespace))
    if nodes is snapshot.node_infos:
        # Every node: what the snapshot's counters and affinity groups cover.
        counted = _counted_topology_score(state, snapshot, has_constraints, hard_pod_affinity_weight)
        if counted is not None:
            if not counted:
                return None, skip()
            state.code_scores = counted
            state.generation = snapshot.node_generation
            state._topology_score = None
            return state, Status()
    touched = False
    for info in nodes:
        # Without preferred terms of its own, only existing pods with some affinity can matter.
        pods = info.pods if has_constraints else info.pods_with_affinity
        if not pods:
            continue
        node_scores: ScoreMap = {}
        for existing in pods:
            add_existing_pod(node_scores, state, existing, info.node, hard_pod_affinity_weight)
        if node_scores:
            touched = True
            for key, by_value in node_scores.items():
                merged = state.topology_score.setdefault(key, {})
                for value, score in by_value.items():
                    merged[value] = merged.get(value, 0) + score
    if not touched:
        return None, skip()
    return state, Status()


def read_state(cycle: CycleState) -> PreScoreState | Status:
    """The PreScore state, or the Error status upstream returns when it is missing."""
    try:
        value = cycle.read(PRE_SCORE_STATE_KEY)
    except KeyError:
        return error(f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
    if not isinstance(value, PreScoreState):
        return error(f"{value!r}  convert to interpodaffinity.preScoreState error")
    return value


def require_state(cycle: CycleState) -> PreScoreState:
    """The PreScore state; raises LookupError (with upstream's message) when PreScore did not run."""
    value = read_state(cycle)
    if isinstance(value, PreScoreState):
        return value
    raise LookupError(value.message)


def score_node(state: PreScoreState, node: Node) -> int:
    """The raw score: the topology scores of every key the node carries (negative for anti-affinity)."""
    labels = node.labels
    total = 0
    for key, by_value in state.topology_score.items():
        value = labels.get(key)
        if value is not None:
            total += by_value.get(value, 0)
    return total


def score_batch(state: PreScoreState, snapshot: Snapshot, positions: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Raw scores over snapshot positions; same values as `score_node`."""
    total = np.zeros(len(positions), dtype=np.int64)
    if state.code_scores is not None and state.generation == snapshot.node_generation:
        for key, (_names, scores, _touched) in state.code_scores.items():
            codes, _ = snapshot.label_codes(key)
            # One spare slot at the end: code -1 (label absent) reads it and adds 0.
            table = np.zeros(len(scores) + 1, dtype=np.int64)
            table[: len(scores)] = scores
            total += table[codes[positions]]
        return total
    for key, by_value in state.topology_score.items():
        codes, code_of = snapshot.label_codes(key)
        # One spare slot at the end: code -1 (label absent) reads it and adds 0.
        table = np.zeros(len(code_of) + 1, dtype=np.int64)
        for value, score in by_value.items():
            code = code_of.get(value)
            if code is not None:
                table[code] = score
        total += table[codes[positions]]
    return total


def normalize(state: PreScoreState, scores: npt.NDArray[np.int64]) -> None:
    """Min-max scaling onto 0..MaxNodeScore in float64, truncated to int64 as Go converts."""
    if state.empty or scores.size == 0:
        return
    low = int(scores.min())
    spread = int(scores.max()) - low
    if spread <= 0:
        scores[:] = 0
        return
    scaled = float(MAX_NODE_SCORE) * ((scores - low).astype(np.float64) / np.float64(spread))
    scores[:] = scaled.astype(np.int64)
