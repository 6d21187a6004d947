"""LoadAwareScheduling: keeps pods off nodes whose measured load (NodeMetric) is too high and
prefers the least loaded nodes, counting pods assigned since the last report by their estimate.

Upstream: koordinator-sh/koordinator `pkg/scheduler/plugins/loadaware/load_aware.go`, `helper.go`,
`service.go`; proposal `docs/proposals/scheduling/20220510-load-aware-scheduling.md`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from scheduler.api.duration import parse_duration
from scheduler.api.fielderrors import FieldIssue
from scheduler.api.fields import FieldError, format_time
from scheduler.api.koordinator import (
    ANNOTATION_CUSTOM_USAGE_THRESHOLDS,
    PRIORITY_PROD,
    parse_node_metric,
    priority_class,
)
from scheduler.api.objects import Node, Pod
from scheduler.config.errors import ArgsDecodeError
from scheduler.config.koordargs import LoadAwareSchedulingArgs
from scheduler.framework.interface import Handle
from scheduler.framework.nodeinfo import NodeInfo
from scheduler.framework.types import (
    ActionType,
    BatchFilterResult,
    ClusterEvent,
    Code,
    CycleState,
    PreFilterResult,
    Status,
    success,
    unschedulable,
)
from scheduler.frameworkext.services import Request, RouteGroup, error_message, pod_json
from scheduler.plugins.loadaware.cache import PodAssignCache, estimate_node, estimate_pod, go_round, to_vec

if TYPE_CHECKING:
    from scheduler.framework.snapshot import Snapshot

NAME = "LoadAwareScheduling"
STATE_KEY = "IncomingPodEstimated" + NAME
MAX_NODE_SCORE = 100
REASON_NODE_METRIC_EXPIRED = "node(s) nodeMetric expired"
REASON_USAGE_EXCEED_THRESHOLD = "node(s) %s usage exceed threshold"
REASON_AGGREGATED_USAGE_EXCEED_THRESHOLD = "node(s) %s aggregated usage exceed threshold"


@dataclass(frozen=True, slots=True)
class FilterProfile:
    """The thresholds that apply to a node: args, or the node's usage-thresholds annotation."""

    usage: tuple[int, ...] | None
    prod: tuple[int, ...] | None
    agg: tuple[tuple[int, ...], str, float] | None


def _factor_vec(names: tuple[str, ...], values: dict[str, int]) -> tuple[int, ...] | None:
    """`ToFactorVec` of a non-empty map; None for an empty one (a disabled threshold set)."""
    if not values:
        return None
    return tuple(int(values.get(n, 0)) for n in names)


def default_profile(args: LoadAwareSchedulingArgs, names: tuple[str, ...]) -> FilterProfile:
    """`NewUsageThresholdsFilterProfile`."""
    agg = None
    a = args.aggregated
    if a is not None and a.usage_thresholds and a.usage_aggregation_type:
        vec = _factor_vec(names, a.usage_thresholds)
        assert vec is not None
        agg = (vec, a.usage_aggregation_type, a.usage_aggregated_duration)
    return FilterProfile(_factor_vec(names, args.usage_thresholds), _factor_vec(names, args.prod_usage_thresholds), agg)


def _int_values(raw: Any) -> dict[str, int]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ValueError("expected an object")
    out = {}
    for key, value in raw.items():
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{key}: expected an integer")
        out[str(key)] = value
    return out


def node_profile(node: Node, base: FilterProfile, names: tuple[str, ...]) -> FilterProfile:
    """`generateUsageThresholdsFilterProfile`: the node annotation overrides what it sets."""
    text = node.annotations.get(ANNOTATION_CUSTOM_USAGE_THRESHOLDS)
    if text is None:
        return base
    try:
        data = json.loads(text)
        if not isinstance(data, dict):
            return base
        usage = _int_values(data.get("usageThresholds"))
        prod = _int_values(data.get("prodUsageThresholds"))
        agg_raw = data.get("aggregatedUsage")
        agg: tuple[tuple[int, ...], str, float] | None = None
        if isinstance(agg_raw, dict):
            agg_usage = _int_values(agg_raw.get("usageThresholds"))
            kind = str(agg_raw.get("usageAggregationType") or "")
            if agg_usage and kind:
                duration_text = agg_raw.get("usageAggregatedDuration")
                nanos = parse_duration(str(duration_text)) if duration_text else 0
                vec = _factor_vec(names, agg_usage)
                assert vec is not None
                agg = (vec, kind, (nanos or 0) / 1e9)
    except (json.JSONDecodeError, ValueError):
        return base
    if not usage and not prod and agg is None:
        return base
    return FilterProfile(
        _factor_vec(names, usage) if usage else base.usage,
        _factor_vec(names, prod) if prod else base.prod,
        agg if agg is not None else base.agg,
    )


def is_daemonset_pod(pod: Pod) -> bool:
    """Whether an owner reference names a DaemonSet."""
    return any(kind == "DaemonSet" for kind, _ in pod.meta.owner_kinds)


def least_used_score(used: int, capacity: int) -> int:
    """`leastUsedScore`."""
    if capacity == 0 or used > capacity:
        return 0
    return ((capacity - used) * MAX_NODE_SCORE) // capacity


def load_aware_score(dominant_weight: int, weights: tuple[int, ...], used: list[int], allocatable: list[int]) -> int:
    """`loadAwareSchedulingScorer`: weighted least-used plus the dominant (most used) resource term."""
    node_score, dominant_score, weight_sum = 0, 0, 0
    if dominant_weight != 0:
        dominant_score, weight_sum = MAX_NODE_SCORE, dominant_weight
    for i, weight in enumerate(weights):
        score = least_used_score(used[i], allocatable[i])
        node_score += score * weight
        weight_sum += weight
        dominant_score = min(dominant_score, score)
    node_score += dominant_score * dominant_weight
    if weight_sum <= 0:
        return 0
    return node_score // weight_sum


def usage_percent(estimated: int, total: int) -> int:
    """`int64(math.Round(float64(estimated) / float64(total) * 100))`."""
    return go_round(estimated / total * 100)


def percent_of(estimated: npt.NDArray[np.int64], total: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """`usage_percent` elementwise, with the same float steps and Go's rounding."""
    x = estimated / total * 100
    whole = np.floor(x)
    return (whole + (x - whole >= 0.5)).astype(np.int64)


class LoadAwareScheduling:
    """Filter by usage thresholds, score by least usage, count reserved pods until reported."""

    name = NAME

    def __init__(self, args: LoadAwareSchedulingArgs, handle: Handle) -> None:
        self.handle = handle
        self.args = args
        self.args_version = 0
        self._flags_key: tuple[Any, ...] | None = None
        self._memos: dict[tuple[Any, ...], list[Any]] = {}
        # The last answers of _row_index, _position_index and _node_tables, with what they hold for.
        self._rows_hit: tuple[Any, ...] | None = None
        self._positions_hit: tuple[Any, ...] | None = None
        self._tables_hit: tuple[Any, ...] | None = None
        self._flags: tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_], npt.NDArray[np.bool_]] = (
            np.zeros(0, dtype=np.bool_),
        ) * 3
        self.cache = PodAssignCache(args)
        self._configure(args)
        self._sync()

    # ----- configuration ----------------------------------------------------------------------
    def _configure(self, args: LoadAwareSchedulingArgs) -> None:
        self.names = self.cache.names
        self.base_profile = default_profile(args, self.names)
        weights = tuple(int(args.resource_weights.get(n, 0)) for n in self.names)
        self.score_weights: tuple[int, ...] | None = weights
        if args.dominant_resource_weight == 0 and not any(weights):
            self.score_weights = None

    def update_args(self, args: LoadAwareSchedulingArgs) -> list[FieldIssue]:
        """Apply new args from the next cycle on; a change that fails validation is refused whole."""
        issues = args.validate("")
        if issues:
            return issues
        self.args = args
        self.args_version += 1
        self.cache = PodAssignCache(args)
        self._configure(args)
        self._sync()
        return []

    def _sync(self) -> None:
        """Fill the cache from the informers (`ForceSyncFromInformer`) and follow their events."""
        factory = getattr(self.handle, "informer_factory", None)
        if factory is None:
            return
        informers = factory()
        now = self.handle.now()
        for pod in informers.pods():
            if pod.node_name:
                self.cache.assign(pod.node_name, pod, now)
        for doc in informers.objects("NodeMetric"):
            self.cache.set_metric(parse_node_metric(doc))
        if not getattr(self, "_watching", False):
            informers.add_event_handler(self._on_event)
            self._watching = True

    def _on_event(self, event: Any) -> None:
        now = self.handle.now()
        if event.kind == "Pod":
            old, new = event.old, event.new
            if event.type == "DELETED":
                if old is not None and old.node_name:
                    self.cache.unassign(old.node_name, old)
                return
            if old is not None and old.node_name and new.node_name != old.node_name:
                self.cache.unassign(old.node_name, old)
            if new.node_name:
                self.cache.update(new.node_name, new, now)
        elif event.kind == "NodeMetric":
            if event.type == "DELETED":
                name = str(((event.old or {}).get("metadata") or {}).get("name", ""))
                self.cache.delete_metric(name)
            else:
                try:
                    self.cache.set_metric(parse_node_metric(event.new))
                except FieldError:
                    return
            queue = getattr(self.handle, "queue", None)
            if queue is not None:
                queue.move_all(ClusterEvent("NodeMetric", ActionType.UPDATE, "NodeMetricChange"))

    def events_to_register(self) -> list[ClusterEvent]:
        """A pod deleted; a NodeMetric added, updated or deleted."""
        return [ClusterEvent("Pod", ActionType.DELETE), ClusterEvent("NodeMetric", ActionType.ALL)]

    # ----- shared helpers -----------------------------------------------------------------------
    def _incoming(self, state: CycleState, pod: Pod) -> npt.NDArray[np.int64]:
        """The incoming pod's estimate, computed once per cycle (`addEstimatedOfIncoming`)."""
        found = state.get(STATE_KEY)
        if found is None:
            found = self._estimate(state, pod)
        return found[0]  # type: ignore[no-any-return]

    def _estimate(self, state: CycleState, pod: Pod) -> tuple[npt.NDArray[np.int64], str]:
        """The pod's estimate and priority class, kept in the cycle state (one priority_class per cycle)."""
        priority = priority_class(pod)
        found = (to_vec(self.names, estimate_pod(pod, self.args, priority)), priority)
        state.write(STATE_KEY, found)
        return found

    def _expired(self, name: str) -> bool:
        """`isNodeMetricExpired` for a node with a NodeMetric."""
        load = self.cache.nodes[name]
        metric = load.metric
        if metric is None or metric.update_time is None:
            return True
        seconds = self.args.node_metric_expiration_seconds
        return seconds > 0 and self.handle.now() - metric.update_time >= seconds

    def _profile_of(self, node: Node) -> FilterProfile:
        return node_profile(node, self.base_profile, self.names)

    def _allocatable(self, node: Node) -> list[int]:
        amounts = estimate_node(node)
        return [int(amounts.get(n, 0)) for n in self.names]

    # ----- PreFilter ----------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        """Estimate the incoming pod once for the cycle."""
        self._incoming(state, pod)
        return None, success()

    def pre_filter_extensions(self) -> None:
        """No AddPod/RemovePod: the load of preemption victims is not given back."""
        return None

    # ----- Filter -------------------------------------------------------------------------------
    def _thresholds(
        self, pod: Pod, profile: FilterProfile
    ) -> tuple[tuple[int, ...] | None, bool, bool, tuple[str, float] | None]:
        """The thresholds for this pod on a node of this profile: (thresholds, prod, aggregated, agg key)."""
        prod = profile.prod is not None and any(profile.prod) and priority_class(pod) == PRIORITY_PROD
        if prod:
            return profile.prod, True, False, None
        if profile.agg is not None:
            vec, kind, duration = profile.agg
            return vec, False, True, (kind, duration)
        return profile.usage, False, False, None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Unschedulable when the estimated usage of a resource exceeds its threshold."""
        node = node_info.node
        if is_daemonset_pod(pod):
            return success()
        thresholds, prod, is_agg, agg_key = self._thresholds(pod, self._profile_of(node))
        if thresholds is None or not any(thresholds):
            return success()
        allocatable = self._allocatable(node)
        existing = self.cache.existing_one(node.name, prod, agg_key)
        if existing is None:
            return success()
        if self.args.filter_expired_node_metrics and self._expired(node.name):
            if not self.args.enable_schedule_when_node_metrics_expired:
                return unschedulable(REASON_NODE_METRIC_EXPIRED)
            return success()
        metric = self.cache.nodes[node.name].metric
        if metric is None or not metric.has_node_metric:
            return success()
        incoming = self._incoming(state, pod)
        for i, value in enumerate(thresholds):
            if value == 0:
                continue
            total = allocatable[i]
            if total == 0:
                continue
            if usage_percent(existing[i] + int(incoming[i]), total) <= value:
                continue
            reason = REASON_AGGREGATED_USAGE_EXCEED_THRESHOLD if is_agg else REASON_USAGE_EXCEED_THRESHOLD
            return unschedulable(reason % self.names[i])
        return success()

    def _node_tables(self, snapshot: Snapshot) -> tuple[npt.NDArray[np.int64], list[FilterProfile], npt.NDArray[np.int64]]:
        """Per node row: its profile id, the profiles, and allocatable over the vectorizer (cached per node generation)."""

        def build() -> tuple[npt.NDArray[np.int64], list[FilterProfile], npt.NDArray[np.int64]]:
            profiles: dict[FilterProfile, int] = {}
            by_text: dict[str | None, int] = {}
            ids = np.zeros(snapshot.num_nodes, dtype=np.int64)
            alloc = np.zeros((snapshot.num_nodes, len(self.names)), dtype=np.int64)
            for pos, info in enumerate(snapshot.node_infos):
                node = info.node
                text = node.annotations.get(ANNOTATION_CUSTOM_USAGE_THRESHOLDS)
                pid = by_text.get(text)
                if pid is None:
                    pid = profiles.setdefault(self._profile_of(node), len(profiles))
                    by_text[text] = pid
                ids[pos] = pid
                alloc[pos] = self._allocatable(node)
            return ids, list(profiles), alloc

        hit = self._tables_hit
        if hit is not None and hit[0] is snapshot and hit[1] == snapshot.node_generation and hit[2] == self.args_version:
            return hit[3]  # type: ignore[no-any-return]
        key = (NAME, id(self), self.args_version, "tables")
        tables = snapshot.cached(key, build)
        self._tables_hit = (snapshot, snapshot.node_generation, self.args_version, tables)
        return tables  # type: ignore[return-value]

    def _rows(self, snapshot: Snapshot, positions: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """The cache rows of the nodes at `positions` (0 when the cache does not know a node)."""
        names = snapshot.names
        row_of = self.cache.row_of
        return np.fromiter((row_of(names[int(p)]) for p in positions), dtype=np.int64, count=len(positions))

    def _row_index(self, snapshot: Snapshot) -> npt.NDArray[np.int64]:
        """Per snapshot position, the node's cache row (read several times a cycle: the last
        answer is kept while the snapshot's nodes and the cache's rows stay as they were)."""
        cache = self.cache
        hit = self._rows_hit
        if (
            hit is not None
            and hit[0] is snapshot
            and hit[1] == snapshot.node_generation
            and hit[2] is cache
            and hit[3] == len(cache.nodes)
        ):
            return hit[4]  # type: ignore[no-any-return]

        def build() -> list[Any]:
            return [-1, None]

        memo: list[Any] = snapshot.cached((NAME, id(self), "rows"), build)  # type: ignore[assignment]
        layout = len(cache.nodes), id(cache)
        if memo[0] != layout:
            memo[1] = self._rows(snapshot, np.arange(snapshot.num_nodes, dtype=np.int64))
            memo[0] = layout
        self._rows_hit = (snapshot, snapshot.node_generation, cache, layout[0], memo[1])
        return memo[1]  # type: ignore[no-any-return]

    def _per_node(
        self, snapshot: Snapshot, key: tuple[Any, ...], compute: Callable[[npt.NDArray[np.int64]], npt.NDArray[np.int64]]
    ) -> npt.NDArray[np.int64]:
        """`compute` over every node position, kept between cycles: only nodes whose estimates
        changed since (one per Reserve, usually) are computed again."""
        cache = self.cache
        full_key = (key, snapshot.node_generation, id(cache), cache.epoch, self.args_version)
        memo = self._memos.get(full_key)
        if memo is None:
            if len(self._memos) >= 16:
                self._memos.clear()
            memo = [compute(np.arange(snapshot.num_nodes, dtype=np.int64)), len(cache.changed_rows)]
            self._memos[full_key] = memo
            return memo[0]  # type: ignore[no-any-return]
        seen = memo[1]
        if seen < len(cache.changed_rows):
            position_of = self._position_index(snapshot)
            dirty_positions = {int(position_of[row]) for row in set(cache.changed_rows[seen:])}
            dirty_positions.discard(-1)
            if dirty_positions:
                dirty = np.fromiter(sorted(dirty_positions), dtype=np.int64, count=len(dirty_positions))
                memo[0][dirty] = compute(dirty)
            memo[1] = len(cache.changed_rows)
        return memo[0]  # type: ignore[no-any-return]

    def _position_index(self, snapshot: Snapshot) -> npt.NDArray[np.int64]:
        """Per cache row, the snapshot position of its node (-1 for rows of unknown nodes)."""
        rows = self._row_index(snapshot)
        hit = self._positions_hit
        if hit is not None and hit[0] is rows and len(hit[1]) == self.cache.rows:
            return hit[1]  # type: ignore[no-any-return]
        memo: list[Any] = snapshot.cached((NAME, id(self), "positions"), lambda: [None, None])  # type: ignore[assignment]
        if memo[0] is not rows or len(memo[1]) != self.cache.rows:
            out = np.full(self.cache.rows, -1, dtype=np.int64)
            known = rows > 0
            out[rows[known]] = np.flatnonzero(known)
            memo[0], memo[1] = rows, out
        self._positions_hit = (rows, memo[1])
        return memo[1]  # type: ignore[no-any-return]

    def _expired_rows(self, rows: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
        seconds = self.args.node_metric_expiration_seconds
        report = self.cache.report_time[rows]
        if seconds <= 0:
            return np.isneginf(report)
        # now - updateTime >= seconds, with no updateTime (-inf) always expired.
        return self.handle.now() - report >= seconds

    def _row_flags(self) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
        """Per cache row: Filter checks usage, Filter fails as expired, Score counts the node.

        They change only with the clock or a NodeMetric, so they are kept between cycles.
        """
        cache = self.cache
        key = (self.handle.now(), cache.metric_version, cache.rows, id(cache), self.args_version)
        if self._flags_key != key:
            rows = np.arange(cache.rows, dtype=np.int64)
            metric = cache.has_metric[rows]
            reported = metric & cache.has_node_metric[rows]
            expired = self._expired_rows(rows)
            args = self.args
            skip_expired = expired if args.filter_expired_node_metrics else np.zeros(len(rows), dtype=np.bool_)
            check = reported & ~skip_expired
            fail = (
                metric & skip_expired
                if not args.enable_schedule_when_node_metrics_expired
                else np.zeros(len(rows), dtype=np.bool_)
            )
            self._flags = (check, fail, reported & ~expired)
            self._flags_key = key
        return self._flags

    def _bounds(self, snapshot: Snapshot, thresholds: tuple[int, ...]) -> npt.NDArray[np.int64]:
        """Per node and resource, the largest estimate whose usage percent stays within the threshold.

        `usage_percent(e, total)` never decreases as e grows, so "usage > threshold" is
        "e > bound"; the bound starts from exact arithmetic and is moved until the float formula
        agrees on both sides of it. Nodes with no allocatable get no bound (never filtered).
        """

        def build() -> npt.NDArray[np.int64]:
            _, _, alloc = self._node_tables(snapshot)
            out = np.full(alloc.shape, np.iinfo(np.int64).max, dtype=np.int64)
            for i, limit in enumerate(thresholds):
                total = alloc[:, i]
                has = total > 0
                t = total[has]
                bound = ((2 * limit + 1) * t - 1) // 200
                for _ in range(4):
                    bound = np.where(percent_of(bound + 1, t) <= limit, bound + 1, bound)
                    bound = np.where(percent_of(bound, t) > limit, bound - 1, bound)
                out[has, i] = bound
            return out

        return snapshot.cached((NAME, id(self), self.args_version, "bounds", thresholds), build)  # type: ignore[return-value]

    def _first_failures(
        self,
        snapshot: Snapshot,
        positions: npt.NDArray[np.int64],
        thresholds: tuple[int, ...],
        prod: bool,
        agg_key: tuple[str, float] | None,
        incoming: npt.NDArray[np.int64],
    ) -> npt.NDArray[np.int64]:
        """Per node, the first resource (name order) whose usage with the pod exceeds its threshold, or -1."""
        rows = self._row_index(snapshot)[positions]
        estimated = self.cache.existing(rows, prod, agg_key)
        bounds = self._bounds(snapshot, thresholds)[positions]
        first_failure = np.full(len(positions), -1, dtype=np.int64)
        for i in reversed(range(len(self.names))):
            if thresholds[i] == 0:
                continue
            first_failure[estimated[:, i] + int(incoming[i]) > bounds[:, i]] = i
        return first_failure

    def filter_batch(
        self, state: CycleState, pod: Pod, snapshot: Snapshot, positions: npt.NDArray[np.int64]
    ) -> BatchFilterResult:
        """The same verdicts over many nodes: one pass per distinct threshold profile."""
        count = len(positions)
        codes = np.zeros(count, dtype=np.int8)
        keys = np.zeros(count, dtype=np.int64)
        names = self.names
        if is_daemonset_pod(pod) or count == 0:
            return BatchFilterResult(codes, lambda _i: (), keys)
        ids, profiles, _ = self._node_tables(snapshot)
        rows = self._row_index(snapshot)[positions]
        check_rows, fail_rows, _ = self._row_flags()
        check = check_rows[rows]
        expired = fail_rows[rows]
        incoming = self._incoming(state, pod)
        failed = False
        # The usual cluster has one threshold profile: no per-profile masks then.
        groups: list[tuple[int, npt.NDArray[np.bool_] | None]]
        if len(profiles) == 1:
            groups = [(0, None)]
        else:
            profile_ids = ids[positions]
            groups = [(int(pid), profile_ids == pid) for pid in np.unique(profile_ids)]
        for pid, member in groups:
            thresholds, prod, is_agg, agg_key = self._thresholds(pod, profiles[pid])
            if thresholds is None or not any(thresholds):
                continue
            if expired.any():
                gone = expired if member is None else expired & member
                codes[gone] = Code.UNSCHEDULABLE
                keys[gone] = 1
                failed = True

            def failures(
                at: npt.NDArray[np.int64], t: tuple[int, ...] = thresholds, p: bool = prod, a: tuple[str, float] | None = agg_key
            ) -> npt.NDArray[np.int64]:
                return self._first_failures(snapshot, at, t, p, a, incoming)

            first_failure = self._per_node(snapshot, ("filter", thresholds, prod, agg_key, incoming.tobytes()), failures)[
                positions
            ]
            failing = check & (first_failure >= 0)
            if member is not None:
                failing &= member
            if failing.any():
                codes[failing] = Code.UNSCHEDULABLE
                keys[failing] = 2 + first_failure[failing] + (len(names) if is_agg else 0)
                failed = True

        def reasons(i: int) -> tuple[str, ...]:
            key = int(keys[i])
            if key == 1:
                return (REASON_NODE_METRIC_EXPIRED,)
            index = key - 2
            if index >= len(names):
                return (REASON_AGGREGATED_USAGE_EXCEED_THRESHOLD % names[index - len(names)],)
            return (REASON_USAGE_EXCEED_THRESHOLD % names[index],)

        # Usually no node fails: saying so spares the framework looking at the codes.
        return BatchFilterResult(codes, reasons, keys, passed=not failed)

    # ----- Score --------------------------------------------------------------------------------
    def _score_mode(self, pod: Pod) -> tuple[bool, tuple[str, float] | None]:
        prod = self.args.score_according_prod_usage and priority_class(pod) == PRIORITY_PROD
        agg = self.args.aggregated
        if not prod and agg is not None and agg.score_aggregation_type:
            return prod, (agg.score_aggregation_type, agg.score_aggregated_duration)
        return prod, None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        """The weighted least-used score of the node after adding the pod; 0 without a fresh NodeMetric."""
        if self.score_weights is None:
            return 0, success()
        node = node_info.node
        prod, agg_key = self._score_mode(pod)
        existing = self.cache.existing_one(node.name, prod, agg_key)
        if existing is None or self._expired(node.name):
            return 0, success()
        metric = self.cache.nodes[node.name].metric
        if metric is None or not metric.has_node_metric:
            return 0, success()
        incoming = self._incoming(state, pod)
        used = [existing[i] + int(incoming[i]) for i in range(len(self.names))]
        return load_aware_score(self.args.dominant_resource_weight, self.score_weights, used, self._allocatable(node)), success()

    def score_batch(
        self, state: CycleState, pod: Pod, snapshot: Snapshot, positions: npt.NDArray[np.int64]
    ) -> npt.NDArray[np.int64]:
        """The same scores over many nodes at once."""
        if self.score_weights is None or len(positions) == 0:
            return np.zeros(len(positions), dtype=np.int64)
        rows = self._row_index(snapshot)[positions]
        valid = self._row_flags()[2][rows]
        prod, agg_key = self._score_mode(pod)
        incoming = self._incoming(state, pod)
        raw = self._per_node(
            snapshot,
            ("score", prod, agg_key, incoming.tobytes()),
            lambda at: self._raw_scores(snapshot, at, prod, agg_key, incoming),
        )[positions]
        return np.where(valid, raw, 0)

    def _raw_scores(
        self,
        snapshot: Snapshot,
        positions: npt.NDArray[np.int64],
        prod: bool,
        agg_key: tuple[str, float] | None,
        incoming: npt.NDArray[np.int64],
    ) -> npt.NDArray[np.int64]:
        """`loadAwareSchedulingScorer` per node, as if every node had a fresh NodeMetric."""
        _, _, alloc_all = self._node_tables(snapshot)
        rows = self._row_index(snapshot)[positions]
        used = self.cache.existing(rows, prod, agg_key) + incoming
        capacity = alloc_all[positions]
        ok = (capacity > 0) & (used <= capacity)
        scores = np.where(ok, (capacity - used) * MAX_NODE_SCORE // np.where(capacity > 0, capacity, 1), 0)
        assert self.score_weights is not None
        weights = np.asarray(self.score_weights, dtype=np.int64)
        dominant = self.args.dominant_resource_weight
        node_score = scores @ weights
        weight_sum = int(weights.sum()) + dominant
        if dominant != 0:
            node_score = node_score + np.minimum(scores.min(axis=1), MAX_NODE_SCORE) * dominant
        if weight_sum <= 0:
            return np.zeros(len(positions), dtype=np.int64)
        return (node_score // weight_sum).astype(np.int64)

    def score_extensions(self) -> None:
        """Scores are used as they are (no NormalizeScore)."""
        return None

    # ----- Reserve ------------------------------------------------------------------------------
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Count the pod on the node by its estimate until its usage is reported."""
        incoming, priority = state.get(STATE_KEY) or self._estimate(state, pod)
        self.cache.assign(node_name, pod, self.handle.now(), incoming, priority)
        return success()

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Stop counting the pod."""
        self.cache.unassign(node_name, pod)

    # ----- REST services ------------------------------------------------------------------------
    def register_endpoints(self, group: RouteGroup) -> None:
        """`GET /node/:nodeName` as Koordinator serves it; `GET, PUT /args` for the console."""
        group.get("/node/:nodeName", self._serve_node)
        group.get("/args", lambda _r: (200, self.args.to_dict()))
        group.put("/args", self._serve_put_args)

    def _serve_node(self, request: Request) -> tuple[int, Any]:
        name = request.params["nodeName"]
        load = self.cache.nodes.get(name)
        if load is None or (not load.pods and load.metric is None):
            return 200, {}
        pods = sorted(load.pods.values(), key=lambda a: a.timestamp)
        out: dict[str, Any] = {"pods": [{"timestamp": format_time(a.timestamp), "pod": pod_json(a.pod)} for a in pods]}
        if load.metric is not None:
            row = load.row
            out["prodUsage"] = self._resource_list(self.cache.prod_usage[row])
            out["nodeDelta"] = self._resource_list(self.cache.node_delta[row])
            out["prodDelta"] = self._resource_list(self.cache.prod_delta[row])
            out["nodeEstimated"] = self._resource_list(self.cache.node_estimated[row])
            for key, members in (
                ("nodeDeltaPods", load.node_delta_pods),
                ("prodDeltaPods", load.prod_delta_pods),
                ("nodeEstimatedPods", load.node_estimated_pods),
            ):
                if members:
                    out[key] = sorted(f"{ns}/{pod}" for ns, pod in members)
        if not out["pods"]:
            del out["pods"]
        return 200, out

    def _resource_list(self, vec: npt.NDArray[np.int64]) -> dict[str, str]:
        return {name: format_quantity(name, int(v)) for name, v in zip(self.names, vec, strict=True)}

    def _serve_put_args(self, request: Request) -> tuple[int, Any]:
        try:
            data = json.loads(request.text() or "{}")
        except json.JSONDecodeError as exc:
            return error_message(400, f"invalid JSON: {exc.msg}")
        if not isinstance(data, dict):
            return error_message(400, "expected a LoadAwareSchedulingArgs object")
        data.pop("apiVersion", None)
        data.pop("kind", None)
        try:
            args = LoadAwareSchedulingArgs.from_dict(data, "")
        except ArgsDecodeError as exc:
            return error_message(400, str(exc))
        issues = self.update_args(args)
        if issues:
            return error_message(400, "; ".join(str(i) for i in issues))
        return 200, self.args.to_dict()


_BINARY = (("Ei", 1 << 60), ("Pi", 1 << 50), ("Ti", 1 << 40), ("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10))
_DECIMAL = (("E", 10**18), ("P", 10**15), ("T", 10**12), ("G", 10**9), ("M", 10**6), ("k", 10**3))


def format_quantity(name: str, value: int) -> str:
    """`getResourceQuantity(...).String()`: cpu as a milli quantity, memory binary when a multiple of 1024."""
    if name == "cpu":
        if value % 1000:
            return f"{value}m"
        value //= 1000
        table = _DECIMAL
    elif name == "memory" and value % 1024 == 0:
        table = _BINARY
    else:
        table = _DECIMAL
    if value == 0:
        return "0"
    for suffix, unit in table:
        if value % unit == 0:
            return f"{value // unit}{suffix}"
    return str(value)


def new(args: object | None, handle: Handle) -> LoadAwareScheduling:
    """Build the plugin; args default to Koordinator's and must validate."""
    if args is None or isinstance(args, dict):
        args = LoadAwareSchedulingArgs.from_dict(args or {}, "")
    if not isinstance(args, LoadAwareSchedulingArgs):
        raise TypeError(f"want args to be of type LoadAwareSchedulingArgs, got {type(args).__name__}")
    issues = args.validate("")
    if issues:
        raise ValueError("; ".join(str(i) for i in issues))
    return LoadAwareScheduling(args, handle)


__all__ = ["NAME", "LoadAwareScheduling", "format_quantity", "least_used_score", "load_aware_score", "new"]
