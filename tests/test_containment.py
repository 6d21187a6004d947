"""Faults beside the scheduling cycles never end the engine loop (kube-scheduler logs and carries
on): a plugin raising at PostBind, in Unreserve and in a queueing hint, a plugin controller whose
start raises, a record listener and a task that raise. Each is logged, counted in `schedconsole_background_errors_total{source}` with
its latest message, and scheduling goes on. On the simulated cluster, with and without the API
pool (binding cycles on pool threads when API calls take time). The same against a real
kube-apiserver, with its 500s: tests/realcluster/test_containment.py."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from scheduler.clock import VirtualClock
from scheduler.cluster.simulated import SimulatedCluster
from scheduler.config.loader import parse_config
from scheduler.scheduler import Scheduler
from tests.support import faulty
from tests.support.builders import make_node, make_pod


def errors(sched: Scheduler) -> dict[str, float]:
    return {s["labels"]["source"]: s["value"] for s in sched.metrics.as_json().get("schedconsole_background_errors_total", [])}


@pytest.mark.parametrize("latency", [0.0, 0.001], ids=["on-the-loop", "api-pool"])
def test_faults_after_binding_are_counted_and_the_loop_goes_on(latency: float) -> None:
    clock = VirtualClock(1767225600.0)
    cluster = SimulatedCluster(clock=clock, api_latency=latency)
    for i in range(2):
        cluster.add_node(make_node(f"n{i}", cpu=8, memory="16Gi"))
    registry, plugin = faulty.registry()
    sched = Scheduler(parse_config(faulty.config(), "test"), cluster, clock, registry, seed=1)
    seen: list[str] = []

    def broken_listener(record: Any) -> None:
        seen.append(record.pod)
        raise ValueError("the store is down")

    sched.listeners.append(broken_listener)
    sched.start()
    for i in range(4):
        cluster.add_pod(make_pod(f"p{i}", cpu="1", memory="1Gi"))
    cluster.add_pod(make_pod("rejected", cpu="1", memory="1Gi", labels={faulty.PERMIT: "reject"}))
    cluster.add_pod(make_pod("waiter", cpu="1", memory="1Gi", labels={faulty.WAIT: "yes"}))
    sched.submit(lambda: 1 / 0)  # a task that raises
    sched.run(until=clock.now() + 5)
    bound = {p.name for p in cluster.pods.values() if p.node_name}
    assert bound == {"p0", "p1", "p2", "p3"}
    # A node the waiter can use: the hint raises, the pod is queued all the same, and binds.
    cluster.add_node(make_node("ready", cpu=8, memory="16Gi", labels={faulty.READY: "true"}))
    sched.run(until=clock.now() + 30)
    assert any(p.name == "waiter" and p.node_name == "ready" for p in cluster.pods.values())
    counted = errors(sched)
    assert counted["PostBind/Faulty"] == plugin.post_binds == 5
    assert counted["Unreserve/Faulty"] == plugin.unreserves >= 1
    assert counted["QueueingHint/Faulty"] == plugin.hints >= 1
    assert counted["task"] == 1 and counted["record listener"] == len(seen) >= 6
    assert counted["controller/FaultyController"] == 1
    last = sched.metrics.last_background_error
    assert last["PostBind/Faulty"].startswith("RuntimeError: post-bind fault for default/")
    assert last["task"] == "ZeroDivisionError: division by zero"
    assert last["record listener"] == "ValueError: the store is down"


CYCLE_FAULTS = {
    "PreFilter": 'running PreFilter plugin "Faulty": prefilter fault for default/raise-prefilter',
    "Filter": 'running "Faulty" filter plugin: filter fault for default/raise-filter',
    "Score": 'running Score plugin "Faulty": score fault for default/raise-score',
    "Reserve": 'running Reserve plugin "Faulty": reserve fault for default/raise-reserve',
    "Permit": 'running Permit plugin "Faulty": permit fault for default/raise-permit',
    "Result": "'str' object has no attribute 'node_names'",
}


@pytest.mark.parametrize("latency", [0.0, 0.001], ids=["on-the-loop", "api-pool"])
def test_faults_within_the_scheduling_cycle_are_error_statuses(latency: float) -> None:
    """A plugin raising at PreFilter, Filter, Score, Reserve or Permit, and the cycle's own code
    raising on a plugin's unreadable answer: the attempt ends with an Error status as
    kube-scheduler's framework wraps it (FailedScheduling with that message, backoff), the fault
    is logged and counted, the other pods bind, and the pod binds once the fault is gone."""
    clock = VirtualClock(1767225600.0)
    cluster = SimulatedCluster(clock=clock, api_latency=latency)
    for i in range(2):
        cluster.add_node(make_node(f"n{i}", cpu=8, memory="16Gi"))
    registry, _ = faulty.registry()
    sched = Scheduler(parse_config(faulty.config(), "test"), cluster, clock, registry, seed=1)
    sched.start()
    for point in CYCLE_FAULTS:
        cluster.add_pod(make_pod(f"raise-{point.lower()}", cpu="1", memory="1Gi", labels={faulty.RAISE: point}))
    cluster.add_pod(make_pod("fine", cpu="1", memory="1Gi"))
    sched.run(until=clock.now() + 6)
    bound = {p.name for p in cluster.pods.values() if p.node_name}
    assert bound == {"fine"}
    assert not any(sched.cache.is_assumed(p.uid) for p in cluster.pods.values() if not p.node_name)
    counted = errors(sched)
    for point, message in CYCLE_FAULTS.items():
        key = f"default/raise-{point.lower()}"
        tries = [r for r in sched.records if r.pod == key]
        # Backoff 1 s, then 2 s: three attempts within 6 s, each an Error with upstream's message.
        assert [r.outcome for r in tries] == ["Error"] * 3, (point, [(r.outcome, r.message) for r in tries])
        assert {r.message for r in tries} == {message}
        assert tries[1].at - tries[0].at >= 1 and tries[2].at - tries[1].at >= 2
        events = [e for e in cluster.events if e.object == key]
        assert [(e.type, e.reason, e.message) for e in events] == [("Warning", "FailedScheduling", message)] * 3
        source = "scheduling cycle" if point == "Result" else f"{point}/Faulty"
        assert counted[source] == 3, (source, counted)
    last = sched.metrics.last_background_error
    assert last["Filter/Faulty"] == "RuntimeError: filter fault for default/raise-filter"
    assert last["scheduling cycle"] == "AttributeError: 'str' object has no attribute 'node_names'"
    attempts = {s["labels"]["result"]: s["value"] for s in sched.metrics.as_json()["scheduler_schedule_attempts_total"]}
    assert attempts == {"error": 18, "scheduled": 1}
    # The faults gone (a label update), every pod binds: nothing was left assumed or reserved.
    for pod in list(cluster.pods.values()):
        if faulty.RAISE in pod.labels:
            cluster.update_pod(pod.with_changes(meta=dataclasses.replace(pod.meta, labels={})))
    sched.run(until=clock.now() + 30)
    assert all(p.node_name for p in cluster.pods.values())
