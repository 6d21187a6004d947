"""The InterPodAffinity plugin: required pod (anti-)affinity filtering and preferred scoring."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from scheduler.api.objects import Node, Pod
from scheduler.config.args import InterPodAffinityArgs
from scheduler.config.errors import ConfigError
from scheduler.framework import signers
from scheduler.framework.interface import Handle
from scheduler.framework.nodeinfo import NodeInfo, PodInfo
from scheduler.framework.snapshot import Snapshot
from scheduler.framework.types import (
    ActionType,
    BatchFilterResult,
    ClusterEvent,
    CycleState,
    PreFilterResult,
    QueueingHint,
    Status,
    skip,
)
from scheduler.plugins.interpodaffinity import filtering, scoring

NAME = "InterPodAffinity"


class InterPodAffinity:
    """Checks and scores inter-pod affinity and anti-affinity (`interpodaffinity.InterPodAffinity`)."""

    name = NAME

    def sign_pod(self, pod: Pod) -> signers.Signed:
        """Refuses pods with pod (anti-)affinity; signs the labels, which existing pods' terms
        match, unless only pods with affinity of their own are considered."""
        aff = pod.affinity
        if aff is not None and (aff.pod_required or aff.pod_preferred or aff.anti_required or aff.anti_preferred):
            return signers.refused("pods with InterPodAffinity are not signable")
        if self.ignore_preferred_terms_of_existing_pods:
            return signers.signed()
        return signers.signed((signers.LABELS, signers.labels(pod)))

    def __init__(self, handle: Handle, hard_pod_affinity_weight: int, ignore_preferred_terms_of_existing_pods: bool) -> None:
        self._handle = handle
        self.hard_pod_affinity_weight = hard_pod_affinity_weight
        self.ignore_preferred_terms_of_existing_pods = ignore_preferred_terms_of_existing_pods

    # ----- PreFilter and its extensions -------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        """Count topology pairs; Skip when neither the pod nor any existing pod has a required term that applies."""
        aff = pod.affinity
        snapshot = self._handle.snapshot
        if (aff is None or not (aff.pod_required or aff.anti_required)) and not snapshot.has_required_anti_affinity_pods():
            # What should_skip would conclude, without building the state first.
            return None, skip()
        computed = filtering.compute_pre_filter_state(pod, self._handle.snapshot, nodes)
        if filtering.should_skip(computed):
            return None, skip()
        state.write(filtering.PRE_FILTER_STATE_KEY, computed)
        return None, Status()

    def pre_filter_extensions(self) -> InterPodAffinity:
        """AddPod/RemovePod keep the counts right while preemption tries victims."""
        return self

    def add_pod(self, state: CycleState, pod: Pod, to_add: PodInfo, node_info: NodeInfo) -> Status:
        """Account `to_add` as running on node_info."""
        computed = filtering.read_state(state)
        if isinstance(computed, Status):
            return computed
        computed.update_with_pod(to_add, node_info.node, 1)
        return Status()

    def remove_pod(self, state: CycleState, pod: Pod, to_remove: PodInfo, node_info: NodeInfo) -> Status:
        """Forget `to_remove` on node_info."""
        computed = filtering.read_state(state)
        if isinstance(computed, Status):
            return computed
        computed.update_with_pod(to_remove, node_info.node, -1)
        return Status()

    # ----- Filter ----------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Affinity (UnschedulableAndUnresolvable), anti-affinity and existing pods' anti-affinity (Unschedulable)."""
        computed = filtering.read_state(state)
        if isinstance(computed, Status):
            return computed
        return filtering.filter_node(computed, node_info.node)

    def filter_batch(
        self, state: CycleState, pod: Pod, snapshot: Snapshot, positions: npt.NDArray[np.int64]
    ) -> BatchFilterResult:
        """Filter over many nodes through label-code lookups."""
        computed = filtering.read_state(state)
        if isinstance(computed, Status):
            return filtering.error_batch(computed, len(positions))
        return filtering.filter_batch(computed, snapshot, positions)

    # ----- Score -----------------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status:
        """Sum topology scores over all nodes of the snapshot; Skip when nothing applies."""
        snapshot = self._handle.snapshot
        if not scoring.has_preferred_terms(pod) and not snapshot.has_affinity_pods():
            # No term anywhere can move a score: compute_pre_score would Skip too.
            return skip()
        # Every node: the counters cover them all (and without preferred terms of its own only
        # pods with affinity are read on each, as upstream's HavePodsWithAffinityList gives).
        computed, status = scoring.compute_pre_score(
            pod,
            snapshot,
            snapshot.node_infos,
            self.hard_pod_affinity_weight,
            self.ignore_preferred_terms_of_existing_pods,
        )
        if computed is not None:
            state.write(scoring.PRE_SCORE_STATE_KEY, computed)
        return status

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        """The raw topology score of the node (may be negative)."""
        computed = scoring.read_state(state)
        if isinstance(computed, Status):
            return 0, computed
        return scoring.score_node(computed, node_info.node), Status()

    def score_batch(
        self, state: CycleState, pod: Pod, snapshot: Snapshot, positions: npt.NDArray[np.int64]
    ) -> npt.NDArray[np.int64]:
        """Raw scores over many nodes; raises when PreScore did not run (the per-node form returns Error)."""
        return scoring.score_batch(scoring.require_state(state), snapshot, positions)

    def score_extensions(self) -> InterPodAffinity:
        """NormalizeScore lives on the plugin itself."""
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: npt.NDArray[np.int64]) -> Status:
        """Min-max scale the raw scores onto 0..100 in place."""
        computed = scoring.read_state(state)
        if isinstance(computed, Status):
            return computed
        scoring.normalize(computed, scores)
        return Status()

    # ----- Queueing --------------------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEvent]:
        """Assigned pods added, relabelled or deleted; nodes added, relabelled or re-tainted."""
        return [
            ClusterEvent(
                "Pod", ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE, hint=is_schedulable_after_pod_change
            ),
            # UpdateNodeTaint stands in for NodeAdd events the preCheck may have filtered (kubernetes/kubernetes#110175).
            ClusterEvent(
                "Node",
                ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT,
                hint=is_schedulable_after_node_change,
            ),
        ]


# ----- queueing hints -------------------------------------------------------------------------------
def is_schedulable_after_pod_change(pod: Pod, old: Pod | None, new: Pod | None) -> QueueingHint:
    """`isSchedulableAfterPodChange`: only assigned pods count. Queue when an added pod matches all
    the waiting pod's affinity terms, an update makes a pod match them (or stop matching all its
    anti-affinity terms), or a deleted pod matched all its anti-affinity terms. As upstream, the
    existing pods' own anti-affinity is not consulted (their deletion alone queues nothing)."""
    if (new is not None and not new.node_name) or (old is not None and not old.node_name):
        return QueueingHint.QUEUE_SKIP
    info = PodInfo.of(pod)  # terms as written: namespaceSelectors are matched against no labels
    terms, anti_terms = info.required_affinity_terms, info.required_anti_affinity_terms
    matches_all = filtering.pod_matches_all_terms
    if new is not None and old is not None:
        if not matches_all(terms, old) and matches_all(terms, new):
            return QueueingHint.QUEUE
        if matches_all(anti_terms, old) and not matches_all(anti_terms, new):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP
    if new is not None:
        return QueueingHint.QUEUE if matches_all(terms, new) else QueueingHint.QUEUE_SKIP
    assert old is not None
    return QueueingHint.QUEUE if matches_all(anti_terms, old) else QueueingHint.QUEUE_SKIP


def is_schedulable_after_node_change(pod: Pod, old: Node | None, new: Node | None) -> QueueingHint:
    """`isSchedulableAfterNodeChange`: Queue when the node carries the topology key of one of the
    waiting pod's required affinity or anti-affinity terms."""
    assert new is not None
    info = PodInfo.of(pod)
    for term in info.required_affinity_terms + info.required_anti_affinity_terms:
        if term.topology_key in new.labels:
            return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def new(args: object | None, handle: Handle) -> InterPodAffinity:
    """Build the plugin from InterPodAffinityArgs (None means the defaults), validated as upstream's New does."""
    if args is None:
        args = InterPodAffinityArgs()
    if not isinstance(args, InterPodAffinityArgs):
        raise TypeError(f"want args to be of type InterPodAffinityArgs, got {type(args).__name__}")
    issues = args.validate("")
    if issues:
        raise ConfigError("", issues)
    return InterPodAffinity(handle, args.hard_pod_affinity_weight, args.ignore_preferred_terms_of_existing_pods)
