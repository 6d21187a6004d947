"""Asynchronous preemption (KEP-4832) in the running scheduler: gating, API failures, the gate
off path, Permit-waiting victims, nominations, metrics, and the race scenarios the KEP lists
("Consideration to race condition"; upstream's integration tests in
test/integration/scheduler/preemption/preemption_test.go exercise the same flows)."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.cluster.faults import FaultRule
from scheduler.framework.types import ActionType, ClusterEvent, Code
from tests.preemption.helpers import START, Env, WaitAtPermit, mk_node, mk_pod

MESSAGE = "default-scheduler: preempting to accommodate a higher priority pod"


def records_of(env: Env, name: str) -> list[Any]:
    return [r for r in env.sched.records if r.pod == f"default/{name}"]


def node_of(env: Env, name: str) -> str | None:
    pod = env.live(name)
    return pod.node_name or None if pod is not None else None


def simple_env(async_preemption: bool = True, faults: list[FaultRule] | None = None, victims: int = 1) -> Env:
    """node1 (1000m) full of low-priority 300m pods; a 900m high-priority preemptor arrives."""
    lows = [mk_pod(f"low{i}", node="node1", priority=0, req=("300m", "300"), start=i) for i in range(1, victims + 1)]
    env = Env([mk_node("node1", "1000m", "1000")], lows, async_preemption=async_preemption, faults=faults)
    return env


def preemptor(cpu: str = "900m", name: str = "preemptor", priority: int = 1000) -> Any:
    return mk_pod(name, priority=priority, req=(cpu, "100"))


# ----- the happy path ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("async_preemption", [True, False], ids=["async", "sync"])
def test_preemption_end_to_end(async_preemption: bool) -> None:
    env = simple_env(async_preemption, victims=3)
    env.add(preemptor())
    first = env.sched.schedule_one()
    assert first is not None
    assert (first.outcome, first.nominated_node) == ("Nominated", "node1")
    assert sorted(first.victims) == ["default/low1", "default/low2", "default/low3"]
    assert first.message == ("0/1 nodes are available: 1 Insufficient cpu.")
    # The preemptor is nominated at once, in memory and in the API.
    assert env.sched.queue.nominated_node_of("preemptor") == "node1"
    assert env.live("preemptor").nominated_node_name == "node1"
    if async_preemption:
        assert not env.cluster.deleted, "the API calls run outside the scheduling cycle"
        assert env.sched.tasks
    else:
        assert sorted(env.cluster.deleted) == ["low1", "low2", "low3"]
    env.sched.run()
    assert node_of(env, "preemptor") == "node1"
    for name in ("low1", "low2", "low3"):
        gone = env.cluster.deleted[name]
        condition = next(c for c in gone.conditions if c["type"] == "DisruptionTarget")
        assert (condition["status"], condition["reason"], condition["message"]) == ("True", "PreemptionByScheduler", MESSAGE)
    events = [(e.type, e.object, e.message) for e in env.cluster.events if e.reason == "Preempted"]
    assert sorted(events) == [("Normal", f"default/low{i}", "Preempted by pod preemptor on node node1") for i in (1, 2, 3)]
    m = env.sched.metrics.as_json()
    assert m["scheduler_preemption_attempts_total"][0]["value"] == 1
    assert (m["scheduler_preemption_victims"][0]["value"], m["scheduler_preemption_victims"][0]["sum"]) == (1, 3)
    executions = {s["labels"]["result"]: s["value"] for s in m["scheduler_preemption_goroutines_execution_total"]}
    assert executions == ({"success": 1.0} if async_preemption else {})


def test_lowest_priority_first_and_reprieve() -> None:
    """Only as many victims as needed: the most important pods are reprieved first."""
    lows = [
        mk_pod("a", node="node1", priority=5, req=("400m", "100"), start=1),
        mk_pod("b", node="node1", priority=1, req=("400m", "100"), start=2),
    ]
    env = Env([mk_node("node1", "1000m", "1000")], lows)
    env.add(preemptor("500m"))
    env.sched.run()
    assert sorted(env.cluster.deleted) == ["b"]
    assert node_of(env, "preemptor") == "node1"


# ----- PreEnqueue gating -----------------------------------------------------------------------------------------
def test_pre_enqueue_holds_the_preemptor_until_the_victims_are_gone() -> None:
    env = simple_env(faults=[FaultRule(verb="delete", pod="low1", delay=5.0)])
    p = preemptor()
    env.add(p)
    env.sched.schedule_one()
    env.sched._run_tasks()
    plugin = env.plugin
    status = plugin.pre_enqueue(p)
    assert (status.code, status.message) == (
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "waiting for the preemption for this pod to be finished",
    )
    # Anything that would move it back is answered by PreEnqueue: it stays gated.
    env.sched.queue.activate([p])
    assert env.sched.queue.where(p.uid) == "gated"
    assert env.sched.queue.info(p.uid).gated_message == "waiting for the preemption for this pod to be finished"
    assert env.sched.queue.pending()["gated"] == 1
    env.sched.run()
    assert node_of(env, "preemptor") == "node1"
    second = records_of(env, "preemptor")[-1]
    assert second.outcome == "Scheduled"
    assert second.at >= START + 5.0, "retried only after the delayed deletion finished"
    duration = env.sched.metrics.as_json()["scheduler_preemption_goroutines_duration_seconds"][0]
    assert duration["labels"] == {"result": "success"} and duration["sum"] >= 5.0


def test_pod_popped_from_backoff_while_preempting_is_held_again() -> None:
    env = simple_env(faults=[FaultRule(verb="delete", pod="low1", delay=5.0)])
    p = preemptor()
    env.add(p)
    env.sched.schedule_one()
    env.sched._run_tasks()
    # An event sends it to backoffQ, which PopFromBackoffQ pops without PreEnqueue.
    env.sched.queue.move_all(ClusterEvent("*", ActionType.ALL, "WildCardEvent"))
    assert env.sched.queue.where(p.uid) == "backoff"
    attempts = env.sched.queue.info(p.uid).attempts
    assert env.sched.schedule_one() is None
    assert env.sched.queue.where(p.uid) == "unschedulable"
    assert env.sched.queue.info(p.uid).attempts == attempts
    assert len(records_of(env, "preemptor")) == 1
    env.sched.run()
    assert node_of(env, "preemptor") == "node1"


def test_last_victim_gone_ends_the_wait_before_the_task_cleans_up() -> None:
    env = simple_env(faults=[FaultRule(verb="delete", pod="low2", delay=5.0)], victims=2)
    p = preemptor("1000m")
    env.add(p)
    env.sched.schedule_one()
    env.sched._run_tasks()
    evaluator = env.plugin.evaluator
    assert p.uid in evaluator.preempting
    assert evaluator.last_victim[p.uid].name == "low2"
    assert evaluator.is_pod_running_preemption(p.uid)
    # The last victim's deletion is observed before the task finishes: no longer running.
    env.cluster.delete_pod(env.live("low2"))
    assert p.uid in evaluator.preempting
    assert not evaluator.is_pod_running_preemption(p.uid)


def test_gate_off_never_holds() -> None:
    env = simple_env(async_preemption=False)
    assert env.plugin.pre_enqueue(preemptor()).success
    assert env.plugin.events_to_register() == []


# ----- API failures (fault injection) -----------------------------------------------------------------------------
@pytest.mark.parametrize("verb", ["delete", "patch"])
def test_async_failure_clears_nomination_and_activates(verb: str) -> None:
    env = simple_env(faults=[FaultRule(verb=verb, pod="low1", count=1, error="etcdserver: request timed out")], victims=3)
    p = preemptor()
    env.add(p)
    first = env.sched.schedule_one()
    assert first.outcome == "Nominated"
    env.sched._run_tasks()
    # low1 failed: the others were not touched, the nomination is gone, the pod is active.
    assert not env.cluster.deleted
    assert all(not env.live(n).conditions for n in ("low2", "low3"))
    assert env.sched.queue.nominated_node_of(p.uid) is None
    assert env.live("preemptor").nominated_node_name == ""
    assert env.sched.queue.where(p.uid) == "active"
    assert p.uid not in env.plugin.evaluator.preempting
    executions = {
        s["labels"]["result"]: s["value"] for s in env.sched.metrics.as_json()["scheduler_preemption_goroutines_execution_total"]
    }
    assert executions == {"error": 1.0}
    env.sched.run()
    assert node_of(env, "preemptor") == "node1", "never stuck: the retry preempts again and binds"
    assert sorted(env.cluster.deleted) == ["low1", "low2", "low3"]


def test_failure_of_the_last_victim_still_activates() -> None:
    env = simple_env(faults=[FaultRule(verb="delete", pod="low2", count=1, error="boom")], victims=2)
    p = preemptor("1000m")
    env.add(p)
    env.sched.schedule_one()
    env.sched._run_tasks()
    assert sorted(env.cluster.deleted) == ["low1"]
    assert env.sched.queue.where(p.uid) == "active"
    env.sched.run()
    assert node_of(env, "preemptor") == "node1"


def test_sync_failure_fails_post_filter_and_keeps_no_nomination() -> None:
    env = simple_env(async_preemption=False, faults=[FaultRule(verb="delete", pod="low1", count=1, error="boom")])
    p = preemptor()
    env.add(p)
    first = env.sched.schedule_one()
    # As upstream, a PostFilter error leaves the attempt Unschedulable with the error in its message.
    assert first.outcome == "Unschedulable"
    assert first.nominated_node is None
    assert first.message == "0/1 nodes are available: 1 Insufficient cpu. preemption: boom"
    assert env.sched.queue.nominated_node_of(p.uid) is None
    # As upstream, the pod waits in the unschedulable pool for an event or the 5-minute flush.
    env.sched.run()
    assert env.sched.queue.where(p.uid) == "unschedulable"
    env.clock.advance(300.0)
    assert env.sched.queue.flush_unschedulable_leftover() == 1
    env.sched.run()
    assert node_of(env, "preemptor") == "node1"


def test_sync_delay_blocks_the_cycle_in_virtual_time() -> None:
    env = simple_env(async_preemption=False, faults=[FaultRule(verb="delete", delay=2.0)])
    env.add(preemptor())
    env.sched.schedule_one()
    assert "low1" in env.cluster.deleted
    assert env.clock.now() == START + 2.0


def test_clearing_lower_nominations_failure_counts_as_error_but_preempts() -> None:
    env = simple_env(faults=[FaultRule(verb="patch", pod="mid", error="boom")])
    mid = mk_pod("mid", priority=100, req=("100m", "100"), nominated="node1", spec={"nodeSelector": {"nowhere": "x"}})
    env.add(mid)
    p = preemptor()
    env.add(p)
    env.sched.schedule_one()
    env.sched._run_tasks()
    assert "low1" in env.cluster.deleted
    executions = {
        s["labels"]["result"]: s["value"] for s in env.sched.metrics.as_json()["scheduler_preemption_goroutines_execution_total"]
    }
    assert executions == {"error": 1.0}
    assert env.sched.queue.where(p.uid) == "active"


# ----- nominations -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("async_preemption", [True, False], ids=["async", "sync"])
def test_lower_priority_nominated_pods_lose_their_nomination(async_preemption: bool) -> None:
    env = simple_env(async_preemption)
    mid = mk_pod("mid", priority=100, req=("100m", "100"), nominated="node1", spec={"nodeSelector": {"nowhere": "x"}})
    high = mk_pod("peer", priority=5000, req=("50m", "10"), nominated="node1", spec={"nodeSelector": {"nowhere": "x"}})
    env.add(mid)
    env.add(high)
    assert env.sched.queue.nominated_node_of(mid.uid) == "node1"
    p = preemptor("800m")
    env.add(p)
    # The peer (5000) pops first and fails on its nodeSelector; run the preemptor's cycle.
    while True:
        record = env.sched.schedule_one()
        if record is not None and record.pod == "default/preemptor":
            break
    env.sched._run_tasks()
    assert env.live("mid").nominated_node_name == ""
    assert env.sched.queue.nominated_node_of(mid.uid) is None
    assert env.sched.queue.nominated_node_of(p.uid) == "node1"


def test_no_candidates_clears_an_old_nomination() -> None:
    env = Env([mk_node("node1", "1000m", "1000")], [mk_pod("big", node="node1", priority=5000, req=("800m", "100"))])
    p = mk_pod("preemptor", priority=1000, req=("900m", "100"), nominated="node1")
    env.add(p)
    assert env.sched.queue.nominated_node_of(p.uid) == "node1"
    record = env.sched.schedule_one()
    assert record.outcome == "Unschedulable"
    assert record.message == (
        "0/1 nodes are available: 1 Insufficient cpu. "
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
    )
    assert env.sched.queue.nominated_node_of(p.uid) is None
    assert env.live("preemptor").nominated_node_name == ""


def test_terminating_victim_on_nominated_node_makes_the_pod_wait() -> None:
    victim = mk_pod(
        "low1",
        node="node1",
        priority=0,
        req=("800m", "100"),
        terminating=True,
        conditions=[{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}],
    )
    env = Env(
        [mk_node("node1", "1000m", "1000"), mk_node("node2", "1000m", "1000")],
        [victim, mk_pod("low2", node="node2", priority=0, req=("800m", "100"))],
    )
    env.add(mk_pod("preemptor", priority=1000, req=("900m", "100"), nominated="node1"))
    record = env.sched.schedule_one()
    assert record.outcome == "Unschedulable"
    assert record.message.endswith("preemption: not eligible due to a terminating pod on the nominated node.")
    assert "low2" not in env.cluster.deleted
    assert env.sched.queue.nominated_node_of("preemptor") == "node1", "the nomination is kept"


# ----- victims waiting at Permit ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("async_preemption", [True, False], ids=["async", "sync"])
def test_victim_waiting_at_permit_is_rejected_not_deleted(async_preemption: bool) -> None:
    env = Env([mk_node("node1", "1000m", "1000")], [], fakes={"WaitAtPermit": WaitAtPermit()}, async_preemption=async_preemption)
    env.add(mk_pod("wait-low", priority=0, req=("600m", "100")))
    waiting = env.sched.schedule_one()
    assert waiting.outcome == "Waiting"
    env.add(preemptor("800m"))
    first = env.sched.schedule_one()
    assert first.outcome == "Nominated" and first.victims == ["default/wait-low"]
    env.sched.run()
    assert node_of(env, "preemptor") == "node1"
    assert "wait-low" not in env.cluster.deleted
    assert env.live("wait-low").node_name == ""
    assert not env.live("wait-low").conditions, "a waiting pod is rejected, not marked for deletion"
    assert any(e.reason == "Preempted" and e.object == "default/wait-low" for e in env.cluster.events)
    rejected = [r for r in records_of(env, "wait-low") if r.outcome == "Rejected"]
    assert rejected and rejected[0].message == "preempted"


# ----- KEP-4832 "Consideration to race condition": pod1 preempting on node1, pod2 arrives ------------------------------
def race_env(node1_pods: list[Any], node1_cpu: str = "1000m", delay: float = 10.0) -> Env:
    """node1 with the given low-priority pods; node2 held by a pod nobody may preempt; deleting
    any victim takes `delay` virtual seconds (the first deletion only)."""
    pods = [*node1_pods, mk_pod("guard", node="node2", priority=100000, req=("1000m", "100"))]
    return Env(
        [mk_node("node1", node1_cpu, "10000"), mk_node("node2", "1000m", "10000")],
        pods,
        faults=[FaultRule(verb="delete", count=1, delay=delay)],
    )


def start_pod1(env: Env, cpu: str) -> None:
    env.add(mk_pod("pod1", priority=1000, req=(cpu, "100")))
    env.sched.run(until=START + 1.0)
    assert env.sched.queue.nominated_node_of("pod1") == "node1"
    assert env.plugin.evaluator.is_pod_running_preemption("pod1")


@pytest.mark.parametrize("priority", [1000, 500], ids=["equal", "lower"])
def test_race_pod2_not_higher_cannot_take_pod1s_place(priority: int) -> None:
    env = race_env([mk_pod("low1", node="node1", priority=0, req=("600m", "100"))])
    start_pod1(env, "800m")
    env.add(mk_pod("pod2", priority=priority, req=("300m", "100")))
    env.sched.run(until=START + 2.0)
    # Without pod1's nomination pod2 would fit node1 (600m + 300m); with it, it does not.
    assert node_of(env, "pod2") is None
    env.sched.run()
    assert node_of(env, "pod1") == "node1"
    assert node_of(env, "pod2") is None


def test_race_higher_pod2_may_take_the_node() -> None:
    env = race_env([mk_pod("low1", node="node1", priority=0, req=("600m", "100"))])
    start_pod1(env, "800m")
    env.add(mk_pod("pod2", priority=2000, req=("300m", "100")))
    env.sched.run(until=START + 2.0)
    assert node_of(env, "pod2") == "node1", "a higher-priority pod ignores pod1's nomination"
    env.sched.run()
    assert node_of(env, "pod1") is None
    assert node_of(env, "pod2") == "node1"


@pytest.mark.parametrize("priority", [1000, 500], ids=["equal", "lower"])
def test_race_pod2_not_higher_preempts_room_for_both(priority: int) -> None:
    lows = [
        mk_pod("low1", node="node1", priority=0, req=("1000m", "100"), start=1),
        mk_pod("low2", node="node1", priority=0, req=("700m", "100"), start=2),
    ]
    env = race_env(lows, node1_cpu="2000m")
    start_pod1(env, "1000m")
    assert env.sched.records[-1].victims == ["default/low2"]
    env.add(mk_pod("pod2", priority=priority, req=("900m", "100")))
    env.sched.run(until=START + 2.0)
    second = records_of(env, "pod2")[0]
    assert second.outcome == "Nominated" and second.nominated_node == "node1"
    # pod2's dry run counts pod1 as if it ran there, so it frees room for both.
    assert sorted(second.victims) == ["default/low1", "default/low2"]
    env.sched.run()
    assert node_of(env, "pod1") == "node1"
    assert node_of(env, "pod2") == "node1"
    assert sorted(env.cluster.deleted) == ["low1", "low2"]


def test_race_higher_pod2_preemption_ignores_pod1s_nomination() -> None:
    env = race_env([mk_pod("low1", node="node1", priority=0, req=("800m", "100"))])
    start_pod1(env, "800m")
    env.add(mk_pod("pod2", priority=2000, req=("800m", "100")))
    env.sched.run(until=START + 2.0)
    second = records_of(env, "pod2")[0]
    assert (second.outcome, second.nominated_node, second.victims) == ("Nominated", "node1", ["default/low1"])
    # pod1 is lower priority and nominated to the same node: it loses its nomination.
    assert env.sched.queue.nominated_node_of("pod1") is None
    env.sched.run()
    assert node_of(env, "pod2") == "node1"
    assert node_of(env, "pod1") is None
