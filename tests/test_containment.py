"""Faults beside the scheduling cycles never end the engine loop (kube-scheduler logs and carries
on): a plugin raising at PostBind, in Unreserve and in a queueing hint, a plugin controller whose
start raises, a record listener and a task that raise. Each is logged, counted in `schedconsole_background_errors_total{source}` with
its latest message, and scheduling goes on. On the simulated cluster, with and without the API
pool (binding cycles on pool threads when API calls take time). The same against a real
kube-apiserver, with its 500s: tests/realcluster/test_containment.py."""

from __future__ import annotations

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
