"""PrioritySort: orders activeQ by pod priority, then by the time the pod entered the queue.

Upstream: kubernetes/kubernetes `pkg/scheduler/framework/plugins/queuesort/priority_sort.go`.
"""

from __future__ import annotations

from scheduler.framework.interface import Handle
from scheduler.framework.types import QueuedPodInfo

NAME = "PrioritySort"


class PrioritySort:
    """QueueSort: higher priority first; equal priorities in timestamp order."""

    name = NAME

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        """Whether a pops before b (a pod without a resolved priority counts as 0)."""
        pa, pb = a.pod.effective_priority, b.pod.effective_priority
        return pa > pb or (pa == pb and a.timestamp < b.timestamp)

    def sort_key(self, qpi: QueuedPodInfo) -> tuple[int, float]:
        """`less` as a key: a before b exactly when key(a) < key(b)."""
        return -qpi.pod.effective_priority, qpi.timestamp


def new(args: object | None, handle: Handle) -> PrioritySort:
    """Build the plugin; it takes no args."""
    return PrioritySort()
