"""Terminal pods: the pod informer's field selector, and pods turning Succeeded or Failed.

kube-scheduler lists pods with `status.phase!=Succeeded,status.phase!=Failed`
(kubernetes/kubernetes `pkg/scheduler/scheduler.go`, `newPodInformer`); a bound pod that turns
terminal reaches it as a deletion (`deleteAssignedPodFromCache`: cache RemovePod and the
AssignedPodDelete event, `pkg/scheduler/eventhandlers.go`).
"""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.api.objects import Pod
from scheduler.clock import VirtualClock
from scheduler.cluster.errors import APIError
from scheduler.cluster.events import WatchEvent
from scheduler.cluster.informer import pod_informer_view
from scheduler.cluster.simulated import SimulatedCluster
from scheduler.config.loader import default_config
from scheduler.frameworkext.handle import InformerFactory
from scheduler.plugins.registry import new_registry
from scheduler.scheduler import Scheduler
from tests.support.builders import make_node, make_pod

START = 1767225600.0


def pod(name: str, cpu: str, node: str = "", phase: str | None = None) -> Pod:
    made = make_pod(name, cpu=cpu, memory="32Mi", node_name=node)
    return made.with_changes(phase=phase) if phase else made


RUNNING = pod("r", "1", "n1", "Running")
DONE = RUNNING.with_changes(phase="Succeeded")
FAILED = RUNNING.with_changes(phase="Failed")


@pytest.mark.parametrize(
    ("event", "want"),
    [
        (WatchEvent("Pod", "ADDED", None, RUNNING), ("ADDED", None, RUNNING)),
        (WatchEvent("Pod", "ADDED", None, DONE), None),
        (WatchEvent("Pod", "MODIFIED", RUNNING, RUNNING), ("MODIFIED", RUNNING, RUNNING)),
        (WatchEvent("Pod", "MODIFIED", RUNNING, DONE), ("DELETED", RUNNING, None)),
        (WatchEvent("Pod", "MODIFIED", RUNNING, FAILED), ("DELETED", RUNNING, None)),
        (WatchEvent("Pod", "MODIFIED", DONE, FAILED), None),
        (WatchEvent("Pod", "MODIFIED", FAILED, RUNNING), ("ADDED", None, RUNNING)),
        (WatchEvent("Pod", "DELETED", RUNNING, None), ("DELETED", RUNNING, None)),
        (WatchEvent("Pod", "DELETED", DONE, None), None),
        (WatchEvent("Node", "ADDED", None, "n1"), ("ADDED", None, "n1")),
    ],
    ids=[
        "add-running",
        "add-succeeded-unseen",
        "update-running",
        "turns-succeeded-is-a-delete",
        "turns-failed-is-a-delete",
        "terminal-to-terminal-unseen",
        "leaves-terminal-is-an-add",
        "delete-running",
        "delete-terminal-unseen",
        "other-kinds-pass",
    ],
)
def test_pod_informer_view(event: WatchEvent, want: tuple[str, Any, Any] | None) -> None:
    seen = pod_informer_view(event)
    if want is None:
        assert seen is None
    else:
        assert seen is not None and (seen.type, seen.old, seen.new) == want


def start(nodes: int, pods: list[Pod]) -> tuple[Scheduler, SimulatedCluster]:
    clock = VirtualClock(START)
    cluster = SimulatedCluster(clock=clock)
    for i in range(nodes):
        name = "node-" + "abc"[i]
        cluster.nodes[name] = make_node(name, cpu="1", memory="1Gi")
    for p in pods:
        cluster.pods[p.uid] = p
    sched = Scheduler(default_config(), cluster, clock, new_registry(), seed=1)
    sched.start()
    return sched, cluster


def test_terminal_pods_hold_no_resources() -> None:
    # A Succeeded and a Failed 800m pod on two of three 1-CPU nodes; the 500m
    # pod fits all three, NodeResourcesFit 73 and BalancedAllocation 76 on each (as the
    # conformance case terminal-pods-hold-nothing derives from upstream's scorers).
    done = pod("done", "800m", "node-a", "Succeeded")
    crashed = pod("crashed", "800m", "node-b", "Failed")
    sched, _ = start(3, [done, crashed, pod("p", "500m")])
    assert [info.requested.milli_cpu for info in sched.snapshot.node_infos] == [0, 0, 0]
    sched.run()
    (record,) = sched.records
    assert record.outcome == "Scheduled"
    assert {n: (s["NodeResourcesFit"], s["NodeResourcesBalancedAllocation"]) for n, s in record.scores().items()} == {
        "node-a": (73, 76),
        "node-b": (73, 76),
        "node-c": (73, 76),
    }


def test_a_pod_turning_terminal_leaves_the_cache_and_wakes_waiting_pods() -> None:
    running = pod("running", "800m", "node-a", "Running")
    sched, cluster = start(1, [running, pod("p", "500m")])
    sched.run()
    assert [(r.outcome, r.message) for r in sched.records] == [
        (
            "Unschedulable",
            "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: "
            "1 No preemption victims found for incoming pod.",
        )
    ]
    assert sched.queue.where("uid-default-p") == "unschedulable"
    cluster.set_pod_phase(running, "Succeeded")
    # Gone from the cache at once; AssignedPodDelete moved the waiting pod out of the pool.
    assert sched.cache.pod(running.uid) is None
    assert sched.snapshot.node_infos[0].requested.milli_cpu == 0
    assert sched.queue.where("uid-default-p") in ("active", "backoff")
    sched.run()
    assert [(r.outcome, r.node) for r in sched.records][-1] == ("Scheduled", "node-a")
    assert cluster.pods[running.uid].phase == "Succeeded"


def test_a_pending_pod_turning_failed_leaves_the_queue() -> None:
    pending = pod("p", "2")
    sched, cluster = start(1, [pending])
    sched.run()
    assert sched.queue.where(pending.uid) == "unschedulable"
    cluster.set_pod_phase(pending, "Failed")
    assert sched.queue.where(pending.uid) is None


def test_terminal_phases_are_final() -> None:
    cluster = SimulatedCluster(clock=VirtualClock(START))
    cluster.pods[DONE.uid] = DONE
    with pytest.raises(APIError, match="cannot change from terminal phase Succeeded to Running"):
        cluster.set_pod_phase(DONE, "Running")


def test_plugin_informers_see_what_the_scheduler_sees() -> None:
    cluster = SimulatedCluster(clock=VirtualClock(START))
    running = pod("running", "1", "node-a", "Running")
    for p in (running, pod("done", "1", "node-a", "Succeeded")):
        cluster.pods[p.uid] = p
    informers = InformerFactory(cluster)
    assert [p.name for p in informers.pods()] == ["running"]
    seen: list[tuple[str, str]] = []
    informers.add_event_handler(lambda e: seen.append((e.type, e.old.phase if e.old else e.new.phase)))
    cluster.set_pod_phase(running, "Failed")
    assert seen == [("DELETED", "Running")]
