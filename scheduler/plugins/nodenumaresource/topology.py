"""CPU topology, per-node topology options and CPU allocations of NodeNUMAResource.

Facts from koordinator-sh/koordinator `pkg/scheduler/plugins/nodenumaresource/cpu_topology.go`,
`topology_options.go`, `node_allocation.go` and `resource_manager.go`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scheduler.api.koordinator import KubeletCPUManagerPolicy, NodeResourceTopology, format_cpuset, parse_cpuset, quantity_value
from scheduler.plugins.nodenumaresource.numa import (
    NUMAResources,
    Resources,
    amplification_ratios,
    amplify,
    numa_node_json,
    sub_non_negative,
)

EXCLUSIVE_NONE = "None"
EXCLUSIVE_PCPU = "PCPULevel"
EXCLUSIVE_NUMA = "NUMANodeLevel"


@dataclass(frozen=True, slots=True)
class CPUDetail:
    """One logical CPU: its core (socket<<16 | core, unique per node), NUMA node and socket."""

    cpu: int
    core: int
    node: int
    socket: int


@dataclass(slots=True)
class CPUTopology:
    """A node's logical CPUs and the counts `CPUTopologyBuilder` derives."""

    details: dict[int, CPUDetail] = field(default_factory=dict)
    num_cpus: int = 0
    num_cores: int = 0
    num_nodes: int = 0
    num_sockets: int = 0

    @classmethod
    def build(cls, cpus: list[tuple[int, int, int, int]]) -> CPUTopology:
        """From (cpu id, core, socket, NUMA node) tuples, as the annotation lists them."""
        topo = cls()
        sockets: dict[int, dict[int, set[int]]] = {}
        for cpu, core, socket, node in cpus:
            core_id = socket << 16 | core
            topo.details[cpu] = CPUDetail(cpu, core_id, node, socket)
            nodes = sockets.setdefault(socket, {})
            cores = nodes.setdefault(node, set())
            cores.add(core_id)
        topo.num_sockets = len(sockets)
        topo.num_nodes = sum(len(nodes) for nodes in sockets.values())
        topo.num_cores = sum(len(cores) for nodes in sockets.values() for cores in nodes.values())
        topo.num_cpus = len(topo.details)
        return topo

    @property
    def valid(self) -> bool:
        """`IsValid`: sockets, nodes, cores and CPUs all non-zero."""
        return bool(self.num_sockets and self.num_nodes and self.num_cores and self.num_cpus)

    def cpus_per_core(self) -> int:
        """Logical CPUs per physical core."""
        return self.num_cpus // self.num_cores if self.num_cores else 0

    def cpus_per_socket(self) -> int:
        """Logical CPUs per socket."""
        return self.num_cpus // self.num_sockets if self.num_sockets else 0

    def cpus_per_node(self) -> int:
        """Logical CPUs per NUMA node."""
        return self.num_cpus // self.num_nodes if self.num_nodes else 0

    def cpus(self) -> frozenset[int]:
        """Every logical CPU id."""
        return frozenset(self.details)

    def to_json(self) -> dict[str, Any]:
        """`CPUTopology`'s JSON form."""
        return {
            "numCPUs": self.num_cpus,
            "numCores": self.num_cores,
            "numNodes": self.num_nodes,
            "numSockets": self.num_sockets,
            "cpuDetails": {str(c): cpu_info_json(d) for c, d in sorted(self.details.items())},
        }


def cpu_info_json(detail: CPUDetail, ref_count: int = 0, exclusive: str = "") -> dict[str, Any]:
    """`CPUInfo`'s JSON form."""
    return {
        "cpuID": detail.cpu,
        "coreID": detail.core,
        "nodeID": detail.node,
        "socketID": detail.socket,
        "refCount": ref_count,
        "exclusivePolicy": exclusive,
    }


_NRT_POLICIES = {"BestEffort": "BestEffort", "Restricted": "Restricted", "SingleNUMANodePodLevel": "SingleNUMANode"}


@dataclass(slots=True)
class TopologyOptions:
    """What the plugin knows of a node's CPUs (`TopologyOptions`)."""

    cpu_topology: CPUTopology | None = None
    reserved_cpus: frozenset[int] = frozenset()
    max_ref_count: int = 0
    policy: KubeletCPUManagerPolicy | None = None
    numa_topology_policy: str = ""
    # Each NUMA node's resources (`extractNUMANodeResources`, less the reserved CPUs in it), by id;
    # None when the NodeResourceTopology lists no zones.
    numa_node_resources: NUMAResources | None = None
    # `node.koordinator.sh/resource-amplification-ratio` on the NodeResourceTopology, if any.
    amplification_ratios: dict[str, float] | None = None

    def numa_nodes(self) -> list[int]:
        """`getNUMANodes`: the NUMA node ids with resources."""
        return [nid for nid, _ in self.numa_node_resources or ()]

    @classmethod
    def from_nrt(cls, nrt: NodeResourceTopology) -> TopologyOptions:
        """`NewTopologyOptions`: CPUs kubelet pinned, its reserved CPUs and the node reservation are reserved."""
        reserved: set[int] = set()
        for alloc in nrt.pod_cpu_allocs:
            if alloc.managed_by_kubelet and alloc.uid and alloc.cpuset:
                reserved |= alloc.cpuset
        policy = nrt.kubelet_policy or KubeletCPUManagerPolicy()
        reserved |= parse_cpuset(policy.reserved_cpus)
        reserved |= nrt.node_reserved_cpus
        numa_policy = next((_NRT_POLICIES[p] for p in nrt.topology_policies if p in _NRT_POLICIES), "")
        topology = CPUTopology.build([(c.id, c.core, c.socket, c.node) for c in nrt.cpus])
        numa: NUMAResources | None = None
        if nrt.numa_node_resources is not None:
            numa = tuple(
                (nid, {name: quantity_value(name, text) for name, text in res.items()}) for nid, res in nrt.numa_node_resources
            )
            for nid, res in numa:
                if res.get("cpu"):
                    res["cpu"] -= 1000 * sum(1 for c in reserved if c in topology.details and topology.details[c].node == nid)
        try:
            ratios = amplification_ratios(nrt.raw.get("metadata", {}).get("annotations") or {})
        except ValueError:
            ratios = None
        return cls(
            cpu_topology=topology,
            reserved_cpus=frozenset(reserved),
            max_ref_count=1,
            policy=policy,
            numa_topology_policy=numa_policy,
            numa_node_resources=numa,
            amplification_ratios=ratios,
        )

    def to_json(self) -> dict[str, Any]:
        """The `/cpuTopologyOptions` reply: cpuTopology, reservedCPUs, maxRefCount, policy."""
        out: dict[str, Any] = {
            "cpuTopology": self.cpu_topology.to_json() if self.cpu_topology is not None else None,
            "reservedCPUs": format_cpuset(self.reserved_cpus),
            "maxRefCount": self.max_ref_count,
        }
        if self.policy is not None:
            out["policy"] = self.policy.to_json()
        return out


@dataclass(slots=True)
class AllocatedCPU:
    """A CPU handed out on a node: how many pods hold it and their exclusive policy."""

    detail: CPUDetail
    ref_count: int
    exclusive: str


@dataclass(frozen=True, slots=True)
class PodAllocation:
    """The CPUs given to one pod (`PodAllocation`)."""

    uid: str
    namespace: str
    name: str
    cpuset: frozenset[int]
    exclusive: str = ""
    # The resources taken on each NUMA node (`NUMANodeResources`), by id.
    numa: tuple[tuple[int, Resources], ...] = ()

    def to_json(self) -> dict[str, Any]:
        """`PodAllocation`'s JSON form (omitempty fields left out)."""
        out: dict[str, Any] = {"uid": self.uid, "namespace": self.namespace, "name": self.name}
        if self.cpuset:
            out["cpuset"] = format_cpuset(self.cpuset)
        if self.exclusive:
            out["cpuExclusivePolicy"] = self.exclusive
        if self.numa:
            out["numaNodeResources"] = numa_node_json(self.numa)
        return out


@dataclass(slots=True)
class NodeAllocation:
    """The CPUs handed out on one node (`NodeAllocation`)."""

    node_name: str
    pods: dict[str, PodAllocation] = field(default_factory=dict)
    cpus: dict[int, AllocatedCPU] = field(default_factory=dict)
    # Resources taken per NUMA node (`allocatedResources`); pods whose CPUs lie in one NUMA node
    # (`singleNUMANode`) and in several (`sharedNode`), per NUMA node.
    numa: dict[int, Resources] = field(default_factory=dict)
    single: dict[int, set[str]] = field(default_factory=dict)
    shared: dict[int, set[str]] = field(default_factory=dict)

    def add(self, allocation: PodAllocation, topology: CPUTopology) -> None:
        """`addPodAllocation`: count each CPU once more (a pod already counted is left as is)."""
        if allocation.uid in self.pods:
            return
        self.pods[allocation.uid] = allocation
        used: set[int] = set()
        for cpu in allocation.cpuset:
            held = self.cpus.get(cpu)
            if held is None:
                detail = topology.details.get(cpu) or CPUDetail(cpu, 0, 0, 0)
                held = AllocatedCPU(detail, 0, allocation.exclusive)
                self.cpus[cpu] = held
            held.exclusive = allocation.exclusive
            held.ref_count += 1
            used.add(held.detail.node)
        sets = self.shared if len(used) > 1 else self.single
        for nid in used:
            sets.setdefault(nid, set()).add(allocation.uid)
        for nid, res in allocation.numa:
            have = self.numa.setdefault(nid, {})
            for name, amount in res.items():
                have[name] = have.get(name, 0) + amount

    def numa_status(self, count: int) -> list[str]:
        """`GetAllNUMANodeStatus`: idle, single (only single-NUMA pods) or shared, for NUMA nodes 0..count-1."""
        out = []
        for nid in range(count):
            single, shared = self.single.get(nid), self.shared.get(nid)
            out.append("idle" if not single and not shared else "single" if not shared else "shared")
        return out

    def numa_cpus(self, nid: int) -> int:
        """How many allocated CPUs lie in the NUMA node."""
        return sum(1 for held in self.cpus.values() if held.detail.node == nid)

    def available_numa(
        self, numa: NUMAResources, ratios: dict[str, float] | None, reusable: dict[int, Resources] | None = None
    ) -> tuple[dict[int, Resources], dict[int, Resources]]:
        """`getAvailableNUMANodeResources`: (left, taken) per NUMA node; with a cpu amplification
        ratio the CPUs held as cpusets count amplified."""
        available: dict[int, Resources] = {}
        allocated: dict[int, Resources] = {}
        ratio = (ratios or {}).get("cpu", 0.0)
        for nid, res in numa:
            taken = self.numa.get(nid)
            if taken is not None:
                if ratio > 1:
                    pinned = self.numa_cpus(nid) * 1000
                    taken = {**taken, "cpu": taken.get("cpu", 0) - pinned + amplify(pinned, ratio)}
                taken = sub_non_negative(taken, (reusable or {}).get(nid))
                allocated[nid] = taken
            available[nid] = sub_non_negative(res, taken)
        return available, allocated

    def release(self, uid: str) -> None:
        """`release`: give a pod's CPUs back."""
        allocation = self.pods.pop(uid, None)
        if allocation is None:
            return
        used: set[int] = set()
        for cpu in allocation.cpuset:
            held = self.cpus.get(cpu)
            if held is None:
                continue
            held.ref_count -= 1
            if held.ref_count == 0:
                del self.cpus[cpu]
            used.add(held.detail.node)
        for nid in used:
            self.shared.get(nid, set()).discard(uid)
            self.single.get(nid, set()).discard(uid)
        for nid, res in allocation.numa:
            have = self.numa.get(nid)
            if have is not None:
                self.numa[nid] = sub_non_negative(have, res)

    def available(self, topology: CPUTopology, max_ref_count: int, reserved: frozenset[int]) -> frozenset[int]:
        """`getAvailableCPUs`: CPUs not held `maxRefCount` times and not reserved."""
        full = {cpu for cpu, held in self.cpus.items() if held.ref_count >= max_ref_count}
        return topology.cpus() - full - reserved

    def allocated_json(self) -> dict[str, Any]:
        """The allocated CPUs as `CPUDetails` JSON."""
        return {str(cpu): cpu_info_json(h.detail, h.ref_count, h.exclusive) for cpu, h in sorted(self.cpus.items())}


__all__ = [
    "EXCLUSIVE_NONE",
    "EXCLUSIVE_NUMA",
    "EXCLUSIVE_PCPU",
    "AllocatedCPU",
    "CPUDetail",
    "CPUTopology",
    "NodeAllocation",
    "PodAllocation",
    "TopologyOptions",
    "cpu_info_json",
]
