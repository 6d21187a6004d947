"""NodeResourcesBalancedAllocation: favour nodes whose resource fractions stay close together.

Ports `pkg/scheduler/framework/plugins/noderesources/balanced_allocation.go`:
score = int64((1 - std) * 100) over the requested/allocatable fractions (each capped at 1) of the
configured resources, using plain (not non-zero) requests. Best-effort pods, which request none
of the resources, skip the plugin at PreScore (kubernetes#129138).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from scheduler.api.objects import Pod
from scheduler.config.args import NodeResourcesBalancedAllocationArgs
from scheduler.framework import signers
from scheduler.framework.interface import Handle, ScoreExtensions
from scheduler.framework.nodeinfo import NodeInfo
from scheduler.framework.snapshot import Snapshot
from scheduler.framework.types import (
    MAX_NODE_SCORE,
    CycleState,
    IntArray,
    Status,
    skip,
    success,
)
from scheduler.plugins.noderesources.resource_allocation import (
    DEFAULT_RESOURCES,
    IntMatrix,
    ResourceAllocationScorer,
    ResourceWeight,
    is_best_effort,
    resource_weights,
)

NAME = "NodeResourcesBalancedAllocation"
PRE_SCORE_STATE_KEY = "PreScore" + NAME


def balanced_resource_score(requested: Sequence[int], allocatable: Sequence[int]) -> int:
    """`balancedResourceScorer`: (1 - standard deviation of the fractions) * 100, truncated."""
    fractions: list[float] = []
    total = 0.0
    for req, alloc in zip(requested, allocatable, strict=True):
        if alloc == 0:
            continue
        fraction = min(float(req) / float(alloc), 1.0)
        total += fraction
        fractions.append(fraction)
    std = 0.0
    # Two resources (the usual cpu+memory) use the closed form |a - b| / 2, as upstream does.
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = total / len(fractions)
        spread = 0.0
        for fraction in fractions:
            spread = spread + (fraction - mean) * (fraction - mean)
        std = math.sqrt(spread / len(fractions))
    return int((1 - std) * float(MAX_NODE_SCORE))


class BalancedStrategy:
    """The balanced-allocation score as a `resource_allocation.Strategy`."""

    def score(self, requested: Sequence[int], allocatable: Sequence[int]) -> int:
        """One node."""
        return balanced_resource_score(requested, allocatable)

    def score_batch(self, requested: IntMatrix, allocatable: IntMatrix, positive: bool = False) -> IntArray:
        """Many nodes; sums run over resources in the same order, so floats match bit for bit."""
        if positive and requested.shape[0] == 2:
            # Both resources scored everywhere (cpu and memory, the default): the two-resource
            # standard deviation below, without its masks.
            pair = np.minimum(requested / allocatable, 1.0)
            spread = np.abs((pair[0] - pair[1]) / 2)
            # Scores are non-negative (std <= 0.5), so truncation toward zero is a plain cast.
            balanced: IntArray = ((1 - spread) * float(MAX_NODE_SCORE)).astype(np.int64)
            return balanced
        included = allocatable != 0
        count = included.sum(axis=0)
        width = requested.shape[1]
        fractions = np.minimum(requested.astype(np.float64) / np.where(included, allocatable, 1).astype(np.float64), 1.0)
        total = np.zeros(width, dtype=np.float64)
        for row in range(requested.shape[0]):
            # Adding 0.0 leaves a float unchanged, so skipped resources do not disturb the sum.
            total = total + np.where(included[row], fractions[row], 0.0)
        std = np.zeros(width, dtype=np.float64)
        if requested.shape[0] >= 2:
            first = np.argmax(included, axis=0)
            last = requested.shape[0] - 1 - np.argmax(included[::-1], axis=0)
            columns = np.arange(width)
            pair = np.abs((fractions[first, columns] - fractions[last, columns]) / 2)
            std = np.where(count == 2, pair, std)
        if requested.shape[0] > 2:
            mean = total / np.maximum(count, 1)
            spread = np.zeros(width, dtype=np.float64)
            for row in range(requested.shape[0]):
                deviation = fractions[row] - mean
                spread = spread + np.where(included[row], deviation * deviation, 0.0)
            std = np.where(count > 2, np.sqrt(spread / np.maximum(count, 1)), std)
        scores: npt.NDArray[np.float64] = (1 - std) * float(MAX_NODE_SCORE)
        # Scores are non-negative (std <= 0.5), so truncation toward zero is a plain cast.
        return np.trunc(scores).astype(np.int64)


class NodeResourcesBalancedAllocation:
    """Scores nodes by how evenly the pod would leave their configured resources used."""

    name = NAME

    def sign_pod(self, pod: Pod) -> signers.Signed:
        """The pod's requests with overhead and pod-level resources."""
        return signers.signed((signers.RESOURCES, signers.resources(pod)))

    def __init__(self, handle: Handle | None, resources: tuple[ResourceWeight, ...] = DEFAULT_RESOURCES) -> None:
        self.handle = handle
        self.scorer = ResourceAllocationScorer(NAME, resources, BalancedStrategy(), use_requested=True)

    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status:
        """Skip for best-effort pods; otherwise store the pod's requests for Score."""
        requests = self.scorer.pod_requests(pod)
        if is_best_effort(requests):
            return skip()
        state.write(PRE_SCORE_STATE_KEY, requests)
        return success()

    def _pod_requests(self, state: CycleState, pod: Pod) -> tuple[int, ...]:
        cached = state.get(PRE_SCORE_STATE_KEY)
        return cached if isinstance(cached, tuple) else self.scorer.pod_requests(pod)

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        """The balance score of one node (0 for a best-effort pod when PreScore did not run)."""
        requests = self._pod_requests(state, pod)
        if is_best_effort(requests):
            return 0, success()
        return self.scorer.score(node_info, requests)

    def score_batch(self, state: CycleState, pod: Pod, snapshot: Snapshot, positions: IntArray) -> IntArray:
        """`score` for many nodes."""
        requests = self._pod_requests(state, pod)
        if is_best_effort(requests):
            return np.zeros(len(positions), dtype=np.int64)
        return self.scorer.score_batch(snapshot, positions, requests)

    def score_extensions(self) -> ScoreExtensions | None:
        """Scores are already 0..100."""
        return None


def new(args: object | None, handle: Handle | None) -> NodeResourcesBalancedAllocation:
    """Build the plugin from NodeResourcesBalancedAllocationArgs (None means cpu and memory)."""
    if args is None:
        args = NodeResourcesBalancedAllocationArgs()
    if not isinstance(args, NodeResourcesBalancedAllocationArgs):
        raise TypeError(f"want args to be of type NodeResourcesBalancedAllocationArgs, got {type(args).__name__}")
    return NodeResourcesBalancedAllocation(handle, resource_weights(args.resources))
