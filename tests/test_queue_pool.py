"""The unschedulable pool grouped by rejecting plugins moves exactly the pods, in exactly the
order, that asking every pod would (the index only saves the asking)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.framework.types import ActionType, ClusterEvent, QueuedPodInfo, Status
from scheduler.queue import SchedulingQueue
from tests.builders import make_pod

PLUGINS = ("Fit", "Ports", "Taints")
REGISTERED = {
    "Fit": [ClusterEvent("Pod", ActionType.DELETE), ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE)],
    "Ports": [ClusterEvent("Pod", ActionType.DELETE)],
    "Taints": [ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_TAINT)],
}
EVENTS = (
    ClusterEvent("Pod", ActionType.ADD, "AssignedPodAdd"),
    ClusterEvent("Pod", ActionType.DELETE, "AssignedPodDelete"),
    ClusterEvent("Node", ActionType.ADD, "NodeAdd"),
    ClusterEvent("Node", ActionType.UPDATE_NODE_TAINT, "NodeUpdate"),
    ClusterEvent("*", ActionType.ALL, "UnschedulableTimeout"),
)


def interested(qpi: QueuedPodInfo, event: ClusterEvent) -> bool:
    if event.resource == "*":
        return True
    rejectors = qpi.unschedulable_plugins | qpi.pending_plugins
    return not rejectors or any(r.matches(event) for p in rejectors for r in REGISTERED[p])


def new_queue(keyed: bool) -> SchedulingQueue:
    return SchedulingQueue(
        less=lambda a, b: False,
        pre_enqueue=lambda pod: Status(),
        interested=interested,
        now=lambda: 0.0,
        interest_key=(lambda q: frozenset(q.unschedulable_plugins | q.pending_plugins)) if keyed else None,
    )


OPS = st.lists(
    st.one_of(
        st.tuples(st.just("fail"), st.sets(st.sampled_from(PLUGINS), max_size=2)),
        st.tuples(st.just("event"), st.integers(0, len(EVENTS) - 1)),
        st.tuples(st.just("delete"), st.integers(0, 30)),
    ),
    max_size=60,
)


@settings(max_examples=150, deadline=None)
@given(ops=OPS)
def test_grouped_pool_moves_like_a_full_scan(ops: list[tuple[Any, ...]]) -> None:
    queues = [new_queue(False), new_queue(True)]
    pods = [make_pod(f"p{i}") for i in range(31)]
    added = 0
    for op in ops:
        for q in queues:
            if op[0] == "fail":
                pod = pods[added % len(pods)]
                q.add(pod)
                qpi = q.pop()
                if qpi is not None:
                    q.requeue_failed(qpi, set(op[1]), False)
            elif op[0] == "event":
                q.move_all(EVENTS[op[1]])
            else:
                q.delete(pods[op[1]])
        if op[0] == "fail":
            added += 1
        plain, keyed = queues
        assert [p.pod.uid for p in plain.unschedulable_pods()] == [p.pod.uid for p in keyed.unschedulable_pods()]
        order = [q.pop() for q in queues]
        assert [o.pod.uid if o else None for o in order] == [o.pod.uid if o else None for o in order[::-1]]
        for q, qpi in zip(queues, order, strict=True):
            if qpi is not None:
                q.requeue_failed(qpi, {"Fit"}, False)
