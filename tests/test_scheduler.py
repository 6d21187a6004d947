"""The scheduling loop: sampling, start index, messages, queueing, Permit and binding failures."""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any

import pytest

from scheduler.clock import VirtualClock
from scheduler.cluster.simulated import SimulatedCluster
from scheduler.config.loader import default_config
from scheduler.config.types import Profile, SchedulerConfiguration
from scheduler.framework.types import ActionType, ClusterEvent, Code, fit_error_message
from scheduler.plugins.registry import new_registry
from scheduler.schedule_one import num_feasible_nodes_to_find
from scheduler.scheduler import Scheduler
from tests.support.builders import make_node, make_pod
from tests.support.fakes import Binder, FailFilter, Permit, TableScore, profile, registry

START = 1767225600.0


@pytest.mark.parametrize(
    ("percentage", "nodes", "want"),
    [
        (None, 10, 10),
        (None, 1000, 420),
        (40, 1000, 400),
        (None, 6000, 300),
        (40, 6000, 2400),
        (10, 1000, 100),
        (5, 1000, 100),
        (100, 99, 99),
        (None, 5000, 500),
    ],
    ids=lambda v: str(v),
)
def test_num_feasible_nodes_to_find(percentage: int | None, nodes: int, want: int) -> None:
    # Cases from schedule_one_test.go TestNumFeasibleNodesToFind.
    assert num_feasible_nodes_to_find(percentage, nodes) == want


def test_fit_error_message_sorts_the_reason_histogram() -> None:
    reasons = [("node(s) had untolerated taint(s)",), ("Insufficient cpu",), ("node(s) had untolerated taint(s)",)]
    assert (
        fit_error_message(3, "", reasons, "")
        == "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint(s)."
    )
    assert fit_error_message(3, "pre says no", [], "post says no") == "0/3 nodes are available: pre says no. post says no"


def config(*profiles: Profile, percentage: int | None = None) -> SchedulerConfiguration:
    return SchedulerConfiguration(profiles, percentage, 1, 10, 16, "test")


def start(profiles: list[Profile], plugins: list[Any], nodes: int = 3, pods: list[Any] | None = None, seed: int = 1) -> Scheduler:
    clock = VirtualClock(START)
    cluster = SimulatedCluster(clock=clock)
    for i in range(nodes):
        cluster.nodes[f"n{i}"] = make_node(f"n{i}")
    for pod in pods or []:
        cluster.pods[pod.uid] = pod
    sched = Scheduler(config(*profiles), cluster, clock, registry(*plugins), seed=seed)
    sched.start()
    return sched


def test_start_index_rotates_through_the_nodes() -> None:
    # 200 nodes at 50% sample 100 per pod; the second pod starts where the first stopped.
    sched = start(
        [profile(scores=[("S", 1)], percentage=50)], [TableScore("S", {})], nodes=200, pods=[make_pod("a"), make_pod("b")]
    )
    sched.run()
    first, second = sched.records
    assert set(first.totals()) == {f"n{i}" for i in range(100)}
    assert set(second.totals()) == {f"n{i}" for i in range(100, 200)}


def test_ties_are_broken_uniformly_with_a_seed() -> None:
    picks: Counter[str] = Counter()
    for seed in range(60):
        sched = start(
            [profile(scores=[("S", 1)])], [TableScore("S", {"n0": 5, "n1": 5, "n2": 5})], pods=[make_pod("p")], seed=seed
        )
        sched.run()
        picks[sched.records[0].node or ""] += 1
    assert set(picks) == {"n0", "n1", "n2"} and min(picks.values()) >= 8
    again = [start([profile(scores=[("S", 1)])], [TableScore("S", {})], pods=[make_pod("p")], seed=7) for _ in range(2)]
    for s in again:
        s.run()
    assert again[0].records[0].node == again[1].records[0].node


def test_unknown_scheduler_name_is_left_alone() -> None:
    odd = make_pod("odd", spec={"schedulerName": "elsewhere"})
    sched = start([profile(), profile("second")], [], pods=[odd, make_pod("p", spec={"schedulerName": "second"})])
    sched.run()
    assert [(r.pod, r.profile, r.outcome) for r in sched.records] == [("default/p", "second", "Scheduled")]
    assert sched.cluster.pods[odd.uid].node_name == ""


def test_unschedulable_pod_waits_for_a_helpful_event() -> None:
    block = FailFilter("Block", {f"n{i}": (Code.UNSCHEDULABLE, "blocked") for i in range(3)})
    block.events_to_register = lambda: [ClusterEvent("Node", ActionType.ADD)]  # type: ignore[attr-defined]
    sched = start([profile(filters=["Block"])], [block], pods=[make_pod("p")])
    sched.run()
    assert [r.outcome for r in sched.records] == ["Unschedulable"]
    assert sched.records[0].message == "0/3 nodes are available: 3 blocked."
    assert sched.queue.where("uid-default-p") == "unschedulable"
    sched.cluster.add_node(make_node("n3"))
    sched.run()
    assert [r.outcome for r in sched.records] == ["Unschedulable", "Scheduled"]
    assert sched.records[1].node == "n3" and sched.records[1].attempt == 2


def test_permit_timeout_rejects_on_the_virtual_clock() -> None:
    permit = Permit(timeout=30)
    sched = start([profile(permits=["Permit"])], [permit], pods=[make_pod("p")])
    sched.run(max_attempts=1)
    assert sched.records[0].outcome == "Waiting"
    waiting = sched.waiting["uid-default-p"]
    assert waiting.pending_plugins() == ["Permit"]
    sched.run(max_attempts=2)
    assert sched.clock.now() >= START + 30
    # The timeout ends the same attempt: its record turns from Waiting to Rejected.
    rejected = sched.records[0]
    assert rejected.outcome == "Rejected" and rejected.attempt == 1 and rejected.node is None
    assert rejected.message == "rejected due to timeout after waiting 30s at plugin Permit"
    assert sched.cache.is_assumed("uid-default-p") is False


def test_permit_allow_binds() -> None:
    permit = Permit(timeout=30)
    sched = start([profile(permits=["Permit"])], [permit], pods=[make_pod("p")])
    sched.run(max_attempts=1)
    sched.waiting["uid-default-p"].allow("Permit")
    sched.run(max_attempts=1)
    assert sched.cluster.pods["uid-default-p"].node_name in {"n0", "n1", "n2"}
    assert [r.outcome for r in sched.records] == ["Scheduled"]
    assert sched.clock.now() == START


def test_binding_failure_forgets_and_backs_off() -> None:
    binder = Binder(fail=True)
    sched = start([profile()], [binder], pods=[make_pod("p")])
    sched.run(max_attempts=3)
    outcomes = [(r.outcome, r.attempt) for r in sched.records]
    assert outcomes[:2] == [("Error", 1), ("Error", 2)]
    assert sched.records[0].message == 'running Bind plugin "Binder": binding refused'  # as RunBindPlugins wraps it
    assert not sched.cache.is_assumed("uid-default-p")
    assert int(sched.snapshot.pod_count.sum()) == 0
    binder.fail = False
    sched.run()
    assert sched.cluster.pods["uid-default-p"].node_name
    # Errors back off: 1 s after the first failure, 2 s after the second.
    assert sched.clock.now() >= START + 1


def test_assumed_pod_counts_before_binding_finishes() -> None:
    sched = start([profile()], [], nodes=1, pods=[make_pod("p", cpu="1")])
    sched.schedule_one()
    assert sched.cache.is_assumed("uid-default-p")
    assert int(sched.snapshot.requested[0, 0]) == 1000
    sched.run()
    assert not sched.cache.is_assumed("uid-default-p")
    assert int(sched.snapshot.requested[0, 0]) == 1000


def test_pods_left_unschedulable_for_five_minutes_are_retried() -> None:
    # A pod no event helps is retried once it has waited 5 minutes (flushUnschedulablePodsLeftover),
    # here while another pod waits 10 minutes at Permit and keeps the clock moving.
    block = FailFilter("Block", {f"n{i}": (Code.UNSCHEDULABLE, "blocked") for i in range(3)})
    permit = Permit(timeout=600)
    stuck = make_pod("stuck", spec={"schedulerName": "blocked"})
    waiting = make_pod("waiting")
    sched = start([profile(permits=["Permit"]), profile("blocked", filters=["Block"])], [block, permit], pods=[stuck, waiting])
    sched.run()
    attempts = [(r.pod, r.attempt, r.outcome) for r in sched.records if r.pod == "default/stuck"]
    assert attempts[:2] == [("default/stuck", 1, "Unschedulable"), ("default/stuck", 2, "Unschedulable")]
    second = [r for r in sched.records if r.pod == "default/stuck"][1]
    assert second.at >= START + 300


def test_deleting_a_nominated_pod_frees_its_node_for_lower_priority_pods() -> None:
    """`deletePodFromSchedulingQueue`: an unscheduled pod holding a nominated node is counted on
    it by pods of lower or equal priority; its deletion moves them out of the pool at once."""
    clock = VirtualClock(START)
    cluster = SimulatedCluster(clock=clock)
    cluster.nodes["n0"] = make_node("n0", cpu="4")
    # Nominated to n0 by an earlier preemption; of equal priority, so it counts there for `small`.
    big = dataclasses.replace(make_pod("big", cpu="4", priority=5), nominated_node_name="n0")
    small = make_pod("small", cpu="1", priority=5)
    for pod in (small, big):
        cluster.pods[pod.uid] = pod
    sched = Scheduler(default_config(), cluster, clock, new_registry(), seed=1)
    sched.start()
    sched.run(max_attempts=1)
    assert [(r.pod, r.outcome) for r in sched.records] == [("default/small", "Unschedulable")]
    assert sched.queue.where(small.uid) == "unschedulable"
    cluster.delete_pod(cluster.pods[big.uid])
    assert sched.queue.where(small.uid) in ("active", "backoff")
    sched.run()
    assert cluster.pods[small.uid].node_name == "n0"
