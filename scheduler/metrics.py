"""Prometheus metrics under kube-scheduler's names, one registry per scheduler instance."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from scheduler.framework.runtime import Recorder
from scheduler.framework.types import Code

_ATTEMPT_BUCKETS = tuple(0.001 * 2**i for i in range(15))
_POINT_BUCKETS = tuple(0.0001 * 2**i for i in range(12))
_PLUGIN_BUCKETS = tuple(0.00001 * 1.5**i for i in range(20))
_VICTIM_BUCKETS = tuple(5**i for i in range(7))


class Metrics(Recorder):
    """The scheduler's metrics; label children are cached so observing stays cheap."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.pending_source: Callable[[], dict[str, int]] | None = None
        """The queue's live counts (set by the Scheduler), read whenever metrics are exported."""
        r = self.registry
        self.schedule_attempts = Counter(
            "scheduler_schedule_attempts_total",
            "Number of attempts to schedule pods, by the result.",
            ["result", "profile"],
            registry=r,
        )
        self.attempt_duration = Histogram(
            "scheduler_scheduling_attempt_duration_seconds",
            "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
            ["result", "profile"],
            buckets=_ATTEMPT_BUCKETS,
            registry=r,
        )
        self.pending_pods = Gauge(
            "scheduler_pending_pods",
            "Number of pending pods, by the queue type.",
            ["queue"],
            registry=r,
        )
        self.extension_point_duration = Histogram(
            "scheduler_framework_extension_point_duration_seconds",
            "Latency for running all plugins of a specific extension point.",
            ["extension_point", "status", "profile"],
            buckets=_POINT_BUCKETS,
            registry=r,
        )
        self.plugin_duration = Histogram(
            "scheduler_plugin_execution_duration_seconds",
            "Duration for running a plugin at a specific extension point.",
            ["plugin", "extension_point", "status"],
            buckets=_PLUGIN_BUCKETS,
            registry=r,
        )
        self.preemption_attempts = Counter(
            "scheduler_preemption_attempts_total", "Total preemption attempts in the cluster till now", registry=r
        )
        self.preemption_victims = Histogram(
            "scheduler_preemption_victims", "Number of selected preemption victims", buckets=_VICTIM_BUCKETS, registry=r
        )
        self.preemption_goroutines_duration = Histogram(
            "scheduler_preemption_goroutines_duration_seconds",
            "Duration in seconds for running goroutines for the preemption.",
            ["result"],
            buckets=_POINT_BUCKETS,
            registry=r,
        )
        self.preemption_goroutines_execution = Counter(
            "scheduler_preemption_goroutines_execution_total",
            "Number of preemption goroutines executed.",
            ["result"],
            registry=r,
        )
        self._children: dict[tuple[Any, ...], Any] = {}

    def _child(self, metric: Any, *labels: str) -> Any:
        key = (id(metric), *labels)
        child = self._children.get(key)
        if child is None:
            child = metric.labels(*labels)
            self._children[key] = child
        return child

    def extension_point(self, point: str, status: Code, profile: str, seconds: float) -> None:
        """Observe one extension point's duration."""
        self._child(self.extension_point_duration, point, status.label, profile).observe(seconds)

    def plugin(self, plugin: str, point: str, status: Code, seconds: float) -> None:
        """Observe one plugin's duration at an extension point."""
        self._child(self.plugin_duration, plugin, point, status.label).observe(seconds)

    def attempt(self, result: str, profile: str, seconds: float) -> None:
        """Count and time one scheduling attempt (result: scheduled, unschedulable, error)."""
        self._child(self.schedule_attempts, result, profile).inc()
        self._child(self.attempt_duration, result, profile).observe(seconds)

    def set_pending(self, counts: dict[str, int]) -> None:
        """Update scheduler_pending_pods for each queue."""
        for queue, count in counts.items():
            self._child(self.pending_pods, queue).set(count)

    def _refresh(self) -> None:
        # Read gauges that mirror live state (pending pods) at export time, never stale.
        if self.pending_source is not None:
            self.set_pending(self.pending_source())

    def exposition(self) -> bytes:
        """The Prometheus text format."""
        self._refresh()
        return generate_latest(self.registry)

    def as_json(self) -> dict[str, list[dict[str, Any]]]:
        """Counters and gauges as values; histograms as their observation count and sum."""
        self._refresh()
        out: dict[str, list[dict[str, Any]]] = {}
        for family in self.registry.collect():
            samples: list[dict[str, Any]] = []
            if family.type == "histogram":
                sums = {tuple(sorted(s.labels.items())): s.value for s in family.samples if s.name.endswith("_sum")}
                for s in family.samples:
                    if s.name.endswith("_count"):
                        key = tuple(sorted(s.labels.items()))
                        samples.append({"labels": dict(s.labels), "value": s.value, "sum": sums.get(key, 0.0)})
                name = family.name
            else:
                for s in family.samples:
                    if s.name.endswith("_created"):
                        continue
                    samples.append({"labels": dict(s.labels), "value": s.value})
                name = family.name + ("_total" if family.type == "counter" else "")
            out[name] = samples
        return out
