"""Prometheus metrics under kube-scheduler's names, one registry per scheduler instance."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from scheduler.cluster.errors import APIError
from scheduler.framework.runtime import Recorder
from scheduler.framework.types import Code

log = logging.getLogger(__name__)
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
        self.batch_attempts = Counter(
            "scheduler_batch_attempts_total",
            "Counts of results when we attempt to use batching.",
            ["profile", "result"],
            registry=r,
        )
        self.batch_cache_flushed = Counter(
            "scheduler_batch_cache_flushed_total", "Counts of cache flushes by reason.", ["profile", "reason"], registry=r
        )
        self.background_errors = Counter(
            "schedconsole_background_errors_total",
            "Errors of work beside the scheduling cycles (controllers, informers, Events, plugins after binding, tasks), by source; each is logged, the loop goes on.",
            ["source"],
            registry=r,
        )
        self.last_background_error: dict[str, str] = {}
        """Source → its latest error message (the Cluster page shows them)."""
        self._children: dict[tuple[Any, ...], Any] = {}
        self._batches: list[Any] = []
        self._exported: dict[tuple[Any, ...], int] = {}

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

    def watch_batch(self, batch: Any) -> None:
        """Export a profile's OpportunisticBatch counts (`attempts` by result, `flushes` by reason)."""
        self._batches.append(batch)

    def _refresh_batches(self) -> None:
        for batch in self._batches:
            for metric, counts in ((self.batch_attempts, batch.attempts), (self.batch_cache_flushed, batch.flushes)):
                for key, count in list(counts.items()):
                    seen = self._exported.get((id(metric), batch.profile, key), 0)
                    if count > seen:
                        self._child(metric, batch.profile, key).inc(count - seen)
                        self._exported[(id(metric), batch.profile, key)] = count

    def background_error(self, source: str, exc: BaseException) -> None:
        """Log and count an error of a controller, informer, Event write, plugin at an
        informational point or task beside the cycles; the caller goes on (and retries). An API
        error is logged in one line, anything else (a bug) with its traceback."""
        log.warning("%s: %s", source, exc, exc_info=None if isinstance(exc, APIError) else exc)
        self._child(self.background_errors, source).inc()
        self.last_background_error[source] = f"{type(exc).__name__}: {exc}" if not isinstance(exc, APIError) else str(exc)

    def plugin_error(self, point: str, plugin: str, exc: BaseException) -> None:
        """A plugin raised at PostBind, Unreserve or a PostFilter transformer."""
        self.background_error(f"{point}/{plugin}", exc)

    def set_pending(self, counts: dict[str, int]) -> None:
        """Update scheduler_pending_pods for each queue."""
        for queue, count in counts.items():
            self._child(self.pending_pods, queue).set(count)

    def _refresh(self) -> None:
        # Read gauges that mirror live state (pending pods) at export time, never stale.
        if self.pending_source is not None:
            self.set_pending(self.pending_source())
        self._refresh_batches()

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
