"""NUMA-node resources of NodeNUMAResource: amplification, what is left per NUMA node, the hints
offered to the topology manager and the split of a request over the NUMA nodes of an affinity.

Facts from koordinator-sh/koordinator `pkg/scheduler/plugins/nodenumaresource/resource_manager.go`
(`GetTopologyHints`, `trimNUMANodeResources`, `generateResourceHints`, `allocateResourcesByHint`,
`tryBestToDistributeEvenly`, `splitQuantity`), `node_allocation.go`
(`getAvailableNUMANodeResources`), `util.go` (`amplifyNUMANodeResources`), `scoring.go` (the
resource scorers) and `apis/extension/node_resource_amplification.go`. Amounts are integers:
cpu in millicores, everything else as `Quantity.Value()`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from scheduler.api.objects import CPU
from scheduler.api.quantity import format_amount, format_resources
from scheduler.framework.nodeinfo import is_scalar_resource
from scheduler.frameworkext.topologymanager import NUMATopologyHint, bits

Resources = dict[str, int]
NUMAResources = tuple[tuple[int, Resources], ...]
ANNOTATION_AMPLIFICATION_RATIO = "node.koordinator.sh/resource-amplification-ratio"
MAX_NODE_SCORE = 100


def amplification_ratios(annotations: Mapping[str, str]) -> dict[str, float] | None:
    """`GetNodeResourceAmplificationRatios`: None without the annotation; ValueError for one that is
    not a JSON object of numbers."""
    text = annotations.get(ANNOTATION_AMPLIFICATION_RATIO)
    if text is None:
        return None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"failed to unmarshal node resource amplification ratio: {exc.msg}") from exc
    if data is None:
        return None
    if not isinstance(data, dict) or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in data.values()):
        raise ValueError("failed to unmarshal node resource amplification ratio: expected an object of numbers")
    return {str(k): float(v) for k, v in data.items()}


def amplify(origin: int, ratio: float) -> int:
    """`Amplify`: ceil(origin x ratio) when the ratio is above 1."""
    if ratio <= 1:
        return origin
    return math.ceil(origin * ratio)


def amplify_resources(amounts: Resources, ratios: Mapping[str, float], names: Iterable[str] | None = None) -> Resources:
    """`AmplifyResourceList` on a copy (every resource, or only `names`)."""
    out = dict(amounts)
    for name in list(names) if names is not None else list(out):
        ratio = ratios.get(name, 0.0)
        if ratio > 1 and out.get(name, 0):
            out[name] = amplify(out[name], ratio)
    return out


def add(a: Mapping[str, int], b: Mapping[str, int]) -> Resources:
    """`quotav1.Add`."""
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0) + v
    return out


def sub_non_negative(a: Mapping[str, int], b: Mapping[str, int] | None) -> Resources:
    """`quotav1.SubtractWithNonNegativeResult`: every key of both, never below zero."""
    out = {k: max(v - (b or {}).get(k, 0), 0) for k, v in a.items()}
    for k in b or ():
        out.setdefault(k, 0)
    return out


def numa_node_json(numa: Iterable[tuple[int, Mapping[str, int]]]) -> list[dict[str, object]]:
    """`[]NUMANodeResource` as JSON (`{"node": id, "resources": {...}}`)."""
    return [{"node": nid, "resources": format_resources(res)} for nid, res in numa]


def amplified_numa_resources(
    numa: NUMAResources, nrt_ratios: dict[str, float] | None, node_annotations: Mapping[str, str]
) -> tuple[NUMAResources, dict[str, float] | None]:
    """`amplifyNUMANodeResources`: when the NodeResourceTopology carries no ratios, the node's
    annotation gives them and every NUMA node's resources are amplified by them. ValueError for
    a node annotation that does not parse."""
    if nrt_ratios is not None:
        return numa, nrt_ratios
    ratios = amplification_ratios(node_annotations)
    if not ratios:
        return numa, ratios
    return tuple((nid, amplify_resources(res, ratios)) for nid, res in numa), ratios


@dataclass(slots=True)
class ResourceOptions:
    """`ResourceOptions`: what one allocation attempt asks for on one node."""

    requests: Resources
    original_requests: Resources
    num_cpus_needed: int
    request_cpu_bind: bool
    required_bind: bool
    bind_policy: str
    exclusive_policy: str
    numa: NUMAResources
    ratios: dict[str, float] | None
    cpus_per_core: int = 1
    hint: NUMATopologyHint = field(default_factory=NUMATopologyHint)
    required: dict[int, Resources] | None = None

    def cpu_ratio(self) -> float:
        """The cpu amplification ratio (0 without one)."""
        return (self.ratios or {}).get(CPU, 0.0)


def split_amount(name: str, amount: int, nodes: int, options: ResourceOptions) -> int:
    """`splitQuantity`: the share of what remains for one of the `nodes` NUMA nodes left."""
    if name != CPU:
        return amount // nodes
    if not options.request_cpu_bind:
        return amount // nodes
    cores = -(-amount // 1000)
    if options.required_bind and options.bind_policy == "FullPCPUs":
        per_core = options.cpus_per_core or 1
        return (cores // per_core) // nodes * per_core * 1000
    return cores // nodes * 1000


def _insertion_order(nodes: list[int], available: Mapping[int, Resources], name: str) -> list[int]:
    """The NUMA nodes in the order `sort.Slice` leaves them in `tryBestToDistributeEvenly`: its
    comparison reads `totalAvailable[i]` by the slice position i, not by the NUMA node at that
    position, and Go sorts a slice this short by insertion, so the order is reproduced as is
    (ascending by what is left whenever the NUMA ids are 0..n-1 and all in the affinity)."""
    order = list(nodes)

    def at(i: int) -> int:
        return available.get(i, {}).get(name, 0)

    for i in range(1, len(order)):
        j = i
        while j > 0 and at(j) < at(j - 1):
            order[j], order[j - 1] = order[j - 1], order[j]
            j -= 1
    return order


def distribute_evenly(
    requests: Mapping[str, int], available: Mapping[int, Resources], options: ResourceOptions
) -> tuple[list[tuple[int, Resources]], list[str]]:
    """`tryBestToDistributeEvenly`: each requested NUMA resource split over the affinity's NUMA
    nodes, the least available first, each taking its share of what remains (at most what it
    has); `Insufficient NUMA <resource>` for a request not covered."""
    assert options.hint.mask is not None
    names = {name for res in available.values() for name in res}
    nodes = bits(options.hint.mask)
    result: dict[int, Resources] = {}
    reasons = []
    for name, amount in requests.items():
        order = _insertion_order(nodes, available, name) if name in names else []
        for i, nid in enumerate(order):
            share = split_amount(name, amount, len(nodes) - i, options)
            taken = min(available.get(nid, {}).get(name, 0), share)
            if taken != 0:
                result.setdefault(nid, {})[name] = taken
                amount -= taken
        if name in names and amount != 0:
            reasons.append(f"Insufficient NUMA {name}")
    return sorted(result.items()), sorted(reasons)


def resource_score(
    weights: Mapping[str, int],
    most: bool,
    requested: Mapping[str, int],
    allocatable: Mapping[str, int],
    pod_requests: Mapping[str, int],
) -> int:
    """`resourceAllocationScorer.score` over resource lists: LeastAllocated or MostAllocated per
    weighted resource the node has, the weighted mean."""
    total = weight_sum = 0
    for name, weight in weights.items():
        pod_request = pod_requests.get(name, 0)
        if pod_request == 0 and is_scalar_resource(name):
            continue
        cap = allocatable.get(name, 0)
        if cap == 0:
            continue
        req = requested.get(name, 0) + pod_request
        if most:
            score = min(req, cap) * MAX_NODE_SCORE // cap
        else:
            score = 0 if req > cap else (cap - req) * MAX_NODE_SCORE // cap
        total += score * weight
        weight_sum += weight
    return total // weight_sum if weight_sum else 0


__all__ = [
    "ANNOTATION_AMPLIFICATION_RATIO",
    "NUMAResources",
    "ResourceOptions",
    "Resources",
    "add",
    "amplification_ratios",
    "amplified_numa_resources",
    "amplify",
    "amplify_resources",
    "distribute_evenly",
    "format_amount",
    "format_resources",
    "numa_node_json",
    "resource_score",
    "split_amount",
    "sub_non_negative",
]
