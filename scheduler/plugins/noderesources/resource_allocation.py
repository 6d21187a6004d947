"""The resource scorer NodeResourcesFit and NodeResourcesBalancedAllocation share.

Ports `resource_allocation.go` (which allocatable/requested pair each configured resource
contributes) and the three NodeResourcesFit strategies of `least_allocated.go`,
`most_allocated.go` and `requested_to_capacity_ratio.go`. Every scorer has a per-node form (the
reference) and a batch form over the snapshot's arrays that must give the same integers.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from scheduler.api.objects import CPU, EPHEMERAL_STORAGE, MEMORY, Pod, pod_requests, to_resource_list
from scheduler.config.args import ResourceSpec, UtilizationShapePoint
from scheduler.framework.nodeinfo import NodeInfo, is_scalar_resource
from scheduler.framework.snapshot import Snapshot
from scheduler.framework.types import MAX_NODE_SCORE, IntArray, Status, error, success

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
MAX_UTILIZATION = 100
MAX_CUSTOM_PRIORITY_SCORE = 10  # config.MaxCustomPriorityScore: shape scores are on 0..10

IntMatrix = npt.NDArray[np.int64]
"""A [resources, nodes] matrix of int64."""


@dataclass(frozen=True, slots=True)
class ResourceWeight:
    """One scored resource and its weight (`config.ResourceSpec`)."""

    name: str
    weight: int


DEFAULT_RESOURCES = (ResourceWeight(CPU, 1), ResourceWeight(MEMORY, 1))


def resource_weights(specs: Sequence[ResourceSpec]) -> tuple[ResourceWeight, ...]:
    """The configured `ResourceSpec`s as ResourceWeights, in order."""
    return tuple(ResourceWeight(spec.name, spec.weight) for spec in specs)


def go_div_int(numerator: int, denominator: int) -> int:
    """Go's integer division: truncation toward zero."""
    quotient = abs(numerator) // abs(denominator)
    return -quotient if (numerator < 0) != (denominator < 0) else quotient


def go_round_float(value: float) -> int:
    """`math.Round`: half away from zero, exact even where value + 0.5 would round up."""
    whole = math.trunc(value)
    if abs(value - whole) >= 0.5:
        whole += 1 if value > 0 else -1
    return int(whole)


def go_round_array(values: npt.NDArray[np.float64]) -> IntArray:
    """`math.Round` over an array (x - trunc(x) is exact in binary floating point)."""
    whole = np.trunc(values)
    away = np.abs(values - whole) >= 0.5
    return (whole + np.where(away, np.sign(values), 0.0)).astype(np.int64)


class Strategy(Protocol):
    """Turns per-resource requested/allocatable amounts into one node score."""

    def score(self, requested: Sequence[int], allocatable: Sequence[int]) -> int:
        """Score one node; entries with allocatable 0 are not part of the score."""
        ...

    def score_batch(self, requested: IntMatrix, allocatable: IntMatrix, positive: bool = False) -> IntArray:
        """Score many nodes: [resources, nodes] matrices in, one score per node out.

        `positive` promises that every allocatable entry is above 0 (every resource scored on
        every node), which lets a strategy drop its masks; the integers are the same.
        """
        ...


def _weights_column(resources: Sequence[ResourceWeight]) -> IntMatrix:
    return np.asarray([[r.weight] for r in resources], dtype=np.int64).reshape(len(resources), 1)


def _safe(allocatable: IntMatrix) -> IntMatrix:
    # Division by a masked-out zero is replaced afterwards; 1 keeps NumPy quiet meanwhile.
    return np.where(allocatable != 0, allocatable, 1)


def _weighted_truncated_mean(scores: IntMatrix, include: npt.NDArray[np.bool_], weights: IntMatrix) -> IntArray:
    node_score = np.where(include, scores * weights, 0).sum(axis=0)
    weight_sum = np.where(include, weights, 0).sum(axis=0)
    # Both sums are non-negative, so floor division is Go's truncation.
    return np.where(weight_sum == 0, 0, node_score // np.maximum(weight_sum, 1)).astype(np.int64)


def least_requested_score(requested: int, capacity: int) -> int:
    """Unused capacity on 0..100 (`leastRequestedScore`)."""
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * MAX_NODE_SCORE // capacity


def most_requested_score(requested: int, capacity: int) -> int:
    """Used capacity on 0..100, requests above capacity count as full (`mostRequestedScore`)."""
    if capacity == 0:
        return 0
    requested = min(requested, capacity)
    return requested * MAX_NODE_SCORE // capacity


def _weighted_mean(
    resources: Sequence[ResourceWeight],
    requested: Sequence[int],
    allocatable: Sequence[int],
    per_resource: Callable[[int, int], int],
) -> int:
    """Weighted mean of per-resource scores, skipping resources the node lacks (int64 truncation)."""
    node_score = weight_sum = 0
    for i, spec in enumerate(resources):
        if allocatable[i] == 0:
            continue
        node_score += per_resource(requested[i], allocatable[i]) * spec.weight
        weight_sum += spec.weight
    return 0 if weight_sum == 0 else go_div_int(node_score, weight_sum)


class LeastAllocatedStrategy:
    """Favours nodes with more unused capacity: weighted mean of unused fractions."""

    def __init__(self, resources: Sequence[ResourceWeight]) -> None:
        self.resources = tuple(resources)
        self._weights = _weights_column(self.resources)
        self._weight_sum = sum(r.weight for r in self.resources)

    def score(self, requested: Sequence[int], allocatable: Sequence[int]) -> int:
        """`leastResourceScorer` for one node."""
        return _weighted_mean(self.resources, requested, allocatable, least_requested_score)

    def score_batch(self, requested: IntMatrix, allocatable: IntMatrix, positive: bool = False) -> IntArray:
        """`leastResourceScorer` for many nodes."""
        if positive and self._weight_sum > 0:
            # Every resource counts on every node. Over capacity the floored quotient is
            # negative (at most -1), so clipping at 0 is upstream's "requested > capacity: 0";
            # the sums are non-negative, so floor division is Go's truncation.
            unused = (allocatable - requested) * MAX_NODE_SCORE // allocatable
            np.maximum(unused, 0, out=unused)
            mean: IntArray = (unused * self._weights).sum(axis=0) // self._weight_sum
            return mean
        include = allocatable != 0
        unused = (allocatable - requested) * MAX_NODE_SCORE // _safe(allocatable)
        scores = np.where(requested > allocatable, 0, unused)
        return _weighted_truncated_mean(scores, include, self._weights)


class MostAllocatedStrategy:
    """Favours nodes with more used capacity: weighted mean of used fractions."""

    def __init__(self, resources: Sequence[ResourceWeight]) -> None:
        self.resources = tuple(resources)
        self._weights = _weights_column(self.resources)

    def score(self, requested: Sequence[int], allocatable: Sequence[int]) -> int:
        """`mostResourceScorer` for one node."""
        return _weighted_mean(self.resources, requested, allocatable, most_requested_score)

    def score_batch(self, requested: IntMatrix, allocatable: IntMatrix, positive: bool = False) -> IntArray:
        """`mostResourceScorer` for many nodes."""
        include = allocatable != 0
        used = np.minimum(requested, allocatable) * MAX_NODE_SCORE // _safe(allocatable)
        return _weighted_truncated_mean(used, include, self._weights)


@dataclass(frozen=True, slots=True)
class ShapePoint:
    """A point of the broken linear function (`helper.FunctionShapePoint`)."""

    utilization: int
    score: int


def scaled_shape(points: Sequence[UtilizationShapePoint]) -> tuple[ShapePoint, ...]:
    """Config shape points (score 0..10) scaled to the 0..100 node score range."""
    factor = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    return tuple(ShapePoint(p.utilization, p.score * factor) for p in points)


def broken_linear(shape: Sequence[ShapePoint], p: int) -> int:
    """`helper.BuildBrokenLinearFunction` evaluated at p (Go integer arithmetic)."""
    for i, point in enumerate(shape):
        if p <= point.utilization:
            if i == 0:
                return shape[0].score
            prev = shape[i - 1]
            rise = (point.score - prev.score) * (p - prev.utilization)
            return prev.score + go_div_int(rise, point.utilization - prev.utilization)
    return shape[-1].score


def broken_linear_batch(shape: Sequence[ShapePoint], p: IntMatrix) -> IntMatrix:
    """The broken linear function over an array; the first segment whose end covers p wins."""
    out = np.full(p.shape, shape[-1].score, dtype=np.int64)
    for i in range(len(shape) - 1, -1, -1):
        point = shape[i]
        if i == 0:
            value = np.full(p.shape, point.score, dtype=np.int64)
        else:
            prev = shape[i - 1]
            rise = (point.score - prev.score) * (p - prev.utilization)
            run = point.utilization - prev.utilization
            quotient = np.abs(rise) // abs(run)
            value = prev.score + np.where((rise < 0) != (run < 0), -quotient, quotient)
        out = np.where(p <= point.utilization, value, out)
    return out


class RequestedToCapacityRatioStrategy:
    """Scores utilization through a user-given broken linear shape, rounding the weighted mean."""

    def __init__(self, resources: Sequence[ResourceWeight], shape: Sequence[ShapePoint]) -> None:
        if not shape:
            raise ValueError("requestedToCapacityRatio shape must not be empty")
        self.resources = tuple(resources)
        self.shape = tuple(shape)
        self._weights = _weights_column(self.resources)

    def resource_score(self, requested: int, capacity: int) -> int:
        """The shape's value at this resource's utilization (0..100, full when over capacity)."""
        if capacity == 0 or requested > capacity:
            return broken_linear(self.shape, MAX_UTILIZATION)
        return broken_linear(self.shape, requested * MAX_UTILIZATION // capacity)

    def score(self, requested: Sequence[int], allocatable: Sequence[int]) -> int:
        """`buildRequestedToCapacityRatioScorerFunction` for one node."""
        node_score = weight_sum = 0
        for i, spec in enumerate(self.resources):
            if allocatable[i] == 0:
                continue
            resource_score = self.resource_score(requested[i], allocatable[i])
            # Upstream leaves zero-scoring resources out of the mean entirely.
            if resource_score > 0:
                node_score += resource_score * spec.weight
                weight_sum += spec.weight
        if weight_sum == 0:
            return 0
        return go_round_float(float(node_score) / float(weight_sum))

    def score_batch(self, requested: IntMatrix, allocatable: IntMatrix, positive: bool = False) -> IntArray:
        """`buildRequestedToCapacityRatioScorerFunction` for many nodes."""
        utilization = np.where(requested > allocatable, MAX_UTILIZATION, requested * MAX_UTILIZATION // _safe(allocatable))
        scores = broken_linear_batch(self.shape, utilization)
        include = (allocatable != 0) & (scores > 0)
        node_score = np.where(include, scores * self._weights, 0).sum(axis=0)
        weight_sum = np.where(include, self._weights, 0).sum(axis=0)
        mean = node_score.astype(np.float64) / np.maximum(weight_sum, 1).astype(np.float64)
        return np.where(weight_sum == 0, 0, go_round_array(mean)).astype(np.int64)


def build_strategy(kind: str, resources: Sequence[ResourceWeight], shape: Sequence[UtilizationShapePoint] | None) -> Strategy:
    """The NodeResourcesFit scoring strategy named by `scoringStrategy.type`."""
    if kind == LEAST_ALLOCATED:
        return LeastAllocatedStrategy(resources)
    if kind == MOST_ALLOCATED:
        return MostAllocatedStrategy(resources)
    if kind == REQUESTED_TO_CAPACITY_RATIO:
        if shape is None:
            raise ValueError("scoring strategy RequestedToCapacityRatio needs requestedToCapacityRatio.shape")
        return RequestedToCapacityRatioStrategy(resources, scaled_shape(shape))
    raise ValueError(f"scoring strategy {kind} is not supported")


class ResourceAllocationScorer:
    """Collects per-resource allocatable and requested amounts and hands them to a strategy.

    `use_requested` picks the node's plain requested totals for cpu and memory (as
    BalancedAllocation does) instead of the non-zero ones (as NodeResourcesFit does); the pod's
    own cpu/memory request follows the same choice.

    `pod_level` says whether the pod's own request counts its pod-level `spec.resources`
    (upstream's `enablePodLevelResources` on the scorer). BalancedAllocation sets it; upstream's
    NodeResourcesFit never does (its feature flags land on the plugin, not on the embedded
    scorer), so Fit's score counts the containers' requests even when the pod has pod-level ones.
    """

    def __init__(
        self, name: str, resources: Sequence[ResourceWeight], strategy: Strategy, use_requested: bool, pod_level: bool = True
    ) -> None:
        self.name = name
        self.resources = tuple(resources)
        self.strategy = strategy
        self.use_requested = use_requested
        self.pod_level = pod_level

    def pod_request(self, pod: Pod, resource: str) -> int:
        """`calculatePodResourceRequest`: the pod's request for one resource, cpu in millicores."""
        if not self.pod_level and pod.pod_requests and resource in (CPU, MEMORY):
            # Rare (pods with spec.resources): recomputed here, once per cycle at PreScore.
            amounts = to_resource_list(pod_requests(pod, non_missing=not self.use_requested, pod_level=False))
            return amounts.get(resource, 0)
        if not self.use_requested:
            if resource == CPU:
                return pod.nonzero_cpu
            if resource == MEMORY:
                return pod.nonzero_memory
        return pod.requests.get(resource, 0)

    def pod_requests(self, pod: Pod) -> tuple[int, ...]:
        """`calculatePodResourceRequestList`: the pod's requests in the configured order."""
        return tuple(self.pod_request(pod, r.name) for r in self.resources)

    def _allocatable_requested(self, node_info: NodeInfo, resource: str, pod_request: int) -> tuple[int, int]:
        # A scalar resource the pod does not ask for is left out of the score entirely.
        if pod_request == 0 and is_scalar_resource(resource):
            return 0, 0
        allocatable = node_info.allocatable
        if resource in (CPU, MEMORY):
            used = node_info.requested if self.use_requested else node_info.nonzero_requested
            if resource == CPU:
                return allocatable.milli_cpu, used.milli_cpu + pod_request
            return allocatable.memory, used.memory + pod_request
        if resource == EPHEMERAL_STORAGE:
            return allocatable.ephemeral_storage, node_info.requested.ephemeral_storage + pod_request
        if resource in allocatable.scalar_resources:
            used_scalar = node_info.requested.scalar_resources.get(resource, 0)
            return allocatable.scalar_resources[resource], used_scalar + pod_request
        return 0, 0

    def score(self, node_info: NodeInfo, pod_requests: Sequence[int]) -> tuple[int, Status]:
        """The node's score for a pod whose requests were computed by `pod_requests`."""
        if not self.resources:
            return 0, error("resources not found")
        requested = [0] * len(self.resources)
        allocatable = [0] * len(self.resources)
        for i, spec in enumerate(self.resources):
            alloc, req = self._allocatable_requested(node_info, spec.name, pod_requests[i])
            if alloc == 0:
                continue
            allocatable[i] = alloc
            requested[i] = req
        return self.strategy.score(requested, allocatable), success()

    def matrices(self, snapshot: Snapshot, positions: IntArray, pod_requests: Sequence[int]) -> tuple[IntMatrix, IntMatrix]:
        """[resources, positions] matrices of requested and allocatable (0 where not scored)."""
        requested, allocatable, _positive = self._matrices(snapshot, positions, pod_requests)
        return requested, allocatable

    def _matrices(
        self, snapshot: Snapshot, positions: IntArray, pod_requests: Sequence[int]
    ) -> tuple[IntMatrix, IntMatrix, bool]:
        """`matrices`, and whether every allocatable entry is above 0."""
        width = len(positions)
        requested = np.zeros((len(self.resources), width), dtype=np.int64)
        allocatable = np.zeros((len(self.resources), width), dtype=np.int64)
        positive = width > 0
        for i, spec in enumerate(self.resources):
            name, pod_request = spec.name, pod_requests[i]
            if pod_request == 0 and is_scalar_resource(name):
                positive = False
                continue
            # Only cpu, memory, ephemeral-storage and scalar resources have columns, which is
            # exactly the set upstream can score; a column of zeros means no node has it.
            col = snapshot.column(name)
            if col is None:
                positive = False
                continue
            alloc = snapshot.allocatable[positions, col]
            if name in (CPU, MEMORY) and not self.use_requested:
                used = snapshot.nonzero_requested[positions, 0 if name == CPU else 1]
            else:
                used = snapshot.requested[positions, col]
            # Nodes without the resource are not scored on it: 0 in both matrices.
            allocatable[i] = alloc
            np.add(used, pod_request, out=requested[i])
            if positive and int(alloc.min()) > 0:
                continue
            positive = False
            requested[i][alloc == 0] = 0
        return requested, allocatable, positive

    def score_batch(self, snapshot: Snapshot, positions: IntArray, pod_requests: Sequence[int]) -> IntArray:
        """Scores for the nodes at `positions`; raises when no resources are configured."""
        if not self.resources:
            raise RuntimeError("resources not found")
        requested, allocatable, positive = self._matrices(snapshot, positions, pod_requests)
        return self.strategy.score_batch(requested, allocatable, positive)


def is_best_effort(pod_requests: Sequence[int]) -> bool:
    """Whether the pod requests none of the scored resources (`isBestEffortPod`)."""
    return all(request == 0 for request in pod_requests)
