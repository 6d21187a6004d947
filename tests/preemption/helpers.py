"""Builders for the preemption tests: pods and nodes as upstream's st.MakePod/st.MakeNode build
them, fake plugins from upstream's testing framework, and a scheduler wired to a simulated cluster."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from scheduler.api.objects import Node, Pod, PodDisruptionBudget, parse_node, parse_pdb, parse_pod
from scheduler.clock import VirtualClock
from scheduler.cluster.faults import FaultInjector, FaultRule
from scheduler.cluster.simulated import SimulatedCluster
from scheduler.config.features import parse_feature_gates
from scheduler.config.loader import parse_config
from scheduler.framework.nodeinfo import NodeInfo, PodInfo
from scheduler.framework.types import Code, CycleState, PreFilterResult, Status, error
from scheduler.plugins.registry import new_registry
from scheduler.scheduler import Scheduler
from tests.support.builders import node_doc, pod_doc

START = 1767225600.0
NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
SMALL = ("100m", "100")
MEDIUM = ("200m", "200")
LARGE = ("300m", "300")
VERY_LARGE = ("500m", "500")


def mk_pod(
    name: str,
    node: str = "",
    priority: int | None = None,
    req: tuple[str, str] | None = None,
    labels: dict[str, str] | None = None,
    start: int | None = None,
    namespace: str = "default",
    uid: str | None = None,
    terminating: bool = False,
    conditions: list[dict[str, str]] | None = None,
    nominated: str = "",
    policy: str = "",
    spec: dict[str, Any] | None = None,
) -> Pod:
    """A pod as st.MakePod builds it; `start` is a start time in nanoseconds since the epoch."""
    requests = {"cpu": req[0], "memory": req[1]} if req else {}
    container = {"name": "c", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": requests}}
    meta: dict[str, Any] = {"uid": uid or name, "labels": labels or {}}
    if terminating:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    status: dict[str, Any] = {"phase": "Running" if node else "Pending"}
    if conditions:
        status["conditions"] = conditions
    if nominated:
        status["nominatedNodeName"] = nominated
    extra = {**(spec or {}), **({"preemptionPolicy": policy} if policy else {})}
    pod = parse_pod(
        pod_doc(name, namespace, node_name=node, priority=priority, spec=extra, containers=[container], status=status, **meta)
    )
    if start is not None:
        pod.start_time = start / 1e9
    return pod


def mk_node(name: str, cpu: str = "0", memory: str = "0", pods: int = 32, labels: dict[str, str] | None = None) -> Node:
    """A node as st.MakeNode().Capacity(...) builds it (32 pods unless said otherwise)."""
    return parse_node(node_doc(name, cpu, memory, pods, labels, capacity=True))


def topo_node(spec: str, res: tuple[str, str] = VERY_LARGE) -> Node:
    """Upstream's "node-a/zone1" naming: hostname, zone and region labels from the parts."""
    parts = spec.split("/")
    labels = dict(zip(("hostname", "zone", "region"), parts, strict=False))
    return mk_node(parts[0], res[0], res[1], labels=labels)


def mk_pdb(
    name: str, match: dict[str, str], allowed: int = 0, disrupted: tuple[str, ...] = (), namespace: str = "default"
) -> PodDisruptionBudget:
    """A PodDisruptionBudget with status.disruptionsAllowed and disruptedPods."""
    return parse_pdb(
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"selector": {"matchLabels": match}},
            "status": {"disruptionsAllowed": allowed, "disruptedPods": {p: "2026-01-01T00:00:00Z" for p in disrupted}},
        }
    )


def spread(key: str) -> dict[str, Any]:
    """A DoNotSchedule spread constraint (maxSkew 1) over pods with label foo."""
    return {
        "maxSkew": 1,
        "topologyKey": key,
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchExpressions": [{"key": "foo", "operator": "Exists"}]},
    }


# ----- fake plugins (upstream pkg/scheduler/testing/framework) -------------------------------------
class FakeFilter:
    """Counts Filter calls and returns the configured code for every node."""

    name = "FakeFilter"

    def __init__(self, code: Code = Code.SUCCESS) -> None:
        self.code = code
        self.calls = 0

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        self.calls += 1
        return Status(self.code) if self.code != Code.SUCCESS else Status()


class TrueFilter:
    name = "TrueFilter"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return Status()


class FalseFilter:
    name = "FalseFilter"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return Status(Code.UNSCHEDULABLE, ("injecting failure for pod " + pod.name,))


class MatchFilter:
    """Passes only the node whose name is the pod's name."""

    name = "MatchFilter"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        if node_info.name == pod.name:
            return Status()
        return Status(Code.UNSCHEDULABLE, ("injecting failure for pod " + pod.name,))


class ErrorOnLabel:
    """PreFilter with AddPod/RemovePod extensions failing on nodes labelled error=true."""

    name = "test-plugin"

    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        return None, Status()

    def pre_filter_extensions(self) -> ErrorOnLabel:
        return self

    def add_pod(self, state: CycleState, pod: Pod, to_add: PodInfo, node_info: NodeInfo) -> Status:
        if node_info.node.labels.get("error") == "true":
            return error(f"failed to add pod: {pod.name}")
        return Status()

    def remove_pod(self, state: CycleState, pod: Pod, to_remove: PodInfo, node_info: NodeInfo) -> Status:
        if node_info.node.labels.get("error") == "true":
            return error(f"failed to remove pod: {pod.name}")
        return Status()


class WaitAtPermit:
    """Holds every pod whose name starts with "wait" at Permit for a long time."""

    name = "WaitAtPermit"

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, float]:
        if pod.name.startswith("wait"):
            return Status(Code.WAIT), 600.0
        return Status(), 0.0


# ----- a scheduler over a simulated cluster ---------------------------------------------------
@dataclass
class Env:
    """A scheduler with chosen plugins over a simulated cluster on a virtual clock."""

    nodes: list[Node]
    pods: list[Pod] = field(default_factory=list)
    pdbs: list[PodDisruptionBudget] = field(default_factory=list)
    plugins: tuple[str, ...] = ("NodeResourcesFit",)
    args: dict[str, Any] | None = None
    fakes: dict[str, Any] = field(default_factory=dict)
    async_preemption: bool = True
    faults: list[FaultRule] | None = None
    default_profile: bool = False
    seed: int = 1

    def __post_init__(self) -> None:
        self.clock = VirtualClock(START)
        self.cluster = SimulatedCluster(clock=self.clock)
        for node in self.nodes:
            self.cluster.nodes[node.name] = node
        for pod in self.pods:
            self.cluster.pods[pod.uid] = pod
        for pdb in self.pdbs:
            self.cluster.pdbs[f"{pdb.meta.namespace}/{pdb.name}"] = pdb
        if self.faults is not None:
            self.cluster.faults = FaultInjector(list(self.faults))
        doc: dict[str, Any] = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
        if not self.default_profile:
            names = ["PrioritySort", *self.fakes, *self.plugins, "DefaultPreemption", "DefaultBinder"]
            profile: dict[str, Any] = {
                "schedulerName": "default-scheduler",
                "plugins": {"multiPoint": {"enabled": [{"name": n} for n in names], "disabled": [{"name": "*"}]}},
            }
            if self.args:
                profile["pluginConfig"] = [{"name": "DefaultPreemption", "args": self.args}]
            doc["profiles"] = [profile]
        config = parse_config(doc, "<test>")
        fakes = self.fakes
        registry = new_registry(*((name, _factory(obj)) for name, obj in fakes.items()))
        gates = parse_feature_gates(f"SchedulerAsyncPreemption={'true' if self.async_preemption else 'false'}")
        self.sched = Scheduler(config, self.cluster, self.clock, registry, seed=self.seed, feature_gates=gates)
        self.sched.start()

    @property
    def fwk(self) -> Any:
        return self.sched.profiles["default-scheduler"]

    @property
    def plugin(self) -> Any:
        return self.fwk.plugins["DefaultPreemption"]

    def node_infos(self) -> list[NodeInfo]:
        """NodeInfos sorted by name, as the upstream dry-run tests list them."""
        return sorted(self.sched.snapshot.node_infos, key=lambda info: info.name)

    def prefilter(self, pod: Pod) -> CycleState:
        state = CycleState()
        _, status, _ = self.fwk.run_pre_filter(state, pod)
        assert status.success, status
        return state

    def add(self, pod: Pod) -> None:
        self.cluster.add_pod(pod)

    def live(self, name: str, namespace: str = "default") -> Pod | None:
        return next((p for p in self.cluster.pods.values() if p.name == name and p.namespace == namespace), None)


def _factory(obj: Any) -> Callable[[Any, Any], Any]:
    return lambda args, handle: obj


def statuses_of(table: dict[str, Code], absent: Code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE) -> Callable[[str], Status]:
    """A NodeToStatusReader: the given codes, and `absent` for every other node."""
    return lambda name: Status(table.get(name, absent))


def offsets(*values: int) -> Callable[[int], int]:
    """A fixed sequence of dry-run offsets (upstream seeds math/rand with 4 and gets 4, 1, 3 for 5 nodes)."""
    it = iter(values)
    return lambda n: next(it) % n
