"""`python -m scheduler bench`: scheduler_perf-shaped workloads run in memory.

Timing runs from the first measured pod taken from the queue to the last one bound, as
scheduler_perf measures; building the cluster and scheduling the initial pods are excluded.
"""

from __future__ import annotations

import argparse
import csv
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from scheduler.api.loader import ClusterObjects, load_cluster
from scheduler.api.objects import Node, Pod, parse_node, parse_pod
from scheduler.bench_koord import load_aware, numa, reservation
from scheduler.clock import VirtualClock
from scheduler.cluster.simulated import SimulatedCluster
from scheduler.config.features import parse_feature_gates
from scheduler.config.loader import default_config, load_config
from scheduler.frameworkext.extender import Extender
from scheduler.plugins.registry import new_registry
from scheduler.scheduler import Scheduler

NODE_CPU, NODE_MEMORY, NODE_PODS = "4", "32Gi", "110"
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


def make_pod(prefix: str, index: int, cpu: str = POD_CPU, memory: str = POD_MEMORY, spec: dict[str, Any] | None = None,
             labels: dict[str, str] | None = None, priority: int | None = None, namespace: str = "default") -> Pod:
    """scheduler_perf's default pod: one pause container requesting 100m / 500Mi."""
    name = f"{prefix}-{index:06d}"
    body: dict[str, Any] = {
        "containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": {"cpu": cpu, "memory": memory}}}],
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


def topology_spreading(nodes: int, init_pods: int, pods: int) -> Workload:
    """TopologySpreading: nodes across 3 zones; measured pods spread over zones (maxSkew 5)."""
    zones = ("zone-a", "zone-b", "zone-c")
    spread = {
        "topologySpreadConstraints": [
            {
                "maxSkew": 5,
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


def _affinity_workload(nodes: int, init_pods: int, pods: int, color: str, affinity: dict[str, Any], zone: bool = False) -> Workload:
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
    return _affinity_workload(nodes, init_pods, pods, "blue", {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}, zone=True)


def preferred_pod_affinity(nodes: int, init_pods: int, pods: int) -> Workload:
    """SchedulingPreferredPodAffinity: preferred (weight 1) affinity to red pods on the same host."""
    term = {"podAffinityTerm": _affinity_term("red", "kubernetes.io/hostname"), "weight": 1}
    return _affinity_workload(nodes, init_pods, pods, "red", {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [term]}})


def pod_anti_affinity(nodes: int, init_pods: int, pods: int) -> Workload:
    """SchedulingPodAntiAffinity: required anti-affinity to green pods on the same host (one per node)."""
    term = _affinity_term("green", "kubernetes.io/hostname")
    return _affinity_workload(nodes, init_pods, pods, "green", {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}})


def preferred_pod_anti_affinity(nodes: int, init_pods: int, pods: int) -> Workload:
    """SchedulingPreferredPodAntiAffinity: preferred (weight 1) anti-affinity to yellow pods on the same host."""
    term = {"podAffinityTerm": _affinity_term("yellow", "kubernetes.io/hostname"), "weight": 1}
    return _affinity_workload(nodes, init_pods, pods, "yellow", {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [term]}})


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


ZONES = ("zone-a", "zone-b", "zone-c")


def scheduling_pods_with_pvs(nodes: int, init_pods: int, pods: int) -> Workload:
    """SchedulingPodsWithPVs: nodes in 3 zones; each measured pod has its own WaitForFirstConsumer
    claim, and one available PV per claim is pinned to a zone (scheduler_perf's PV workloads, with
    delayed binding so VolumeBinding finds and binds the PV)."""
    from scheduler.api.storage import parse_persistent_volume, parse_persistent_volume_claim, parse_storage_class

    zone_key = "topology.kubernetes.io/zone"
    storage = ClusterObjects()
    storage.storage_classes.append(
        parse_storage_class({"metadata": {"name": "local-wffc"}, "provisioner": "kubernetes.io/no-provisioner",
                             "volumeBindingMode": "WaitForFirstConsumer"})
    )
    measured = []
    for i in range(pods):
        name = f"pvc-{i:06d}"
        storage.persistent_volume_claims.append(parse_persistent_volume_claim({
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "local-wffc",
                     "resources": {"requests": {"storage": "1Gi"}}},
        }))
        storage.persistent_volumes.append(parse_persistent_volume({
            "metadata": {"name": f"pv-{i:06d}"},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "local-wffc",
                     "csi": {"driver": "local.csi.example.com", "volumeHandle": f"vol-{i:06d}"},
                     "nodeAffinity": {"required": {"nodeSelectorTerms": [
                         {"matchExpressions": [{"key": zone_key, "operator": "In", "values": [ZONES[i % 3]]}]}]}}},
        }))
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
    from scheduler.config.loader import parse_config

    profile = {"schedulerName": "default-scheduler", "plugins": {"multiPoint": {"enabled": [{"name": p} for p in plugins]}}}
    doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "profiles": [profile]}
    return parse_config(doc, "bench")


def gang(nodes: int, init_pods: int, pods: int) -> Workload:
    """Gang: measured pods in Strict gangs of 8 and 64 members (alternating, 30s waiting time);
    the members of every 10th gang ask for 5 CPU, more than any node has, so it must bind nothing."""
    measured: list[Pod] = []
    g = 0
    while len(measured) < pods:
        size = GANG_SIZES[g % 2]
        cpu = "5" if g % GANG_TOO_BIG_EVERY == GANG_TOO_BIG_EVERY - 1 else POD_CPU
        for _ in range(min(size, pods - len(measured))):
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
    return Workload([make_node(i) for i in range(nodes)], init, measured, config=_plugin_config("Coscheduling"))


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


OPENB_NODES = "openb_node_list_all_node.csv"
OPENB_PODS = "openb_pod_list_default.csv"
GPU = "nvidia.com/gpu"
GPU_MODEL_LABEL = "node.koordinator.sh/gpu-model"
"""The node label holding a GPU model (Koordinator's name for it); `gpu_spec` selects on it."""


class TraceError(ValueError):
    """A trace file that is missing or does not hold the expected columns."""


def _read_csv(path: Path, columns: tuple[str, ...]) -> list[dict[str, str]]:
    if not path.is_file():
        raise TraceError(f"{path}: not found (the openb trace's CSVs are expected there)")
    with path.open(newline="") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in columns if c not in (reader.fieldnames or [])]
        if missing:
            raise TraceError(f"{path}: missing column(s) {', '.join(missing)}; found {', '.join(reader.fieldnames or [])}")
        return list(reader)


def _int_field(path: Path, row: int, column: str, text: str) -> int:
    try:
        value = int(text or "0")
    except ValueError:
        raise TraceError(f"{path}: row {row}: {column}: invalid value {text!r}; must be a whole number") from None
    if value < 0:
        raise TraceError(f"{path}: row {row}: {column}: invalid value {text!r}; must be 0 or more")
    return value


def openb_nodes(data: Path) -> list[Node]:
    """The trace's nodes: cpu, memory and whole GPUs as allocatable, the GPU model as a label."""
    path = data / OPENB_NODES
    nodes = []
    for i, row in enumerate(_read_csv(path, ("sn", "cpu_milli", "memory_mib", "gpu", "model")), start=2):
        name = row["sn"]
        alloc = {
            "cpu": f"{_int_field(path, i, 'cpu_milli', row['cpu_milli'])}m",
            "memory": f"{_int_field(path, i, 'memory_mib', row['memory_mib'])}Mi",
            "pods": NODE_PODS,
            GPU: str(_int_field(path, i, "gpu", row["gpu"])),
        }
        labels = {"kubernetes.io/hostname": name}
        if row["model"]:
            labels[GPU_MODEL_LABEL] = row["model"]
        nodes.append(parse_node({"metadata": {"name": name, "labels": labels}, "status": {"allocatable": alloc, "capacity": dict(alloc)}}))
    return nodes


def openb_pods(data: Path) -> list[Pod]:
    """The trace's tasks as pending pods in creation order: cpu, memory, whole GPUs, and the
    acceptable GPU models (`gpu_spec`, `|`-separated) as required node affinity."""
    path = data / OPENB_PODS
    rows = _read_csv(path, ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_spec", "creation_time"))
    keyed = [(_int_field(path, i, "creation_time", r["creation_time"]), i, r) for i, r in enumerate(rows, start=2)]
    keyed.sort(key=lambda t: (t[0], t[1]))
    pods = []
    for _, i, row in keyed:
        requests = {
            "cpu": f"{_int_field(path, i, 'cpu_milli', row['cpu_milli'])}m",
            "memory": f"{_int_field(path, i, 'memory_mib', row['memory_mib'])}Mi",
        }
        spec: dict[str, Any] = {}
        gpus = _int_field(path, i, "num_gpu", row["num_gpu"])
        if gpus:
            requests[GPU] = str(gpus)
        models = [m for m in row["gpu_spec"].split("|") if m]
        if models:
            term = {"matchExpressions": [{"key": GPU_MODEL_LABEL, "operator": "In", "values": models}]}
            spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}}
        name = row["name"]
        container = {"name": "main", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": requests, "limits": {GPU: str(gpus)} if gpus else {}}}
        pods.append(
            parse_pod({"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"}, "spec": {"containers": [container], **spec}})
        )
    return pods


def openb(data: Path, nodes: int | None, pods: int | None) -> Workload:
    """openb: Alibaba's GPU-cluster trace; every task is measured, in creation order, none first."""
    all_nodes = openb_nodes(data)
    all_pods = openb_pods(data)
    return Workload(all_nodes[:nodes] if nodes is not None else all_nodes, [], all_pods[:pods] if pods is not None else all_pods)


WORKLOADS: dict[str, tuple[Callable[[int, int, int], Workload], tuple[int, int, int]]] = {
    "Gang": (gang, (5000, 1000, 10000)),
    "SchedulingBasic": (scheduling_basic, (5000, 1000, 10000)),
    "TopologySpreading": (topology_spreading, (5000, 5000, 10000)),
    "PreemptionAsync": (preemption_async, (5000, 20000, 5000)),
    "PreemptionHeavy": (preemption_heavy, (5000, 20000, 500)),
    "SchedulingPodsWithPVs": (scheduling_pods_with_pvs, (5000, 1000, 3000)),
    "LoadAware": (load_aware, (5000, 1000, 10000)),
    "NUMA": (numa, (1000, 0, 5000)),
    "Reservation": (reservation, (5000, 0, 10000)),
    # scheduler_perf's 5000Nodes_5000Pods (anti-affinity: 5000Nodes_2000Pods) sizes.
    "SchedulingPodAffinity": (pod_affinity, (5000, 5000, 5000)),
    "SchedulingPreferredPodAffinity": (preferred_pod_affinity, (5000, 5000, 5000)),
    "SchedulingPodAntiAffinity": (pod_anti_affinity, (5000, 1000, 2000)),
    "SchedulingPreferredPodAntiAffinity": (preferred_pod_anti_affinity, (5000, 5000, 5000)),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The bench command's flags."""
    parser.add_argument("--workload", default="SchedulingBasic", help=f"one of {', '.join(WORKLOADS)}, openb")
    parser.add_argument("--data", help="folder holding the openb trace's CSVs (with --workload openb)")
    parser.add_argument("--cpu-time", action="store_true", help="also report measured pods per CPU-second of this process")
    parser.add_argument(
        "--api-latency", default="0s", help="wall-clock time every API call (bind, status patch, delete) takes, e.g. 2ms"
    )
    parser.add_argument("--nodes", type=int, default=None)
    parser.add_argument("--init-pods", type=int, default=None)
    parser.add_argument("--pods", type=int, default=None)
    parser.add_argument("--cluster", action="append", help="schedule every pending pod of these files instead")
    parser.add_argument("--config", help="KubeSchedulerConfiguration file")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--feature-gates", default="")
    parser.add_argument("--profile", action="store_true", help="print a cProfile summary of the measured part")
    parser.add_argument("--debug-scores", type=int, default=0, help="debugTopNScores during the run (rows built only when read)")
    parser.add_argument(
        "--log-debug-scores", action="store_true", help="log the top-N table of every attempt (INFO), as Koordinator does"
    )
    parser.add_argument("--max-attempts", type=int, default=None, help="stop after this many attempts (default: 100 per pod + 1000)")
    parser.add_argument(
        "--progress", type=float, default=0.0, metavar="SECONDS",
        help="every SECONDS, write a line `progress {\"phase\", \"scheduled\", \"of\"}` to stderr (0: never), for the console's progress bar",
    )
    parser.add_argument(
        "--plugin-timing", type=int, default=0, metavar="N", help="time each plugin in every Nth attempt (0: never), as the console's live page asks"
    )
    parser.add_argument(
        "--backend", choices=("simulated", "kubernetes"), default="simulated",
        help="kubernetes: through the kubernetes-client backend against an API server process (see scheduler/cluster/remote_bench.py)",
    )
    parser.add_argument("--kube-api-qps", type=float, default=0.0, help="client QPS with --backend kubernetes (0: unlimited)")
    parser.add_argument("--kube-api-burst", type=int, default=100, help="client burst with --backend kubernetes")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds the kubernetes backend run may take")


def _check_sizes(args: argparse.Namespace) -> None:
    from scheduler.cli import UsageError

    for flag, value, least in (("--nodes", args.nodes, 1), ("--init-pods", args.init_pods, 0), ("--pods", args.pods, 0)):
        if value is not None and value < least:
            raise UsageError(f"{flag}: invalid value {value}; must be {least} or more")
    if args.max_attempts is not None and args.max_attempts < 1:
        raise UsageError(f"--max-attempts: invalid value {args.max_attempts}; must be 1 or more")


def _workload(args: argparse.Namespace) -> tuple[str, Workload]:
    _check_sizes(args)
    if args.cluster:
        objs: ClusterObjects = load_cluster(args.cluster)
        bound = [p for p in objs.pods if p.node_name]
        pending = [p for p in objs.pods if not p.node_name]
        return "cluster", Workload(objs.nodes, bound, pending, extensions=objs.extensions, storage=objs)
    from scheduler.cli import UsageError

    if args.workload == "openb":
        if not args.data:
            raise UsageError("--data: required with --workload openb (the folder holding the trace's CSVs)")
        try:
            return "openb", openb(Path(args.data), args.nodes, args.pods)
        except TraceError as exc:
            raise UsageError(f"--data: {exc}") from exc
    if args.workload not in WORKLOADS:
        raise UsageError(f"--workload: unknown workload {args.workload!r}; valid: {', '.join(WORKLOADS)}")
    build, (n, i, p) = WORKLOADS[args.workload]
    return args.workload, build(
        args.nodes if args.nodes is not None else n,
        args.init_pods if args.init_pods is not None else i,
        args.pods if args.pods is not None else p,
    )


def _interleave_arrivals(sched: Scheduler, cluster: SimulatedCluster, clock: VirtualClock, work: Workload) -> None:
    """Pace the virtual clock by the measured pods placed, and create the next arrival each time
    another `arrival_every` of them got a node."""
    measured = {p.key for p in work.measured}
    pending = list(reversed(work.arrivals))
    placed = 0

    def on_attempt(record: Any) -> None:
        nonlocal placed
        if record.pod not in measured or record.outcome not in ("Scheduled", "Waiting"):
            return
        placed += 1
        if work.pace > 0:
            clock.advance(work.pace)
        if work.arrival_every > 0 and placed % work.arrival_every == 0 and pending:
            cluster.add_pod(pending.pop())

    sched.listeners.append(on_attempt)


def api_latency_seconds(text: str) -> float:
    """`--api-latency`: a Go duration (2ms, 500us) as seconds; exits 2 on anything else."""
    from scheduler.cli import UsageError
    from scheduler.config.decode import parse_duration

    nanos = parse_duration(text)
    if nanos is None or nanos < 0:
        raise UsageError(f"--api-latency: invalid value {text!r}; must be a duration such as 2ms or 500us")
    return nanos / 1e9


class _BindTally:
    """Counts bindings as the cluster reports them: measured pods apart from churn pods, and
    when the last measured pod was bound."""

    def __init__(self, measured: set[str]) -> None:
        self._measured = measured
        self.measured = 0
        self.churn = 0
        self.last_bound_at: float | None = None

    def on_event(self, event: Any) -> None:
        """A pod that gained a node was bound."""
        if event.kind != "Pod" or event.new is None or not event.new.node_name:
            return
        if event.old is not None and event.old.node_name:
            return
        if event.new.uid not in self._measured:
            self.churn += 1
            return
        self.measured += 1
        self.last_bound_at = time.perf_counter()


class _Progress:
    """Writes how many measured pods are bound, at most every `every` seconds of wall time."""

    def __init__(self, tally: _BindTally, total: int, every: float, err: TextIO) -> None:
        self.tally, self.total, self.every, self.err = tally, total, every, err
        self.next = time.monotonic() + every

    def write(self, phase: str) -> None:
        """One progress line now."""
        self.err.write("progress " + json.dumps({"phase": phase, "scheduled": self.tally.measured, "of": self.total}) + "\n")
        self.err.flush()
        self.next = time.monotonic() + self.every

    def on_event(self, event: Any) -> None:
        """A cluster change: time for a line?"""
        if time.monotonic() >= self.next:
            self.write("measured")


def run_bench(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Build the workload, schedule the initial pods, then measure the rest."""
    from scheduler.cli import peak_rss_mb

    name, work = _workload(args)
    config = load_config(args.config) if args.config else (work.config or default_config())
    if getattr(args, "backend", "simulated") == "kubernetes":
        from scheduler.cluster.remote_bench import run_remote

        return run_remote(args, name, work, config, out, err)
    clock = VirtualClock(START)
    objs = ClusterObjects(nodes=work.nodes, extensions=work.extensions)
    if work.storage is not None:
        objs.persistent_volumes = work.storage.persistent_volumes
        objs.persistent_volume_claims = work.storage.persistent_volume_claims
        objs.storage_classes = work.storage.storage_classes
        objs.csi_nodes = work.storage.csi_nodes
        objs.csi_drivers = work.storage.csi_drivers
        objs.csi_storage_capacities = work.storage.csi_storage_capacities
    if name == "cluster":
        objs.pods = list(work.init_pods)
    cluster = SimulatedCluster.from_objects(objs, clock)
    cluster.record_events = False
    cluster.api_latency = api_latency_seconds(args.api_latency)
    if args.debug_scores < 0:
        from scheduler.cli import UsageError

        raise UsageError(f"--debug-scores: invalid value {args.debug_scores}; must be 0 or more")
    if args.log_debug_scores:
        logging.basicConfig(level=logging.INFO, stream=err, format="%(message)s")
    sched = Scheduler(config, cluster, clock, new_registry(), seed=args.seed, extender=Extender(debug_top_n=args.debug_scores),
                      feature_gates=parse_feature_gates(args.feature_gates or ""), keep_records=False)
    if args.plugin_timing < 0:
        from scheduler.cli import UsageError

        raise UsageError(f"--plugin-timing: invalid value {args.plugin_timing}; must be 0 or more")
    sched.plugin_timing_every = args.plugin_timing
    sched.start()
    if getattr(args, "progress", 0.0) > 0:  # built; the initial pods go next
        err.write("progress " + json.dumps({"phase": "initial", "scheduled": 0, "of": len(work.measured)}) + "\n")
        err.flush()
    from scheduler.cli import check_max_attempts

    if name != "cluster":
        for pod in work.init_pods:
            cluster.add_pod(pod)
        # The initial pods and any reserve pods (a Reservation is scheduled as one) go first.
        initial = sum(1 for p in cluster.pods.values() if not p.node_name)
        sched.run(max_attempts=sched.attempt_count + check_max_attempts(args.max_attempts, initial))
    sched.first_pop_at = None
    sched.last_bound_at = None
    sched.scheduled_count = 0
    if (work.arrivals and work.arrival_every > 0) or work.pace > 0:
        _interleave_arrivals(sched, cluster, clock, work)
    tally = _BindTally({p.uid for p in work.measured})
    cluster.watch(tally.on_event)
    progress = _Progress(tally, len(work.measured), args.progress, err) if getattr(args, "progress", 0.0) > 0 else None
    if progress is not None:
        progress.write("measured")
        cluster.watch(progress.on_event)
    for pod in work.measured:
        cluster.add_pod(pod)
    profiler = None
    if args.profile:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    # CPU time is read around the whole run (reading it per binding costs more than a binding).
    cpu_started = time.process_time()
    end = sched.run(max_attempts=sched.attempt_count + check_max_attempts(args.max_attempts, len(work.measured) + len(work.arrivals)))
    cpu = time.process_time() - cpu_started
    sched.shutdown()
    if profiler is not None:
        import pstats

        profiler.disable()
        pstats.Stats(profiler, stream=err).sort_stats("cumulative").print_stats(30)
    if name == "Gang":
        check_gangs(cluster)
    cluster.unwatch(tally.on_event)
    if progress is not None:
        cluster.unwatch(progress.on_event)
        progress.write("done")
    # No pod bound (a pods-only file): no measured interval.
    bound, popped = tally.last_bound_at, sched.first_pop_at
    seconds = bound - popped if bound is not None and popped is not None else 0.0
    result: dict[str, Any] = {
        "workload": name,
        "nodes": len(work.nodes),
        "pods": len(work.measured),
        "scheduled": tally.measured,
        "seconds": round(seconds, 4),
        "pods_per_second": round(tally.measured / seconds, 1) if seconds > 0 else 0.0,
        "peak_rss_mb": peak_rss_mb(),
        "stop": end.reason,
        "churn_scheduled": tally.churn,
    }
    if work.verify is not None:
        result.update(work.verify(cluster))
    if args.cpu_time:
        result["cpu_seconds"] = round(cpu, 4)
        result["pods_per_cpu_second"] = round(tally.measured / cpu, 1) if cpu > 0 else 0.0
    if end.reason != "finished":
        err.write(f"bench: {end.describe()}\n")
    out.write(json.dumps(result) + "\n")
    return 0

