"""The shadow recorder's order and explanations, on a real Scheduler over the simulated cluster:
events are handed to the scheduler's handler and then the recorder's, as a live cluster's
informer delivers them. A pod the cluster's scheduler found no node for (PodScheduled=False) or
passed over leaves the order at once, and is compared when it binds; every pod that does not
agree carries an explanation."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.api.objects import Pod
from scheduler.clock import VirtualClock
from scheduler.cluster.events import WatchEvent
from scheduler.cluster.simulated import SimulatedCluster
from scheduler.config.loader import parse_config
from scheduler.kube import shadow
from scheduler.kube.shadow import ShadowRecorder
from scheduler.plugins.registry import new_registry
from scheduler.scheduler import Scheduler
from tests.support.builders import make_node, make_pod

DEFAULT = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
REFUSED = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/2 nodes are available"}


def setup() -> tuple[Scheduler, ShadowRecorder]:
    clock = VirtualClock(1767225600.0)
    cluster = SimulatedCluster(clock=clock)
    for node in (make_node("small", cpu=4, memory="16Gi"), make_node("big", cpu=16, memory="64Gi")):
        cluster.nodes[node.name] = node
    sched = Scheduler(parse_config(DEFAULT, "test"), cluster, clock, new_registry(), seed=1, keep_records=False)
    sched.start()
    return sched, ShadowRecorder(sched, "default-scheduler", keep=10)


def pending(name: str) -> Pod:
    # Another scheduler's pod: ours never queues it, the recorder looks at it under our profile.
    return make_pod(name, cpu="1", memory="1Gi", spec={"schedulerName": "the-cluster's"})


def deliver(sched: Scheduler, recorder: ShadowRecorder, type_: str, old: Any, new: Any) -> None:
    event = WatchEvent("Pod", type_, old, new)
    sched.on_event(event)
    recorder.on_event(event)


def test_refused_and_passed_over_pods_leave_the_order(monkeypatch: pytest.MonkeyPatch) -> None:
    sched, recorder = setup()
    a, b, c, d, e = (pending(n) for n in "abcde")
    for pod in (a, b, c, d, e):
        deliver(sched, recorder, "ADDED", None, pod)
    # a is refused by the cluster's scheduler: b, bound next, settles at once.
    deliver(sched, recorder, "MODIFIED", a, a.with_changes(conditions=[REFUSED]))
    deliver(sched, recorder, "MODIFIED", b, b.with_changes(node_name="big"))
    assert recorder.settled == 1 and recorder.counts["exact"] == 1
    assert [p["pod"] for p in recorder.report()["refused"]] == [a.key]
    # e binds while c and d stay unbound: after the grace both are let go, e settles.
    monkeypatch.setattr(shadow, "ORDER_GRACE_SECONDS", 0.0)
    deliver(sched, recorder, "MODIFIED", e, e.with_changes(node_name="big"))
    assert recorder.settled == 1
    sched.clock.advance_to(sched.clock.now() + 1)
    sched._run_tasks()
    assert recorder.settled == 2 and not recorder._order
    # a binds later, on the small node: compared at once on the cache then, and explained.
    deliver(sched, recorder, "MODIFIED", a, a.with_changes(node_name="small"))
    assert recorder.settled == 3 and recorder.counts["disagreed"] == 1 and not recorder.refused
    entry = recorder.report()["disagreements"][0]
    assert entry["pod"] == a.key and entry["ours"] == "big" and entry["theirs"] == "small"
    assert entry["explanation"].startswith("small scores ")
    assert "below our best big" in entry["explanation"] and "NodeResourcesFit -" in entry["explanation"]


def test_explanations() -> None:
    decision = shadow.Decision(
        "ns/p",
        "u",
        "default-scheduler",
        "big",
        "",
        {"big": {"A": 10, "B": 5}, "small": {"A": 4, "B": 5}},
        {"big": 15, "small": 9},
        {"tainted": "TaintToleration: untolerated"},
    )
    decision.theirs = "small"
    assert (
        shadow.explain(decision)
        == "small scores 9 under our profile, 6 below our best big (15): A -6 (small against big, weighted)"
    )
    decision.theirs = "tainted"
    assert (
        shadow.explain(decision)
        == "our profile filters tainted out (TaintToleration: untolerated); the cluster's scheduler found it feasible"
    )
    decision.theirs = "new"
    assert "not among the nodes our look evaluated" in shadow.explain(decision)
    decision.ours, decision.message = None, "0/2 nodes are available"
    assert shadow.explain(decision).startswith("our profile finds no node for it (0/2 nodes are available)")
