"""A simulated koordlet: NodeMetric reports for the simulated cluster, on the (virtual) clock.

Koordinator's koordlet measures each node and its pods and writes the node's NodeMetric
(`slo.koordinator.sh/v1alpha1`) every `spec.metricCollectPolicy.reportIntervalSeconds` (60 s by
default). Here, a NodeMetric written without a `status` (as Koordinator's
`config/samples/slo_v1alpha1_nodemetric.yaml` is) is reported by this agent: every bound pod uses
a fraction of its requests (`simulation.schedconsole.io/usage-ratio` on the pod, else on the
NodeMetric, else DEFAULT_USAGE_RATIO), the node's usage is their sum, and the report is renewed
whenever the clock passes the report interval. NodeMetrics given with a status are left alone.

A virtual clock calls `sync` whenever it moves; on the wall clock (the console) the host calls the
cluster's `tick` between the turns of its loop, so reports are renewed every interval and never
age past `nodeMetricExpirationSeconds` while the console runs.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from scheduler.api.fields import format_time
from scheduler.api.koordinator import priority_class
from scheduler.api.objects import CPU, MEMORY, Pod
from scheduler.api.quantity import format_milli_cpu

if TYPE_CHECKING:
    from scheduler.cluster.simulated import SimulatedCluster

USAGE_RATIO_ANNOTATION = "simulation.schedconsole.io/usage-ratio"
DEFAULT_USAGE_RATIO = 0.5
DEFAULT_REPORT_INTERVAL = 60.0


def _ratio(annotations: dict[str, str], default: float) -> float:
    text = annotations.get(USAGE_RATIO_ANNOTATION)
    if text is None:
        return default
    try:
        value = float(text)
    except ValueError:
        return default
    return value if value >= 0 else default


def _interval(doc: dict[str, Any]) -> float:
    policy = ((doc.get("spec") or {}).get("metricCollectPolicy") or {}) if isinstance(doc.get("spec"), dict) else {}
    value = policy.get("reportIntervalSeconds") if isinstance(policy, dict) else None
    return float(value) if isinstance(value, int) and value > 0 else DEFAULT_REPORT_INTERVAL


class SimulatedKoordlet:
    """Writes the status of the NodeMetrics it owns from the bound pods' requests."""

    def __init__(self, cluster: SimulatedCluster) -> None:
        self.cluster = cluster
        docs = cluster.extensions.get("NodeMetric", [])
        self.owned: set[str] = {str((d.get("metadata") or {}).get("name", "")) for d in docs if not d.get("status")}
        self.next_report: dict[str, float] = {}

    @property
    def active(self) -> bool:
        """Whether any NodeMetric is reported by this agent."""
        return bool(self.owned)

    def usage_of(self, pod: Pod, default: float) -> dict[str, int]:
        """The simulated usage of a pod: cpu in millicores, memory in bytes."""
        ratio = _ratio(pod.annotations, default)
        return {CPU: int(pod.requests.get(CPU, 0) * ratio), MEMORY: int(pod.requests.get(MEMORY, 0) * ratio)}

    def report(self, name: str, now: float) -> None:
        """Write one node's NodeMetric status as of `now` and announce the change."""
        docs = self.cluster.extensions.setdefault("NodeMetric", [])
        index = next((i for i, d in enumerate(docs) if (d.get("metadata") or {}).get("name") == name), None)
        if index is None:
            return
        old = docs[index]
        default = _ratio(((old.get("metadata") or {}).get("annotations") or {}), DEFAULT_USAGE_RATIO)
        node_cpu = node_memory = 0
        pods_metric = []
        for pod in self.cluster.pods.values():
            if pod.node_name != name or pod.phase in ("Succeeded", "Failed"):
                continue
            usage = self.usage_of(pod, default)
            node_cpu += usage[CPU]
            node_memory += usage[MEMORY]
            entry: dict[str, Any] = {
                "namespace": pod.namespace,
                "name": pod.name,
                "podUsage": {"resources": {"cpu": format_milli_cpu(usage[CPU]), "memory": str(usage[MEMORY])}},
            }
            priority = priority_class(pod)
            if priority:
                entry["priority"] = priority
            pods_metric.append(entry)
        new = copy.deepcopy(old)
        new["status"] = {
            "updateTime": format_time(now),
            "nodeMetric": {"nodeUsage": {"resources": {"cpu": format_milli_cpu(node_cpu), "memory": str(node_memory)}}},
            "podsMetric": pods_metric,
        }
        self.next_report[name] = now + _interval(new)
        self.cluster.update_object("NodeMetric", new)

    def sync(self, now: float) -> None:
        """Report every owned NodeMetric whose interval has passed (all of them the first time)."""
        if self.next_report and len(self.next_report) == len(self.owned) and now < min(self.next_report.values()):
            return  # nothing due: the host calls this between every turn of its loop
        for name in sorted(self.owned):
            if now >= self.next_report.get(name, now):
                self.report(name, now)

    def next_due(self) -> float | None:
        """When the next report is due, if any NodeMetric is reported here."""
        return min(self.next_report.values()) if self.next_report else None


__all__ = ["DEFAULT_USAGE_RATIO", "USAGE_RATIO_ANNOTATION", "SimulatedKoordlet"]
