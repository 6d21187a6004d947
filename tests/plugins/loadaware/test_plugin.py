"""LoadAwareScheduling Filter, Score and Reserve.

Cases ported from koordinator-sh/koordinator `pkg/scheduler/plugins/loadaware/load_aware_test.go`
(TestScore, TestFilterUsage, TestFilterExpiredNodeMetric, TestEnableScheduleWhenNodeMetricsExpired):
node test-node-1 with 96 CPUs and 512Gi; bound pods counted as the informer sees them.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from scheduler.api.objects import Pod
from scheduler.framework.types import Code, CycleState
from tests.plugins.loadaware.helpers import NOW, build, node_metric, pod_metric
from tests.support.builders import make_node, make_pod

NODE = "test-node-1"


def node(annotations: dict[str, str] | None = None) -> Any:
    n = make_node(NODE, cpu="96", memory="512Gi")
    if annotations:
        n.meta.annotations.update(annotations)
    return n


def sized(name: str, cpu: str, memory: str, limit_cpu: str | None = None, limit_memory: str | None = None, **kw: Any) -> Pod:
    resources = {
        "requests": {"cpu": cpu, "memory": memory},
        "limits": {"cpu": limit_cpu or cpu, "memory": limit_memory or memory},
    }
    return make_pod(name, containers=[{"name": "c", "image": "pause", "resources": resources}], **kw)


def batch_pod() -> Pod:
    res = {"kubernetes.io/batch-cpu": "16000", "kubernetes.io/batch-memory": "32Gi"}
    return make_pod(
        "test-pod-1", containers=[{"name": "c", "image": "pause", "resources": {"requests": res, "limits": res}}], priority=5000
    )


P95_5M = [
    {
        "duration": "5m",
        "usage": {"p95": {"resources": {"cpu": "32", "memory": "10Gi"}}, "p99": {"resources": {"cpu": "50", "memory": "70Gi"}}},
    }
]

SCORE_CASES = [
    ("score node with expired nodeMetric", sized("test-pod-1", "16", "32Gi"), [], node_metric(NODE, {}, update=NOW - 180), {}, 0),
    ("score empty node", sized("test-pod-1", "16", "32Gi"), [], node_metric(NODE, {}), {}, 90),
    ("score node missing NodeMetrics", sized("test-pod-1", "16", "32Gi"), [], None, {}, 0),
    ("score load node", sized("test-pod-1", "16", "32Gi"), [], node_metric(NODE, {"cpu": "32", "memory": "10Gi"}), {}, 72),
    (
        "score load node with p95",
        sized("test-pod-1", "16", "32Gi"),
        [],
        node_metric(NODE, {"cpu": "0", "memory": "0Gi"}, aggregated=P95_5M),
        {"aggregated": {"scoreAggregationType": "p95", "scoreAggregatedDuration": "5m"}},
        72,
    ),
    (
        "score load node with p95 but have not reported usage",
        sized("test-pod-1", "16", "32Gi"),
        [],
        node_metric(NODE, {"cpu": "0", "memory": "0Gi"}),
        {"aggregated": {"scoreAggregationType": "p95", "scoreAggregatedDuration": "5m"}},
        90,
    ),
    (
        "score load node with p95 but have not reported usage and have assigned pods",
        sized("test-pod-1", "16", "32Gi"),
        [sized("assigned-pod-1", "16", "32Gi", node_name=NODE)],
        node_metric(NODE, {"cpu": "0", "memory": "0Gi"}, pods=[pod_metric("assigned-pod-1", "1", "1Gi")]),
        {"aggregated": {"scoreAggregationType": "p95", "scoreAggregatedDuration": "5m"}},
        81,
    ),
    (
        "score load node with just assigned pod",
        sized("test-pod-1", "16", "32Gi"),
        [sized("assigned-pod-1", "16", "32Gi", node_name=NODE)],
        node_metric(NODE, {"cpu": "32", "memory": "10Gi"}),
        {},
        63,
    ),
    (
        "score load node with just assigned pod where after updateTime",
        sized("test-pod-1", "16", "32Gi"),
        [sized("assigned-pod-1", "16", "32Gi", node_name=NODE)],
        node_metric(NODE, {"cpu": "32", "memory": "10Gi"}, update=NOW - 10),
        {},
        63,
    ),
    ("score batch Pod", batch_pod(), [], node_metric(NODE, {}), {}, 90),
    (
        "score prod Pod",
        sized("prod-pod-1", "16000", "32Gi", priority=9999),
        [sized("assign-prod-pod-1", "16", "32Gi", node_name=NODE, priority=9999)],
        node_metric(NODE, {}, pods=[pod_metric("assign-prod-pod-1", "30", "100Gi", priority="koord-prod")]),
        {"scoreAccordingProdUsage": True},
        38,
    ),
    ("score request less than limit", sized("test-pod-1", "8", "16Gi", "16", "32Gi"), [], node_metric(NODE, {}), {}, 90),
    ("score with drf", sized("test-pod-1", "16", "32Gi"), [], node_metric(NODE, {}), {"dominantResourceWeight": 10}, 85),
    ("score empty pod", make_pod("test-pod-1"), [], node_metric(NODE, {}), {}, 99),
]


@pytest.mark.parametrize(
    ("pod", "bound", "metric", "args", "want"), [c[1:] for c in SCORE_CASES], ids=[c[0] for c in SCORE_CASES]
)
def test_score(pod: Pod, bound: list[Pod], metric: dict[str, Any] | None, args: dict[str, Any], want: int) -> None:
    plugin, snapshot = build(args, [node()], bound, [metric] if metric else [])
    state = CycleState()
    score, status = plugin.score(state, pod, snapshot.get(NODE))
    assert status.success
    assert score == want
    assert plugin.score_batch(state, pod, snapshot, snapshot.order).tolist() == [want]


PROD_PODS = [pod_metric("prod-pod-1", "30", "200Gi", "koord-prod"), pod_metric("prod-pod-2", "33", "300Gi", "koord-prod")]
PROD_BOUND = [make_pod("prod-pod-1", node_name=NODE, priority=9999), make_pod("prod-pod-2", node_name=NODE, priority=9999)]
PROD_METRIC = node_metric(NODE, {"cpu": "63", "memory": "500Gi"}, pods=PROD_PODS)
P95_70 = [{"duration": "5m", "usage": {"p95": {"resources": {"cpu": "70", "memory": "256Gi"}}}}]
CUSTOM = "scheduling.koordinator.sh/usage-thresholds"
DS_OWNER = {"ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "test-daemonset", "uid": "x"}]}

FILTER_CASES = [
    ("filter normal usage", {}, {}, [], node_metric(NODE, {"cpu": "60", "memory": "256Gi"}), make_pod("p"), None),
    ("filter node missing NodeMetrics", {}, {}, [], None, make_pod("p"), None),
    (
        "filter exceed cpu usage",
        {},
        {},
        [],
        node_metric(NODE, {"cpu": "70", "memory": "256Gi"}),
        make_pod("p"),
        "node(s) cpu usage exceed threshold",
    ),
    (
        "filter exceed p95 cpu usage",
        {"aggregated": {"usageThresholds": {"cpu": 60}, "usageAggregationType": "p95", "usageAggregatedDuration": "5m"}},
        {},
        [],
        node_metric(NODE, {"cpu": "30", "memory": "100Gi"}, aggregated=P95_70),
        make_pod("p"),
        "node(s) cpu aggregated usage exceed threshold",
    ),
    (
        "filter exceed memory usage",
        {},
        {},
        [],
        node_metric(NODE, {"cpu": "30", "memory": "500Gi"}),
        make_pod("p"),
        "node(s) memory usage exceed threshold",
    ),
    (
        "filter exceed memory usage by custom usage thresholds",
        {},
        {CUSTOM: json.dumps({"usageThresholds": {"memory": 60}})},
        [],
        node_metric(NODE, {"cpu": "30", "memory": "316Gi"}),
        make_pod("p"),
        "node(s) memory usage exceed threshold",
    ),
    (
        "filter exceed p95 cpu usage by custom usage",
        {},
        {
            CUSTOM: json.dumps(
                {
                    "aggregatedUsage": {
                        "usageThresholds": {"cpu": 60},
                        "usageAggregationType": "p95",
                        "usageAggregatedDuration": "5m",
                    }
                }
            )
        },
        [],
        node_metric(NODE, {"cpu": "30", "memory": "100Gi"}, aggregated=P95_70),
        make_pod("p"),
        "node(s) cpu aggregated usage exceed threshold",
    ),
    (
        "disable filter exceed memory usage",
        {"usageThresholds": {"memory": 0}},
        {},
        [],
        node_metric(NODE, {"cpu": "30", "memory": "500Gi"}),
        make_pod("p"),
        None,
    ),
    (
        "prod usage filter is not enabled by default",
        {"usageThresholds": {"cpu": 100, "memory": 100}},
        {},
        PROD_BOUND,
        PROD_METRIC,
        make_pod("prod-pod-3", priority=9999),
        None,
    ),
    (
        "filter prod cpu usage",
        {"usageThresholds": {"cpu": 100, "memory": 100}, "prodUsageThresholds": {"cpu": 50, "memory": 100}},
        {},
        PROD_BOUND,
        PROD_METRIC,
        make_pod("prod-pod-3", priority=9999),
        "node(s) cpu usage exceed threshold",
    ),
    (
        "filter prod memory usage",
        {"usageThresholds": {"cpu": 100, "memory": 100}, "prodUsageThresholds": {"cpu": 100, "memory": 50}},
        {},
        PROD_BOUND,
        PROD_METRIC,
        make_pod("prod-pod-3", priority=9999),
        "node(s) memory usage exceed threshold",
    ),
    (
        "filter prod memory usage with custom usage configuration",
        {"usageThresholds": {"cpu": 100, "memory": 100}, "prodUsageThresholds": {"cpu": 100, "memory": 100}},
        {CUSTOM: json.dumps({"prodUsageThresholds": {"cpu": 100, "memory": 50}})},
        PROD_BOUND,
        PROD_METRIC,
        make_pod("prod-pod-3", priority=9999),
        "node(s) memory usage exceed threshold",
    ),
    (
        "filter daemonset pod exceed cpu usage",
        {},
        {},
        [],
        node_metric(NODE, {"cpu": "70", "memory": "256Gi"}),
        make_pod("test-pod", priority=9999, spec={}),
        "daemonset",
    ),
    ("filter healthy nodeMetrics", {}, {}, [], node_metric(NODE, {}), make_pod("p"), None),
    (
        "filter unhealthy nodeMetric with nil updateTime",
        {},
        {},
        [],
        node_metric(NODE, {}, update=None),
        make_pod("p"),
        "node(s) nodeMetric expired",
    ),
    (
        "filter unhealthy nodeMetric with expired updateTime",
        {},
        {},
        [],
        node_metric(NODE, {}, update=NOW - 180),
        make_pod("p"),
        "node(s) nodeMetric expired",
    ),
    (
        "enable scheduling when nodeMetric with expired updateTime",
        {"enableScheduleWhenNodeMetricsExpired": True},
        {},
        [],
        node_metric(NODE, {}, update=NOW - 180),
        make_pod("p"),
        None,
    ),
]


def _daemonset(pod: Pod) -> Pod:
    raw = dict(pod.raw)
    raw["metadata"] = {**raw["metadata"], **DS_OWNER}
    from scheduler.api.objects import parse_pod

    return parse_pod(raw)


@pytest.mark.parametrize(
    ("args", "annotations", "bound", "metric", "pod", "want"), [c[1:] for c in FILTER_CASES], ids=[c[0] for c in FILTER_CASES]
)
def test_filter(
    args: dict[str, Any], annotations: dict[str, str], bound: list[Pod], metric: dict[str, Any] | None, pod: Pod, want: str | None
) -> None:
    if want == "daemonset":
        pod, want = _daemonset(pod), None
    # The upstream test marks bound pods scheduled 10 s before the report.
    bound = [
        p.with_changes(conditions=[{"type": "PodScheduled", "status": "True", "lastTransitionTime": "2025-12-31T23:59:50Z"}])
        for p in bound
    ]
    plugin, snapshot = build(args, [node(annotations)], bound, [metric] if metric else [])
    state = CycleState()
    status = plugin.filter(state, pod, snapshot.get(NODE))
    batch = plugin.filter_batch(state, pod, snapshot, snapshot.order)
    if want is None:
        assert status.success, status
        assert batch.codes.tolist() == [0]
    else:
        assert status.code == Code.UNSCHEDULABLE
        assert status.reasons == (want,)
        assert batch.codes.tolist() == [Code.UNSCHEDULABLE]
        assert batch.reasons(0) == (want,)


def test_reserve_counts_the_pod_until_unreserve() -> None:
    plugin, snapshot = build({}, [node()], [], [node_metric(NODE, {"cpu": "32", "memory": "10Gi"})])
    incoming = sized("test-pod-1", "16", "32Gi")
    assert plugin.score(CycleState(), incoming, snapshot.get(NODE))[0] == 72
    reserved = sized("assigned-pod-1", "16", "32Gi", node_name=NODE)
    assert plugin.reserve(CycleState(), reserved, NODE).success
    # As "score load node with just assigned pod": the reserved pod's estimate is counted.
    assert plugin.score(CycleState(), incoming, snapshot.get(NODE))[0] == 63
    plugin.unreserve(CycleState(), reserved, NODE)
    assert plugin.score(CycleState(), incoming, snapshot.get(NODE))[0] == 72


def test_prod_delta_taken_back_as_it_was_added() -> None:
    """A bound pod relabelled to another priority class keeps the class it was counted with until
    it is counted again, so removing it takes back exactly what adding it put in the prod delta."""
    plugin, _ = build({}, [node()], [], [node_metric(NODE, {"cpu": "32", "memory": "10Gi"})])
    pod = sized("assigned-pod-1", "16", "32Gi", node_name=NODE)
    state = CycleState()
    assert plugin.reserve(state, pod, NODE).success
    row = plugin.cache.nodes[NODE].row
    assert plugin.cache.prod_delta[row].tolist() == plugin.cache.node_delta[row].tolist() != [0, 0]
    relabelled = sized("assigned-pod-1", "16", "32Gi", node_name=NODE, labels={"koordinator.sh/priority-class": "koord-batch"})
    plugin.cache.update(NODE, relabelled, NOW)
    plugin.unreserve(state, relabelled, NODE)
    assert plugin.cache.prod_delta[row].tolist() == [0, 0]
    assert plugin.cache.node_delta[row].tolist() == [0, 0]


def test_reserve_pod_is_not_counted() -> None:
    """pod_assign_cache.go podAssignCache.assign: a Reservation's reserve pod is skipped, so a node
    holding a reservation does not look loaded by its estimate."""
    metric = [node_metric(NODE, {"cpu": "32", "memory": "10Gi"})]
    incoming = sized("test-pod-1", "16", "32Gi")
    plain, plain_snapshot = build({}, [node()], [], metric)
    reserve = sized("r", "16", "32Gi", node_name=NODE, annotations={"scheduling.koordinator.sh/reserve-pod": "true"})
    held, held_snapshot = build({}, [node()], [reserve], metric)
    assert held.cache.nodes[NODE].pods == {}
    assert (
        held.score(CycleState(), incoming, held_snapshot.get(NODE))[0]
        == plain.score(CycleState(), incoming, plain_snapshot.get(NODE))[0]
    )
    assert held.reserve(CycleState(), reserve, NODE).success
    assert held.cache.nodes[NODE].pods == {}


def test_node_service_reports_estimates() -> None:
    from scheduler.frameworkext.services import ServiceTable

    plugin, _ = build(
        {},
        [node()],
        [sized("assigned-pod-1", "16", "32Gi", node_name=NODE)],
        [node_metric(NODE, {"cpu": "32", "memory": "10Gi"})],
    )
    table = ServiceTable()
    table.register_plugin_service(plugin, "default-scheduler")
    reply = table.dispatch("GET", f"/apis/v1/plugins/LoadAwareScheduling/node/{NODE}")
    assert reply.status == 200
    body = reply.body
    assert [p["pod"]["metadata"]["name"] for p in body["pods"]] == ["assigned-pod-1"]
    assert body["nodeDelta"] == {"cpu": "13600m", "memory": "24051816858"}
    assert body["nodeEstimated"]["cpu"] == "13600m"
    assert body["nodeDeltaPods"] == ["default/assigned-pod-1"]
    # A Burstable pod of no Koordinator class is Prod (GetPodPriorityClassWithDefault), so it is
    # part of the prod delta too.
    assert body["prodDelta"] == body["nodeDelta"]
    assert body["prodDeltaPods"] == ["default/assigned-pod-1"]
    assert table.dispatch("GET", "/apis/v1/plugins/LoadAwareScheduling/node/unknown").body == {}


@pytest.mark.parametrize(
    ("body", "status", "fragment"),
    [
        ({"usageThresholds": {"cpu": 40}}, 200, None),
        ({"usageThresholds": {"cpu": 140}}, 400, "resource Threshold of cpu should be less than 100, got 140"),
        ({"usageThreshold": {"cpu": 40}}, 400, 'unknown field "usageThreshold"'),
        # ValidateLoadAwareSchedulingArgs does not look at prodUsageThresholds: 150 is taken.
        ({"usageThresholds": {"cpu": 40}, "prodUsageThresholds": {"cpu": 150}}, 200, None),
    ],
    ids=["valid change applies", "out of range refused", "unknown field refused", "prod thresholds are not validated"],
)
def test_args_change_at_run_time(body: dict[str, Any], status: int, fragment: str | None) -> None:
    from scheduler.frameworkext.services import ServiceTable

    plugin, snapshot = build({}, [node()], [], [node_metric(NODE, {"cpu": "50", "memory": "10Gi"})])
    table = ServiceTable()
    table.register_plugin_service(plugin, "default-scheduler")
    assert plugin.filter(CycleState(), make_pod("p"), snapshot.get(NODE)).success
    reply = table.dispatch("PUT", "/apis/v1/plugins/LoadAwareScheduling/args", json.dumps(body).encode())
    assert reply.status == status, reply.body
    if fragment is not None:
        assert fragment in reply.body["message"]
        assert plugin.args.usage_thresholds == {"cpu": 65, "memory": 95}
    else:
        assert plugin.args.usage_thresholds == {"cpu": 40}
        assert table.dispatch("GET", "/apis/v1/plugins/LoadAwareScheduling/args").body["usageThresholds"] == {"cpu": 40}
        assert not plugin.filter(CycleState(), make_pod("p"), snapshot.get(NODE)).success
