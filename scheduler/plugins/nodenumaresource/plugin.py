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
from typing import Any

from scheduler.api.fields import FieldError
from scheduler.api.koordinator import (
    ANNOTATION_NUMA_TOPOLOGY_SPEC,
    ANNOTATION_RESOURCE_SPEC,
    ANNOTATION_RESOURCE_STATUS,
    LABEL_NUMA_TOPOLOGY_POLICY,
    format_cpuset,
    parse_cpuset,
    parse_node_resource_topology,
    quantity_value,
)
from scheduler.api.objects import CPU, Pod
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
from scheduler.frameworkext import topologymanager as tm
from scheduler.frameworkext.services import Request, RouteGroup, error_message
from scheduler.plugins.nodenumaresource.accumulator import (
    FULL_PCPUS,
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    SPREAD_BY_PCPUS,
)
from scheduler.plugins.nodenumaresource.admission import (
    ERR_CPU_BIND_POLICY_CONFLICT,
    ERR_INVALID_CPU_TOPOLOGY,
    ERR_INVALID_REQUESTED_CPUS,
    ERR_SMT_ALIGNMENT,
    NODE_FULL_PCPUS_ONLY,
    NODE_SPREAD_BY_PCPUS,
    STATE_KEY,
    NUMAResourceManager,
    PreFilterState,
    allow_use_cpuset,
    node_cpu_bind_policy,
)
from scheduler.plugins.nodenumaresource.numa import (
    ANNOTATION_AMPLIFICATION_RATIO,
    amplified_numa_resources,
    numa_node_json,
)
from scheduler.plugins.nodenumaresource.topology import PodAllocation, TopologyOptions

NAME = "NodeNUMAResource"
MAX_NODE_SCORE = 100


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


def _numa_resources_of(status: dict[str, Any]) -> tuple[tuple[int, dict[str, int]], ...]:
    """`ResourceStatus.NUMANodeResources` as (NUMA node, amounts)."""
    out = []
    for item in status.get("numaNodeResources") or ():
        if not isinstance(item, dict):
            raise ValueError("numaNodeResources: expected objects")
        res = item.get("resources") or {}
        out.append((int(item.get("node", 0)), {str(k): quantity_value(str(k), v) for k, v in res.items()}))
    return tuple(out)


class NodeNUMAResource(NUMAResourceManager):
    """CPU binding and NUMA admission: Filter checks the node can, Reserve allocates, PreBind records."""

    name = NAME

    def __init__(self, args: NodeNUMAResourceArgs, handle: Handle) -> None:
        self.args = args
        numa = args.numa_scoring_strategy
        numa_most = numa is not None and numa.type == MOST_ALLOCATED
        strategy = args.scoring_strategy
        assert strategy is not None
        super().__init__(
            handle,
            MOST_ALLOCATED if numa_most else LEAST_ALLOCATED,
            dict(strategy.resources),
            strategy.type == MOST_ALLOCATED,
            numa_most,
        )
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
        """`podEventHandler.updatePod`: count the CPUs and NUMA resources a bound pod's resource-status names."""
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
            numa = _numa_resources_of(status)
        except (ValueError, TypeError, json.JSONDecodeError):
            return
        if not cpus and not numa:
            return
        exclusive = str(spec.get("preferredCPUExclusivePolicy", ""))
        self.update(pod.node_name, PodAllocation(pod.uid, pod.namespace, pod.name, cpus, exclusive, numa))

    # ----- PreFilter ----------------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        """Read the pod's resource and NUMA specs and decide whether it needs a cpuset; Skip pods requesting nothing."""
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
            numa_exclusive=str(numa_spec.get("singleNUMANodeExclusive", "")),
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
        tm.init_store(state)
        return None, success()

    def pre_filter_extensions(self) -> None:
        """No AddPod/RemovePod: preemption does not give CPUs back in dry runs."""
        return None

    # ----- Filter -------------------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Policies, amplified cpu, the cpuset when a bind policy is required, and NUMA admission
        under Restricted and SingleNUMANode (plugin.go `Filter`)."""
        try:
            s = self._state(state)
        except KeyError as exc:
            return error(exc.args[0])
        if s.skip:
            return success()
        node = node_info.node
        options = self.options(node.name)
        numa_policy, status = self._numa_policy(node, s)
        if not status.success:
            return status
        node_policy = node_cpu_bind_policy(node, options)
        bind, status = self._request_cpu_bind(s, node_policy)
        if not status.success:
            return status
        status = self.filter_amplified_cpus(s.requested_milli_cpu, node_info, bind)
        if not status.success:
            return status
        if bind:
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
            if required and numa_policy == tm.POLICY_NONE:
                try:
                    ro = self.resource_options(s, node, bind)
                except ValueError as exc:
                    return unresolvable(str(exc))
                _alloc, status = self.allocate(node, pod, ro)
                return status
        if numa_policy not in (tm.POLICY_NONE, tm.POLICY_BEST_EFFORT):
            return self.filter_by_numa_node(state, pod, node, numa_policy, self._exclusive(s))
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
        """The configured LeastAllocated/MostAllocated score of the node's requests plus the pod's;
        with a NUMA policy or a cpu amplification ratio, as `numa_score` says (scoring.go)."""
        try:
            s = self._state(state)
        except KeyError as exc:
            return 0, error(exc.args[0])
        if s.skip:
            return 0, success()
        node = node_info.node
        options = self.options(node.name)
        policy, _ = self._numa_policy(node, s)
        bind, status = self._request_cpu_bind(s, node_cpu_bind_policy(node, options))
        if not status.success:
            return 0, status
        if bind and (options.cpu_topology is None or not options.cpu_topology.valid):
            return 0, success()
        if policy != tm.POLICY_NONE or ANNOTATION_AMPLIFICATION_RATIO in node.annotations or options.amplification_ratios:
            return self.numa_score(state, pod, node_info, s, bind, policy), success()
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
        """Allocate the pod's cpuset and NUMA resources on the chosen node and hold them (plugin.go
        `Reserve`: under BestEffort the NUMA admission runs here, not in Filter)."""
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
            policy, _ = self._numa_policy(node, s)
            if policy == tm.POLICY_BEST_EFFORT:
                status = self.filter_by_numa_node(state, pod, node, policy, self._exclusive(s), reuse=True)
                if not status.success:
                    return status
            options = self.options(node_name)
            bind, status = self._request_cpu_bind(s, node_cpu_bind_policy(node, options))
            if not status.success:
                return status
            if not bind and policy == tm.POLICY_NONE:
                return success()
            if bind and (options.cpu_topology is None or not options.cpu_topology.valid):
                return error(ERR_INVALID_CPU_TOPOLOGY)
            try:
                ro = self.resource_options(s, node, bind, tm.get_store(state).affinity.get(node_name))
            except ValueError as exc:
                return error(exc)
            allocation, status = self.allocate(node, pod, ro)
            if not status.success:
                return status
            s.allocation = allocation
        if s.allocation is not None:
            self.update(node_name, s.allocation)
        return success()

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Give the CPUs and NUMA resources back."""
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
        """Write `resource-status` (`{"cpuset":"...","numaNodeResources":[...]}`) and, for a cpuset
        pod that named none, the bind policy used to `resource-spec`."""
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
        bind, status = self._request_cpu_bind(s, node_cpu_bind_policy(info.node, self.options(node_name)))
        if not status.success:
            return status
        if bind:
            spec = self._spec_if_missed(pod, info, s)
            if spec is not None:
                patch[ANNOTATION_RESOURCE_SPEC] = spec
        resource_status: dict[str, Any] = {}
        if s.allocation.cpuset:
            resource_status["cpuset"] = format_cpuset(s.allocation.cpuset)
        if s.allocation.numa:
            resource_status["numaNodeResources"] = numa_node_json(s.allocation.numa)
        patch[ANNOTATION_RESOURCE_STATUS] = json.dumps(resource_status, separators=(",", ":"))
        cluster = self.handle.cluster()
        if cluster is None:
            return success()
        try:
            cluster.patch_annotations(pod, patch)
        except Exception as exc:  # an API failure fails PreBind; the pod is unreserved and requeued
            return error(exc)
        return success()

    def _spec_if_missed(self, pod: Pod, info: NodeInfo, s: PreFilterState) -> str | None:
        """`appendResourceSpecIfMissed`: the resource-spec to write back, None when it stays."""
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
        if not write_back:
            return None
        keys = ("requiredCPUBindPolicy", "preferredCPUBindPolicy", "preferredCPUExclusivePolicy")
        return json.dumps({k: spec[k] for k in keys if spec.get(k)}, separators=(",", ":"))

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
        """service.go `NodeResponse`: the topology options with the NUMA nodes' resources amplified,
        what remains and what is taken on each NUMA node, CPUs and the pods holding them."""
        name = request.params["nodeName"]
        info = self.handle.snapshot.get(name)
        if info is None:
            return error_message(500, f'node "{name}" not found')
        options = self.options(name)
        if options.cpu_topology is None or not options.cpu_topology.valid:
            return error_message(500, "invalid topology, please check the NodeResourceTopology object")
        try:
            numa, ratios = amplified_numa_resources(
                options.numa_node_resources or (), options.amplification_ratios, info.node.annotations
            )
        except ValueError as exc:
            return error_message(500, f"failed to amplify NUMANode Resources, err: {exc}")
        available, node = self.available_cpus(name)
        out: dict[str, Any] = {"name": name, **options.to_json()}
        out["numaTopologyPolicy"] = info.node.labels.get(LABEL_NUMA_TOPOLOGY_POLICY, "") or options.numa_topology_policy
        out["numaNodeResources"] = numa_node_json(numa) if options.numa_node_resources is not None else None
        if ratios:  # omitempty
            out["amplificationRatios"] = {k: round(v, 2) for k, v in sorted(ratios.items())}
        remaining, allocated = node.available_numa(numa, ratios)
        out["remainingNUMANodeResources"] = numa_node_json(sorted(remaining.items())) or None
        out["allocatedNUMANodeResources"] = numa_node_json(sorted(allocated.items())) or None
        out["availableCPUs"] = format_cpuset(available)
        out["allocatedCPUs"] = node.allocated_json()
        out["allocatedPods"] = [a.to_json() for _, a in sorted(node.pods.items())] or None
        return 200, out


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
