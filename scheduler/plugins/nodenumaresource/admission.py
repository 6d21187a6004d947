"""NodeNUMAResource's resource manager and NUMA admission.

Facts from koordinator-sh/koordinator `pkg/scheduler/plugins/nodenumaresource/`: plugin.go
(`getResourceOptions`, `filterAmplifiedCPUs`, `allocate`), topology_hint.go (`FilterByNUMANode`,
`GetPodTopologyHints`, `Allocate`), resource_manager.go (`Allocate`, `allocateResourcesByHint`,
`allocateCPUSet`, `GetTopologyHints`, `generateResourceHints`, `trimNUMANodeResources`), util.go
(`mergeTopologyPolicy`, `getNUMATopologyPolicy`, `getCPUBindPolicy`, `requestCPUBind`). The
plugin is its own (and the profile's only built-in) NUMA hint provider.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from scheduler.api.koordinator import (
    LABEL_NODE_CPU_BIND_POLICY,
    LABEL_NODE_NUMA_ALLOCATE_STRATEGY,
    LABEL_NUMA_TOPOLOGY_POLICY,
    PRIORITY_PROD,
    priority_class,
    qos_class,
)
from scheduler.api.objects import CPU, Node, Pod
from scheduler.framework.interface import Handle
from scheduler.framework.nodeinfo import NodeInfo
from scheduler.framework.types import Code, CycleState, Status, error, success, unresolvable, unschedulable
from scheduler.frameworkext import topologymanager as tm
from scheduler.plugins.nodenumaresource.accumulator import (
    FULL_PCPUS,
    SPREAD_BY_PCPUS,
    CPUAllocationError,
    take_preferred_cpus,
)
from scheduler.plugins.nodenumaresource.numa import (
    ResourceOptions,
    Resources,
    add,
    amplification_ratios,
    amplified_numa_resources,
    amplify,
    amplify_resources,
    distribute_evenly,
    resource_score,
    sub_non_negative,
)
from scheduler.plugins.nodenumaresource.topology import CPUTopology, NodeAllocation, PodAllocation, TopologyOptions

STATE_KEY = "NodeNUMAResource"
ERR_NOT_MATCH_NUMA_TOPOLOGY = "node(s) NUMA Topology policy not match"
ERR_INVALID_REQUESTED_CPUS = "the requested CPUs must be integer"
ERR_INVALID_CPU_TOPOLOGY = "node(s) invalid CPU Topology"
ERR_SMT_ALIGNMENT = "node(s) requested cpus not multiple cpus per core"
ERR_CPU_BIND_POLICY_CONFLICT = "node(s) cpu bind policy conflicts with pod's required cpu bind policy"
ERR_INVALID_CPU_AMPLIFICATION_RATIO = "node(s) invalid CPU amplification ratio"
ERR_INSUFFICIENT_AMPLIFIED_CPU = "Insufficient amplified cpu"
ERR_NOT_ENOUGH_CPUS = "not enough cpus available to satisfy request"
ERR_MISSING_NUMA_RESOURCES = "node(s) missing NUMA resources"
ERR_INSUFFICIENT_NUMA_NODE_RESOURCES = "node(s) Insufficient NUMA Node resources"
ERR_NO_NUMA_RESOURCES = "insufficient resources on NUMA Node"
NODE_FULL_PCPUS_ONLY = "FullPCPUsOnly"
NODE_SPREAD_BY_PCPUS = "SpreadByPCPUs"


@dataclass(slots=True)
class PreFilterState:
    """What PreFilter learned about the pod, and what Reserve gave it."""

    skip: bool = False
    request_cpu_bind: bool = False
    requested_milli_cpu: int = 0
    requests: dict[str, int] | None = None
    required_bind_policy: str = ""
    preferred_bind_policy: str = ""
    exclusive_policy: str = ""
    numa_policy: str = ""
    num_cpus_needed: int = 0
    allocation: PodAllocation | None = None
    numa_exclusive: str = ""

    def clone(self) -> PreFilterState:
        """A copy for a cloned cycle state (preemption dry runs)."""
        return dataclasses.replace(self)


def allow_use_cpuset(pod: Pod) -> bool:
    """`AllowUseCPUSet`: LSE/LSR pods of the prod priority class."""
    return qos_class(pod) in ("LSE", "LSR") and priority_class(pod) == PRIORITY_PROD


def node_cpu_bind_policy(node: Node, options: TopologyOptions) -> str:
    """`GetNodeCPUBindPolicy`: the node label, or kubelet's static policy with full-pcpus-only."""
    label = node.labels.get(LABEL_NODE_CPU_BIND_POLICY, "")
    policy = options.policy
    if label == NODE_FULL_PCPUS_ONLY or (
        policy is not None and policy.policy == "static" and policy.option("full-pcpus-only") == "true"
    ):
        return NODE_FULL_PCPUS_ONLY
    if label == NODE_SPREAD_BY_PCPUS:
        return label
    return "None"


def filter_by_required_policy(policy: str, available: frozenset[int], topology: CPUTopology) -> frozenset[int]:
    """`filterCPUsByRequiredCPUBindPolicy`: whole free cores (FullPCPUs) or one CPU per core (SpreadByPCPUs)."""
    by_core: dict[int, list[int]] = {}
    for cpu in available:
        detail = topology.details.get(cpu)
        if detail is not None:
            by_core.setdefault(detail.core, []).append(cpu)
    if policy == FULL_PCPUS:
        per_core = topology.cpus_per_core()
        return frozenset(c for cpus in by_core.values() if len(cpus) == per_core for c in cpus)
    if policy == SPREAD_BY_PCPUS:
        return frozenset(min(cpus) for cpus in by_core.values())
    return available


def satisfies_required_policy(policy: str, cpus: frozenset[int], topology: CPUTopology) -> bool:
    """`satisfiedRequiredCPUBindPolicy`."""
    cores = {topology.details[c].core for c in cpus if c in topology.details}
    if policy == FULL_PCPUS:
        return len(cores) * topology.cpus_per_core() == len(cpus)
    if policy == SPREAD_BY_PCPUS:
        return len(cores) == len(cpus)
    return True


def node_resources(info: NodeInfo, requested: bool) -> Resources:
    """A NodeInfo's allocatable or requested resources as a resource list."""
    res = info.requested if requested else info.allocatable
    return {CPU: res.milli_cpu, "memory": res.memory, "ephemeral-storage": res.ephemeral_storage, **res.scalar_resources}


class NUMAResourceManager:
    """Topology options and allocations per node, and the NUMA admission built on them."""

    def __init__(self, handle: Handle, default_strategy: str, weights: dict[str, int], most: bool, numa_most: bool) -> None:
        self.handle = handle
        self.topologies: dict[str, TopologyOptions] = {}
        self.allocations: dict[str, NodeAllocation] = {}
        self.default_numa_strategy = default_strategy
        self.weights = weights
        self.most_allocated = most
        self.numa_most = numa_most
        # The profile's NUMA hint providers, found on first use (once the framework is attached).
        self._providers: list[tm.HintProvider] | None = None

    # ----- topology options and allocations (`resourceManager`) --------------------------------------
    def options(self, node_name: str) -> TopologyOptions:
        """The node's topology options (empty when it has no NodeResourceTopology)."""
        return self.topologies.get(node_name) or TopologyOptions()

    def allocation(self, node_name: str) -> NodeAllocation:
        """The node's allocations, created empty on first use."""
        found = self.allocations.get(node_name)
        if found is None:
            found = self.allocations[node_name] = NodeAllocation(node_name)
        return found

    def update(self, node_name: str, allocation: PodAllocation) -> None:
        """`resourceManager.Update`: replace the pod's allocation (needs a valid topology)."""
        options = self.options(node_name)
        if options.cpu_topology is None or not options.cpu_topology.valid:
            return
        node = self.allocation(node_name)
        node.release(allocation.uid)
        node.add(allocation, options.cpu_topology)

    def release(self, node_name: str, uid: str) -> None:
        """`resourceManager.Release`."""
        self.allocation(node_name).release(uid)

    def available_cpus(self, node_name: str) -> tuple[frozenset[int], NodeAllocation]:
        """`GetAvailableCPUs`; ValueError for an invalid topology."""
        options = self.options(node_name)
        node = self.allocation(node_name)
        if options.cpu_topology is None:
            return frozenset(), node
        if not options.cpu_topology.valid:
            raise ValueError(ERR_INVALID_CPU_TOPOLOGY)
        return node.available(options.cpu_topology, options.max_ref_count, options.reserved_cpus), node

    @staticmethod
    def _state(state: CycleState) -> PreFilterState:
        value = state.get(STATE_KEY)
        if not isinstance(value, PreFilterState):
            raise KeyError(f"{STATE_KEY} not found")
        return value

    # ----- policies ---------------------------------------------------------------------------------
    @staticmethod
    def _request_cpu_bind(s: PreFilterState, node_policy: str) -> tuple[bool, Status]:
        """`requestCPUBind`: the pod asks for it, or the node's bind policy imposes it."""
        if s.request_cpu_bind:
            return True, success()
        if s.requested_milli_cpu == 0:
            return False, success()
        if node_policy not in ("", "None"):
            if s.requested_milli_cpu % 1000 != 0:
                return False, unresolvable(ERR_INVALID_REQUESTED_CPUS)
            return True, success()
        return False, success()

    def _numa_policy(self, node: Node, s: PreFilterState) -> tuple[str, Status]:
        """`getNUMATopologyPolicy` (the node label, else the NodeResourceTopology's) merged with the
        pod's (`mergeTopologyPolicy`)."""
        node_policy = node.labels.get(LABEL_NUMA_TOPOLOGY_POLICY, "") or self.options(node.name).numa_topology_policy
        if node_policy and s.numa_policy and node_policy != s.numa_policy:
            return "", unresolvable(ERR_NOT_MATCH_NUMA_TOPOLOGY)
        return s.numa_policy or node_policy, success()

    def _bind_policy(self, node: Node, s: PreFilterState) -> tuple[str, bool]:
        """`getCPUBindPolicy`: (policy, whether it is required)."""
        if s.required_bind_policy:
            return s.required_bind_policy, True
        node_policy = node_cpu_bind_policy(node, self.options(node.name))
        if node_policy == NODE_SPREAD_BY_PCPUS:
            return SPREAD_BY_PCPUS, True
        if node_policy == NODE_FULL_PCPUS_ONLY:
            return FULL_PCPUS, True
        return s.preferred_bind_policy, False

    @staticmethod
    def _exclusive(s: PreFilterState) -> str:
        """The pod's NUMA exclusive policy: Required by default when the pod names a NUMA policy."""
        return s.numa_exclusive or (tm.EXCLUSIVE_REQUIRED if s.numa_policy else "")

    def resource_options(
        self, s: PreFilterState, node: Node, bind: bool, hint: tm.NUMATopologyHint | None = None
    ) -> ResourceOptions:
        """`getResourceOptions`; ValueError for an amplification ratio annotation that does not parse."""
        options = self.options(node.name)
        numa, ratios = amplified_numa_resources(options.numa_node_resources or (), options.amplification_ratios, node.annotations)
        requests = dict(s.requests or {})
        if bind and ratios and ratios.get(CPU, 0.0) > 1:
            requests = amplify_resources(requests, ratios, [CPU])
        policy, required = self._bind_policy(node, s)
        topology = options.cpu_topology
        return ResourceOptions(
            requests=requests,
            original_requests=dict(s.requests or {}),
            num_cpus_needed=s.num_cpus_needed,
            request_cpu_bind=bind,
            required_bind=required,
            bind_policy=policy,
            exclusive_policy=s.exclusive_policy,
            numa=numa,
            ratios=ratios,
            cpus_per_core=topology.cpus_per_core() if topology is not None else 1,
            hint=hint or tm.NUMATopologyHint(),
        )

    # ----- allocation (`resourceManager.Allocate`) -------------------------------------------------
    def allocate(self, node: Node, pod: Pod, ro: ResourceOptions) -> tuple[PodAllocation | None, Status]:
        """NUMA resources on the options' affinity (when there is one), then the cpuset."""
        numa: tuple[tuple[int, Resources], ...] = ()
        if ro.hint.mask is not None:
            found, status = self._allocate_numa(node, ro)
            if not status.success:
                return None, status
            numa = tuple(found)
        cpus: frozenset[int] = frozenset()
        if ro.request_cpu_bind:
            try:
                cpus = self._allocate_cpuset(node, ro, numa)
            except (ValueError, CPUAllocationError) as exc:
                return None, unschedulable(str(exc))
        return PodAllocation(pod.uid, pod.namespace, pod.name, cpus, ro.exclusive_policy, numa), success()

    def _allocate_numa(self, node: Node, ro: ResourceOptions) -> tuple[list[tuple[int, Resources]], Status]:
        """`allocateResourcesByHint`: the request split over the affinity's NUMA nodes."""
        if not ro.numa:
            return [], unresolvable(ERR_NO_NUMA_RESOURCES)
        available = {k: dict(v) for k, v in ro.required.items()} if ro.required else None
        if not available:
            available = self.allocation(node.name).available_numa(ro.numa, ro.ratios)[0]
        try:
            self._trim(node.name, available, ro)
        except ValueError as exc:
            return [], unresolvable(str(exc))
        requests = ro.original_requests if ro.request_cpu_bind else ro.requests
        result, reasons = distribute_evenly(requests, available, ro)
        if reasons:
            return [], unschedulable(*reasons)
        return result, success()

    def _trim(self, node_name: str, available: dict[int, Resources], ro: ResourceOptions) -> None:
        """`trimNUMANodeResources`: with a required bind policy, a NUMA node's cpu is at most the CPUs
        that policy can still use in it."""
        if not ro.required_bind:
            return
        cpus, _ = self.available_cpus(node_name)
        topology = self.options(node_name).cpu_topology or CPUTopology()
        for nid, res in available.items():
            if not res.get(CPU):
                continue
            in_node = frozenset(c for c in cpus if c in topology.details and topology.details[c].node == nid)
            usable = len(filter_by_required_policy(ro.bind_policy, in_node, topology)) * 1000
            if usable < res[CPU]:
                res[CPU] = usable

    def _allocate_cpuset(self, node: Node, ro: ResourceOptions, numa: tuple[tuple[int, Resources], ...]) -> frozenset[int]:
        """`allocateCPUSet`: the CPUs from each NUMA node's share, else from the whole node."""
        topology = self.options(node.name).cpu_topology
        if topology is None:
            raise ValueError(ERR_INVALID_CPU_TOPOLOGY)
        available, node_alloc = self.available_cpus(node.name)
        if ro.required_bind:
            available = filter_by_required_policy(ro.bind_policy, available, topology)
        if len(available) < ro.num_cpus_needed:
            raise ValueError(ERR_NOT_ENOUGH_CPUS)
        strategy = node.labels.get(LABEL_NODE_NUMA_ALLOCATE_STRATEGY, "") or self.default_numa_strategy
        max_ref = self.options(node.name).max_ref_count

        def take(cpus: frozenset[int], n: int) -> frozenset[int]:
            none: frozenset[int] = frozenset()
            return take_preferred_cpus(
                topology, max_ref, cpus, none, node_alloc.cpus, n, ro.bind_policy, ro.exclusive_policy, strategy
            )

        result: frozenset[int] = frozenset()
        needed = ro.num_cpus_needed
        if numa:
            for nid, res in numa:
                in_node = frozenset(c for c in available if topology.details[c].node == nid)
                result |= take(in_node, min(len(in_node), res.get(CPU, 0) // 1000))
            needed -= len(result)
            if needed != 0:
                raise ValueError(ERR_NOT_ENOUGH_CPUS)
        if needed > 0:
            result |= take(available - result, needed)
        if ro.required_bind and not satisfies_required_policy(ro.bind_policy, result, topology):
            raise ValueError(f"insufficient CPUs to satisfy required cpu bind policy {ro.bind_policy}")
        return result

    # ----- NUMA admission (topology_hint.go) ------------------------------------------------------
    def filter_by_numa_node(
        self, state: CycleState, pod: Pod, node: Node, policy: str, exclusive: str, reuse: bool = False
    ) -> Status:
        """`FilterByNUMANode`: the topology manager's admission over the node's NUMA nodes."""
        if policy == tm.POLICY_NONE:
            return success()
        numa_nodes = self.options(node.name).numa_nodes()
        if not numa_nodes:
            return unresolvable(ERR_MISSING_NUMA_RESOURCES)
        statuses = self.allocation(node.name).numa_status(len(numa_nodes))
        if self._providers is None:
            self._providers = tm.hint_providers(self.handle, self)
        return tm.admit(self._providers, state, pod, node, numa_nodes, policy, exclusive, statuses, reuse=reuse)

    def get_pod_topology_hints(
        self, state: CycleState, pod: Pod, node: Node
    ) -> tuple[dict[str, list[tm.NUMATopologyHint]] | None, Status]:
        """`GetPodTopologyHints`: per requested NUMA resource, every affinity the pod could be allocated on."""
        try:
            s = self._state(state)
        except KeyError as exc:
            return None, error(exc.args[0])
        policy, _ = self._numa_policy(node, s)
        bind, status = self._request_cpu_bind(s, node_cpu_bind_policy(node, self.options(node.name)))
        if not status.success:
            return None, status
        try:
            ro = self.resource_options(s, node, bind)
            hints = self._topology_hints(node, pod, ro, policy)
        except ValueError:
            return None, unschedulable(ERR_INSUFFICIENT_NUMA_NODE_RESOURCES)
        return hints, success()

    def allocate_by_affinity(self, state: CycleState, affinity: tm.NUMATopologyHint, pod: Pod, node: Node) -> Status:
        """The hint provider's `Allocate`: whether the pod can be allocated on the affinity."""
        try:
            s = self._state(state)
        except KeyError as exc:
            return error(exc.args[0])
        bind, status = self._request_cpu_bind(s, node_cpu_bind_policy(node, self.options(node.name)))
        if not status.success:
            return status
        try:
            ro = self.resource_options(s, node, bind, affinity)
        except ValueError as exc:
            return unresolvable(str(exc))
        _alloc, status = self.allocate(node, pod, ro)
        return status

    def _topology_hints(self, node: Node, pod: Pod, ro: ResourceOptions, policy: str) -> dict[str, list[tm.NUMATopologyHint]]:
        """`GetTopologyHints` and `generateResourceHints`: try every NUMA affinity (by size, then
        order); one that can hold the pod and lacks none of the requested NUMA resources is a hint
        for each of them, scored by the NUMA scoring strategy; the narrowest are preferred (all of
        them under Restricted). ValueError when the node has no NUMA resources."""
        if not ro.numa:
            raise ValueError(ERR_NO_NUMA_RESOURCES)
        available = self.allocation(node.name).available_numa(ro.numa, ro.ratios)[0]
        self._trim(node.name, available, ro)
        names_by_numa = {name for _, res in ro.numa for name in res}
        lack = {name: [nid for nid, res in available.items() if not res.get(name)] for name in names_by_numa}
        min_size = {name: len(ro.numa) for name in ro.requests}
        totals = dict(ro.numa)
        hinted: list[str] = []
        hints: dict[str, list[tm.NUMATopologyHint]] = {}
        for mask in tm.iterate_masks([nid for nid, _ in ro.numa]):
            have: Resources = {}
            total: Resources = {}
            for nid in tm.bits(mask):
                have = add(have, available.get(nid, {}))
                total = add(total, totals.get(nid, {}))
            hinted += [name for name in ro.requests if name in total and name not in hinted]
            score = resource_score(self.weights, self.numa_most, sub_non_negative(total, have), total, ro.requests)
            _alloc, status = self.allocate(node, pod, dataclasses.replace(ro, hint=tm.NUMATopologyHint(mask)))
            if not status.success:
                continue
            if any(set(tm.bits(mask)) & set(lack.get(name, ())) for name in hinted):
                continue
            for name in hinted:
                min_size[name] = min(min_size.get(name, len(ro.numa)), tm.count(mask))
                hints.setdefault(name, []).append(tm.NUMATopologyHint(mask, False, False, score))
        for name in ro.requests:
            if name in hints:
                size = min_size[name]
                hints[name] = [
                    dataclasses.replace(h, preferred=tm.count(h.mask or 0) == size or policy == tm.POLICY_RESTRICTED)
                    for h in hints[name]
                ]
            elif name in hinted:
                hints[name] = []
        return hints

    # ----- amplification (plugin.go filterAmplifiedCPUs, scoring.go) -------------------------------
    def filter_amplified_cpus(self, request: int, info: NodeInfo, bind: bool) -> Status:
        """`filterAmplifiedCPUs`: with a cpu amplification ratio above 1 on the node, cpuset CPUs
        count amplified (the pod's own too) against the node's allocatable cpu."""
        if request == 0:
            return success()
        try:
            ratio = (amplification_ratios(info.node.annotations) or {}).get(CPU, -1.0)
        except ValueError:
            return unresolvable(ERR_INVALID_CPU_AMPLIFICATION_RATIO)
        if ratio <= 1:
            return success()
        if bind:
            request = amplify(request, ratio)
        try:
            _, node_alloc = self.available_cpus(info.name)
        except ValueError as exc:
            return unresolvable(str(exc))
        pinned = len(node_alloc.cpus) * 1000 if self.options(info.name).cpu_topology is not None else 0
        requested = info.requested.milli_cpu
        if requested >= pinned > 0:
            requested = requested - pinned + amplify(pinned, ratio)
        if request > info.allocatable.milli_cpu - requested:
            return Status(Code.UNSCHEDULABLE, (ERR_INSUFFICIENT_AMPLIFIED_CPU,))
        return success()

    def numa_score(self, state: CycleState, pod: Pod, info: NodeInfo, s: PreFilterState, bind: bool, policy: str) -> int:
        """`Score` when amplification or a NUMA policy matters: with no NUMA policy, the node's use
        with cpuset CPUs amplified; otherwise the pod's trial allocation: the NUMA nodes it would
        use (their resources and what is taken there), CPUs counted by the cpusets held. 0 when the
        trial fails."""
        node = info.node
        try:
            affinity = tm.get_store(state).affinity.get(node.name)
            ro = self.resource_options(s, node, bind, affinity)
        except ValueError:
            return 0
        ratio = ro.cpu_ratio()
        requested, allocatable = node_resources(info, True), node_resources(info, False)
        if policy == tm.POLICY_NONE:
            if (s.requests or {}).get(CPU, 0) and ratio > 1:
                try:
                    _, node_alloc = self.available_cpus(node.name)
                except ValueError:
                    return 0
                pinned = len(node_alloc.cpus) * 1000
                requested[CPU] = requested[CPU] - pinned + amplify(pinned, ratio)
            return resource_score(self.weights, self.most_allocated, requested, allocatable, ro.requests)
        alloc, status = self.allocate(node, pod, ro)
        if not status.success or alloc is None:
            return 0
        node_alloc = self.allocation(node.name)
        if alloc.numa:
            taken = node_alloc.available_numa(ro.numa, ro.ratios)[1]
            totals = dict(ro.numa)
            requested, allocatable = {}, {}
            for nid, _ in alloc.numa:
                requested = add(requested, taken.get(nid, {}))
                allocatable = add(allocatable, totals.get(nid, {}))
        if alloc.cpuset:
            requested[CPU] = amplify(len(node_alloc.cpus) * 1000, ratio)
        return resource_score(self.weights, self.most_allocated, requested, allocatable, ro.requests)


__all__ = [
    "ERR_INSUFFICIENT_AMPLIFIED_CPU",
    "ERR_INVALID_CPU_AMPLIFICATION_RATIO",
    "ERR_MISSING_NUMA_RESOURCES",
    "NUMAResourceManager",
    "PreFilterState",
    "allow_use_cpuset",
    "filter_by_required_policy",
    "node_cpu_bind_policy",
    "node_resources",
    "satisfies_required_policy",
]
