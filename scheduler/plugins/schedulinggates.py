"""SchedulingGates: holds pods that still carry spec.schedulingGates out of the active queue.

Upstream: kubernetes/kubernetes `pkg/scheduler/framework/plugins/schedulinggates/scheduling_gates.go`.
"""

from __future__ import annotations

from scheduler.api.objects import Pod
from scheduler.framework.interface import Handle
from scheduler.framework.types import (
    ActionType,
    ClusterEvent,
    QueueingHint,
    Status,
    success,
    unresolvable,
)

NAME = "SchedulingGates"


def gated_message(gates: tuple[str, ...]) -> str:
    """The PreEnqueue message; the gate list is printed as Go's %v prints a []string."""
    return f"waiting for scheduling gates: [{' '.join(gates)}]"


def is_schedulable_after_gates_eliminated(pod: Pod, old: Pod | None, new: Pod | None) -> QueueingHint:
    """`isSchedulableAfterUpdatePodSchedulingGatesEliminated`: Queue only for the pod itself."""
    assert new is not None
    return QueueingHint.QUEUE if new.uid == pod.uid else QueueingHint.QUEUE_SKIP


class SchedulingGates:
    """PreEnqueue: gated pods wait in the unschedulable pool until their gates are removed."""

    name = NAME

    def pre_enqueue(self, pod: Pod) -> Status:
        """Success without gates; UnschedulableAndUnresolvable naming the gates otherwise."""
        if not pod.scheduling_gates:
            return success()
        return unresolvable(gated_message(pod.scheduling_gates))

    def events_to_register(self) -> list[ClusterEvent]:
        """An update that removes the pod's last gate (queueing hints on, as upstream's default)."""
        return [
            ClusterEvent("Pod", ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED, hint=is_schedulable_after_gates_eliminated)
        ]


def new(args: object | None, handle: Handle) -> SchedulingGates:
    """Build the plugin; it takes no args."""
    return SchedulingGates()
