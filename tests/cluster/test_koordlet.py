"""The simulated koordlet: NodeMetric reports from bound pods' requests, renewed on the virtual clock."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.api.koordinator import parse_node_metric
from scheduler.api.loader import ClusterObjects
from scheduler.clock import VirtualClock
from scheduler.cluster.events import WatchEvent
from scheduler.cluster.simulated import SimulatedCluster
from tests.support.builders import make_node, make_pod

START = 1767225600.0


def metric_doc(name: str, status: dict[str, Any] | None = None, ratio: str | None = None, interval: int = 60) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if ratio is not None:
        meta["annotations"] = {"simulation.schedconsole.io/usage-ratio": ratio}
    doc: dict[str, Any] = {
        "apiVersion": "slo.koordinator.sh/v1alpha1",
        "kind": "NodeMetric",
        "metadata": meta,
        "spec": {"metricCollectPolicy": {"reportIntervalSeconds": interval}},
    }
    if status is not None:
        doc["status"] = status
    return doc


def cluster_with(docs: list[dict[str, Any]], pods: list[Any]) -> tuple[SimulatedCluster, VirtualClock]:
    clock = VirtualClock(START)
    objs = ClusterObjects(nodes=[make_node("n1", cpu="8"), make_node("n2", cpu="8")], pods=pods, extensions={"NodeMetric": docs})
    return SimulatedCluster.from_objects(objs, clock), clock


def metric(cluster: SimulatedCluster, name: str) -> Any:
    return parse_node_metric(next(d for d in cluster.extensions["NodeMetric"] if d["metadata"]["name"] == name))


@pytest.mark.parametrize(
    ("pod_ratio", "node_ratio", "want_cpu"),
    [(None, None, 1000), ("0.25", None, 500), (None, "0.75", 1500), ("0.1", "0.75", 200)],
    ids=["default ratio", "pod annotation", "NodeMetric annotation", "pod wins over NodeMetric"],
)
def test_first_report_uses_the_ratio(pod_ratio: str | None, node_ratio: str | None, want_cpu: int) -> None:
    annotations = {"simulation.schedconsole.io/usage-ratio": pod_ratio} if pod_ratio else None
    pod = make_pod("p", cpu="2", memory="1Gi", node_name="n1", annotations=annotations, priority=9500)
    cluster, _ = cluster_with([metric_doc("n1", ratio=node_ratio)], [pod])
    got = metric(cluster, "n1")
    assert got.update_time == START
    assert got.node_usage["cpu"] == want_cpu
    assert [(p.name, p.usage["cpu"], p.priority) for p in got.pods] == [("p", want_cpu, "koord-prod")]


def test_reports_renew_at_the_interval_and_reported_ones_are_left_alone() -> None:
    given = {"updateTime": "2026-01-01T00:00:00Z", "nodeMetric": {"nodeUsage": {"resources": {"cpu": "7"}}}}
    cluster, clock = cluster_with([metric_doc("n1"), metric_doc("n2", given)], [])
    events: list[WatchEvent] = []
    cluster.watch(events.append)
    clock.advance(30)
    assert events == []
    cluster.add_pod(make_pod("q", cpu="4", memory="1Gi"))
    cluster.bind(cluster.get_pod("uid-default-q"), "n1")
    clock.advance(31)
    reports = [e for e in events if e.kind == "NodeMetric"]
    assert [e.new["metadata"]["name"] for e in reports] == ["n1"]
    got = metric(cluster, "n1")
    assert (got.update_time, got.node_usage["cpu"]) == (START + 61, 2000)
    assert metric(cluster, "n2").node_usage["cpu"] == 7000


def test_loadaware_example_reads_the_simulated_reports() -> None:
    """examples/loadaware: node-1's pods use 90% of their requests, node-2's 30%, node-3 is empty."""
    import io
    import json
    import pathlib

    from scheduler.cli import main

    root = pathlib.Path(__file__).resolve().parents[2] / "examples" / "loadaware"
    out, err = io.StringIO(), io.StringIO()
    code = main(
        [
            "simulate",
            "--cluster",
            str(root / "cluster.yaml"),
            "--config",
            str(root / "config.yaml"),
            "--now",
            "2026-01-01T00:00:00Z",
            "--seed",
            "1",
        ],
        out,
        err,
    )
    assert code == 0, err.getvalue()
    results = json.loads(out.getvalue())["results"]
    first = results[0]
    # node-1: 3 x 2 CPUs x 0.9 = 5.4 of 8 CPUs, plus the incoming 1 CPU x 0.85: 78% > 65%.
    assert first["filter"]["node-1"]["reasons"] == ["node(s) cpu usage exceed threshold"]
    assert first["scores"]["node-3"]["LoadAwareScheduling"] > first["scores"]["node-2"]["LoadAwareScheduling"]
    # Pods placed since the last report count by their estimate, so node-3 fills up and node-2 wins.
    assert [r["node"] for r in results] == ["node-3", "node-3", "node-3", "node-2"]
