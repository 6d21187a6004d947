"""Bench workloads of Koordinator's LoadAwareScheduling and NodeNUMAResource.

LoadAware: SchedulingBasic's cluster where every node has a fresh NodeMetric, scheduled by the
default profile plus LoadAwareScheduling's Filter and Score. NUMA: 1000 nodes of 2 sockets x 32
cores with hyper-threads and 5000 LSR pods of 2-8 CPUs bound by NodeNUMAResource; the run checks
that no CPU is handed out twice.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from scheduler.api.fields import format_time
from scheduler.api.koordinator import ANNOTATION_RESOURCE_STATUS, parse_cpuset
from scheduler.api.objects import parse_node
from scheduler.config.loader import parse_config

if TYPE_CHECKING:
    from scheduler.bench import Workload
    from scheduler.cluster.simulated import SimulatedCluster

START = 1767225600.0


def _config(plugins: dict[str, Any]) -> Any:
    return parse_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "default-scheduler", "plugins": plugins}],
        },
        "<bench>",
    )


def node_metric(name: str, cpu_milli: int, memory: int) -> dict[str, Any]:
    """A NodeMetric reported at the bench's start time."""
    return {
        "apiVersion": "slo.koordinator.sh/v1alpha1",
        "kind": "NodeMetric",
        "metadata": {"name": name},
        "spec": {"metricCollectPolicy": {"reportIntervalSeconds": 60}},
        "status": {
            "updateTime": format_time(START),
            "nodeMetric": {"nodeUsage": {"resources": {"cpu": f"{cpu_milli}m", "memory": str(memory)}}},
        },
    }


def load_aware(nodes: int, init_pods: int, pods: int) -> Workload:
    """LoadAware: SchedulingBasic with a NodeMetric per node (0-45% cpu, 0-30% memory used)."""
    from scheduler.bench import Workload, make_node, make_pod

    node_list = [make_node(i) for i in range(nodes)]
    metrics = [node_metric(n.name, (i % 10) * 200, (i % 7) * 1600 * 1024 * 1024) for i, n in enumerate(node_list)]
    # As Koordinator's sample configuration: Filter, Score and Reserve (multiPoint), weight 1.
    config = _config({"multiPoint": {"enabled": [{"name": "LoadAwareScheduling", "weight": 1}]}})
    return Workload(
        node_list,
        [make_pod("init", i) for i in range(init_pods)],
        [make_pod("pod", i) for i in range(pods)],
        config=config,
        extensions={"NodeMetric": metrics},
    )


def _numa_node(index: int) -> tuple[Any, dict[str, Any]]:
    name = f"node-{index:05d}"
    alloc = {"cpu": "128", "memory": "512Gi", "pods": "110"}
    node = parse_node({"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}}, "status": {"allocatable": alloc, "capacity": dict(alloc)}})
    detail = []
    for socket in range(2):
        for core in range(32):
            # Linux numbering: the first threads of every core, then their siblings.
            for thread in range(2):
                cpu = thread * 64 + socket * 32 + core
                detail.append({"id": cpu, "core": core, "socket": socket, "node": socket})
    nrt = {
        "apiVersion": "topology.node.k8s.io/v1alpha1",
        "kind": "NodeResourceTopology",
        "metadata": {"name": name, "annotations": {"node.koordinator.sh/cpu-topology": json.dumps({"detail": detail})}},
        "topologyPolicies": ["None"],
        "zones": [],
    }
    return node, nrt


def numa(nodes: int, init_pods: int, pods: int) -> Workload:
    """NUMA: LSR pods of 2-8 CPUs (FullPCPUs by default) on 2 x 32-core hyper-threaded nodes."""
    from scheduler.bench import Workload, make_pod

    built = [_numa_node(i) for i in range(nodes)]
    lsr = {"koordinator.sh/qosClass": "LSR"}

    def pod(prefix: str, i: int) -> Any:
        cpus = str(2 + i % 7)
        spec = {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": {"cpu": cpus, "memory": "1Gi"}, "limits": {"cpu": cpus, "memory": "1Gi"}}}]}
        return make_pod(prefix, i, spec=spec, labels=lsr, priority=9000)

    return Workload(
        [n for n, _ in built],
        [pod("init", i) for i in range(init_pods)],
        [pod("pod", i) for i in range(pods)],
        config=_config({"multiPoint": {"enabled": [{"name": "NodeNUMAResource"}]}}),
        extensions={"NodeResourceTopology": [t for _, t in built]},
        verify=cpus_handed_out_once,
    )


def cpus_handed_out_once(cluster: SimulatedCluster) -> dict[str, Any]:
    """Every bound pod's cpuset, node by node: how many pods got one and how many CPUs were given twice."""
    seen: dict[str, set[int]] = {}
    twice = pinned = 0
    for pod in cluster.pods.values():
        text = pod.annotations.get(ANNOTATION_RESOURCE_STATUS)
        if not pod.node_name or not text:
            continue
        cpus = parse_cpuset(str(json.loads(text).get("cpuset", "")))
        taken = seen.setdefault(pod.node_name, set())
        twice += len(taken & cpus)
        taken |= cpus
        pinned += 1
    return {"pods_with_cpuset": pinned, "cpus_given_twice": twice}


__all__ = ["cpus_handed_out_once", "load_aware", "numa"]
