"""Builders for NodeNUMAResource tests."""

from __future__ import annotations

import json
from typing import Any

from scheduler.plugins.nodenumaresource.topology import CPUTopology


def build_topology(sockets: int, nodes_per_socket: int, cores_per_node: int, cpus_per_core: int) -> CPUTopology:
    """`buildCPUTopologyForTest`: CPUs numbered core by core, cores and NUMA nodes numbered across sockets."""
    return CPUTopology.build(topology_tuples(sockets, nodes_per_socket, cores_per_node, cpus_per_core))


def topology_tuples(
    sockets: int, nodes_per_socket: int, cores_per_node: int, cpus_per_core: int
) -> list[tuple[int, int, int, int]]:
    """(cpu, core, socket, node) for the test topology."""
    out = []
    cpu = core = node = 0
    for s in range(sockets):
        for _ in range(nodes_per_socket):
            for _ in range(cores_per_node):
                for _ in range(cpus_per_core):
                    out.append((cpu, core, s, node))
                    cpu += 1
                core += 1
            node += 1
    return out


def nrt(
    name: str,
    sockets: int,
    nodes_per_socket: int,
    cores_per_node: int,
    cpus_per_core: int,
    reserved: str = "",
    extra: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A NodeResourceTopology document with Koordinator's cpu-topology annotation."""
    detail = [
        {"id": c, "core": k, "socket": s, "node": n}
        for c, k, s, n in topology_tuples(sockets, nodes_per_socket, cores_per_node, cpus_per_core)
    ]
    annotations = {"node.koordinator.sh/cpu-topology": json.dumps({"detail": detail})}
    if reserved:
        annotations["kubelet.koordinator.sh/cpu-manager-policy"] = json.dumps({"policy": "static", "reservedCPUs": reserved})
    annotations.update(extra or {})
    return {
        "apiVersion": "topology.node.k8s.io/v1alpha1",
        "kind": "NodeResourceTopology",
        "metadata": {"name": name, "annotations": annotations},
        "topologyPolicies": ["None"],
        "zones": [],
    }
