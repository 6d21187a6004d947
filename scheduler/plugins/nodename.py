"""NodeName: a pod that names a node in spec.nodeName fits only that node.

Upstream: kubernetes/kubernetes `pkg/scheduler/framework/plugins/nodename/node_name.go` (Filter only).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from scheduler.api.objects import Node, Pod
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

NAME = "NodeName"
REASON = "node(s) didn't match the requested node name"


def fits(pod: Pod, node_info: NodeInfo) -> bool:
    """An empty spec.nodeName fits every node; otherwise only the named one."""
    return not pod.node_name or pod.node_name == node_info.node.name


def is_schedulable_after_node_add(pod: Pod, old: Node | None, new: Node | None) -> QueueingHint:
    """`isSchedulableAfterNodeAdd`: Queue when the added node is the one the pod names (or it names none)."""
    assert new is not None
    return QueueingHint.QUEUE if not pod.node_name or pod.node_name == new.name else QueueingHint.QUEUE_SKIP


class NodeName:
    """Filter nodes by the pod's spec.nodeName."""

    name = NAME

    def sign_pod(self, pod: Pod) -> signers.Signed:
        """spec.nodeName."""
        return signers.signed((signers.NODE_NAME, pod.node_name))

    def events_to_register(self) -> list[ClusterEvent]:
        """Only a new node can be the named one (queueing hints on, as upstream's default)."""
        return [ClusterEvent("Node", ActionType.ADD, hint=is_schedulable_after_node_add)]

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """UnschedulableAndUnresolvable on any node but the named one."""
        return success() if fits(pod, node_info) else unresolvable(REASON)

    def filter_batch(
        self, state: CycleState, pod: Pod, snapshot: Snapshot, positions: npt.NDArray[np.int64]
    ) -> BatchFilterResult:
        """The same verdicts by comparing row positions with the named node's row."""
        if not pod.node_name:
            return BatchFilterResult.all_passed(len(positions))
        wanted = snapshot.position.get(pod.node_name, -1)
        codes = np.where(positions == wanted, Code.SUCCESS, Code.UNSCHEDULABLE_AND_UNRESOLVABLE).astype(np.int8)
        return BatchFilterResult.uniform(codes, (REASON,))


def new(args: object | None, handle: Handle) -> NodeName:
    """Build the plugin; it takes no args."""
    return NodeName()
