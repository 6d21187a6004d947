"""The demo's simulated koordlet renews its NodeMetrics on the console's clock, so LoadAware keeps placing pods.

koordlet writes a node's NodeMetric every `reportIntervalSeconds`; LoadAwareScheduling refuses
a node whose report is older than `nodeMetricExpirationSeconds` (180 s). The console runs on
the wall clock, which calls no listener when it moves: the engine ticks the cluster's agents
between turns instead. A clock that moves only when told stands in for the wall clock here.
"""

from __future__ import annotations

from typing import Any

from schedconsole.engine import bridge, demo
from schedconsole.engine.bridge import reads
from scheduler.api.fields import parse_time
from scheduler.api.objects import parse_pod
from scheduler.clock import Clock


class StillWallClock(Clock):
    """A wall clock (not virtual: no listeners) that moves only when the test says."""

    def __init__(self, start: float) -> None:
        self.moment = start

    def now(self) -> float:
        return self.moment


def koordinator_pod(name: str) -> dict[str, Any]:
    """A small pod for the demo's koordinator profile."""
    return bridge.with_defaults(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {
                "schedulerName": demo.KOORDINATOR,
                "containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}],
            },
        },
        "Pod",
    )


def drain(engine: bridge.Engine) -> None:
    """Turn the loop until it is idle, as the host does."""
    for _ in range(10_000):
        if not engine.step():
            engine.idle_tick()
            if not engine.step():
                return


def test_demo_koordinator_profile_still_places_pods_after_an_hour() -> None:
    clock = StillWallClock(parse_time("2026-01-01T00:00:00Z", "now"))
    objects = bridge.load_objects(demo.cluster_documents(), "demo")
    engine = bridge.Engine.build(demo.config_document(), objects, bridge.Hooks(), seed=1, clock=clock)
    drain(engine)
    for _ in range(61):
        clock.moment += 60
        drain(engine)
    engine.cluster.add_pod(parse_pod(koordinator_pod("late")))
    drain(engine)
    late = next(p for p in engine.cluster.pods.values() if p.name == "late")
    assert late.node_name, [r.message for r in engine.scheduler.records if r.pod == "default/late"]
    times = {
        (d.get("status") or {}).get("updateTime") for d in engine.cluster.extensions["NodeMetric"] if (d.get("status") or {})
    }
    assert times == {"2026-01-01T01:01:00Z"}


def test_pages_show_a_reports_age_and_when_it_expired() -> None:
    """The overview and node page read a NodeMetric's age; past nodeMetricExpirationSeconds
    (180 s) it is expired and the filter refuses the node, and the overview stops counting it
    as passing (LoadAwareScheduling's isNodeMetricExpired)."""
    start = parse_time("2026-01-01T00:00:00Z", "now")
    clock = StillWallClock(start)
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {"schedulerName": "default-scheduler", "plugins": {"multiPoint": {"enabled": [{"name": "LoadAwareScheduling"}]}}}
        ],
    }
    reported = {
        "apiVersion": "slo.koordinator.sh/v1alpha1",
        "kind": "NodeMetric",
        "metadata": {"name": "n1"},
        "status": {
            "updateTime": "2026-01-01T00:00:00Z",
            "nodeMetric": {"nodeUsage": {"resources": {"cpu": "1", "memory": "1Gi"}}},
        },
    }
    node = bridge.with_defaults(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "n1"},
            "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}},
        },
        "Node",
    )
    engine = bridge.Engine.build(config, bridge.load_objects([node, reported], "test"), bridge.Hooks(), seed=1, clock=clock)
    clock.moment = start + 60
    load = reads.node_page(engine, "n1")["loadaware"]["default-scheduler"]
    assert (load["ageSeconds"], load["expired"], load["refused"]) == (60, False, False)
    summary = reads.overview(engine)["loadaware"]["default-scheduler"]
    assert (summary["expired"], summary["oldestReportSeconds"], summary["passing"]) == (0, 60, 1)
    clock.moment = start + 180
    load = reads.node_page(engine, "n1")["loadaware"]["default-scheduler"]
    assert (load["updateTime"], load["ageSeconds"], load["expired"], load["refused"]) == ("2026-01-01T00:00:00Z", 180, True, True)
    summary = reads.overview(engine)["loadaware"]["default-scheduler"]
    assert (summary["expired"], summary["expirationSeconds"], summary["passing"]) == (1, 180, 0)
