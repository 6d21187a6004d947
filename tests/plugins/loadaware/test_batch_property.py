"""LoadAwareScheduling's batch Filter and Score agree with the per-node forms on random clusters."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.api.objects import Pod
from scheduler.framework.types import CycleState
from tests.plugins.loadaware.helpers import NOW, build, node_metric, pod_metric
from tests.support.batch import assert_batch_filter_agrees, assert_batch_score_agrees
from tests.support.builders import make_node, make_pod
from tests.support.examples import examples

CPU = st.sampled_from(["0", "500m", "2", "8", "30", "60"])
MEMORY = st.sampled_from(["0", "200Mi", "4Gi", "30Gi", "90Gi"])
PERCENT = st.integers(0, 100)
THRESHOLDS = st.dictionaries(st.sampled_from(["cpu", "memory"]), PERCENT, max_size=2)
AGG = st.sampled_from(["p50", "p95", "avg"])
DURATION = st.sampled_from(["0s", "5m", "10m"])


@st.composite
def a_pod(draw: st.DrawFn, name: str, node: str = "") -> Pod:
    requests = {k: v for k, v in (("cpu", draw(CPU)), ("memory", draw(MEMORY))) if v != "0"}
    limits = dict(requests)
    if draw(st.booleans()) and requests:
        limits = {k: v for k, v in (("cpu", draw(CPU)), ("memory", draw(MEMORY))) if v != "0"}
    labels = {}
    if draw(st.booleans()):
        labels["koordinator.sh/priority-class"] = draw(st.sampled_from(["koord-prod", "koord-batch", "koord-mid", "bogus"]))
    priority = draw(st.sampled_from([None, 0, 9500, 5500]))
    spec: dict[str, Any] = {}
    conditions = []
    if node and draw(st.booleans()):
        conditions = [
            {
                "type": "PodScheduled",
                "status": "True",
                "lastTransitionTime": draw(st.sampled_from(["2025-12-31T23:50:00Z", "2025-12-31T23:59:30Z"])),
            }
        ]
    pod = make_pod(
        name,
        containers=[{"name": "c", "image": "pause", "resources": {"requests": requests, "limits": limits}}],
        node_name=node,
        labels=labels,
        priority=priority,
        spec=spec,
    )
    return pod.with_changes(conditions=conditions) if conditions else pod


@st.composite
def clusters(draw: st.DrawFn) -> tuple[dict[str, Any], list[Any], list[Pod], list[dict[str, Any]], Pod]:
    args: dict[str, Any] = {}
    if draw(st.booleans()):
        args["usageThresholds"] = draw(THRESHOLDS)
    if draw(st.booleans()):
        args["prodUsageThresholds"] = draw(THRESHOLDS)
    if draw(st.booleans()):
        args["resourceWeights"] = draw(st.dictionaries(st.sampled_from(["cpu", "memory"]), st.integers(1, 5), min_size=1))
    args["dominantResourceWeight"] = draw(st.sampled_from([0, 0, 1, 10]))
    args["scoreAccordingProdUsage"] = draw(st.booleans())
    args["prodUsageIncludeSys"] = draw(st.booleans())
    args["enableScheduleWhenNodeMetricsExpired"] = draw(st.booleans())
    if draw(st.booleans()):
        args["aggregated"] = {
            "usageThresholds": draw(THRESHOLDS),
            "usageAggregationType": draw(st.sampled_from(["", "p95", "p50"])),
            "usageAggregatedDuration": draw(DURATION),
            "scoreAggregationType": draw(st.sampled_from(["", "p95", "avg"])),
            "scoreAggregatedDuration": draw(DURATION),
        }
    count = draw(st.integers(1, 6))
    nodes, bound, metrics = [], [], []
    for i in range(count):
        name = f"n{i}"
        node = make_node(name, cpu=draw(st.sampled_from(["0", "16", "96"])), memory=draw(st.sampled_from(["64Gi", "512Gi"])))
        if draw(st.booleans()):
            node.meta.annotations["scheduling.koordinator.sh/usage-thresholds"] = json.dumps(
                {
                    "usageThresholds": draw(THRESHOLDS),
                    "prodUsageThresholds": draw(THRESHOLDS),
                    "aggregatedUsage": {
                        "usageThresholds": draw(THRESHOLDS),
                        "usageAggregationType": draw(AGG),
                        "usageAggregatedDuration": draw(DURATION),
                    },
                }
            )
        nodes.append(node)
        pods = [draw(a_pod(f"{name}-p{j}", name)) for j in range(draw(st.integers(0, 3)))]
        bound += pods
        if draw(st.integers(0, 4)) == 0:
            continue
        reported = [
            pod_metric(p.name, draw(CPU), draw(MEMORY), draw(st.sampled_from(["", "koord-prod"])))
            for p in pods
            if draw(st.booleans())
        ]
        aggregated = []
        for duration in draw(st.lists(st.sampled_from(["5m", "10m"]), unique=True, max_size=2)):
            aggregated.append(
                {
                    "duration": duration,
                    "usage": {
                        kind: {"resources": {"cpu": draw(CPU), "memory": draw(MEMORY)}}
                        for kind in draw(st.lists(AGG, unique=True, max_size=2))
                    },
                }
            )
        metrics.append(
            node_metric(
                name,
                {"cpu": draw(CPU), "memory": draw(MEMORY)},
                update=draw(st.sampled_from([NOW, NOW - 30, NOW - 200, None])),
                pods=reported,
                aggregated=aggregated,
                with_node_metric=draw(st.integers(0, 5)) > 0,
                system={"cpu": draw(CPU)},
            )
        )
    return args, nodes, bound, metrics, draw(a_pod("incoming"))


@settings(max_examples=examples(150), deadline=None)
@given(clusters())
def test_batch_forms_agree_with_per_node_forms(
    cluster: tuple[dict[str, Any], list[Any], list[Pod], list[dict[str, Any]], Pod],
) -> None:
    args, nodes, bound, metrics, pod = cluster
    plugin, snapshot = build(args, nodes, bound, metrics)
    state = CycleState()
    plugin.pre_filter(state, pod, list(snapshot.node_infos))
    assert_batch_filter_agrees(plugin, state, pod, snapshot, snapshot.order)
    assert_batch_score_agrees(plugin, state, pod, snapshot, snapshot.order)
    # Reserving and unreserving a pod, and a new report, change both forms alike (the batch forms
    # keep per-node results between cycles and recompute only the nodes that changed).
    placed = pod.with_changes(node_name=nodes[-1].name)
    plugin.reserve(state, placed, nodes[-1].name)
    assert_batch_filter_agrees(plugin, state, pod, snapshot, snapshot.order)
    assert_batch_score_agrees(plugin, state, pod, snapshot, snapshot.order)
    plugin.unreserve(state, placed, nodes[-1].name)
    assert_batch_filter_agrees(plugin, state, pod, snapshot, snapshot.order)
    assert_batch_score_agrees(plugin, state, pod, snapshot, snapshot.order)
    if metrics:
        from scheduler.api.koordinator import parse_node_metric

        plugin.cache.set_metric(parse_node_metric(node_metric(metrics[0]["metadata"]["name"], {"cpu": "12", "memory": "40Gi"})))
        assert_batch_filter_agrees(plugin, state, pod, snapshot, snapshot.order)
        assert_batch_score_agrees(plugin, state, pod, snapshot, snapshot.order)


@settings(max_examples=examples(300), deadline=None)
@given(
    totals=st.lists(st.integers(1, 10**13), min_size=1, max_size=8),
    limit=st.integers(1, 100),
    offsets=st.lists(st.integers(-3, 3), min_size=1, max_size=8),
)
def test_usage_bound_agrees_with_the_float_formula(totals: list[int], limit: int, offsets: list[int]) -> None:
    """`e > bound` exactly when Koordinator's float usage percent of e exceeds the threshold."""
    from scheduler.plugins.loadaware.plugin import usage_percent

    nodes = [make_node(f"n{i}", cpu=f"{t}m", memory="1Gi") for i, t in enumerate(totals)]
    plugin, snapshot = build({"usageThresholds": {"cpu": limit}}, nodes)
    bounds = plugin._bounds(snapshot, plugin.base_profile.usage)  # type: ignore[arg-type]
    cpu = plugin.names.index("cpu")
    for pos, total in enumerate(totals):
        bound = int(bounds[pos, cpu])
        for delta in offsets:
            e = max(0, bound + delta)
            assert (e > bound) == (usage_percent(e, total) > limit), (total, limit, e, bound)
