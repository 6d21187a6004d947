"""NodeNUMAResource: binds LSE/LSR pods (and pods on nodes with a CPU bind policy) to logical CPUs.

Upstream: koordinator-sh/koordinator `pkg/scheduler/plugins/nodenumaresource/plugin.go`,
`scoring.go`, `util.go`, `resource_manager.go`, `pod_eventhandler.go`, `service.go`; the old
`plugin_service.go` routes (`/availableCPUs`, `/cpuTopologyOptions`); proposal
`docs/proposals/scheduling/20220530-fine-grained-cpu-orchestration.md`.

The CPUs are chosen in Reserve and written to the pod's `scheduling.koordinator.sh/resource-status`
annotation in PreBind; bound pods with that annotation (and CPUs kubelet pinned, listed in the
NodeResourceTopology) are counted, so no CPU is handed out twice.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from scheduler.api.fields import FieldError
from scheduler.api.koordinator import (
    ANNOTATION_NUMA_TOPOLOGY_SPEC,
    ANNOTATION_RESOURCE_SPEC,
    ANNOTATION_RESOURCE_STATUS,
    LABEL_NODE_CPU_BIND_POLICY,
    LABEL_NODE_NUMA_ALLOCATE_STRATEGY,
    LABEL_NUMA_TOPOLOGY_POLICY,
    PRIORITY_PROD,
    format_cpuset,
    parse_cpuset,
    parse_node_resource_topology,
    priority_class,
    qos_class,
)
from scheduler.api.objects import CPU, Node, Pod
from scheduler.config.koordargs import NodeNUMAResourceArgs
from scheduler.framework.interface import Handle
from scheduler.framework.nodeinfo import NodeInfo, is_scalar_resource
from scheduler.framework.types import (
    ActionType,
    ClusterEvent,
    Code,
    CycleState,
    PreFilterResult,
    Status,
    error,
    skip,
    success,
    unresolvable,
)
from scheduler.frameworkext.services import Request, RouteGroup, error_message
from scheduler.plugins.nodenumaresource.accumulator import (
    FULL_PCPUS,
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    SPREAD_BY_PCPUS,
    CPUAllocationError,
    take_preferred_cpus,
)
from scheduler.plugins.nodenumaresource.topology import CPUTopology, NodeAllocation, PodAllocation, TopologyOptions

NAME = "NodeNUMAResource"
STATE_KEY = NAME
MAX_NODE_SCORE = 100
ERR_NOT_MATCH_NUMA_TOPOLOGY = "node(s) NUMA Topology policy not match"
ERR_INVALID_REQUESTED_CPUS = "the requested CPUs must be integer"
ERR_INVALID_CPU_TOPOLOGY = "node(s) invalid CPU Topology"
ERR_SMT_ALIGNMENT = "node(s) requested cpus not multiple cpus per core"
ERR_CPU_BIND_POLICY_CONFLICT = "node(s) cpu bind policy conflicts with pod's required cpu bind policy"
ERR_NOT_ENOUGH_CPUS = "not enough cpus available to satisfy request"
NODE_FULL_PCPUS_ONLY = "FullPCPUsOnly"
NODE_SPREAD_BY_PCPUS = "SpreadByPCPUs"


@dataclass(slots=True)
class PreFilterState:
    """What PreFilter learned about the pod, and the CPUs Reserve gave it."""

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

    def clone(self) -> PreFilterState:
        """A copy for a cloned cycle state (preemption dry runs)."""
        return PreFilterState(
            self.skip,
            self.request_cpu_bind,
            self.requested_milli_cpu,
            self.requests,
            self.required_bind_policy,
            self.preferred_bind_policy,
            self.exclusive_policy,
            self.numa_policy,
            self.num_cpus_needed,
            self.allocation,
        )


def allow_use_cpuset(pod: Pod) -> bool:
    """`AllowUseCPUSet`: LSE/LSR pods of the prod priority class."""
    return qos_class(pod) in ("LSE", "LSR") and priority_class(pod) == PRIORITY_PROD


def node_cpu_bind_policy(node: Node, options: TopologyOptions) -> str:
    """`GetNodeCPUBindPolicy`: the node label, or kubelet's static policy with full-pcpus-only."""
    label = node.labels.get(LABEL_NODE_CPU_BIND_POLICY, "")
    policy = options.policy
    if label == NODE_FULL_PCPUS_ONLY or (policy is not None and policy.policy == "static" and policy.option("full-pcpus-only") == "true"):
        return NODE_FULL_PCPUS_ONLY
    if label == NODE_SPREAD_BY_PCPUS:
        return label
    return "None"


def _json_annotation(pod: Pod, key: str) -> dict[str, Any]:
    text = pod.annotations.get(key)
    if not text:
        return {}
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError(f"annotation {key}: expected a JSON object")
    return data


def least_requested_score(requested: int, capacity: int) -> int:
    """LeastAllocated per resource."""
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * MAX_NODE_SCORE // capacity


def most_requested_score(requested: int, capacity: int) -> int:
    """MostAllocated per resource."""
    if capacity == 0:
        return 0
    return min(requested, capacity) * MAX_NODE_SCORE // capacity


class NodeNUMAResource:
    """CPU binding for LSE/LSR pods: Filter checks the node can, Reserve picks the CPUs, PreBind records them."""

    name = NAME

    def __init__(self, args: NodeNUMAResourceArgs, handle: Handle) -> None:
        self.args = args
        self.handle = handle
        self.topologies: dict[str, TopologyOptions] = {}
        self.allocations: dict[str, NodeAllocation] = {}
        numa = args.numa_scoring_strategy
        self.default_numa_strategy = MOST_ALLOCATED if numa is not None and numa.type == MOST_ALLOCATED else LEAST_ALLOCATED
        strategy = args.scoring_strategy
        assert strategy is not None
        self.most_allocated = strategy.type == MOST_ALLOCATED
        self.weights = dict(strategy.resources)
        self._sync()

    # ----- informers --------------------------------------------------------------------------------
    def _sync(self) -> None:
        factory = getattr(self.handle, "informer_factory", None)
        if factory is None:
            return
        informers = factory()
        for doc in informers.objects("NodeResourceTopology"):
            self._set_topology(doc)
        for pod in informers.pods():
            self._pod_changed(None, pod)
        informers.add_event_handler(self._on_event)

    def _set_topology(self, doc: dict[str, Any]) -> None:
        try:
            nrt = parse_node_resource_topology(doc)
        except FieldError:
            return
        options = TopologyOptions.from_nrt(nrt)
        old = self.topologies.get(nrt.name)
        if old is not None and old.max_ref_count:
            options.max_ref_count = old.max_ref_count
        self.topologies[nrt.name] = options

    def _on_event(self, event: Any) -> None:
        if event.kind == "Pod":
            if event.type == "DELETED":
                if event.old is not None and event.old.node_name:
                    self.release(event.old.node_name, event.old.uid)
            else:
                self._pod_changed(event.old, event.new)
        elif event.kind == "NodeResourceTopology":
            if event.type == "DELETED":
                name = str(((event.old or {}).get("metadata") or {}).get("name", ""))
                self.topologies.pop(name, None)
            else:
                self._set_topology(event.new)
            queue = getattr(self.handle, "queue", None)
            if queue is not None:
                queue.move_all(ClusterEvent("NodeResourceTopology", ActionType.UPDATE, "NodeResourceTopologyChange"))

    def _pod_changed(self, old: Pod | None, pod: Pod) -> None:
        """`podEventHandler.updatePod`: count the CPUs a bound pod's resource-status names."""
        if not pod.node_name:
            if old is not None and old.node_name:
                self.release(old.node_name, old.uid)
            return
        if pod.phase in ("Succeeded", "Failed"):
            self.release(pod.node_name, pod.uid)
            return
        try:
            status = _json_annotation(pod, ANNOTATION_RESOURCE_STATUS)
            spec = _json_annotation(pod, ANNOTATION_RESOURCE_SPEC)
            cpus = parse_cpuset(str(status.get("cpuset", "")))
        except (ValueError, json.JSONDecodeError):
            return
        if not cpus:
            return
        exclusive = str(spec.get("preferredCPUExclusivePolicy", ""))
        self.update(pod.node_name, PodAllocation(pod.uid, pod.namespace, pod.name, cpus, exclusive))

    # ----- the resource manager ----------------------------------------------------------------------
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

    # ----- PreFilter ----------------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        """Read the pod's resource spec and decide whether it needs a cpuset; Skip pods requesting nothing."""
        try:
            spec = _json_annotation(pod, ANNOTATION_RESOURCE_SPEC)
            numa_spec = _json_annotation(pod, ANNOTATION_NUMA_TOPOLOGY_SPEC)
        except (ValueError, json.JSONDecodeError) as exc:
            return None, error(str(exc))
        requests = pod.requests
        if not any(requests.values()):
            state.write(STATE_KEY, PreFilterState(skip=True))
            return None, skip()
        requested = requests.get(CPU, 0)
        s = PreFilterState(
            requests=dict(requests),
            requested_milli_cpu=requested,
            num_cpus_needed=requested // 1000,
            numa_policy=str(numa_spec.get("numaTopologyPolicy", "")),
        )
        if allow_use_cpuset(pod):
            default = self.args.default_cpu_bind_policy
            policy = str(spec.get("preferredCPUBindPolicy", ""))
            if policy in ("", "Default"):
                policy = default
            required = str(spec.get("requiredCPUBindPolicy", ""))
            if required == "Default":
                required = default
            if required:
                policy = required
            if policy in (FULL_PCPUS, SPREAD_BY_PCPUS):
                if requested % 1000 != 0:
                    return None, unresolvable(ERR_INVALID_REQUESTED_CPUS)
                if requested > 0:
                    s.request_cpu_bind = True
                    s.required_bind_policy = required
                    s.preferred_bind_policy = policy
                    s.exclusive_policy = str(spec.get("preferredCPUExclusivePolicy", ""))
        state.write(STATE_KEY, s)
        return None, success()

    def pre_filter_extensions(self) -> None:
        """No AddPod/RemovePod: preemption does not give CPUs back in dry runs."""
        return None

    @staticmethod
    def _state(state: CycleState) -> PreFilterState:
        value = state.get(STATE_KEY)
        if not isinstance(value, PreFilterState):
            raise KeyError(f"{STATE_KEY} not found")
        return value

    def _request_cpu_bind(self, s: PreFilterState, node_policy: str) -> tuple[bool, Status]:
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
        """The node's NUMA topology policy (label, else NodeResourceTopology) merged with the pod's."""
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

    def _allocate(self, node: Node, pod: Pod, s: PreFilterState) -> tuple[PodAllocation | None, Status]:
        """`resourceManager.Allocate` with `allocateCPUSet`, from the node's free CPUs."""
        options = self.options(node.name)
        topology = options.cpu_topology
        assert topology is not None
        policy, required = self._bind_policy(node, s)
        try:
            available, node_alloc = self.available_cpus(node.name)
        except ValueError as exc:
            return None, Status(Code.UNSCHEDULABLE, (str(exc),))
        if required:
            available = _filter_by_required_policy(policy, available, topology)
        if len(available) < s.num_cpus_needed:
            return None, Status(Code.UNSCHEDULABLE, (ERR_NOT_ENOUGH_CPUS,))
        strategy = node.labels.get(LABEL_NODE_NUMA_ALLOCATE_STRATEGY, "") or self.default_numa_strategy
        try:
            cpus = take_preferred_cpus(
                topology, options.max_ref_count, available, frozenset(), node_alloc.cpus, s.num_cpus_needed, policy, s.exclusive_policy, strategy
            )
        except CPUAllocationError as exc:
            return None, Status(Code.UNSCHEDULABLE, (str(exc),))
        if required and not _satisfies_required_policy(policy, cpus, topology):
            return None, Status(Code.UNSCHEDULABLE, (f"insufficient CPUs to satisfy required cpu bind policy {policy}",))
        return PodAllocation(pod.uid, pod.namespace, pod.name, cpus, s.exclusive_policy), success()

    # ----- Filter -------------------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Whether the node's CPU topology and bind policy can take the pod's cpuset."""
        try:
            s = self._state(state)
        except KeyError as exc:
            return error(exc.args[0])
        if s.skip:
            return success()
        node = node_info.node
        options = self.options(node.name)
        _numa, status = self._numa_policy(node, s)
        if not status.success:
            return status
        node_policy = node_cpu_bind_policy(node, options)
        bind, status = self._request_cpu_bind(s, node_policy)
        if not status.success:
            return status
        if not bind:
            return success()
        topology = options.cpu_topology
        if topology is None or not topology.valid:
            return unresolvable(ERR_INVALID_CPU_TOPOLOGY)
        required = s.required_bind_policy
        if node_policy == NODE_FULL_PCPUS_ONLY:
            required = FULL_PCPUS
        elif node_policy == NODE_SPREAD_BY_PCPUS:
            required = SPREAD_BY_PCPUS
        if s.required_bind_policy and s.required_bind_policy != required:
            return unresolvable(ERR_CPU_BIND_POLICY_CONFLICT)
        if required == FULL_PCPUS and s.num_cpus_needed % topology.cpus_per_core() != 0:
            return unresolvable(ERR_SMT_ALIGNMENT)
        if required:
            _alloc, status = self._allocate(node, pod, s)
            return status
        return success()

    # ----- Score --------------------------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status:
        """Skip scoring for pods PreFilter skipped."""
        try:
            s = self._state(state)
        except KeyError as exc:
            return error(exc.args[0])
        return skip() if s.skip else success()

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        """The configured LeastAllocated/MostAllocated score of the node's requests plus the pod's."""
        try:
            s = self._state(state)
        except KeyError as exc:
            return 0, error(exc.args[0])
        if s.skip:
            return 0, success()
        node = node_info.node
        options = self.options(node.name)
        bind, status = self._request_cpu_bind(s, node_cpu_bind_policy(node, options))
        if not status.success:
            return 0, status
        if bind and (options.cpu_topology is None or not options.cpu_topology.valid):
            return 0, success()
        requests = s.requests or {}
        allocatable = node_info.allocatable
        requested = node_info.requested
        total, weight_sum = 0, 0
        for name, weight in self.weights.items():
            pod_request = requests.get(name, 0)
            if pod_request == 0 and is_scalar_resource(name):
                continue
            if name == CPU:
                cap, req = allocatable.milli_cpu, requested.milli_cpu + pod_request
            elif name == "memory":
                cap, req = allocatable.memory, requested.memory + pod_request
            elif name == "ephemeral-storage":
                cap, req = allocatable.ephemeral_storage, requested.ephemeral_storage + pod_request
            elif name in allocatable.scalar_resources:
                cap, req = allocatable.scalar_resources[name], requested.scalar_resources.get(name, 0) + pod_request
            else:
                continue
            if cap == 0:
                continue
            total += (most_requested_score(req, cap) if self.most_allocated else least_requested_score(req, cap)) * weight
            weight_sum += weight
        return (total // weight_sum if weight_sum else 0), success()

    def score_extensions(self) -> None:
        """Scores are used as they are."""
        return None

    # ----- Reserve, PreBind -----------------------------------------------------------------------------
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Pick the pod's CPUs on the chosen node and hold them."""
        try:
            s = self._state(state)
        except KeyError as exc:
            return error(exc.args[0])
        if s.skip:
            return success()
        if s.allocation is None:
            info = self.handle.snapshot.get(node_name)
            if info is None:
                return error(f'getting node "{node_name}" from Snapshot: node "{node_name}" not found')
            node = info.node
            options = self.options(node_name)
            bind, status = self._request_cpu_bind(s, node_cpu_bind_policy(node, options))
            if not status.success:
                return status
            if not bind:
                return success()
            if options.cpu_topology is None or not options.cpu_topology.valid:
                return error(ERR_INVALID_CPU_TOPOLOGY)
            allocation, status = self._allocate(node, pod, s)
            if not status.success:
                return status
            s.allocation = allocation
        if s.allocation is not None:
            self.update(node_name, s.allocation)
        return success()

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Give the CPUs back."""
        s = state.get(STATE_KEY)
        if isinstance(s, PreFilterState) and s.allocation is not None:
            self.release(node_name, pod.uid)

    def pre_bind_preflight(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Skip when nothing was allocated for the pod (no annotations to write)."""
        try:
            s = self._state(state)
        except KeyError:
            return success()  # PreBind reports the missing state
        return Status(Code.SKIP) if s.skip or s.allocation is None else success()

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Write `resource-status` (`{"cpuset":"..."}`) and, when missing, the bind policy to `resource-spec`."""
        try:
            s = self._state(state)
        except KeyError as exc:
            return error(exc.args[0])
        if s.skip or s.allocation is None:
            return success()
        info = self.handle.snapshot.get(node_name)
        if info is None:
            return error(f'getting node "{node_name}" from Snapshot: node "{node_name}" not found')
        patch: dict[str, str | None] = {}
        policy, required = self._bind_policy(info.node, s)
        try:
            spec = _json_annotation(pod, ANNOTATION_RESOURCE_SPEC)
        except (ValueError, json.JSONDecodeError):
            spec = {}
        write_back = False
        if required and spec.get("requiredCPUBindPolicy", "") in ("", "Default"):
            spec["requiredCPUBindPolicy"] = policy
            write_back = True
        if spec.get("preferredCPUBindPolicy") == "Default":
            spec["preferredCPUBindPolicy"] = policy
            write_back = True
        if not spec.get("requiredCPUBindPolicy") and not spec.get("preferredCPUBindPolicy") and policy:
            spec["preferredCPUBindPolicy"] = policy
            write_back = True
        if write_back:
            ordered = {k: spec[k] for k in ("requiredCPUBindPolicy", "preferredCPUBindPolicy", "preferredCPUExclusivePolicy") if spec.get(k)}
            patch[ANNOTATION_RESOURCE_SPEC] = json.dumps(ordered, separators=(",", ":"))
        patch[ANNOTATION_RESOURCE_STATUS] = json.dumps({"cpuset": format_cpuset(s.allocation.cpuset)}, separators=(",", ":"))
        cluster = self.handle.cluster()
        if cluster is None:
            return success()
        try:
            cluster.patch_annotations(pod, patch)
        except Exception as exc:  # an API failure fails PreBind; the pod is unreserved and requeued
            return error(exc)
        return success()

    def events_to_register(self) -> list[ClusterEvent]:
        """A pod deleted; a NodeResourceTopology added, updated or deleted."""
        return [ClusterEvent("Pod", ActionType.DELETE), ClusterEvent("NodeResourceTopology", ActionType.ALL)]

    # ----- REST services ------------------------------------------------------------------------------
    def register_endpoints(self, group: RouteGroup) -> None:
        """`/availableCPUs/:nodeName`, `/cpuTopologyOptions/:nodeName` and `/nodes/:nodeName`."""
        group.get("/availableCPUs/:nodeName", self._serve_available)
        group.get("/cpuTopologyOptions/:nodeName", lambda r: (200, self.options(r.params["nodeName"]).to_json()))
        group.get("/nodes/:nodeName", self._serve_node)

    def _serve_available(self, request: Request) -> tuple[int, Any]:
        name = request.params["nodeName"]
        try:
            available, node = self.available_cpus(name)
        except ValueError as exc:
            return error_message(500, str(exc))
        out: dict[str, Any] = {"availableCPUs": format_cpuset(available)}
        if node.cpus:
            out["allocated"] = node.allocated_json()
        return 200, out

    def _serve_node(self, request: Request) -> tuple[int, Any]:
        name = request.params["nodeName"]
        info = self.handle.snapshot.get(name)
        if info is None:
            return error_message(500, f'node "{name}" not found')
        options = self.options(name)
        if options.cpu_topology is None or not options.cpu_topology.valid:
            return error_message(500, "invalid topology, please check the NodeResourceTopology object")
        available, node = self.available_cpus(name)
        out: dict[str, Any] = {"name": name, **options.to_json()}
        out["numaTopologyPolicy"] = info.node.labels.get(LABEL_NUMA_TOPOLOGY_POLICY, "") or options.numa_topology_policy
        out["numaNodeResources"] = None
        out["remainingNUMANodeResources"] = None
        out["allocatedNUMANodeResources"] = None
        out["availableCPUs"] = format_cpuset(available)
        out["allocatedCPUs"] = node.allocated_json()
        out["allocatedPods"] = [a.to_json() for _, a in sorted(node.pods.items())] or None
        return 200, out


def _filter_by_required_policy(policy: str, available: frozenset[int], topology: CPUTopology) -> frozenset[int]:
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


def _satisfies_required_policy(policy: str, cpus: frozenset[int], topology: CPUTopology) -> bool:
    """`satisfiedRequiredCPUBindPolicy`."""
    cores = {topology.details[c].core for c in cpus if c in topology.details}
    if policy == FULL_PCPUS:
        return len(cores) * topology.cpus_per_core() == len(cpus)
    if policy == SPREAD_BY_PCPUS:
        return len(cores) == len(cpus)
    return True


def new(args: object | None, handle: Handle) -> NodeNUMAResource:
    """Build the plugin; args default to Koordinator's and must validate."""
    if args is None or isinstance(args, dict):
        args = NodeNUMAResourceArgs.from_dict(args or {}, "")
    if not isinstance(args, NodeNUMAResourceArgs):
        raise TypeError(f"want args to be of type NodeNUMAResourceArgs, got {type(args).__name__}")
    issues = args.validate("")
    if issues:
        raise ValueError("; ".join(str(i) for i in issues))
    return NodeNUMAResource(args, handle)


__all__ = ["NAME", "NodeNUMAResource", "PreFilterState", "allow_use_cpuset", "new", "node_cpu_bind_policy"]
