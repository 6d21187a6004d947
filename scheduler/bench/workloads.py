"""scheduler_perf-shaped workloads (kubernetes/kubernetes `test/integration/scheduler_perf`): the nodes,
initial pods and measured pods of each, and the openb trace."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scheduler.api.loader import ClusterObjects
from scheduler.api.objects import Node, Pod, parse_node, parse_pod
from scheduler.api.storage import parse_persistent_volume, parse_persistent_volume_claim, parse_storage_class
from scheduler.bench.openb import NODE_PODS, openb_nodes, openb_pods
from scheduler.cluster.simulated import SimulatedCluster
from scheduler.config.loader import parse_config

NODE_CPU, NODE_MEMORY = "4", "32Gi"
POD_CPU, POD_MEMORY = "100m", "500Mi"
START = 1767225600.0  # 2026-01-01T00:00:00Z


def make_node(index: int, labels: dict[str, str] | None = None) -> Node:
    """scheduler_perf's default node: 4 CPU, 32Gi, 110 pods."""
    name = f"node-{index:05d}"
    alloc = {"cpu": NODE_CPU, "memory": NODE_MEMORY, "pods": NODE_PODS}
    return parse_node(
        {
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
            "status": {"allocatable": alloc, "capacity": dict(alloc)},
        }
    )


def make_pod(
    prefix: str,
    index: int,
    cpu: str = POD_CPU,
    memory: str = POD_MEMORY,
    spec: dict[str, Any] | None = None,
    labels: dict[str, str] | None = None,
    priority: int | None = None,
    namespace: str = "default",
) -> Pod:
    """scheduler_perf's default pod: one pause container requesting 100m / 500Mi."""
    name = f"{prefix}-{index:06d}"
    body: dict[str, Any] = {
        "containers": [
            {"name": "pause", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": {"cpu": cpu, "memory": memory}}}
        ],
        **(spec or {}),
    }
    if priority is not None:
        body["priority"] = priority
    return parse_pod(
        {"metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}", "labels": labels or {}}, "spec": body}
    )


@dataclass(slots=True)
class Workload:
    """Nodes, pods scheduled first (not measured) and the measured pods."""

    nodes: list[Node]
    init_pods: list[Pod]
    measured: list[Pod]
    config: Any = None
    extensions: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    arrivals: list[Pod] = field(default_factory=list)
    arrival_every: int = 0
    """One pod of `arrivals` is created after every `arrival_every` measured pods are scheduled."""
    pace: float = 0.0
    """Virtual seconds each scheduled measured pod takes (so backoffs expire as they would live)."""
    storage: ClusterObjects | None = None
    """PersistentVolumes, claims and StorageClasses the pods use."""
    verify: Callable[[SimulatedCluster], dict[str, Any]] | None = None
    """Checks the final cluster; its fields are added to the result line."""


def scheduling_basic(nodes: int, init_pods: int, pods: int) -> Workload:
    """SchedulingBasic: default nodes and pods, no constraints."""
    return Workload(
        [make_node(i) for i in range(nodes)],
        [make_pod("init", i) for i in range(init_pods)],
        [make_pod("pod", i) for i in range(pods)],
    )


ZONES = ("zone-a", "zone-b", "zone-c")
SPREAD_MAX_SKEW = 5


def topology_spreading(nodes: int, init_pods: int, pods: int) -> Workload:
    """TopologySpreading: nodes across 3 zones; measured pods spread over zones (maxSkew 5)."""
    zones = ZONES
    spread = {
        "topologySpreadConstraints": [
            {
                "maxSkew": SPREAD_MAX_SKEW,
                "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"color": "blue"}},
            }
        ]
    }
    return Workload(
        [make_node(i, {"topology.kubernetes.io/zone": zones[i % 3]}) for i in range(nodes)],
        [make_pod("init", i, labels={"color": "blue"}) for i in range(init_pods)],
        [make_pod("pod", i, spec=spread, labels={"color": "blue"}) for i in range(pods)],
    )


AFFINITY_NAMESPACES = ("sched-1", "sched-0")
"""scheduler_perf's affinity workloads: initial pods in sched-0, measured ones in sched-1, terms naming both."""


def _affinity_term(color: str, key: str) -> dict[str, Any]:
    return {"labelSelector": {"matchLabels": {"color": color}}, "topologyKey": key, "namespaces": list(AFFINITY_NAMESPACES)}


def _affinity_workload(
    nodes: int, init_pods: int, pods: int, color: str, affinity: dict[str, Any], zone: bool = False
) -> Workload:
    """Every pod (initial and measured) carries the same affinity and the label it selects."""
    spec = {"affinity": affinity}
    return Workload(
        [make_node(i, {"topology.kubernetes.io/zone": "zone1"} if zone else None) for i in range(nodes)],
        [make_pod("init", i, spec=spec, labels={"color": color}, namespace="sched-0") for i in range(init_pods)],
        [make_pod("pod", i, spec=spec, labels={"color": color}, namespace="sched-1") for i in range(pods)],
    )


def pod_affinity(nodes: int, init_pods: int, pods: int) -> Workload:
    """SchedulingPodAffinity: required affinity to blue pods in the same zone (every node in zone1)."""
    term = _affinity_term("blue", "topology.kubernetes.io/zone")
    return _affinity_workload(
        nodes, init_pods, pods, "blue", {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}, zone=True
    )


def preferred_pod_affinity(nodes: int, init_pods: int, pods: int) -> Workload:
    """SchedulingPreferredPodAffinity: preferred (weight 1) affinity to red pods on the same host."""
    term = {"podAffinityTerm": _affinity_term("red", "kubernetes.io/hostname"), "weight": 1}
    return _affinity_workload(
        nodes, init_pods, pods, "red", {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [term]}}
    )


def pod_anti_affinity(nodes: int, init_pods: int, pods: int) -> Workload:
    """SchedulingPodAntiAffinity: required anti-affinity to green pods on the same host (one per node)."""
    term = _affinity_term("green", "kubernetes.io/hostname")
    return _affinity_workload(
        nodes, init_pods, pods, "green", {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    )


def preferred_pod_anti_affinity(nodes: int, init_pods: int, pods: int) -> Workload:
    """SchedulingPreferredPodAntiAffinity: preferred (weight 1) anti-affinity to yellow pods on the same host."""
    term = {"podAffinityTerm": _affinity_term("yellow", "kubernetes.io/hostname"), "weight": 1}
    return _affinity_workload(
        nodes, init_pods, pods, "yellow", {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [term]}}
    )


LOW_PRIORITY, HIGH_PRIORITY = 10, 1000
LOW_CPU, HIGH_CPU = "900m", "3000m"
PREEMPTOR_INTERVAL = 0.2
"""scheduler_perf's churn creates a high-priority pod every 200 ms."""
TARGET_RATE = 570.0
"""kube-scheduler's CI threshold for PreemptionAsync: the rate the 200 ms cadence is measured in."""


def preemption_async(nodes: int, init_pods: int, pods: int) -> Workload:
    """PreemptionAsync: nodes full of low-priority 900m pods; default pods are measured while a
    high-priority 3000m pod that must preempt arrives every 200 ms.

    The engine does not sleep, so "every 200 ms" is modelled by interleaving: a preemptor is
    created after every round(0.2 s x 570 pods/s) = 114 measured pods are scheduled, the number
    scheduled in 200 ms at the target rate. The virtual clock advances 1/570 s per measured pod,
    so a preemptor's 1 s backoff ends about 570 pods later, as it would at that rate, instead of
    only once the queue has drained.
    """
    every = max(1, round(PREEMPTOR_INTERVAL * TARGET_RATE))
    return Workload(
        [make_node(i) for i in range(nodes)],
        [make_pod("low", i, cpu=LOW_CPU, priority=LOW_PRIORITY) for i in range(init_pods)],
        [make_pod("pod", i) for i in range(pods)],
        arrivals=[make_pod("high", i, cpu=HIGH_CPU, priority=HIGH_PRIORITY) for i in range(pods // every + 1)],
        arrival_every=every,
        pace=1.0 / TARGET_RATE,
    )


def preemption_heavy(nodes: int, init_pods: int, pods: int) -> Workload:
    """PreemptionHeavy: every measured pod is a high-priority 3000m pod that must preempt three
    of the four low-priority 900m pods on some node."""
    return Workload(
        [make_node(i) for i in range(nodes)],
        [make_pod("low", i, cpu=LOW_CPU, priority=LOW_PRIORITY) for i in range(init_pods)],
        [make_pod("high", i, cpu=HIGH_CPU, priority=HIGH_PRIORITY) for i in range(pods)],
    )


def scheduling_pods_with_pvs(nodes: int, init_pods: int, pods: int) -> Workload:
    """SchedulingPodsWithPVs: nodes in 3 zones; each measured pod has its own WaitForFirstConsumer
    claim, and one available PV per claim is pinned to a zone (scheduler_perf's PV workloads, with
    delayed binding so VolumeBinding finds and binds the PV)."""
    zone_key = "topology.kubernetes.io/zone"
    storage = ClusterObjects()
    storage.storage_classes.append(
        parse_storage_class(
            {
                "metadata": {"name": "local-wffc"},
                "provisioner": "kubernetes.io/no-provisioner",
                "volumeBindingMode": "WaitForFirstConsumer",
            }
        )
    )
    measured = []
    for i in range(pods):
        name = f"pvc-{i:06d}"
        storage.persistent_volume_claims.append(
            parse_persistent_volume_claim(
                {
                    "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
                    "spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "storageClassName": "local-wffc",
                        "resources": {"requests": {"storage": "1Gi"}},
                    },
                }
            )
        )
        storage.persistent_volumes.append(
            parse_persistent_volume(
                {
                    "metadata": {"name": f"pv-{i:06d}"},
                    "spec": {
                        "capacity": {"storage": "1Gi"},
                        "accessModes": ["ReadWriteOnce"],
                        "storageClassName": "local-wffc",
                        "csi": {"driver": "local.csi.example.com", "volumeHandle": f"vol-{i:06d}"},
                        "nodeAffinity": {
                            "required": {
                                "nodeSelectorTerms": [
                                    {"matchExpressions": [{"key": zone_key, "operator": "In", "values": [ZONES[i % 3]]}]}
                                ]
                            }
                        },
                    },
                }
            )
        )
        measured.append(make_pod("pod", i, spec={"volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": name}}]}))
    return Workload(
        [make_node(i, {zone_key: ZONES[i % 3]}) for i in range(nodes)],
        [make_pod("init", i) for i in range(init_pods)],
        measured,
        storage=storage,
    )


GANG_SIZES = (8, 64)
GANG_TOO_BIG_EVERY = 10
"""The members of every 10th gang ask for more CPU than any node has: it must bind nothing."""


def _plugin_config(*plugins: str) -> Any:
    profile = {"schedulerName": "default-scheduler", "plugins": {"multiPoint": {"enabled": [{"name": p} for p in plugins]}}}
    doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "profiles": [profile]}
    return parse_config(doc, "bench")


def gang(nodes: int, init_pods: int, pods: int) -> Workload:
    """Gang: measured pods in Strict gangs of 8 and 64 members (alternating, 30s waiting time);
    the members of every 10th gang ask for 5 CPU, more than any node has, so it must bind nothing,
    nor must a last gang cut short by the pod count; the result's `meant_pending` counts both."""
    measured: list[Pod] = []
    meant_pending = 0  # members of the too-big gangs and of a last gang cut short
    g = 0
    while len(measured) < pods:
        size = GANG_SIZES[g % 2]
        cpu = "5" if g % GANG_TOO_BIG_EVERY == GANG_TOO_BIG_EVERY - 1 else POD_CPU
        members = min(size, pods - len(measured))
        if cpu != POD_CPU or members < size:
            meant_pending += members
        for _ in range(members):
            member = make_pod("pod", len(measured), cpu=cpu)
            annotations = {
                "gang.scheduling.koordinator.sh/name": f"gang-{g}",
                "gang.scheduling.koordinator.sh/min-available": str(size),
                "gang.scheduling.koordinator.sh/waiting-time": "30s",
            }
            fields = {f: getattr(member.meta, f) for f in member.meta.__slots__}
            member.meta = type(member.meta)(**{**fields, "annotations": annotations})
            measured.append(member)
        g += 1
    init = [make_pod("init", i) for i in range(init_pods)]
    return Workload(
        [make_node(i) for i in range(nodes)],
        init,
        measured,
        config=_plugin_config("Coscheduling"),
        verify=lambda cluster: {"meant_pending": meant_pending},
    )


def check_gangs(cluster: Any) -> None:
    """The Gang workload's own assertion: no Strict gang is partially bound."""
    bound: dict[str, int] = {}
    size: dict[str, int] = {}
    for pod in cluster.list_pods():
        name = pod.annotations.get("gang.scheduling.koordinator.sh/name")
        if name:
            size[name] = int(pod.annotations["gang.scheduling.koordinator.sh/min-available"])
            bound[name] = bound.get(name, 0) + (1 if pod.node_name else 0)
    partial = sorted(g for g, n in bound.items() if 0 < n < size[g])
    if partial:
        raise AssertionError(f"gangs partially bound: {', '.join(partial)}")


def openb(data: Path, nodes: int | None, pods: int | None) -> Workload:
    """openb: Alibaba's GPU-cluster trace; every task is measured, in creation order, none first."""
    all_nodes = openb_nodes(data)
    all_pods = openb_pods(data)
    return Workload(all_nodes[:nodes] if nodes is not None else all_nodes, [], all_pods[:pods] if pods is not None else all_pods)
