"""LoadAwareScheduling's estimator and its pod-assign cache, per node as NumPy rows.

Facts from koordinator-sh/koordinator `pkg/scheduler/plugins/loadaware/estimator/default_estimator.go`
(max(request, limit) x scaling factor, 250m / 200Mi for pods without requests, batch/mid pods
read their batch-*/mid-* resources) and `pod_assign_cache.go` (the NodeMetric of each node with
its pods' usage, and the estimate of pods whose usage is not reported yet, kept as deltas).

Each node known to the cache owns one row of the arrays below, so the plugin's batch forms read
all candidate nodes with one fancy index. Row 0 is a sentinel meaning "no NodeMetric".
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from scheduler.api.fields import FieldError, parse_time
from scheduler.api.koordinator import (
    ANNOTATION_CUSTOM_ESTIMATED_SCALING_FACTORS,
    ANNOTATION_CUSTOM_ESTIMATED_SECONDS_AFTER_INITIALIZED,
    ANNOTATION_CUSTOM_ESTIMATED_SECONDS_AFTER_POD_SCHEDULED,
    ANNOTATION_NODE_RAW_ALLOCATABLE,
    BATCH_CPU,
    BATCH_MEMORY,
    PRIORITY_PROD,
    NodeMetric,
    pod_limits,
    priority_class,
    quantity_value,
    translate_resource_name,
)
from scheduler.api.objects import CPU, MEMORY, Node, Pod, pod_requests
from scheduler.api.reservation import is_reserve_pod
from scheduler.config.koordargs import LoadAwareSchedulingArgs

DEFAULT_MILLI_CPU_REQUEST = 250
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

Vector = npt.NDArray[np.int64]


# ----- the resource vectorizer ----------------------------------------------------------------------
def vectorizer_names(args: LoadAwareSchedulingArgs) -> tuple[str, ...]:
    """`NewResourceVectorizerFromArgs`: cpu, memory and every resource the args name, sorted."""
    names = {CPU, MEMORY}
    names.update(args.usage_thresholds)
    names.update(args.prod_usage_thresholds)
    if args.aggregated is not None:
        names.update(args.aggregated.usage_thresholds)
    names.update(args.resource_weights)
    names.update(args.estimated_scaling_factors)
    names.update(args.supported_resources)
    return tuple(sorted(names))


def to_vec(names: tuple[str, ...], amounts: dict[str, int]) -> Vector:
    """A resource list as a vector over `names` (unknown names ignored)."""
    return np.array([amounts.get(n, 0) for n in names], dtype=np.int64)


# ----- the estimator ------------------------------------------------------------------------------
def _amount(name: str, amount: Fraction | None) -> int:
    """`MilliValue()` for cpu, `Value()` otherwise (both round up)."""
    if amount is None:
        return 0
    scaled = amount * 1000 if name == CPU else amount
    return math.ceil(scaled)


def estimated_used_by_resource(requests: dict[str, Fraction], limits: dict[str, Fraction], name: str, factor: int) -> int:
    """`estimatedUsedByResource`: the larger of request and limit times the factor, capped at the limit."""
    limit = limits.get(name, Fraction(0))
    request = requests.get(name, Fraction(0))
    quantity = limit if limit > request else request
    if quantity == 0:
        if name in (CPU, BATCH_CPU):
            return DEFAULT_MILLI_CPU_REQUEST
        if name in (MEMORY, BATCH_MEMORY):
            return DEFAULT_MEMORY_REQUEST
        return 0
    # Go's int64(math.Round(float64(q) * float64(factor) / 100)).
    used = go_round(float(_amount(name, quantity)) * float(factor) / 100)
    limit_value = _amount(name, limit)
    if limit_value > 0 and used > limit_value:
        used = limit_value
    return used


def go_round(x: float) -> int:
    """Go's math.Round: half away from zero (exact: the fraction is compared, not x + 0.5 rounded)."""
    if x < 0:
        return -go_round(-x)
    whole = math.floor(x)
    return whole + 1 if x - whole >= 0.5 else whole


def custom_scaling_factors(pod: Pod) -> dict[str, int]:
    """The pod's `load-estimated-scaling-factors` annotation; empty when absent or invalid."""
    text = pod.annotations.get(ANNOTATION_CUSTOM_ESTIMATED_SCALING_FACTORS, "")
    if not text:
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): int(v) for k, v in data.items() if isinstance(v, int) and not isinstance(v, bool)}


def estimate_pod(pod: Pod, args: LoadAwareSchedulingArgs, priority: str | None = None) -> dict[str, int]:
    """`DefaultEstimator.EstimatePod`: estimated usage per resource of the scaling factors
    (`priority`: the pod's priority class, when the caller has it)."""
    factors = custom_scaling_factors(pod) if args.allow_customize_estimation else {}
    if not factors:
        factors = dict(args.estimated_scaling_factors)
    else:
        for name, value in args.estimated_scaling_factors.items():
            factors.setdefault(name, value)
    if priority is None:
        priority = priority_class(pod)
    out: dict[str, int] = {}
    if not any(c.limits for c in (*pod.containers, *pod.init_containers)):
        # No limits: the pod's integer requests (MilliValue/Value, rounded up) are all it takes.
        for name, factor in factors.items():
            out[name] = _estimate_from_request(pod.requests, translate_resource_name(priority, name), factor)
        return out
    requests = pod_requests(pod)
    limits = pod_limits(pod)
    for name, factor in factors.items():
        real = translate_resource_name(priority, name)
        out[name] = estimated_used_by_resource(requests, limits, real, factor)
    return out


def _estimate_from_request(requests: dict[str, int], name: str, factor: int) -> int:
    """`estimatedUsedByResource` for a pod without limits."""
    value = requests.get(name, 0)
    if value == 0:
        if name in (CPU, BATCH_CPU):
            return DEFAULT_MILLI_CPU_REQUEST
        if name in (MEMORY, BATCH_MEMORY):
            return DEFAULT_MEMORY_REQUEST
        return 0
    return go_round(float(value) * float(factor) / 100)


def estimate_node(node: Node) -> dict[str, int]:
    """`DefaultEstimator.EstimateNode`: allocatable, with the raw-allocatable annotation's values when set."""
    text = node.annotations.get(ANNOTATION_NODE_RAW_ALLOCATABLE, "")
    if not text:
        return dict(node.allocatable)
    try:
        raw = json.loads(text)
        if not isinstance(raw, dict) or not raw:
            return dict(node.allocatable)
        overrides = {str(k): quantity_value(str(k), v) for k, v in raw.items()}
    except (json.JSONDecodeError, ValueError):
        return dict(node.allocatable)
    return {**node.allocatable, **overrides}


# ----- the pod-assign cache ------------------------------------------------------------------------
def _condition_time(pod: Pod, kind: str) -> float | None:
    for cond in pod.conditions:
        if cond.get("type") == kind and cond.get("status") == "True" and cond.get("lastTransitionTime"):
            try:
                return parse_time(str(cond["lastTransitionTime"]), "lastTransitionTime")
            except FieldError:
                return None
    return None


def _custom_seconds(pod: Pod, key: str) -> int:
    text = pod.annotations.get(key, "")
    try:
        return int(text) if text else -1
    except ValueError:
        return -1


@dataclass(slots=True)
class AssignedPod:
    """A pod the cache counts on a node: when it was assigned and its estimate."""

    pod: Pod
    timestamp: float
    estimated: Vector | None
    deadline: float | None
    prod: bool = False
    """Of the prod priority class when counted (its deltas are taken back as they were added)."""


@dataclass(slots=True)
class NodeLoad:
    """One node's NodeMetric and assigned pods (`podAssignCache.nodeInfo`)."""

    row: int
    metric: NodeMetric | None = None
    update_time: float = 0.0
    report_interval: float = 60.0
    pods: dict[str, AssignedPod] = field(default_factory=dict)
    pod_usages: dict[tuple[str, str], Vector] = field(default_factory=dict)
    prod_pods: set[tuple[str, str]] = field(default_factory=set)
    node_delta_pods: set[tuple[str, str]] = field(default_factory=set)
    prod_delta_pods: set[tuple[str, str]] = field(default_factory=set)
    node_estimated_pods: set[tuple[str, str]] = field(default_factory=set)


class PodAssignCache:
    """NodeMetrics and assigned pods by node, with per-row vectors the plugin reads in bulk."""

    def __init__(self, args: LoadAwareSchedulingArgs) -> None:
        self.args = args
        self.names = vectorizer_names(args)
        self.nodes: dict[str, NodeLoad] = {}
        self.version = 0
        self.metric_version = 0
        # Rows whose existing estimates changed, in order: readers that keep per-node results
        # between cycles recompute only these. `epoch` moves when the log is cut short.
        self.changed_rows: list[int] = []
        self.epoch = 0
        size = 64
        width = len(self.names)
        # Row 0 is the "no NodeMetric" sentinel.
        self._rows = 1
        self.has_metric = np.zeros(size, dtype=np.bool_)
        self.has_node_metric = np.zeros(size, dtype=np.bool_)
        self.has_update_time = np.zeros(size, dtype=np.bool_)
        self.update_time = np.zeros(size, dtype=np.float64)
        self.node_usage_set = np.zeros(size, dtype=np.bool_)
        self.node_usage = np.zeros((size, width), dtype=np.int64)
        self.prod_usage = np.zeros((size, width), dtype=np.int64)
        self.node_delta = np.zeros((size, width), dtype=np.int64)
        self.prod_delta = np.zeros((size, width), dtype=np.int64)
        self.node_estimated = np.zeros((size, width), dtype=np.int64)
        # What GetNodeMetricAndEstimatedOfExisting answers per row, kept current by _refresh: for
        # non-prod pods without aggregation, and for prod pods.
        self.existing_default = np.zeros((size, width), dtype=np.int64)
        self.existing_prod = np.zeros((size, width), dtype=np.int64)
        # updateTime in seconds, -inf when the report has none (so one comparison tells expiry).
        self.report_time = np.full(size, -np.inf, dtype=np.float64)
        # (aggregation type, duration seconds; 0 = the longest reported) -> usage rows and presence.
        self.agg_usage: dict[tuple[str, float], tuple[npt.NDArray[np.int64], npt.NDArray[np.bool_]]] = {}

    # ----- rows ---------------------------------------------------------------------------------
    def _grow(self) -> None:
        size = self.has_metric.shape[0] * 2

        def grown(arr: npt.NDArray[np.generic]) -> npt.NDArray[np.generic]:
            out = np.zeros((size, *arr.shape[1:]), dtype=arr.dtype)
            out[: arr.shape[0]] = arr
            return out

        report_time = np.full(size, -np.inf, dtype=np.float64)
        report_time[: self.report_time.shape[0]] = self.report_time
        self.report_time = report_time
        for name in (
            "has_metric",
            "has_node_metric",
            "has_update_time",
            "update_time",
            "node_usage_set",
            "node_usage",
            "prod_usage",
            "node_delta",
            "prod_delta",
            "node_estimated",
            "existing_default",
            "existing_prod",
        ):
            setattr(self, name, grown(getattr(self, name)))
        for key, (usage, present) in list(self.agg_usage.items()):
            self.agg_usage[key] = (grown(usage), grown(present))  # type: ignore[assignment]

    def node(self, name: str) -> NodeLoad:
        """The node's entry, created (with a fresh row) when new."""
        found = self.nodes.get(name)
        if found is None:
            if self._rows >= self.has_metric.shape[0]:
                self._grow()
            found = NodeLoad(self._rows)
            self._rows += 1
            self.nodes[name] = found
        return found

    @property
    def rows(self) -> int:
        """Rows in use (the sentinel included)."""
        return self._rows

    def row_of(self, name: str) -> int:
        """The node's row, 0 (the sentinel) when the cache does not know it."""
        found = self.nodes.get(name)
        return 0 if found is None else found.row

    # ----- pods ---------------------------------------------------------------------------------
    def _deadline(self, pod: Pod, timestamp: float) -> float | None:
        """`shouldEstimatePodDeadline`."""
        after_scheduled, after_initialized = -1, -1
        if self.args.allow_customize_estimation:
            after_scheduled = _custom_seconds(pod, ANNOTATION_CUSTOM_ESTIMATED_SECONDS_AFTER_POD_SCHEDULED)
            after_initialized = _custom_seconds(pod, ANNOTATION_CUSTOM_ESTIMATED_SECONDS_AFTER_INITIALIZED)
        if self.args.estimated_seconds_after_pod_scheduled is not None and after_scheduled < 0:
            after_scheduled = self.args.estimated_seconds_after_pod_scheduled
        if self.args.estimated_seconds_after_initialized is not None and after_initialized < 0:
            after_initialized = self.args.estimated_seconds_after_initialized
        if after_initialized > 0:
            initialized = _condition_time(pod, "Initialized")
            if initialized is not None:
                return initialized + after_initialized
        if after_scheduled > 0:
            return timestamp + after_scheduled
        return None

    def assign(self, node_name: str, pod: Pod, now: float, estimate: Vector | None = None, priority: str | None = None) -> None:
        """Count a pod on a node (Reserve, or a bound pod seen by the informer); `estimate` and
        `priority` (its priority class) if known.
        A Reservation's reserve pod is never counted (`podAssignCache.assign`): what it holds is
        not used until an owner runs there."""
        if not node_name or pod.phase in ("Succeeded", "Failed") or is_reserve_pod(pod):
            return
        if priority is None:
            priority = priority_class(pod)
        vec = estimate if estimate is not None else to_vec(self.names, estimate_pod(pod, self.args, priority))
        estimated = vec if vec.any() else None
        scheduled = _condition_time(pod, "PodScheduled")
        timestamp = scheduled if scheduled is not None else now
        info = AssignedPod(pod, timestamp, estimated, self._deadline(pod, timestamp), priority == PRIORITY_PROD)
        load = self.node(node_name)
        old = load.pods.get(pod.uid)
        load.pods[pod.uid] = info
        if load.metric is not None:
            if old is not None:
                self._remove(load, old)
            self._add(load, info)
            self._refresh(load.row)
        self.version += 1

    def update(self, node_name: str, pod: Pod, now: float) -> None:
        """A bound pod changed: re-estimate when its spec or conditions changed (as `OnUpdate`)."""
        load = self.nodes.get(node_name)
        old = load.pods.get(pod.uid) if load is not None else None
        if old is None:
            self.assign(node_name, pod, now)
        elif pod.phase in ("Succeeded", "Failed"):
            self.unassign(node_name, pod)
        elif old.pod.conditions != pod.conditions or old.pod.requests != pod.requests or old.pod.annotations != pod.annotations:
            self.assign(node_name, pod, now)
        else:
            old.pod = pod

    def unassign(self, node_name: str, pod: Pod) -> None:
        """Stop counting a pod (Unreserve, deletion)."""
        load = self.nodes.get(node_name)
        if load is None:
            return
        old = load.pods.pop(pod.uid, None)
        if old is not None and load.metric is not None:
            self._remove(load, old)
            self._refresh(load.row)
        self.version += 1

    def _should_estimate(self, load: NodeLoad, info: AssignedPod, usage: Vector | None) -> bool:
        # Usage not collected, the pod newer than the last report's window, or inside its forced window.
        return (
            usage is None
            or load.update_time - load.report_interval < info.timestamp
            or (info.deadline is not None and info.deadline > load.update_time)
        )

    def _add(self, load: NodeLoad, info: AssignedPod, sign: int = 1) -> None:
        """`nodeInfo.addPod` (sign 1) and its reverse `deletePod` (sign -1)."""
        row = load.row
        key = (info.pod.namespace, info.pod.name)
        usage = load.pod_usages.get(key)
        prod = info.prod
        active_prod = prod and key in load.prod_pods
        if active_prod and usage is not None:
            self.prod_usage[row] += sign * usage
        estimated = info.estimated
        if estimated is None:
            return
        should = self._should_estimate(load, info, usage)
        positive = None
        if should:
            positive = np.maximum(estimated - usage if usage is not None else estimated, 0)
            if positive.any():
                self.node_delta[row] += sign * positive
                (load.node_delta_pods.add if sign > 0 else load.node_delta_pods.discard)(key)
        self.node_estimated[row] += sign * estimated
        (load.node_estimated_pods.add if sign > 0 else load.node_estimated_pods.discard)(key)
        if not prod:
            return
        if not active_prod and usage is not None:
            # Usage reported, but not as a prod pod's: the prod delta takes the whole estimate.
            positive = np.maximum(estimated, 0)
        elif not should:
            return
        # Otherwise (usage None, or a prod pod's usage) the prod delta is the node delta's term.
        assert positive is not None
        if positive.any():
            self.prod_delta[row] += sign * positive
            (load.prod_delta_pods.add if sign > 0 else load.prod_delta_pods.discard)(key)

    def _remove(self, load: NodeLoad, info: AssignedPod) -> None:
        self._add(load, info, -1)

    # ----- NodeMetrics ------------------------------------------------------------------------------
    def set_metric(self, metric: NodeMetric) -> None:
        """`AddOrUpdateNodeMetric`: take the report and recount the node's pods against it."""
        load = self.node(metric.name)
        row = load.row
        load.metric = metric
        load.report_interval = metric.report_interval
        if metric.update_time is not None:
            load.update_time = metric.update_time
        self.has_metric[row] = True
        self.has_node_metric[row] = metric.has_node_metric
        self.has_update_time[row] = metric.update_time is not None
        self.update_time[row] = metric.update_time or 0.0
        self.report_time[row] = metric.update_time if metric.update_time is not None else -np.inf
        self.node_usage_set[row] = metric.has_node_metric
        self.node_usage[row] = to_vec(self.names, metric.node_usage)
        self.prod_usage[row] = (
            to_vec(self.names, metric.system_usage) if self.args.prod_usage_include_sys and metric.has_node_metric else 0
        )
        for usage, present in self.agg_usage.values():
            present[row] = False
            usage[row] = 0
        longest: dict[str, float] = {}
        for entry in metric.aggregated:
            for kind, amounts in entry.usage.items():
                if not amounts:
                    continue
                self._agg_row((kind, entry.duration), row, to_vec(self.names, amounts))
                if entry.duration > longest.get(kind, 0.0):
                    longest[kind] = entry.duration
        for kind, duration in longest.items():
            usage_arr = self.agg_usage[(kind, duration)][0]
            self._agg_row((kind, 0.0), row, usage_arr[row].copy())
        load.pod_usages = {}
        load.prod_pods = set()
        for pm in metric.pods:
            if not pm.usage:
                continue
            key = (pm.namespace, pm.name)
            load.pod_usages[key] = to_vec(self.names, pm.usage)
            if pm.priority == PRIORITY_PROD:
                load.prod_pods.add(key)
        self.node_delta[row] = 0
        self.prod_delta[row] = 0
        self.node_estimated[row] = 0
        load.node_delta_pods = set()
        load.prod_delta_pods = set()
        load.node_estimated_pods = set()
        for info in load.pods.values():
            info.prod = priority_class(info.pod) == PRIORITY_PROD
            self._add(load, info)
        self._refresh(row)
        self.version += 1
        self.metric_version += 1

    def _refresh(self, row: int) -> None:
        """Recompute the row's existing estimates after its usage or deltas changed."""
        if self.node_usage_set[row]:
            self.existing_default[row] = self.node_usage[row] + self.node_delta[row]
        else:
            self.existing_default[row] = self.node_estimated[row]
        self.existing_prod[row] = self.prod_usage[row] + self.prod_delta[row]
        if len(self.changed_rows) >= 1_000_000:
            self.changed_rows = []
            self.epoch += 1
        self.changed_rows.append(row)

    def _agg_row(self, key: tuple[str, float], row: int, vec: Vector) -> None:
        entry = self.agg_usage.get(key)
        if entry is None:
            size = self.has_metric.shape[0]
            entry = (np.zeros((size, len(self.names)), dtype=np.int64), np.zeros(size, dtype=np.bool_))
            self.agg_usage[key] = entry
        entry[0][row] = vec
        entry[1][row] = True

    def delete_metric(self, name: str) -> None:
        """`DeleteNodeMetric`."""
        load = self.nodes.get(name)
        if load is None:
            return
        load.metric = None
        self.has_metric[load.row] = False
        self.version += 1
        self.metric_version += 1

    # ----- reading ------------------------------------------------------------------------------
    def existing(self, rows: npt.NDArray[np.int64], prod: bool, agg: tuple[str, float] | None) -> npt.NDArray[np.int64]:
        """`GetNodeMetricAndEstimatedOfExisting` for many rows: usage plus the estimate of unreported pods."""
        if prod:
            return self.existing_prod[rows]
        if agg is None:
            return self.existing_default[rows]
        usage = self.node_usage[rows]
        present = self.node_usage_set[rows]
        if agg is not None:
            kind, duration = agg
            entry = self.agg_usage.get((kind, duration))
            if entry is not None:
                agg_present = entry[1][rows]
                usage = np.where(agg_present[:, None], entry[0][rows], usage)
                present = agg_present | (present if duration == 0 else False)
            elif duration != 0:
                present = np.zeros(len(rows), dtype=np.bool_)
        return np.where(present[:, None], usage + self.node_delta[rows], self.node_estimated[rows])

    def existing_one(self, name: str, prod: bool, agg: tuple[str, float] | None) -> list[int] | None:
        """The same for one node, step by step as the Go code reads it (None: no NodeMetric)."""
        load = self.nodes.get(name)
        if load is None or load.metric is None:
            return None
        row = load.row
        width = len(self.names)
        if prod:
            return [int(self.prod_usage[row, i] + self.prod_delta[row, i]) for i in range(width)]
        node_usage: list[int] | None = [int(v) for v in self.node_usage[row]] if self.node_usage_set[row] else None
        if agg is not None:
            kind, duration = agg
            entry = self.agg_usage.get((kind, duration))
            vec = [int(v) for v in entry[0][row]] if entry is not None and entry[1][row] else None
            if vec is None and duration == 0:
                vec = node_usage
            node_usage = vec
        if node_usage is None:
            return [int(v) for v in self.node_estimated[row]]
        return [node_usage[i] + int(self.node_delta[row, i]) for i in range(width)]

    def pods_of(self, name: str) -> Iterable[AssignedPod]:
        """The pods counted on a node."""
        load = self.nodes.get(name)
        return () if load is None else load.pods.values()


__all__ = [
    "AssignedPod",
    "NodeLoad",
    "PodAssignCache",
    "estimate_node",
    "estimate_pod",
    "estimated_used_by_resource",
    "go_round",
    "to_vec",
    "vectorizer_names",
]
