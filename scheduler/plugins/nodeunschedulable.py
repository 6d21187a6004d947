"""NodeUnschedulable: keeps pods off cordoned nodes unless they tolerate the unschedulable taint.

Upstream: kubernetes/kubernetes `pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable.go`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from scheduler.api.objects import Node, Pod
from scheduler.api.selectors import Taint
from scheduler.framework import signers
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
    success,
    unresolvable,
)

if TYPE_CHECKING:
    from scheduler.framework.snapshot import Snapshot

NAME = "NodeUnschedulable"
REASON_UNSCHEDULABLE = "node(s) were unschedulable"
UNSCHEDULABLE_TAINT = Taint("node.kubernetes.io/unschedulable", "", "NoSchedule")


def tolerates_unschedulable(pod: Pod) -> bool:
    """Whether the pod tolerates `node.kubernetes.io/unschedulable:NoSchedule`, and so spec.unschedulable."""
    return any(t.tolerates(UNSCHEDULABLE_TAINT) for t in pod.tolerations)


def is_schedulable_after_node_change(pod: Pod, old: Node | None, new: Node | None) -> QueueingHint:
    """`isSchedulableAfterNodeChange`: Queue for a schedulable node added, or a node uncordoned."""
    assert new is not None
    if (old is not None and old.unschedulable and not new.unschedulable) or (old is None and not new.unschedulable):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def is_schedulable_after_pod_toleration_change(pod: Pod, old: Pod | None, new: Pod | None) -> QueueingHint:
    """`isSchedulableAfterPodTolerationChange`: Queue when the pod itself came to tolerate cordoned nodes."""
    assert old is not None and new is not None
    if pod.uid == new.uid and not tolerates_unschedulable(old) and tolerates_unschedulable(new):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


class NodeUnschedulable:
    """Filter out nodes with spec.unschedulable set."""

    name = NAME

    def sign_pod(self, pod: Pod) -> signers.Signed:
        """Tolerations decide whether an unschedulable node is tolerated."""
        return signers.signed((signers.TOLERATIONS, signers.tolerations(pod)))

    def events_to_register(self) -> list[ClusterEvent]:
        """Node added or re-tainted (uncordon); the pod's tolerations changed (queueing hints on)."""
        return [
            ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_TAINT, hint=is_schedulable_after_node_change),
            ClusterEvent("Pod", ActionType.UPDATE_POD_TOLERATION, hint=is_schedulable_after_pod_toleration_change),
        ]

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """UnschedulableAndUnresolvable on a cordoned node the pod does not tolerate."""
        if node_info.node.unschedulable and not tolerates_unschedulable(pod):
            return unresolvable(REASON_UNSCHEDULABLE)
        return success()

    def filter_batch(
        self, state: CycleState, pod: Pod, snapshot: Snapshot, positions: npt.NDArray[np.int64]
    ) -> BatchFilterResult:
        """The same verdicts from the snapshot's `unschedulable` array."""
        if tolerates_unschedulable(pod) or not snapshot.cached(_ANY_CORDONED, lambda: bool(snapshot.unschedulable.any())):
            return BatchFilterResult.all_passed(len(positions))
        else:
            rejected = snapshot.unschedulable[positions]
            codes = np.where(rejected, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.SUCCESS).astype(np.int8)
        return BatchFilterResult.uniform(codes, (REASON_UNSCHEDULABLE,))


_ANY_CORDONED = "NodeUnschedulable/any-cordoned"
"""Snapshot cache key: whether any node is cordoned (rebuilt when nodes change)."""


def new(args: object | None, handle: Handle) -> NodeUnschedulable:
    """Build the plugin; it takes no args."""
    return NodeUnschedulable()
