"""GangScheduling and the Workload API (gates GenericWorkload and GangScheduling, alpha in v1.35).

Tables ported from kubernetes/kubernetes `pkg/scheduler/framework/plugins/gangscheduling/
gangscheduling_test.go` at 57923d93 (`Test_isSchedulableAfterPodAdded`,
`Test_isSchedulableAfterWorkloadAdded`, `TestGangSchedulingFlow`), with v1.35.4's Permit message
("... to be waiting on permit"); the loop tests are ours.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from scheduler.api.fields import FieldError
from scheduler.api.loader import ClusterObjects
from scheduler.api.objects import Pod
from scheduler.api.workload import parse_workload
from scheduler.clock import VirtualClock
from scheduler.cluster.simulated import SimulatedCluster
from scheduler.config.features import FeatureGateError, parse_feature_gates
from scheduler.config.loader import default_config
from scheduler.config.types import with_gated_plugins
from scheduler.framework.types import Code, CycleState, QueueingHint
from scheduler.plugins.gangscheduling import WAITING_AT_PERMIT, WAITING_TO_APPEAR, GangScheduling, WorkloadManager
from scheduler.plugins.registry import new_registry
from scheduler.scheduler import Scheduler
from tests.support.builders import make_node, make_pod

START = 1767225600.0
GATES = "GenericWorkload=true,GangScheduling=true"


def gang_pod(name: str, workload: str = "w1", group: str = "pg", key: str = "", namespace: str = "default", **kw: Any) -> Pod:
    ref = {"name": workload, "podGroup": group}
    if key:
        ref["podGroupReplicaKey"] = key
    return make_pod(name, namespace=namespace, spec={"workloadRef": ref}, **kw)


def workload_doc(name: str, groups: dict[str, int | None], namespace: str = "default") -> dict[str, Any]:
    pod_groups = [{"name": g, "policy": {"basic": {}} if n is None else {"gang": {"minCount": n}}} for g, n in groups.items()]
    return {
        "apiVersion": "scheduling.k8s.io/v1alpha1",
        "kind": "Workload",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"podGroups": pod_groups},
    }


# ----- queueing hints ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("pod", "added", "want"),
    [
        (gang_pod("p"), gang_pod("q"), QueueingHint.QUEUE),
        (gang_pod("p", key="3"), gang_pod("q", key="3"), QueueingHint.QUEUE),
        (gang_pod("p"), gang_pod("q", namespace="foo"), QueueingHint.QUEUE_SKIP),
        (gang_pod("p"), gang_pod("q", workload="w2"), QueueingHint.QUEUE_SKIP),
        (gang_pod("p"), gang_pod("q", group="pg2"), QueueingHint.QUEUE_SKIP),
        (gang_pod("p", key="3"), gang_pod("q", key="4"), QueueingHint.QUEUE_SKIP),
    ],
    ids=[
        "add a newPod which matches the pod's workload and pod group",
        "add a newPod which matches the pod's workload, pod group and replica key",
        "add a newPod which doesn't match the pod's namespace",
        "add a newPod which doesn't match the pod's workload name",
        "add a newPod which doesn't match the pod's pod group name",
        "add a newPod which doesn't match the pod's replica key",
    ],
)
def test_is_schedulable_after_pod_added(pod: Pod, added: Pod, want: QueueingHint) -> None:
    plugin = GangScheduling(FakeHandle(), WorkloadManager())
    assert plugin.is_schedulable_after_pod_added(pod, None, added) == want


@pytest.mark.parametrize(
    ("pod", "added", "want"),
    [
        (gang_pod("p"), workload_doc("w1", {"pg": 1}), QueueingHint.QUEUE),
        (gang_pod("p", workload="w2"), workload_doc("w1", {"pg": 1}), QueueingHint.QUEUE_SKIP),
        (gang_pod("p", namespace="ns1"), workload_doc("w1", {"pg": 1}, namespace="ns2"), QueueingHint.QUEUE_SKIP),
    ],
    ids=[
        "add a workload which matches the pod's workload name",
        "add a workload which doesn't match the pod's workload name",
        "add a workload which doesn't match the pod's workload namespace",
    ],
)
def test_is_schedulable_after_workload_added(pod: Pod, added: dict[str, Any], want: QueueingHint) -> None:
    plugin = GangScheduling(FakeHandle(), WorkloadManager())
    assert plugin.is_schedulable_after_workload_added(pod, None, added) == want


# ----- the flow of one pod (TestGangSchedulingFlow) ---------------------------------------------
@dataclass
class FakeWaiting:
    allowed: list[str] = field(default_factory=list)

    def allow(self, plugin: str) -> None:
        self.allowed.append(plugin)


@dataclass
class FakeCluster:
    extensions: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


@dataclass
class FakeHandle:
    workloads: list[dict[str, Any]] = field(default_factory=list)
    activated: list[str] = field(default_factory=list)
    waiting: dict[str, FakeWaiting] = field(default_factory=dict)

    def cluster(self) -> FakeCluster:
        return FakeCluster({"Workload": self.workloads})

    def now(self) -> float:
        return START

    def activate(self, pods: list[Pod]) -> None:
        self.activated.extend(p.name for p in pods)

    def get_waiting_pod(self, uid: str) -> FakeWaiting | None:
        return self.waiting.get(uid)


NS = "ns1"
WORKLOAD = workload_doc("gang-wl", {"pg1": 3, "pg2": 4}, NS)
BASIC = workload_doc("basic-wl", {"pg1": None}, NS)


def _p(name: str, group: str = "pg1", key: str = "", workload: str = "gang-wl") -> Pod:
    return gang_pod(name, workload=workload, group=group, key=key, namespace=NS)


P1, P2, P3, P4, P5 = _p("p1"), _p("p2"), _p("p3"), _p("p4", group="pg2"), _p("p5", key="2")
NON_GANG = make_pod("non-gang", namespace=NS)
BASIC_POD = _p("basic-pod", workload="basic-wl")


@dataclass
class Flow:
    pod: Pod
    initial: list[Pod]
    workloads: list[dict[str, Any]]
    want_pre_enqueue: tuple[Code, str] | None
    waiting_on_permit: list[Pod] = field(default_factory=list)
    want_permit: tuple[Code, str] | None = None
    want_activated: list[str] = field(default_factory=list)
    want_allowed: list[str] = field(default_factory=list)


FLOWS = {
    "non-gang pod succeeds immediately": Flow(NON_GANG, [], [WORKLOAD, BASIC], None),
    "basic policy pod succeeds immediately": Flow(BASIC_POD, [], [WORKLOAD, BASIC], None),
    "gang pod fails PreEnqueue when workload is not yet created": Flow(
        P1,
        [P2, P3, P4, P5],
        [],
        (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'waiting for pods\'s workload "gang-wl" to appear in scheduling queue'),
    ),
    "gang pod fails PreEnqueue when quorum is not met": Flow(
        P1, [P2, P4, P5], [WORKLOAD], (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, WAITING_TO_APPEAR)
    ),
    "gang pod passes PreEnqueue, but waits at Permit": Flow(
        P1, [P2, P3, P4, P5], [WORKLOAD], None, [P2, P4, P5], (Code.WAIT, WAITING_AT_PERMIT), want_activated=["p3"]
    ),
    "final gang pod arrives at Permit and allows all waiting pods from a gang": Flow(
        P1, [P2, P3, P4, P5], [WORKLOAD], None, [P2, P3, P4, P5], None, want_allowed=[P2.uid, P3.uid]
    ),
}


@pytest.mark.parametrize("flow", list(FLOWS.values()), ids=list(FLOWS))
def test_gang_scheduling_flow(flow: Flow) -> None:
    handle = FakeHandle(workloads=flow.workloads)
    manager = WorkloadManager()
    for pod in [*flow.initial, flow.pod]:
        manager.add_pod(pod)
    plugin = GangScheduling(handle, manager)  # type: ignore[arg-type]
    status = plugin.pre_enqueue(flow.pod)
    assert (None if status.success else (status.code, status.message)) == flow.want_pre_enqueue
    if not status.success:
        return
    state = CycleState()
    for other in flow.waiting_on_permit:
        assert plugin.reserve(state, other, "some-node").success
        assert plugin.permit(state, other, "some-node")[0].code == Code.WAIT
        handle.waiting[other.uid] = FakeWaiting()
    assert plugin.reserve(state, flow.pod, "some-node").success
    handle.activated.clear()
    status, _ = plugin.permit(state, flow.pod, "some-node")
    assert (None if status.success else (status.code, status.message)) == flow.want_permit
    if status.code == Code.WAIT:
        assert handle.activated == flow.want_activated
        plugin.unreserve(state, flow.pod, "some-node")
        info = manager.pod_group_info(flow.pod)
        assert info is not None and flow.pod.uid in info.unscheduled
        return
    allowed = sorted(uid for uid, w in handle.waiting.items() if w.allowed == ["GangScheduling"])
    assert allowed == sorted(flow.want_allowed)


# ----- the Workload API and the gates -------------------------------------------------------------
@pytest.mark.parametrize(
    ("groups", "error"),
    [
        ([], "spec.podGroups: Required value"),
        ([{"name": "a", "policy": {}}], "must specify exactly one of: `basic`, `gang`"),
        ([{"name": "a", "policy": {"gang": {"minCount": 0}}}], "must be greater than zero"),
        ([{"name": "a", "policy": {"basic": {}}}, {"name": "a", "policy": {"basic": {}}}], 'Duplicate value: "a"'),
        ([{"name": f"g{i}", "policy": {"basic": {}}} for i in range(9)], "must have at most 8 items"),
    ],
    ids=["no-groups", "no-policy", "min-count-zero", "duplicate", "too-many"],
)
def test_workload_validation(groups: list[dict[str, Any]], error: str) -> None:
    doc = {"metadata": {"name": "w", "namespace": "d"}, "spec": {"podGroups": groups}}
    with pytest.raises(FieldError, match=error.replace("`", ".").replace("(", ".").replace(")", ".")):
        parse_workload(doc)


def test_gang_scheduling_needs_generic_workload() -> None:
    with pytest.raises(FeatureGateError) as caught:
        parse_feature_gates("GangScheduling=true")
    assert str(caught.value) == "GangScheduling is enabled, but depends on features that are disabled: [GenericWorkload]"


def test_the_gate_adds_gang_scheduling_after_the_default_plugins_unless_disabled() -> None:
    config = default_config()
    on = with_gated_plugins(config, parse_feature_gates(GATES).enabled)
    names = [p.name for p in on.profiles[0].plugins.multi_point.enabled]
    assert names[-2:] == ["DefaultBinder", "GangScheduling"]
    assert with_gated_plugins(config, parse_feature_gates("").enabled) is config


# ----- the loop ---------------------------------------------------------------------------------------
def _engine(
    pods: list[Pod], workloads: list[dict[str, Any]], nodes: int = 3, cpu: str = "2"
) -> tuple[Scheduler, SimulatedCluster]:
    clock = VirtualClock(START)
    objs = ClusterObjects(nodes=[make_node(f"n{i}", cpu=cpu) for i in range(nodes)], pods=pods)
    objs.extensions["Workload"] = workloads
    cluster = SimulatedCluster.from_objects(objs, clock)
    sched = Scheduler(default_config(), cluster, clock, new_registry(), seed=1, feature_gates=parse_feature_gates(GATES))
    sched.start()
    return sched, cluster


def _bound(cluster: SimulatedCluster) -> dict[str, str]:
    return {p.name: p.node_name for p in cluster.pods.values() if p.node_name}


def test_a_whole_gang_binds_together() -> None:
    pods = [gang_pod(f"g{i}", cpu="1") for i in range(3)]
    sched, cluster = _engine(pods, [workload_doc("w1", {"pg": 3})])
    sched.run()
    assert sorted(_bound(cluster)) == ["g0", "g1", "g2"]


def test_a_gang_short_of_min_count_is_held_by_pre_enqueue_until_its_last_pod_comes() -> None:
    pods = [gang_pod(f"g{i}", cpu="1") for i in range(2)]
    sched, cluster = _engine(pods, [workload_doc("w1", {"pg": 3})])
    sched.run()
    assert _bound(cluster) == {}
    assert sched.records == []  # never attempted: gated before the queue
    cluster.add_pod(gang_pod("g2", cpu="1"))
    sched.run()
    assert sorted(_bound(cluster)) == ["g0", "g1", "g2"]


def test_a_gang_waits_for_its_workload() -> None:
    pods = [gang_pod(f"g{i}", cpu="1") for i in range(2)]
    sched, cluster = _engine(pods, [])
    sched.run()
    assert _bound(cluster) == {}
    cluster.update_object("Workload", workload_doc("w1", {"pg": 2}))
    sched.run()
    assert sorted(_bound(cluster)) == ["g0", "g1"]


def test_a_gang_that_does_not_fit_binds_nothing_and_times_out_at_permit() -> None:
    # Three nodes of 2 CPUs: three pods of 2 CPUs fit, the fourth does not; minCount is 4.
    pods = [gang_pod(f"g{i}", cpu="2") for i in range(4)]
    sched, cluster = _engine(pods, [workload_doc("w1", {"pg": 4})])
    sched.run(until=START + 301)
    assert _bound(cluster) == {}
    timeouts = [e for e in cluster.events if e.reason == "FailedScheduling" and "timeout" in e.message]
    assert len(timeouts) == 3
    assert all(e.message == "rejected due to timeout after waiting 5m0s at plugin GangScheduling" for e in timeouts)
    assert {e.at for e in timeouts} == {START + 300}
