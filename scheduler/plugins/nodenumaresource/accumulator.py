"""The CPU accumulator: which logical CPUs a pod gets on a node.

Upstream: koordinator-sh/koordinator `pkg/scheduler/plugins/nodenumaresource/cpu_accumulator.go`
(`takePreferredCPUs`, `takeCPUs` and the sorted free-CPU views they walk). FullPCPUs packs whole
physical cores into one NUMA node, then one socket, then as few sockets as possible;
SpreadByPCPUs spreads over physical cores; the NUMA allocate strategy picks the node or socket
with the least (LeastAllocated) or most (MostAllocated) CPUs in use.
"""

from __future__ import annotations

from scheduler.plugins.nodenumaresource.topology import EXCLUSIVE_NUMA, EXCLUSIVE_PCPU, AllocatedCPU, CPUDetail, CPUTopology

FULL_PCPUS = "FullPCPUs"
SPREAD_BY_PCPUS = "SpreadByPCPUs"
MOST_ALLOCATED = "MostAllocated"
LEAST_ALLOCATED = "LeastAllocated"
ERR_NOT_ENOUGH_CPUS = "not enough cpus available to satisfy request"
ERR_FAILED_TO_ALLOCATE = "failed to allocate cpus"


class CPUAllocationError(Exception):
    """The accumulator could not find the CPUs (the message is Koordinator's)."""


class _Accumulator:
    def __init__(
        self,
        topology: CPUTopology,
        max_ref_count: int,
        available: frozenset[int],
        allocated: dict[int, AllocatedCPU],
        needed: int,
        exclusive_policy: str,
        strategy: str,
    ) -> None:
        self.topology = topology
        self.max_ref_count = max_ref_count
        self.exclusive_in_cores: set[int] = set()
        self.exclusive_in_nodes: set[int] = set()
        for held in allocated.values():
            if held.exclusive == EXCLUSIVE_PCPU:
                self.exclusive_in_cores.add(held.detail.core)
            elif held.exclusive == EXCLUSIVE_NUMA:
                self.exclusive_in_nodes.add(held.detail.node)
        self.exclusive = exclusive_policy in (EXCLUSIVE_PCPU, EXCLUSIVE_NUMA)
        self.exclusive_policy = exclusive_policy
        self.allocatable: dict[int, CPUDetail] = {c: d for c, d in topology.details.items() if c in available}
        self.ref: dict[int, int] = {}
        if max_ref_count > 1:
            self.ref = {c: (allocated[c].ref_count if c in allocated else 0) for c in self.allocatable}
        self.needed = needed
        self.most = strategy == MOST_ALLOCATED
        self.result: set[int] = set()

    # ----- bookkeeping ----------------------------------------------------------------------------
    def take(self, cpus: list[int]) -> None:
        self.result.update(cpus)
        for cpu in cpus:
            self.allocatable.pop(cpu, None)
            if self.exclusive:
                detail = self.topology.details[cpu]
                if self.exclusive_policy == EXCLUSIVE_PCPU:
                    self.exclusive_in_cores.add(detail.core)
                elif self.exclusive_policy == EXCLUSIVE_NUMA:
                    self.exclusive_in_nodes.add(detail.node)
        self.needed -= len(cpus)

    def needs(self, n: int) -> bool:
        return self.needed >= n

    def satisfied(self) -> bool:
        return self.needed < 1

    def failed(self) -> bool:
        return self.needed > len(self.allocatable)

    def _excl_pcpu(self, d: CPUDetail) -> bool:
        return self.exclusive_policy == EXCLUSIVE_PCPU and d.core in self.exclusive_in_cores

    def _excl_numa(self, d: CPUDetail) -> bool:
        return self.exclusive_policy == EXCLUSIVE_NUMA and d.node in self.exclusive_in_nodes

    def _free_key(self, free: int) -> int:
        # MostAllocated prefers the fewest free CPUs, LeastAllocated the most.
        return free if self.most else -free

    def _core_ref(self, core: int) -> int:
        return sum(self.ref.get(c, 0) for c, d in self.allocatable.items() if d.core == core)

    def _sort_by_ref(self, cpus: list[int]) -> list[int]:
        return sorted(cpus, key=lambda c: (self.ref.get(c, 0), c))

    def _sort_cores(self, cores: list[int], cpus_in_cores: dict[int, list[int]]) -> list[int]:
        if self.max_ref_count > 1:
            return sorted(cores, key=lambda c: (-len(cpus_in_cores[c]), self._core_ref(c), c))
        return sorted(cores, key=lambda c: (-len(cpus_in_cores[c]), c))

    def extract_cpu(self, cpus: list[int]) -> list[int]:
        seen: set[int] = set()
        out = []
        for c in cpus:
            core = self.topology.details[c].core
            if core not in seen:
                seen.add(core)
                out.append(c)
        return out

    # ----- the sorted views -------------------------------------------------------------------------
    def free_cores_in_node(self, full_free_core: bool, filter_exclusive: bool) -> list[list[int]]:
        socket_free: dict[int, int] = {}
        cpus_in_cores: dict[int, list[int]] = {}
        for c, d in self.allocatable.items():
            if filter_exclusive and self._excl_numa(d):
                continue
            cpus_in_cores.setdefault(d.core, []).append(c)
            socket_free[d.socket] = socket_free.get(d.socket, 0) + 1
        per_core = self.topology.cpus_per_core()
        cores_in_nodes: dict[int, list[int]] = {}
        for core, cpus in cpus_in_cores.items():
            if full_free_core and len(cpus) != per_core:
                continue
            cores_in_nodes.setdefault(self.allocatable[cpus[0]].node, []).append(core)
        cpus_in_nodes: dict[int, list[int]] = {}
        for node, cores in cores_in_nodes.items():
            cpus_in_nodes[node] = [c for core in self._sort_cores(cores, cpus_in_cores) for c in sorted(cpus_in_cores[core])]

        def key(node: int) -> tuple[int, int, int]:
            socket = self.allocatable[cpus_in_nodes[node][0]].socket
            return (self._free_key(len(cpus_in_nodes[node])), self._free_key(socket_free[socket]), node)

        return [cpus_in_nodes[n] for n in sorted(cpus_in_nodes, key=key)]

    def free_cores_in_socket(self, full_free_core: bool) -> list[list[int]]:
        cpus_in_cores: dict[int, list[int]] = {}
        for c, d in self.allocatable.items():
            cpus_in_cores.setdefault(d.core, []).append(c)
        per_core = self.topology.cpus_per_core()
        cores_in_sockets: dict[int, list[int]] = {}
        for core, cpus in cpus_in_cores.items():
            if full_free_core and len(cpus) != per_core:
                continue
            cores_in_sockets.setdefault(self.allocatable[cpus[0]].socket, []).append(core)
        cpus_in_sockets = {
            s: [c for core in self._sort_cores(cores, cpus_in_cores) for c in sorted(cpus_in_cores[core])]
            for s, cores in cores_in_sockets.items()
        }
        return [cpus_in_sockets[s] for s in sorted(cpus_in_sockets, key=lambda s: (self._free_key(len(cpus_in_sockets[s])), s))]

    def free_cpus_in_node(self, filter_exclusive: bool) -> list[list[int]]:
        cpus_in_nodes: dict[int, list[int]] = {}
        node_free: dict[int, int] = {}
        socket_free: dict[int, int] = {}
        node_socket: dict[int, int] = {}
        for c, d in self.allocatable.items():
            if filter_exclusive and (self._excl_pcpu(d) or self._excl_numa(d)):
                continue
            cpus_in_nodes.setdefault(d.node, []).append(c)
            node_free[d.node] = node_free.get(d.node, 0) + 1
            socket_free[d.socket] = socket_free.get(d.socket, 0) + 1
            node_socket[d.node] = d.socket
        for node, cpus in cpus_in_nodes.items():
            ordered = sorted(cpus)
            if self.max_ref_count > 1:
                ordered = self._sort_by_ref(ordered)
            if filter_exclusive:
                ordered = self.extract_cpu(ordered)
            cpus_in_nodes[node] = ordered
        order = sorted(
            cpus_in_nodes, key=lambda n: (self._free_key(node_free[n]), self._free_key(socket_free[node_socket[n]]), n)
        )
        return [cpus_in_nodes[n] for n in order]

    def free_cpus_in_socket(self, filter_exclusive: bool) -> list[list[int]]:
        cpus_in_sockets: dict[int, list[int]] = {}
        for c, d in self.allocatable.items():
            if filter_exclusive and self._excl_pcpu(d):
                continue
            cpus_in_sockets.setdefault(d.socket, []).append(c)
        for socket, cpus in cpus_in_sockets.items():
            ordered = sorted(cpus)
            if self.max_ref_count > 1:
                ordered = self._sort_by_ref(ordered)
            if filter_exclusive:
                ordered = self.extract_cpu(ordered)
            cpus_in_sockets[socket] = ordered
        return [cpus_in_sockets[s] for s in sorted(cpus_in_sockets, key=lambda s: (self._free_key(len(cpus_in_sockets[s])), s))]

    def free_cpus(self, filter_exclusive: bool) -> list[int]:
        cpus_in_cores: dict[int, list[int]] = {}
        core_socket: dict[int, int] = {}
        core_node: dict[int, int] = {}
        node_free: dict[int, int] = {}
        socket_free: dict[int, int] = {}
        for c, d in self.allocatable.items():
            if filter_exclusive and (self._excl_pcpu(d) or self._excl_numa(d)):
                continue
            cpus_in_cores.setdefault(d.core, []).append(c)
            core_socket[d.core] = d.socket
            core_node[d.core] = d.node
            node_free[d.node] = node_free.get(d.node, 0) + 1
            socket_free[d.socket] = socket_free.get(d.socket, 0) + 1
        colo = {s: sum(1 for c in self.result if self.topology.details[c].socket == s) for s in socket_free}

        def key(core: int) -> tuple[int, ...]:
            socket, node = core_socket[core], core_node[core]
            ref = (self._core_ref(core),) if self.max_ref_count > 1 else ()
            return (
                -colo[socket],
                self._free_key(socket_free[socket]),
                self._free_key(node_free[node]),
                len(cpus_in_cores[core]),
                socket,
                *ref,
                core,
            )

        out: list[int] = []
        for core in sorted(cpus_in_cores, key=key):
            ordered = sorted(cpus_in_cores[core])
            if self.max_ref_count > 1:
                ordered = self._sort_by_ref(ordered)
            out += ordered
        return out

    def spread_cpus(self, cpus: list[int]) -> list[int]:
        """Round-robin over cores: one CPU of each core, then the second ones, ..."""
        if len(cpus) <= self.topology.cpus_per_core():
            return cpus
        prepared = list(cpus)
        out: list[int] = []
        while prepared:
            later: list[int] = []
            seen: set[int] = set()
            for cpu in prepared:
                core = self.topology.details[cpu].core
                if core in seen:
                    later.append(cpu)
                    continue
                out.append(cpu)
                seen.add(core)
            prepared = later
        return out


def take_cpus(
    topology: CPUTopology,
    max_ref_count: int,
    available: frozenset[int],
    allocated: dict[int, AllocatedCPU],
    needed: int,
    bind_policy: str,
    exclusive_policy: str,
    strategy: str,
) -> frozenset[int]:
    """`takeCPUs`: `needed` CPUs out of `available`; CPUAllocationError when they cannot be found."""
    acc = _Accumulator(topology, max_ref_count, available, allocated, needed, exclusive_policy, strategy)
    if acc.satisfied():
        return frozenset(acc.result)
    if acc.failed():
        raise CPUAllocationError(ERR_NOT_ENOUGH_CPUS)
    per_core = topology.cpus_per_core()
    full = bind_policy == FULL_PCPUS
    if full or per_core == 1:
        if acc.needed <= topology.cpus_per_node():
            for filter_exclusive in (True, False):
                for cpus in acc.free_cores_in_node(True, filter_exclusive):
                    if len(cpus) >= acc.needed:
                        acc.take(cpus[: acc.needed])
                        return frozenset(acc.result)
        if acc.needed <= topology.cpus_per_socket():
            for cpus in acc.free_cores_in_socket(True):
                if len(cpus) >= acc.needed:
                    acc.take(cpus[: acc.needed])
                    return frozenset(acc.result)
        # Sockets with the most free whole cores first (a stable sort, as Go's for these sizes).
        free = sorted(acc.free_cores_in_socket(True), key=len, reverse=True)
        unsatisfied = []
        for cpus in free:
            if not acc.needs(len(cpus)):
                unsatisfied.append(cpus)
            else:
                acc.take(cpus)
                if acc.satisfied():
                    return frozenset(acc.result)
        if acc.needs(per_core):
            for cpus in sorted(unsatisfied, key=len):
                for i in range(0, len(cpus), per_core):
                    acc.take(cpus[i : i + per_core])
                    if acc.satisfied():
                        return frozenset(acc.result)
                    if not acc.needs(per_core):
                        break
    if not full:
        if acc.needed <= topology.cpus_per_node():
            for filter_exclusive in (True, False):
                for cpus in acc.free_cpus_in_node(filter_exclusive):
                    if len(cpus) >= acc.needed:
                        acc.take(acc.spread_cpus(cpus)[: acc.needed])
                        return frozenset(acc.result)
        if acc.needed <= topology.cpus_per_socket():
            for filter_exclusive in (True, False):
                for cpus in acc.free_cpus_in_socket(filter_exclusive):
                    if len(cpus) >= acc.needed:
                        acc.take(acc.spread_cpus(cpus)[: acc.needed])
                        return frozenset(acc.result)
    for filter_exclusive in (True, False):
        for cpu in acc.spread_cpus(acc.free_cpus(filter_exclusive)):
            if acc.needs(1):
                acc.take([cpu])
            if acc.satisfied():
                return frozenset(acc.result)
    raise CPUAllocationError(ERR_FAILED_TO_ALLOCATE)


def take_preferred_cpus(
    topology: CPUTopology,
    max_ref_count: int,
    available: frozenset[int],
    preferred: frozenset[int],
    allocated: dict[int, AllocatedCPU],
    needed: int,
    bind_policy: str,
    exclusive_policy: str,
    strategy: str,
) -> frozenset[int]:
    """`takePreferredCPUs`: as many CPUs as possible from `preferred`, the rest from the others."""
    result: frozenset[int] = frozenset()
    preferred = available & preferred
    if preferred:
        result = take_cpus(
            topology, max_ref_count, preferred, allocated, min(needed, len(preferred)), bind_policy, exclusive_policy, strategy
        )
        needed -= len(result)
        available = available - preferred
    if needed > 0:
        result = result | take_cpus(
            topology, max_ref_count, available, allocated, needed, bind_policy, exclusive_policy, strategy
        )
    return result


__all__ = [
    "ERR_NOT_ENOUGH_CPUS",
    "FULL_PCPUS",
    "LEAST_ALLOCATED",
    "MOST_ALLOCATED",
    "SPREAD_BY_PCPUS",
    "CPUAllocationError",
    "take_cpus",
    "take_preferred_cpus",
]
