"""TaintToleration: Filter, Score/NormalizeScore, and batch/per-node agreement."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.framework.types import ActionType, ClusterEvent, Code, CycleState
from scheduler.plugins import tainttoleration
from scheduler.plugins.tainttoleration import REASON_UNTOLERATED, TaintToleration
from tests.support.batch import assert_batch_filter_agrees, assert_batch_score_agrees
from tests.support.builders import make_node, make_pod, make_snapshot
from tests.support.examples import examples
from tests.support.fakes import FakeHandle


def taint(key: str, value: str, effect: str) -> dict[str, str]:
    return {"key": key, "value": value, "effect": effect}


def toleration(key: str = "", operator: str = "Equal", value: str = "", effect: str = "") -> dict[str, str]:
    out = {"key": key, "operator": operator, "value": value, "effect": effect}
    return {k: v for k, v in out.items() if v}


def pod_with(tolerations: list[dict[str, str]]) -> Any:
    return make_pod("pod1", spec={"tolerations": tolerations})


def plugin_for(nodes: list[Any]) -> tuple[TaintToleration, Any]:
    snap = make_snapshot(nodes)
    return tainttoleration.new(None, FakeHandle(snap)), snap


# kubernetes/kubernetes pkg/scheduler/framework/plugins/tainttoleration/taint_toleration_test.go TestTaintTolerationFilter
FILTER_CASES = [
    ("no tolerations, NoSchedule taint", [], [taint("dedicated", "user1", "NoSchedule")], False),
    (
        "tolerates dedicated=user1:NoSchedule",
        [toleration("dedicated", value="user1", effect="NoSchedule")],
        [taint("dedicated", "user1", "NoSchedule")],
        True,
    ),
    (
        "value user2 does not tolerate user1",
        [toleration("dedicated", "Equal", "user2", "NoSchedule")],
        [taint("dedicated", "user1", "NoSchedule")],
        False,
    ),
    (
        "Exists tolerates any value",
        [toleration("foo", "Exists", effect="NoSchedule")],
        [taint("foo", "bar", "NoSchedule")],
        True,
    ),
    (
        "all of several taints tolerated",
        [toleration("dedicated", "Equal", "user2", "NoSchedule"), toleration("foo", "Exists", effect="NoSchedule")],
        [taint("dedicated", "user2", "NoSchedule"), taint("foo", "bar", "NoSchedule")],
        True,
    ),
    (
        "non-empty effect must match",
        [toleration("foo", "Equal", "bar", "PreferNoSchedule")],
        [taint("foo", "bar", "NoSchedule")],
        False,
    ),
    (
        "empty effect matches NoSchedule",
        [toleration("foo", "Equal", "bar")],
        [taint("foo", "bar", "NoSchedule")],
        True,
    ),
    (
        "PreferNoSchedule taint never filters (mismatched toleration)",
        [toleration("dedicated", "Equal", "user2", "NoSchedule")],
        [taint("dedicated", "user1", "PreferNoSchedule")],
        True,
    ),
    ("PreferNoSchedule taint never filters (no toleration)", [], [taint("dedicated", "user1", "PreferNoSchedule")], True),
    # Not in the upstream table: NoExecute filters like NoSchedule; an empty-key Exists tolerates all.
    ("NoExecute taint filters", [], [taint("k", "v", "NoExecute")], False),
    ("wildcard toleration", [toleration(operator="Exists")], [taint("k", "v", "NoExecute"), taint("j", "", "NoSchedule")], True),
]


@pytest.mark.parametrize(("tolerations", "taints", "fits"), [c[1:] for c in FILTER_CASES], ids=[c[0] for c in FILTER_CASES])
def test_filter(tolerations: list[dict[str, str]], taints: list[dict[str, str]], fits: bool) -> None:
    plugin, snap = plugin_for([make_node("nodeA", taints=taints)])
    status = plugin.filter(CycleState(), pod_with(tolerations), snap.node_infos[0])
    if fits:
        assert status.code == Code.SUCCESS
    else:
        assert status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert status.reasons == (REASON_UNTOLERATED,)
    assert_batch_filter_agrees(plugin, CycleState(), pod_with(tolerations), snap, np.arange(1, dtype=np.int64))


ARM = taint("cpu-type", "arm64", "PreferNoSchedule")
SSD = taint("disk-type", "ssd", "PreferNoSchedule")

# kubernetes/kubernetes pkg/scheduler/framework/plugins/tainttoleration/taint_toleration_test.go TestTaintTolerationScore
SCORE_CASES = [
    (
        "tolerated taint scores higher than an intolerable one",
        [toleration("foo", "Equal", "bar", "PreferNoSchedule")],
        [[taint("foo", "bar", "PreferNoSchedule")], [taint("foo", "blah", "PreferNoSchedule")]],
        [100, 0],
    ),
    (
        "the number of tolerated taints does not matter",
        [
            toleration("cpu-type", "Equal", "arm64", "PreferNoSchedule"),
            toleration("disk-type", "Equal", "ssd", "PreferNoSchedule"),
        ],
        [[], [ARM], [ARM, SSD]],
        [100, 100, 100],
    ),
    (
        "the more intolerable taints, the lower the score (conformance taint-toleration-score)",
        [toleration("foo", "Equal", "bar", "PreferNoSchedule")],
        [[], [ARM], [ARM, SSD]],
        [100, 50, 0],
    ),
    (
        "only PreferNoSchedule taints and tolerations count",
        [toleration("cpu-type", "Equal", "arm64", "NoSchedule"), toleration("disk-type", "Equal", "ssd", "NoSchedule")],
        [[], [taint("cpu-type", "arm64", "NoSchedule")], [ARM, SSD]],
        [100, 100, 0],
    ),
    ("no tolerations prefers the untainted node", [], [[], [ARM]], [100, 0]),
    # Go truncation in DefaultNormalizeScore: 100 - 100*1/3 = 67, 100 - 100*2/3 = 34.
    (
        "reverse normalization truncates",
        [],
        [[], [ARM], [ARM, SSD], [ARM, SSD, taint("x", "", "PreferNoSchedule")]],
        [100, 67, 34, 0],
    ),
]


@pytest.mark.parametrize(("tolerations", "node_taints", "want"), [c[1:] for c in SCORE_CASES], ids=[c[0] for c in SCORE_CASES])
def test_score(tolerations: list[dict[str, str]], node_taints: list[list[dict[str, str]]], want: list[int]) -> None:
    names = ["nodeA", "nodeB", "nodeC", "nodeD"]
    plugin, snap = plugin_for([make_node(names[i], taints=t) for i, t in enumerate(node_taints)])
    pod = pod_with(tolerations)
    state = CycleState()
    assert plugin.pre_score(state, pod, snap.node_infos).success
    raw = []
    for info in snap.node_infos:
        value, status = plugin.score(state, pod, info)
        assert status.success
        raw.append(value)
    scores = np.asarray(raw, dtype=np.int64)
    ext = plugin.score_extensions()
    assert ext is not None
    assert ext.normalize_score(state, pod, scores).success
    assert scores.tolist() == want
    assert_batch_score_agrees(plugin, state, pod, snap, np.arange(len(node_taints), dtype=np.int64))


def test_score_without_pre_score_is_an_error() -> None:
    plugin, snap = plugin_for([make_node("nodeA")])
    value, status = plugin.score(CycleState(), pod_with([]), snap.node_infos[0])
    assert (value, status.code) == (0, Code.ERROR)
    assert status.message == 'failed to read "PreScoreTaintToleration" from cycleState: not found'


def test_events_to_register() -> None:
    assert TaintToleration().events_to_register() == [
        ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
        ClusterEvent("Pod", ActionType.UPDATE_POD_TOLERATION),
    ]


def test_name_and_factory() -> None:
    plugin = tainttoleration.new(None, FakeHandle(make_snapshot([])))
    assert plugin.name == tainttoleration.NAME == "TaintToleration"


# ----- property: batch == per node ---------------------------------------------------------
EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"]
KEYS = ["a", "b", "c"]
VALUES = ["", "x", "y"]

taints_st = st.lists(
    st.builds(taint, st.sampled_from(KEYS), st.sampled_from(VALUES), st.sampled_from(EFFECTS)),
    max_size=3,
    unique_by=lambda t: (t["key"], t["effect"]),
)


@st.composite
def tolerations_st(draw: st.DrawFn) -> list[dict[str, str]]:
    out = []
    for _ in range(draw(st.integers(0, 3))):
        operator = draw(st.sampled_from(["Equal", "Exists"]))
        key = draw(st.sampled_from(KEYS + ([""] if operator == "Exists" else [])))
        value = draw(st.sampled_from(VALUES)) if operator == "Equal" else ""
        out.append(toleration(key, operator, value, draw(st.sampled_from(["", *EFFECTS]))))
    return out


@settings(max_examples=examples(300), deadline=None)
@given(
    node_taints=st.lists(taints_st, min_size=1, max_size=8),
    tolerations=tolerations_st(),
    data=st.data(),
)
def test_batch_agrees_with_per_node(
    node_taints: list[list[dict[str, str]]], tolerations: list[dict[str, str]], data: st.DataObject
) -> None:
    plugin, snap = plugin_for([make_node(f"n{i}", taints=t) for i, t in enumerate(node_taints)])
    positions = np.asarray(
        data.draw(st.permutations(range(len(node_taints))).flatmap(lambda p: st.integers(0, len(p)).map(lambda k: p[:k]))),
        dtype=np.int64,
    )
    pod = pod_with(tolerations)
    state = CycleState()
    assert_batch_filter_agrees(plugin, state, pod, snap, positions)
    assert plugin.pre_score(state, pod, snap.node_infos).success
    assert_batch_score_agrees(plugin, state, pod, snap, positions)
