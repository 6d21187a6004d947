"""Whether a generated workload's shape can fit its nodes, before a run says so by ending
`no-progress`: how many of its pods the workload's own rules let its nodes hold.

Each count follows the rule that binds the workload: CPU requests (every workload), LoadAware's
usage threshold over each node's NodeMetric, TopologySpreading's maxSkew across 3 zones, Gang's
whole gangs. A refusal names the field, what the nodes hold and what would fit.
"""

from __future__ import annotations

from collections.abc import Callable

from scheduler.bench.koord import load_aware_node_usage
from scheduler.bench.workloads import (
    GANG_SIZES,
    GANG_TOO_BIG_EVERY,
    HIGH_CPU,
    LOW_CPU,
    NODE_CPU,
    POD_CPU,
    SPREAD_MAX_SKEW,
    ZONES,
    make_pod,
)
from scheduler.config.koordargs import LoadAwareSchedulingArgs
from scheduler.plugins.loadaware.cache import estimate_pod
from scheduler.plugins.loadaware.plugin import usage_percent

NODE_MILLI = int(NODE_CPU) * 1000
PER_NODE = NODE_MILLI // int(POD_CPU.removesuffix("m"))
"""Pods of POD_CPU a node holds by CPU requests (memory and the pod count allow more)."""
NODE_MEMORY_BYTES = 32 * 1024**3


def load_aware_per_node(index: int) -> int:
    """Pods of the LoadAware workload node `index` holds: LoadAwareScheduling's Filter (default
    thresholds and estimator) over its NodeMetric, then CPU requests."""
    args = LoadAwareSchedulingArgs()
    estimate = estimate_pod(make_pod("pod", 0), args)
    cpu, memory = load_aware_node_usage(index)
    limits = args.usage_thresholds
    held = 0
    while held < PER_NODE:
        k = held + 1
        if usage_percent(cpu + k * estimate["cpu"], NODE_MILLI) > limits["cpu"]:
            break
        if usage_percent(memory + k * estimate["memory"], NODE_MEMORY_BYTES) > limits["memory"]:
            break
        held = k
    return held


def load_aware_capacity(nodes: int) -> int:
    """Pods the LoadAware workload's `nodes` nodes hold (node usage repeats every 70 nodes)."""
    per = {(i % 10, i % 7): load_aware_per_node(i) for i in range(min(nodes, 70))}
    return sum(per[(i % 10, i % 7)] for i in range(nodes))


def spreading_capacity(nodes: int, init_pods: int) -> int:
    """Pods the TopologySpreading workload's nodes hold: once the smallest zone is full, a zone
    takes measured pods only up to maxSkew more than it (the initial pods, placed by requests
    alone, land about evenly per node and count too)."""
    counts = [len(range(z, nodes, len(ZONES))) for z in range(len(ZONES))]
    counts = [c for c in counts if c]
    caps = [c * PER_NODE for c in counts]
    least = min(caps)
    initial = [-(-init_pods * c // nodes) for c in counts]
    return sum(min(cap, max(first, least + SPREAD_MAX_SKEW)) for cap, first in zip(caps, initial, strict=True))


def gang_members(pods: int) -> tuple[int, int, int]:
    """The Gang workload's measured pods split: (members of gangs that fit a node, members of
    the too-big gangs meant never to bind, members of a last gang cut short)."""
    fitting = too_big = g = 0
    left = pods
    while left > 0:
        size = GANG_SIZES[g % 2]
        if left < size:
            return fitting, too_big, left
        if g % GANG_TOO_BIG_EVERY == GANG_TOO_BIG_EVERY - 1:
            too_big += size
        else:
            fitting += size
        left -= size
        g += 1
    return fitting, too_big, 0


def _preemption_error(workload: str, n: int, init: int, measured: int) -> str | None:
    low = int(LOW_CPU.removesuffix("m"))
    per_node = NODE_MILLI // low
    if init > n * per_node:
        return f"initPods: {n} nodes hold at most {n * per_node} of its {LOW_CPU} CPU initial pods; {init} asked"
    pod_milli = int(HIGH_CPU.removesuffix("m")) if workload == "PreemptionHeavy" else 100
    if workload == "PreemptionAsync" and measured * pod_milli > n * NODE_MILLI - init * low:
        free = n * NODE_MILLI - init * low
        return f"pods: {measured} measured pods of 100m CPU need {measured * pod_milli}m; {n} nodes have {free}m free after {init} initial pods of {LOW_CPU}"
    return None


def _least_nodes(holds: int, need: int, capacity: Callable[[int], int]) -> int:
    """The fewest nodes whose capacity (a function of the node count) reaches `need`."""
    n = max(1, holds)
    while capacity(n) < need:
        n = n * 2
    low = n // 2
    while low + 1 < n:
        mid = (low + n) // 2
        if capacity(mid) >= need:
            n = mid
        else:
            low = mid
    return n


def _capacity(workload: str, init_pods: int) -> Callable[[int], int]:
    """How many pods n nodes of the workload hold, as a function of n."""
    if workload == "LoadAware":
        return load_aware_capacity
    if workload == "TopologySpreading":
        return lambda n: min(n * PER_NODE, spreading_capacity(n, init_pods))
    return lambda n: n * PER_NODE


def shape_error(workload: str, nodes: int, init_pods: int, pods: int) -> str | None:
    """Why a generated workload of this shape cannot bind all its pods, or None. Gang's too-big
    gangs and a last gang cut short are meant not to bind and are not counted (`gang_members`)."""
    if workload in ("PreemptionAsync", "PreemptionHeavy"):
        return _preemption_error(workload, nodes, init_pods, pods)
    if workload == "Gang":
        pods = gang_members(pods)[0]
    capacity = _capacity(workload, init_pods)
    held = capacity(nodes)
    if init_pods + pods <= held:
        return None
    if workload == "LoadAware":
        reason = f"{nodes} nodes hold at most {held} pods under LoadAwareScheduling's usage thresholds over their NodeMetrics"
    elif workload == "TopologySpreading":
        reason = (
            f"{nodes} nodes in {min(nodes, len(ZONES))} zones hold at most {held} pods of {POD_CPU} at maxSkew {SPREAD_MAX_SKEW}"
        )
    else:
        reason = f"{nodes} nodes of {NODE_CPU} CPU hold at most {held} pods of {POD_CPU}"
    least = _least_nodes(nodes, init_pods + pods, capacity)
    counted = "bindable measured" if workload == "Gang" else "measured"
    return f"pods: {reason}; {init_pods} initial + {pods} {counted} asked: use at least {least} nodes, or fewer pods"
