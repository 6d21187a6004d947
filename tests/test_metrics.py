"""Metrics carry kube-scheduler's names and labels."""

from __future__ import annotations

from scheduler.api.objects import Pod
from scheduler.clock import VirtualClock
from scheduler.cluster.simulated import SimulatedCluster
from scheduler.config.types import SchedulerConfiguration
from scheduler.framework.nodeinfo import NodeInfo
from scheduler.framework.types import Code, CycleState, Status
from scheduler.scheduler import Scheduler
from tests.support.builders import make_node, make_pod
from tests.support.fakes import FailFilter, profile, registry


class BlockLabelled(FailFilter):
    """Rejects pods labelled block=yes everywhere."""

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return Status(Code.UNSCHEDULABLE, ("no",)) if pod.labels.get("block") == "yes" else Status()


def test_metric_names_and_labels() -> None:
    clock = VirtualClock(1767225600.0)
    cluster = SimulatedCluster(clock=clock)
    for name in ("a", "b"):
        cluster.nodes[name] = make_node(name)
    for pod in (make_pod("ok"), make_pod("blocked", labels={"block": "yes"})):
        cluster.pods[pod.uid] = pod
    block = BlockLabelled("Block")
    config = SchedulerConfiguration((profile(filters=["Block"]),), None, 1, 10, 16, "test")
    sched = Scheduler(config, cluster, clock, registry(block), seed=1)
    sched.start()
    sched.run()
    text = sched.metrics.exposition().decode()
    assert 'scheduler_schedule_attempts_total{profile="default-scheduler",result="scheduled"} 1.0' in text
    assert 'scheduler_schedule_attempts_total{profile="default-scheduler",result="unschedulable"} 1.0' in text
    assert 'scheduler_pending_pods{queue="unschedulable"} 1.0' in text
    assert 'scheduler_scheduling_attempt_duration_seconds_count{profile="default-scheduler",result="scheduled"} 1.0' in text
    assert (
        'scheduler_framework_extension_point_duration_seconds_count{extension_point="Filter",profile="default-scheduler",status="Success"}'
        in text
    )
    as_json = sched.metrics.as_json()
    assert {"labels": {"queue": "active"}, "value": 0.0} in as_json["scheduler_pending_pods"]
