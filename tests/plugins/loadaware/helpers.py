"""Builders for LoadAwareScheduling tests: NodeMetric documents and a handle with informers."""

from __future__ import annotations

from typing import Any

from scheduler.api.fields import format_time
from scheduler.api.objects import Node, Pod
from scheduler.config.koordargs import LoadAwareSchedulingArgs
from scheduler.plugins.loadaware.plugin import LoadAwareScheduling, new
from tests.support.builders import make_snapshot
from tests.support.fakes import FakeHandle

NOW = 1767225600.0


class Informers:
    """Pods and custom resources as the plugin lists them, with event handlers kept."""

    def __init__(self, pods: list[Pod], objects: dict[str, list[dict[str, Any]]]) -> None:
        self._pods = pods
        self._objects = objects
        self.handlers: list[Any] = []

    def pods(self) -> list[Pod]:
        return list(self._pods)

    def objects(self, kind: str) -> list[dict[str, Any]]:
        return list(self._objects.get(kind, ()))

    def add_event_handler(self, handler: Any) -> None:
        self.handlers.append(handler)


class KoordHandle(FakeHandle):
    """FakeHandle plus the informer factory of the extended handle."""

    def __init__(self, snapshot: Any, informers: Informers, now: float = NOW) -> None:
        super().__init__(snapshot, now)
        self.informers = informers

    def informer_factory(self) -> Informers:
        return self.informers


def node_metric(
    name: str,
    usage: dict[str, str] | None = None,
    update: float | None = NOW,
    pods: list[dict[str, Any]] | None = None,
    aggregated: list[dict[str, Any]] | None = None,
    interval: int = 60,
    with_node_metric: bool = True,
    system: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A NodeMetric document as koordlet reports it."""
    status: dict[str, Any] = {}
    if update is not None:
        status["updateTime"] = format_time(update)
    if with_node_metric:
        info: dict[str, Any] = {"nodeUsage": {"resources": dict(usage or {})}}
        if aggregated:
            info["aggregatedNodeUsages"] = aggregated
        if system:
            info["systemUsage"] = {"resources": system}
        status["nodeMetric"] = info
    if pods:
        status["podsMetric"] = pods
    return {
        "apiVersion": "slo.koordinator.sh/v1alpha1",
        "kind": "NodeMetric",
        "metadata": {"name": name},
        "spec": {"metricCollectPolicy": {"reportIntervalSeconds": interval}},
        "status": status,
    }


def pod_metric(name: str, cpu: str, memory: str, priority: str = "", namespace: str = "default") -> dict[str, Any]:
    """One `podsMetric` entry."""
    entry: dict[str, Any] = {"namespace": namespace, "name": name, "podUsage": {"resources": {"cpu": cpu, "memory": memory}}}
    if priority:
        entry["priority"] = priority
    return entry


def build(
    args: dict[str, Any] | None,
    nodes: list[Node],
    bound: list[Pod] = (),  # type: ignore[assignment]
    metrics: list[dict[str, Any]] = (),  # type: ignore[assignment]
    now: float = NOW,
) -> tuple[LoadAwareScheduling, Any]:
    """The plugin over a snapshot of the nodes, with bound pods and NodeMetrics in its informers."""
    snapshot = make_snapshot(nodes, list(bound))
    informers = Informers(list(bound), {"NodeMetric": list(metrics)})
    plugin = new(LoadAwareSchedulingArgs.from_dict(args or {}, ""), KoordHandle(snapshot, informers, now))
    return plugin, snapshot
