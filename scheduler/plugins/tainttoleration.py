"""TaintToleration: keeps pods off nodes whose NoSchedule/NoExecute taints they do not tolerate,
and prefers nodes with fewer untolerated PreferNoSchedule taints.

Upstream: kubernetes/kubernetes `pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from scheduler.api.objects import Node, Pod
from scheduler.api.selectors import Taint, Toleration, tolerates_all
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
    QueueingHint,
    Status,
    error,
    success,
    unresolvable,
)

if TYPE_CHECKING:
    from scheduler.framework.snapshot import Snapshot

NAME = "TaintToleration"
PRE_SCORE_STATE_KEY = "PreScore" + NAME
REASON_UNTOLERATED = "node(s) had untolerated taint(s)"
DO_NOT_SCHEDULE_EFFECTS = ("NoSchedule", "NoExecute")
PREFER_NO_SCHEDULE = "PreferNoSchedule"


@dataclass(frozen=True, slots=True)
class PreScoreState:
    """The pod's tolerations that can tolerate a PreferNoSchedule taint."""

    tolerations: tuple[Toleration, ...]


def prefer_no_schedule_tolerations(tolerations: tuple[Toleration, ...]) -> tuple[Toleration, ...]:
    """Tolerations with effect PreferNoSchedule or no effect (an empty effect matches every effect)."""
    return tuple(t for t in tolerations if not t.effect or t.effect == PREFER_NO_SCHEDULE)


def untolerated_taint(taints: tuple[Taint, ...], tolerations: tuple[Toleration, ...]) -> Taint | None:
    """The first NoSchedule/NoExecute taint no toleration tolerates (`FindMatchingUntoleratedTaint`)."""
    return tolerates_all(tolerations, taints, DO_NOT_SCHEDULE_EFFECTS)


def count_intolerable_prefer_no_schedule(taints: tuple[Taint, ...], tolerations: tuple[Toleration, ...]) -> int:
    """How many PreferNoSchedule taints none of the tolerations tolerates."""
    return sum(1 for taint in taints if taint.effect == PREFER_NO_SCHEDULE and not any(t.tolerates(taint) for t in tolerations))


def is_schedulable_after_node_change(pod: Pod, old: Node | None, new: Node | None) -> QueueingHint:
    """`isSchedulableAfterNodeChange`: Queue when the node went from holding a NoSchedule or
    NoExecute taint the pod does not tolerate (or not existing) to holding none."""
    assert new is not None
    was_untolerated = old is None or untolerated_taint(old.taints, pod.tolerations) is not None
    if was_untolerated and untolerated_taint(new.taints, pod.tolerations) is None:
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def is_schedulable_after_pod_toleration_change(pod: Pod, old: Pod | None, new: Pod | None) -> QueueingHint:
    """`isSchedulableAfterPodTolerationChange`: Queue when the changed pod is the waiting pod itself."""
    assert new is not None
    return QueueingHint.QUEUE if new.uid == pod.uid else QueueingHint.QUEUE_SKIP


def _read_pre_score_state(state: CycleState) -> PreScoreState:
    value = state.get(PRE_SCORE_STATE_KEY)
    if not isinstance(value, PreScoreState):
        raise KeyError(f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
    return value


class TaintToleration:
    """Filter on hard taints; score by the count of untolerated PreferNoSchedule taints (reversed)."""

    name = NAME

    def sign_pod(self, pod: Pod) -> signers.Signed:
        """The tolerations."""
        return signers.signed((signers.TOLERATIONS, signers.tolerations(pod)))

    def __init__(self, handle: Handle | None = None) -> None:
        self.handle = handle

    def events_to_register(self) -> list[ClusterEvent]:
        """Node added or re-tainted; the pod's own tolerations changed (queueing hints on, as upstream's default)."""
        return [
            ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_TAINT, hint=is_schedulable_after_node_change),
            ClusterEvent("Pod", ActionType.UPDATE_POD_TOLERATION, hint=is_schedulable_after_pod_toleration_change),
        ]

    # ----- Filter -------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """UnschedulableAndUnresolvable when the node has a hard taint the pod does not tolerate."""
        if untolerated_taint(node_info.node.taints, pod.tolerations) is None:
            return success()
        return unresolvable(REASON_UNTOLERATED)

    def filter_batch(
        self, state: CycleState, pod: Pod, snapshot: Snapshot, positions: npt.NDArray[np.int64]
    ) -> BatchFilterResult:
        """The same verdicts, deciding each distinct taint list of the cluster once."""
        group_of, groups = snapshot.taint_groups()
        rejected = np.fromiter(
            (untolerated_taint(taints, pod.tolerations) is not None for taints in groups), dtype=np.bool_, count=len(groups)
        )
        if not rejected.any():
            # The usual case (no taint the pod minds anywhere): nothing to look up per node.
            return BatchFilterResult.all_passed(len(positions))
        codes = np.where(rejected[group_of[positions]], Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.SUCCESS).astype(np.int8)
        return BatchFilterResult.uniform(codes, (REASON_UNTOLERATED,))

    # ----- Score --------------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status:
        """Keep the tolerations that matter to scoring."""
        state.write(PRE_SCORE_STATE_KEY, PreScoreState(prefer_no_schedule_tolerations(pod.tolerations)))
        return success()

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        """The count of untolerated PreferNoSchedule taints (fewer is better after normalizing)."""
        try:
            pre = _read_pre_score_state(state)
        except KeyError as exc:
            return 0, error(exc.args[0])
        return count_intolerable_prefer_no_schedule(node_info.node.taints, pre.tolerations), success()

    def score_batch(
        self, state: CycleState, pod: Pod, snapshot: Snapshot, positions: npt.NDArray[np.int64]
    ) -> npt.NDArray[np.int64]:
        """The same raw scores, counting once per distinct taint list; KeyError without PreScore."""
        pre = _read_pre_score_state(state)
        group_of, groups = snapshot.taint_groups()
        counts = np.fromiter(
            (count_intolerable_prefer_no_schedule(taints, pre.tolerations) for taints in groups),
            dtype=np.int64,
            count=len(groups),
        )
        if not counts.any():
            return np.zeros(len(positions), dtype=np.int64)
        return counts[group_of[positions]]

    def score_extensions(self) -> TaintToleration:
        """This plugin normalizes its own scores."""
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: npt.NDArray[np.int64]) -> Status:
        """Reverse-scale to 0..100: the node with the most untolerated taints gets 0."""
        default_normalize_score(scores, reverse=True)
        return success()


def new(args: object | None, handle: Handle) -> TaintToleration:
    """Build the plugin; it takes no args."""
    return TaintToleration(handle)
