"""The unschedulable pool indexed by rejecting plugin, and queueing hints.

The index moves exactly the pods, in exactly the order, that asking every pod's hints would
(it only saves the asking); an event asks only pods whose rejectors registered for it; and with
the default plugins a pod NodeResourcesFit rejected stays put on unrelated events but moves on
a node update that adds room.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.api.objects import Pod
from scheduler.clock import VirtualClock
from scheduler.cluster.simulated import SimulatedCluster
from scheduler.config.loader import default_config
from scheduler.framework.types import ActionType, ClusterEvent, Code, QueueingHint, Status
from scheduler.plugins.registry import new_registry
from scheduler.queue import HintMap, SchedulingQueue, Strategy
from scheduler.scheduler import Scheduler
from tests.support.builders import make_node, make_pod
from tests.support.examples import examples

PLUGINS = ("Fit", "Ports", "Taints", "Gate")


def _even_uid(pod: Pod, old: Any, new: Any) -> QueueingHint:
    # A hint that tells pods apart: only pods whose name ends in an even digit are queued.
    return QueueingHint.QUEUE if int(pod.name[-1]) % 2 == 0 else QueueingHint.QUEUE_SKIP


REGISTERED = [
    ("default-scheduler", "Fit", ClusterEvent("Pod", ActionType.DELETE, hint=_even_uid)),
    ("default-scheduler", "Fit", ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE)),
    ("default-scheduler", "Ports", ClusterEvent("Pod", ActionType.DELETE)),
    ("default-scheduler", "Taints", ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_TAINT, hint=_even_uid)),
    ("default-scheduler", "Gate", ClusterEvent("Pod", ActionType.ADD)),
]
EVENTS = (
    ClusterEvent("Pod", ActionType.ADD, "AssignedPodAdd"),
    ClusterEvent("Pod", ActionType.DELETE, "AssignedPodDelete"),
    ClusterEvent("Node", ActionType.ADD, "NodeAdd"),
    ClusterEvent("Node", ActionType.UPDATE_NODE_TAINT, "NodeUpdate"),
    ClusterEvent("Node", ActionType.UPDATE_NODE_LABEL, "NodeUpdate"),
    ClusterEvent("*", ActionType.ALL, "UnschedulableTimeout"),
)


class ScanningQueue(SchedulingQueue):
    """The reference: every event asks every pod in the pool."""

    def move_all(self, event: ClusterEvent, old: Any = None, new: Any = None) -> int:
        moved = 0
        for uid, qpi in self._unschedulable.items():
            strategy = self.worth_requeuing(qpi, event, old, new)
            if strategy != Strategy.SKIP:
                del self._unschedulable[uid]
                moved += 1
                self._requeue(qpi, strategy)
        return moved


def new_queue(cls: type[SchedulingQueue]) -> SchedulingQueue:
    return cls(less=lambda a, b: False, pre_enqueue=lambda pod: Status(), hints=HintMap(REGISTERED), now=lambda: 0.0)


def recount_pending(q: SchedulingQueue) -> dict[str, int]:
    """The reference for `pending()`: every pod's place counted afresh."""
    counts = {"active": 0, "backoff": 0, "unschedulable": 0, "gated": 0}
    for uid in list(q._where):
        where = q.where(uid)
        if where in counts:
            counts[where] += 1
    return counts


OPS = st.lists(
    st.one_of(
        st.tuples(st.just("fail"), st.sets(st.sampled_from(PLUGINS), max_size=2)),
        st.tuples(st.just("event"), st.integers(0, len(EVENTS) - 1)),
        st.tuples(st.just("delete"), st.integers(0, 30)),
    ),
    max_size=60,
)


@settings(max_examples=examples(150), deadline=None)
@given(ops=OPS)
def test_indexed_pool_moves_like_a_full_scan(ops: list[tuple[Any, ...]]) -> None:
    queues = [new_queue(ScanningQueue), new_queue(SchedulingQueue)]
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
        scan, indexed = queues
        assert [p.pod.uid for p in scan.unschedulable_pods()] == [p.pod.uid for p in indexed.unschedulable_pods()]
        for q in queues:
            # The pending counts are kept as pods move; they must equal a recount.
            assert q.pending() == recount_pending(q)
        order = [q.pop() for q in queues]
        assert [o.pod.uid if o else None for o in order] == [o.pod.uid if o else None for o in order[::-1]]
        for q, qpi in zip(queues, order, strict=True):
            if qpi is not None:
                q.requeue_failed(qpi, {"Fit"}, False)


def test_an_event_asks_only_pods_whose_rejectors_registered_for_it() -> None:
    asked: list[str] = []

    def counting(pod: Pod, old: Any, new: Any) -> QueueingHint:
        asked.append(pod.name)
        return QueueingHint.QUEUE_SKIP

    hints = HintMap(
        [
            ("default-scheduler", "Fit", ClusterEvent("Pod", ActionType.DELETE, hint=counting)),
            ("default-scheduler", "Affinity", ClusterEvent("Pod", ActionType.ADD, hint=counting)),
        ]
    )
    q = SchedulingQueue(less=lambda a, b: False, pre_enqueue=lambda pod: Status(), hints=hints, now=lambda: 0.0)
    for i in range(50):
        q.add(make_pod(f"fit{i}"))
        qpi = q.pop()
        assert qpi is not None
        q.requeue_failed(qpi, {"Fit"}, False)
    q.add(make_pod("aff"))
    qpi = q.pop()
    assert qpi is not None
    q.requeue_failed(qpi, {"Affinity"}, False)
    # A binding (AssignedPodAdd) asks the one pod InterPodAffinity-like "Affinity" rejected,
    # none of the fifty that "Fit" rejected.
    assert q.move_all(ClusterEvent("Pod", ActionType.ADD, "AssignedPodAdd"), None, make_pod("bound", node_name="n1")) == 0
    assert asked == ["aff"]


def test_strategies_as_upstream() -> None:
    hints = HintMap(
        [
            ("default-scheduler", "Permit", ClusterEvent("Pod", ActionType.DELETE)),
            ("default-scheduler", "Fit", ClusterEvent("Pod", ActionType.DELETE)),
        ]
    )
    q = SchedulingQueue(less=lambda a, b: False, pre_enqueue=lambda pod: Status(), hints=hints, now=lambda: 0.0)
    q.add(make_pod("p"))
    qpi = q.pop()
    assert qpi is not None
    delete = ClusterEvent("Pod", ActionType.DELETE, "AssignedPodDelete")
    assert q.worth_requeuing(qpi, delete) == Strategy.AFTER_BACKOFF  # no rejector at all
    qpi.unschedulable_plugins = {"Fit"}
    assert q.worth_requeuing(qpi, delete) == Strategy.AFTER_BACKOFF
    assert q.worth_requeuing(qpi, ClusterEvent("Node", ActionType.ADD, "NodeAdd")) == Strategy.SKIP
    qpi.pending_plugins = {"Permit"}
    assert q.worth_requeuing(qpi, delete) == Strategy.IMMEDIATELY  # Queue from a pending plugin
    # ForceActivate carrying another pod is not for this one.
    force = ClusterEvent("*", ActionType.ALL, "ForceActivate")
    assert q.worth_requeuing(qpi, force, None, make_pod("other")) == Strategy.SKIP
    assert q.worth_requeuing(qpi, force, None, qpi.pod) == Strategy.AFTER_BACKOFF


# ----- the default plugins through the scheduler ------------------------------------------------
def _scheduler_with_a_pod_too_big() -> Scheduler:
    clock = VirtualClock(1767225600.0)
    cluster = SimulatedCluster(clock=clock)
    cluster.nodes["n0"] = make_node("n0", cpu="2")
    cluster.nodes["n1"] = make_node("n1", cpu="2")
    cluster.pods["uid-default-big"] = make_pod("big", cpu="3")
    sched = Scheduler(default_config(), cluster, clock, new_registry(), seed=1)
    sched.start()
    sched.run()
    assert [r.outcome for r in sched.records] == ["Unschedulable"]
    assert sched.queue.where("uid-default-big") == "unschedulable"
    assert sched.queue.info("uid-default-big") is not None
    return sched


def test_fit_rejected_pod_is_not_requeued_by_unrelated_events() -> None:
    sched = _scheduler_with_a_pod_too_big()
    cluster = sched.cluster
    assert isinstance(cluster, SimulatedCluster)
    # A pod bound elsewhere, a node relabelled, a node given more memory (the pod asks for cpu),
    # a node added that is too small even empty: none is an event NodeResourcesFit queues for.
    cluster.add_pod(make_pod("small", cpu="100m"))
    sched.run()
    cluster.add_node(make_node("n0", cpu="2", labels={"zone": "a"}))
    cluster.add_node(make_node("n1", cpu="2", memory="64Gi"))
    cluster.add_node(make_node("n2", cpu="1"))
    sched.run()
    assert sched.queue.where("uid-default-big") == "unschedulable"
    assert [r.pod for r in sched.records].count("default/big") == 1


def test_fit_rejected_pod_is_requeued_by_a_node_update_that_adds_room() -> None:
    sched = _scheduler_with_a_pod_too_big()
    cluster = sched.cluster
    assert isinstance(cluster, SimulatedCluster)
    cluster.add_node(make_node("n1", cpu="4"))
    assert sched.queue.where("uid-default-big") in ("active", "backoff")
    sched.run()
    big = [r for r in sched.records if r.pod == "default/big"]
    assert [r.outcome for r in big] == ["Unschedulable", "Scheduled"]
    assert big[-1].node == "n1"


def test_events_seen_in_flight_are_kept_only_while_a_pod_may_have_missed_them() -> None:
    q = new_queue(SchedulingQueue)
    for name in ("a0", "b0"):
        q.add(make_pod(name))
    a = q.pop()
    delete = ClusterEvent("Pod", ActionType.DELETE, "AssignedPodDelete")
    for _ in range(600):
        q.move_all(delete, make_pod("gone", node_name="n1"), None)
    b = q.pop()
    assert a is not None and b is not None
    q.move_all(ClusterEvent("Node", ActionType.UPDATE_NODE_TAINT, "NodeUpdate"), make_node("n1"), make_node("n1"))
    # a saw a Pod/Delete while in flight: Fit's hint (even digit) queues it.
    q.requeue_failed(a, {"Fit"}, False)
    assert q.where(a.pod.uid) in ("active", "backoff")
    # Once a is back, the 600 deletions no pod in flight can have missed are forgotten.
    assert len(q._events) <= 1
    # b was popped after the deletions and saw only a taint update, which Fit did not register.
    q.requeue_failed(b, {"Fit"}, False)
    assert q.where(b.pod.uid) == "unschedulable"
    assert q._events == []


def test_gated_pod_nomination_reaches_the_nominator_only_through_active_q() -> None:
    """kube-scheduler's `moveToActiveQ` adds a pod's `status.nominatedNodeName` to the nominator
    only when PreEnqueue lets it into activeQ: a gated pod nominated by another component holds
    nothing on that node; the same pod ungated counts."""
    gated = {"gated"}

    def pre_enqueue(pod: Pod) -> Status:
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("waiting",), "SchedulingGates") if pod.name in gated else Status()

    q = SchedulingQueue(less=lambda a, b: False, pre_enqueue=pre_enqueue, hints=HintMap([]), now=lambda: 0.0)
    q.add(dataclasses.replace(make_pod("gated", cpu="2"), nominated_node_name="n1"))
    assert q.where("uid-default-gated") == "gated"
    assert q.nominated_pods_for_node("n1") == []
    q.add(dataclasses.replace(make_pod("free", cpu="2"), nominated_node_name="n1"))
    assert [p.pod.name for p in q.nominated_pods_for_node("n1")] == ["free"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(-3, 3), st.integers(0, 4)), min_size=1, max_size=30))
def test_activeq_pops_in_the_same_order_with_priority_sorts_key(pods: list[tuple[int, int]]) -> None:
    """PrioritySort's `sort_key` (tuples compared in C) orders activeQ exactly as its `less`:
    priority, then the time the pod entered, then arrival order."""
    from scheduler.plugins.queuesort import PrioritySort

    sort = PrioritySort()
    orders = []
    for key in (None, sort.sort_key):
        clock = {"now": 0.0}
        q = SchedulingQueue(
            less=sort.less,
            pre_enqueue=lambda pod: Status(),
            hints=HintMap([]),
            now=lambda clock=clock: clock["now"],
            sort_key=key,
        )
        for i, (priority, at) in enumerate(pods):
            clock["now"] = float(at)
            q.add(make_pod(f"p{i}", priority=priority))
        popped = []
        while (qpi := q.pop()) is not None:
            popped.append(qpi.pod.name)
        orders.append(popped)
    assert orders[0] == orders[1] and len(orders[0]) == len(pods)
