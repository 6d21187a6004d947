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
from scheduler.api.objects import CPU, MEMORY, parse_node
from scheduler.api.reservation import allocated_reservation, is_reserve_pod, parse_reservation
from scheduler.bench.workloads import Workload, make_node, make_pod
from scheduler.config.loader import parse_config

if TYPE_CHECKING:
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


def load_aware_node_usage(index: int) -> tuple[int, int]:
    """The LoadAware workload's NodeMetric usage of node `index`: CPU in millicores, memory in bytes."""
    return (index % 10) * 200, (index % 7) * 1600 * 1024 * 1024


def load_aware(nodes: int, init_pods: int, pods: int) -> Workload:
    """LoadAware: SchedulingBasic with a NodeMetric per node (0-45% cpu, 0-30% memory used)."""

    node_list = [make_node(i) for i in range(nodes)]
    metrics = [node_metric(n.name, *load_aware_node_usage(i)) for i, n in enumerate(node_list)]
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
    node = parse_node(
        {
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": alloc, "capacity": dict(alloc)},
        }
    )
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

    built = [_numa_node(i) for i in range(nodes)]
    lsr = {"koordinator.sh/qosClass": "LSR"}

    def pod(prefix: str, i: int) -> Any:
        cpus = str(2 + i % 7)
        spec = {
            "containers": [
                {
                    "name": "c",
                    "image": "registry.k8s.io/pause:3.10",
                    "resources": {"requests": {"cpu": cpus, "memory": "1Gi"}, "limits": {"cpu": cpus, "memory": "1Gi"}},
                }
            ]
        }
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


RESERVATIONS = 2000
RESERVATION_LABEL = "bench.koordinator.sh/reservation"
"""The label by which a Reservation of the bench names its owners (a labelSelector owner)."""


def _reservation(index: int) -> dict[str, Any]:
    """Reservation `r-NNNNN`: room for 3 default pods (2 for every other one of the first 1000),
    owners picked by a label, kept after use (allocateOnce false), never expiring."""
    name = f"r-{index:05d}"
    room = 2 if index < RESERVATIONS // 2 and index % 2 == 0 else 3
    requests = {"cpu": f"{100 * room}m", "memory": f"{500 * room}Mi"}
    return {
        "apiVersion": "scheduling.koordinator.sh/v1alpha1",
        "kind": "Reservation",
        "metadata": {"name": name, "uid": f"uid-{name}", "creationTimestamp": format_time(START - 3600 + index)},
        "spec": {
            "template": {
                "metadata": {"namespace": "default"},
                "spec": {
                    "containers": [
                        {"name": "reserve", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": requests}}
                    ]
                },
            },
            "owners": [{"labelSelector": {"matchLabels": {RESERVATION_LABEL: name}}}],
            "allocateOnce": False,
            "ttl": "0s",
        },
    }


def reservation(nodes: int, init_pods: int, pods: int) -> Workload:
    """Reservation: 2000 Reservations scheduled first, then measured pods of which every other one
    owns reservation `r-(i/2 mod 2000)` (so the first 1000 get three owners: those with room for
    two turn their third owner away); non-owners must leave reserved resources alone."""

    count = min(RESERVATIONS, max(nodes, 1))
    measured = []
    for i in range(pods):
        labels = {RESERVATION_LABEL: f"r-{(i // 2) % count:05d}"} if i % 2 == 0 else None
        measured.append(make_pod("pod", i, labels=labels))
    # Koordinator's shipped profile gives Reservation's score weight 5000 so that an owner takes its
    # reservation over emptier nodes; scoring every node lets an owner see its reservation's node
    # (with the default 10% sample it would usually not be among the nodes looked at).
    config = parse_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "percentageOfNodesToScore": 100,
            "profiles": [
                {
                    "schedulerName": "default-scheduler",
                    "plugins": {"multiPoint": {"enabled": [{"name": "Reservation", "weight": 5000}]}},
                }
            ],
        },
        "<bench>",
    )
    return Workload(
        [make_node(i) for i in range(nodes)],
        [make_pod("init", i) for i in range(init_pods)],
        measured,
        config=config,
        extensions={"Reservation": [_reservation(k) for k in range(count)]},
        verify=reservations_respected,
    )


def reservations_respected(cluster: SimulatedCluster) -> dict[str, Any]:
    """The Reservation workload's own assertions; raises AssertionError when one fails.

    - every Reservation is Available on a node;
    - an owner bound off its reservation only when the reservation had no room left for it (room
      only shrinks in this run, so "no room at the end" is exactly "no room when it was placed");
    - no non-owner allocated a reservation, and on every node holding reservations, the pods
      there plus what the reservations still hold fit the node's allocatable.
    """

    infos = {}
    for doc in cluster.extensions.get("Reservation", ()):
        r = parse_reservation(doc)
        status = doc.get("status") or {}
        if status.get("phase") != "Available" or not status.get("nodeName"):
            raise AssertionError(f"reservation {r.name} is {status.get('phase') or 'Pending'}, not Available on a node")
        infos[r.name] = (r, status["nodeName"], {CPU: 0, MEMORY: 0})
    owners_off = non_owner_taking = 0
    used: dict[str, dict[str, int]] = {}
    for pod in cluster.pods.values():
        if not pod.node_name or is_reserve_pod(pod):
            continue
        node_use = used.setdefault(pod.node_name, {CPU: 0, MEMORY: 0})
        for k in node_use:
            node_use[k] += pod.requests.get(k, 0)
        ref = allocated_reservation(pod)
        own = pod.labels.get(RESERVATION_LABEL)
        if own is None:
            non_owner_taking += ref is not None
            continue
        if ref is not None and ref[0] == own:
            reserved, node, allocated = infos[own]
            if node != pod.node_name:
                raise AssertionError(f"{pod.key} allocated {own} on {node} but is bound to {pod.node_name}")
            for k in allocated:
                allocated[k] += pod.requests.get(k, 0)
            continue
        if ref is not None:
            raise AssertionError(f"{pod.key} allocated {ref[0]}, which it does not own")
        owners_off += 1
    if non_owner_taking:
        raise AssertionError(f"{non_owner_taking} pods that own no reservation allocated one")
    stranded = []
    for pod in cluster.pods.values():
        own = pod.labels.get(RESERVATION_LABEL)
        if own is None or not pod.node_name or allocated_reservation(pod) is not None:
            continue
        reserved, _, allocated = infos[own]
        room = reserved.requests
        if all(allocated[k] + pod.requests.get(k, 0) <= room.get(k, 0) for k in allocated):
            stranded.append(pod.key)
    if stranded:
        raise AssertionError(f"{len(stranded)} owners bound off their reservation while it had room, e.g. {stranded[0]}")
    for reserved, node, allocated in infos.values():
        node_use = used.setdefault(node, {CPU: 0, MEMORY: 0})
        for k in node_use:
            node_use[k] += max(reserved.requests.get(k, 0) - allocated[k], 0)
    over = []
    for name, node_use in used.items():
        info = cluster.nodes[name] if name in cluster.nodes else None
        if info is None:
            continue
        alloc = info.allocatable
        if node_use[CPU] > alloc.get(CPU, 0) or node_use[MEMORY] > alloc.get(MEMORY, 0):
            over.append(name)
    if over:
        raise AssertionError(f"reserved resources taken on {len(over)} nodes, e.g. {over[0]}")
    return {
        "reservations": len(infos),
        "owners_on_reservation": sum(1 for p in cluster.pods.values() if p.node_name and allocated_reservation(p) is not None),
        "owners_turned_away": owners_off,
    }


__all__ = ["cpus_handed_out_once", "load_aware", "numa", "reservation", "reservations_respected"]
