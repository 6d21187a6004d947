"""Args of Koordinator's plugins: LoadAwareScheduling and NodeNUMAResource.

Defaults from koordinator-sh/koordinator `pkg/scheduler/apis/config/v1/defaults.go`, checks
and their wording from `pkg/scheduler/apis/config/validation/validation_pluginargs.go`. Users'
Koordinator configs write these args with `kubescheduler.config.k8s.io/v1beta2`, `v1beta3` or
`v1`; all three are accepted (`API_VERSIONS`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Self

from scheduler.api.duration import format_duration
from scheduler.api.fielderrors import FieldIssue, invalid, not_supported, required, type_error
from scheduler.api.fields import join
from scheduler.config.decode import ObjectReader
from scheduler.config.errors import ArgsDecodeError, DecodeLog

KOORDINATOR_API_VERSIONS = (
    "kubescheduler.config.k8s.io/v1",
    "kubescheduler.config.k8s.io/v1beta3",
    "kubescheduler.config.k8s.io/v1beta2",
)
AGGREGATION_TYPES = ("avg", "p50", "p90", "p95", "p99")
CPU_BIND_POLICIES = ("FullPCPUs", "SpreadByPCPUs")
NUMA_SCORING_TYPES = ("LeastAllocated", "MostAllocated")

DEFAULT_RESOURCE_WEIGHTS = {"cpu": 1, "memory": 1}
DEFAULT_USAGE_THRESHOLDS = {"cpu": 65, "memory": 95}
DEFAULT_ESTIMATED_SCALING_FACTORS = {"cpu": 85, "memory": 70}


def _reader(data: object, path: str) -> ObjectReader:
    return ObjectReader(data, path, DecodeLog())


def _checked(reader: ObjectReader, result: Any) -> Any:
    reader.finish()
    if reader.log:
        raise ArgsDecodeError(reader.log)
    return result


def _int_map(r: ObjectReader, key: str) -> dict[str, int] | None:
    """A `map[ResourceName]int64` field; None when absent."""
    value = r.raw(key)
    if value is None:
        return None
    if not isinstance(value, dict):
        r.log.errors.append(type_error(r.where(key), value, "object"))
        return {}
    out: dict[str, int] = {}
    for name, amount in value.items():
        if isinstance(amount, bool) or not isinstance(amount, int):
            r.log.errors.append(type_error(join(r.where(key), str(name)), amount, "int64"))
            continue
        out[str(name)] = amount
    return out


def _seconds(r: ObjectReader, key: str) -> float | None:
    nanos = r.duration(key)
    return None if nanos is None else nanos / 1e9


class _Duration:
    """A duration shown as Go prints a metav1.Duration in a bad-value message."""

    __slots__ = ("seconds",)

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def __str__(self) -> str:
        return format_duration(round(self.seconds * 1e9))


@dataclass(frozen=True, slots=True)
class LoadAwareSchedulingAggregatedArgs:
    """Percentile-based thresholds and scoring over NodeMetric's `aggregatedNodeUsages`."""

    usage_thresholds: dict[str, int] = field(default_factory=dict)
    usage_aggregation_type: str = ""
    usage_aggregated_duration: float = 0.0
    score_aggregation_type: str = ""
    score_aggregated_duration: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """The v1 YAML form."""
        out: dict[str, Any] = {}
        if self.usage_thresholds:
            out["usageThresholds"] = dict(self.usage_thresholds)
        if self.usage_aggregation_type:
            out["usageAggregationType"] = self.usage_aggregation_type
        if self.usage_aggregated_duration:
            out["usageAggregatedDuration"] = str(_Duration(self.usage_aggregated_duration))
        if self.score_aggregation_type:
            out["scoreAggregationType"] = self.score_aggregation_type
        if self.score_aggregated_duration:
            out["scoreAggregatedDuration"] = str(_Duration(self.score_aggregated_duration))
        return out


@dataclass(frozen=True, slots=True)
class LoadAwareSchedulingArgs:
    """Args of LoadAwareScheduling (Koordinator's `LoadAwareSchedulingArgs`), defaults applied."""

    API_VERSIONS = KOORDINATOR_API_VERSIONS

    filter_expired_node_metrics: bool = True
    node_metric_expiration_seconds: int = 180
    enable_schedule_when_node_metrics_expired: bool = False
    resource_weights: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_RESOURCE_WEIGHTS))
    dominant_resource_weight: int = 0
    usage_thresholds: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_USAGE_THRESHOLDS))
    prod_usage_thresholds: dict[str, int] = field(default_factory=dict)
    prod_usage_include_sys: bool = False
    score_according_prod_usage: bool = False
    estimator: str = ""
    estimated_scaling_factors: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_ESTIMATED_SCALING_FACTORS))
    estimated_seconds_after_pod_scheduled: int | None = None
    estimated_seconds_after_initialized: int | None = None
    allow_customize_estimation: bool = False
    aggregated: LoadAwareSchedulingAggregatedArgs | None = None
    supported_resources: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, data: Mapping[str, object], path: str) -> Self:
        """Decode strictly and apply `SetDefaults_LoadAwareSchedulingArgs`."""
        r = _reader(data, path)
        filter_expired = r.boolean("filterExpiredNodeMetrics")
        expiration = r.integer("nodeMetricExpirationSeconds", 64)
        enable_expired = r.boolean("enableScheduleWhenNodeMetricsExpired")
        weights = _int_map(r, "resourceWeights")
        dominant = r.integer("dominantResourceWeight", 64) or 0
        thresholds = _int_map(r, "usageThresholds")
        prod_thresholds = _int_map(r, "prodUsageThresholds") or {}
        include_sys = bool(r.boolean("prodUsageIncludeSys"))
        by_prod = bool(r.boolean("scoreAccordingProdUsage"))
        estimator = r.string("estimator") or ""
        factors = _int_map(r, "estimatedScalingFactors")
        after_scheduled = r.integer("estimatedSecondsAfterPodScheduled", 64)
        after_initialized = r.integer("estimatedSecondsAfterInitialized", 64)
        customize = bool(r.boolean("allowCustomizeEstimation"))
        aggregated = None
        if r.has("aggregated"):
            a = r.child("aggregated")
            aggregated = LoadAwareSchedulingAggregatedArgs(
                usage_thresholds=_int_map(a, "usageThresholds") or {},
                usage_aggregation_type=a.string("usageAggregationType") or "",
                usage_aggregated_duration=_seconds(a, "usageAggregatedDuration") or 0.0,
                score_aggregation_type=a.string("scoreAggregationType") or "",
                score_aggregated_duration=_seconds(a, "scoreAggregatedDuration") or 0.0,
            )
            a.finish()
        r.raw("aggregated")
        supported = r.strings("supportedResources")
        if not weights and dominant == 0:
            weights = dict(DEFAULT_RESOURCE_WEIGHTS)
        if not thresholds:
            thresholds = dict(DEFAULT_USAGE_THRESHOLDS)
        if factors is None:
            factors = dict(DEFAULT_ESTIMATED_SCALING_FACTORS)
        else:
            for name, value in DEFAULT_ESTIMATED_SCALING_FACTORS.items():
                factors.setdefault(name, value)
        args = cls(
            filter_expired_node_metrics=True if filter_expired is None else filter_expired,
            node_metric_expiration_seconds=180 if expiration is None else expiration,
            enable_schedule_when_node_metrics_expired=bool(enable_expired),
            resource_weights=weights or {},
            dominant_resource_weight=dominant,
            usage_thresholds=thresholds,
            prod_usage_thresholds=prod_thresholds,
            prod_usage_include_sys=include_sys,
            score_according_prod_usage=by_prod,
            estimator=estimator,
            estimated_scaling_factors=factors,
            estimated_seconds_after_pod_scheduled=after_scheduled,
            estimated_seconds_after_initialized=after_initialized,
            allow_customize_estimation=customize,
            aggregated=aggregated,
            supported_resources=supported,
        )
        result: Self = _checked(r, args)
        return result

    def validate(self, path: str) -> list[FieldIssue]:
        """Koordinator's `ValidateLoadAwareSchedulingArgs` (resources in name order)."""
        issues: list[FieldIssue] = []
        if self.node_metric_expiration_seconds <= 0:
            issues.append(
                invalid(
                    join(path, "nodeMetricExpirationSeconds"),
                    self.node_metric_expiration_seconds,
                    "nodeMetricExpiredSeconds should be a positive value",
                )
            )
        problem = _weights_problem(self.resource_weights)
        if problem:
            issues.append(invalid(join(path, "resourceWeights"), self.resource_weights, problem))
        if self.dominant_resource_weight < 0:
            issues.append(
                invalid(
                    join(path, "dominantResourceWeight"),
                    self.dominant_resource_weight,
                    "dominantResourceWeight should not be a negative value",
                )
            )
        if self.dominant_resource_weight > 100:
            issues.append(
                invalid(
                    join(path, "dominantResourceWeight"),
                    self.dominant_resource_weight,
                    "dominantResourceWeight should be less than 100",
                )
            )
        problem = _thresholds_problem(self.usage_thresholds)
        if problem:
            issues.append(invalid(join(path, "usageThresholds"), self.usage_thresholds, problem))
        # prodUsageThresholds is not validated: ValidateLoadAwareSchedulingArgs
        # (validation_pluginargs.go) checks usageThresholds only, and the filter takes any value.
        problem = _factors_problem(self.estimated_scaling_factors)
        if problem:
            issues.append(invalid(join(path, "estimatedScalingFactors"), self.estimated_scaling_factors, problem))
        for name in sorted(self.resource_weights):
            if name not in self.estimated_scaling_factors:
                where = join(path, "estimatedScalingFactors")
                issues.append(FieldIssue(where, f'{where}: Not found: "{name}"'))
                break
        agg = self.aggregated
        if agg is not None:
            apath = join(path, "aggregated")
            problem = _thresholds_problem(agg.usage_thresholds)
            if problem:
                issues.append(invalid(join(apath, "usageThresholds"), agg.usage_thresholds, problem))
            if agg.usage_aggregation_type and agg.usage_aggregation_type not in AGGREGATION_TYPES:
                issues.append(not_supported(join(apath, "usageAggregationType"), agg.usage_aggregation_type, AGGREGATION_TYPES))
            if agg.usage_aggregated_duration < 0:
                issues.append(
                    invalid(
                        join(apath, "usageAggregatedDuration"), _Duration(agg.usage_aggregated_duration), "duration must be >= 0"
                    )
                )
            if agg.score_aggregation_type and agg.score_aggregation_type not in AGGREGATION_TYPES:
                issues.append(not_supported(join(apath, "scoreAggregationType"), agg.score_aggregation_type, AGGREGATION_TYPES))
            if agg.score_aggregated_duration < 0:
                issues.append(
                    invalid(
                        join(apath, "scoreAggregatedDuration"), _Duration(agg.score_aggregated_duration), "duration must be >= 0"
                    )
                )
        return issues

    def to_dict(self) -> dict[str, Any]:
        """The v1 YAML form with defaults applied (what the console shows and edits)."""
        out: dict[str, Any] = {
            "filterExpiredNodeMetrics": self.filter_expired_node_metrics,
            "nodeMetricExpirationSeconds": self.node_metric_expiration_seconds,
            "enableScheduleWhenNodeMetricsExpired": self.enable_schedule_when_node_metrics_expired,
            "resourceWeights": dict(self.resource_weights),
            "dominantResourceWeight": self.dominant_resource_weight,
            "usageThresholds": dict(self.usage_thresholds),
            "prodUsageThresholds": dict(self.prod_usage_thresholds),
            "prodUsageIncludeSys": self.prod_usage_include_sys,
            "scoreAccordingProdUsage": self.score_according_prod_usage,
            "estimatedScalingFactors": dict(self.estimated_scaling_factors),
            "allowCustomizeEstimation": self.allow_customize_estimation,
        }
        if self.estimator:
            out["estimator"] = self.estimator
        if self.estimated_seconds_after_pod_scheduled is not None:
            out["estimatedSecondsAfterPodScheduled"] = self.estimated_seconds_after_pod_scheduled
        if self.estimated_seconds_after_initialized is not None:
            out["estimatedSecondsAfterInitialized"] = self.estimated_seconds_after_initialized
        if self.aggregated is not None:
            out["aggregated"] = self.aggregated.to_dict()
        if self.supported_resources:
            out["supportedResources"] = list(self.supported_resources)
        return out

    def with_changes(self, **changes: Any) -> LoadAwareSchedulingArgs:
        """A copy with some fields replaced (validate it before use)."""
        return replace(self, **changes)


def _weights_problem(weights: dict[str, int]) -> str:
    for name in sorted(weights):
        weight = weights[name]
        if weight <= 0:
            return f"resource Weight of {name} should be a positive value, got {weight}"
        if weight > 100:
            return f"resource Weight of {name} should be less than 100, got {weight}"
    return ""


def _thresholds_problem(thresholds: dict[str, int]) -> str:
    for name in sorted(thresholds):
        value = thresholds[name]
        if value < 0:
            return f"resource Threshold of {name} should be a positive value, got {value}"
        if value > 100:
            return f"resource Threshold of {name} should be less than 100, got {value}"
    return ""


def _factors_problem(factors: dict[str, int]) -> str:
    for name in sorted(factors):
        value = factors[name]
        if value <= 0:
            return f"estimated resource ScalingFactor of {name} should be a positive value, got {value}"
        if value > 100:
            return f"estimated resource ScalingFactor of {name} should be less than 100, got {value}"
    return ""


@dataclass(frozen=True, slots=True)
class NUMAScoringStrategy:
    """A NodeNUMAResource scoring strategy: LeastAllocated or MostAllocated over weighted resources."""

    type: str = "LeastAllocated"
    resources: tuple[tuple[str, int], ...] = (("cpu", 1), ("memory", 1))

    def to_dict(self) -> dict[str, Any]:
        """The v1 YAML form."""
        return {"type": self.type, "resources": [{"name": n, "weight": w} for n, w in self.resources]}


def _read_strategy(r: ObjectReader) -> NUMAScoringStrategy:
    kind = r.string("type") or ""
    resources = []
    for item in r.children("resources"):
        resources.append((item.string("name") or "", item.integer("weight", 64) or 0))
        item.finish()
    r.finish()
    return NUMAScoringStrategy(kind, tuple(resources))


@dataclass(frozen=True, slots=True)
class NodeNUMAResourceArgs:
    """Args of NodeNUMAResource (Koordinator's `NodeNUMAResourceArgs`), defaults applied."""

    API_VERSIONS = KOORDINATOR_API_VERSIONS

    default_cpu_bind_policy: str = "FullPCPUs"
    scoring_strategy: NUMAScoringStrategy | None = NUMAScoringStrategy()
    numa_scoring_strategy: NUMAScoringStrategy | None = NUMAScoringStrategy()

    @classmethod
    def from_dict(cls, data: Mapping[str, object], path: str) -> Self:
        """Decode strictly and apply `SetDefaults_NodeNUMAResourceArgs`."""
        r = _reader(data, path)
        policy = r.string("defaultCPUBindPolicy")
        scoring = _read_strategy(r.child("scoringStrategy")) if r.has("scoringStrategy") else NUMAScoringStrategy()
        r.raw("scoringStrategy")
        numa = _read_strategy(r.child("numaScoringStrategy")) if r.has("numaScoringStrategy") else NUMAScoringStrategy()
        r.raw("numaScoringStrategy")
        result: Self = _checked(r, cls("FullPCPUs" if policy is None else policy, scoring, numa))
        return result

    def validate(self, path: str) -> list[FieldIssue]:
        """Koordinator's `ValidateNodeNUMAResourceArgs`, plus the strategy types `New` refuses."""
        issues: list[FieldIssue] = []
        if self.default_cpu_bind_policy and self.default_cpu_bind_policy not in CPU_BIND_POLICIES:
            issues.append(
                invalid(
                    join(path, "defaultCPUBindPolicy"),
                    self.default_cpu_bind_policy,
                    "must specified CPU bind policy FullPCPUs or SpreadByPCPUs",
                )
            )
        for key, strategy, label in (
            ("scoringStrategy", self.scoring_strategy, "scoring strategy must be specified"),
            ("numaScoringStrategy", self.numa_scoring_strategy, "NUMA scoring strategy must be specified"),
        ):
            where = join(path, key)
            if strategy is None:
                issues.append(required(where, label))
                continue
            if strategy.type not in NUMA_SCORING_TYPES:
                issues.append(not_supported(join(where, "type"), strategy.type, NUMA_SCORING_TYPES))
            for i, (name, weight) in enumerate(strategy.resources):
                if weight <= 0 or weight > 100:
                    issues.append(
                        invalid(
                            join(join(join(where, "resources"), i), "weight"),
                            weight,
                            f"resource weight of {name} not in valid range (0, 100]",
                        )
                    )
        return issues

    def to_dict(self) -> dict[str, Any]:
        """The v1 YAML form."""
        out: dict[str, Any] = {"defaultCPUBindPolicy": self.default_cpu_bind_policy}
        if self.scoring_strategy is not None:
            out["scoringStrategy"] = self.scoring_strategy.to_dict()
        if self.numa_scoring_strategy is not None:
            out["numaScoringStrategy"] = self.numa_scoring_strategy.to_dict()
        return out


__all__ = [
    "KOORDINATOR_API_VERSIONS",
    "LoadAwareSchedulingAggregatedArgs",
    "LoadAwareSchedulingArgs",
    "NUMAScoringStrategy",
    "NodeNUMAResourceArgs",
]
