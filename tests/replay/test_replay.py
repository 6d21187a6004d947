"""Replay in a scratch engine: windows and their starting state, waits, deletions, node changes,
segments, the summary, the digest, the pods placed differently, and grids of candidates."""

from __future__ import annotations

import json
from typing import Any

import pytest

from scheduler.config.loader import default_config, parse_config
from scheduler.replay import (
    GridError,
    RunOutcome,
    Trace,
    TraceInputError,
    digest,
    expand_grid,
    merge,
    openb_trace,
    placement_diff,
    replay,
    summary,
    trace_from_changes,
)
from tests.support.builders import node_doc, pod_doc
from tests.support.traces import DEFAULT, MOST_ALLOCATED, need_openb


def pod_change(at: float, name: str, cpu: str) -> dict[str, Any]:
    return {
        "at": at,
        "action": "add",
        "kind": "Pod",
        "namespace": "default",
        "name": name,
        "document": pod_doc(name, cpu=cpu, uid=f"uid-{name}"),
    }


def gone(at: float, kind: str, name: str) -> dict[str, Any]:
    return {"at": at, "action": "delete", "kind": kind, "namespace": "default" if kind == "Pod" else "", "name": name}


def node_change(at: float, name: str, cpu: str, zone: str) -> dict[str, Any]:
    doc = node_doc(name, cpu=cpu, labels={"topology.kubernetes.io/zone": zone})
    return {"at": at, "action": "add", "kind": "Node", "name": name, "document": doc}


CHANGES = [
    node_change(0, "n1", "2", "a"),
    node_change(0, "n2", "2", "b"),
    pod_change(10, "a", "2"),
    {"at": 10.5, "action": "bind", "kind": "Pod", "namespace": "default", "name": "a", "node": "n1"},
    pod_change(20, "b", "2"),
    {"at": 20.5, "action": "bind", "kind": "Pod", "namespace": "default", "name": "b", "node": "n2"},
    pod_change(30, "c", "2"),  # no room until a goes
    gone(100, "Pod", "a"),
    {"at": 100.5, "action": "bind", "kind": "Pod", "namespace": "default", "name": "c", "node": "n1"},
    node_change(150, "n3", "4", "a"),
    pod_change(200, "d", "8"),  # fits nowhere, then deleted
    gone(250, "Pod", "d"),
    gone(260, "Node", "n2"),
]


def whole() -> Trace:
    return trace_from_changes(CHANGES, 0.0, 300.0)


def test_replay_waits_deletions_and_node_changes() -> None:
    out = replay(whole(), default_config(), samples=6)
    assert out.placements == {"default/a": "n1", "default/b": "n2", "default/c": "n1", "default/d": ""}
    assert (out.arrived, out.placed, out.unschedulable, out.deleted_pending) == (4, 3, 0, 1)
    assert sorted(out.pending_seconds) == [0.0, 0.0, 70.0]  # c waited from 30 until a was deleted at 100
    s = summary(out)
    assert s["pendingSeconds"]["max"] == 70.0 and s["pendingHistogram"]["counts"][:4] == [2, 0, 0, 1]
    assert [round(x.at) for x in out.samples] == [50, 100, 150, 200, 250, 300]
    assert out.samples[-1].nodes_used == 1 and out.samples[-1].pending == 0
    assert set(s["balance"]["zone"]) == {"a", "b"} and set(s["balance"]["nodeType"]) == {"cpu-only"}
    assert out.decisions["default/d"][0] == "Unschedulable" and "Insufficient cpu" in out.decisions["default/d"][4]


def test_window_starts_from_the_recorded_state() -> None:
    later = whole().window(60.0, 300.0)
    assert sorted(n.name for n in later.objects.nodes) == ["n1", "n2"]
    bound = {p.key: p.node_name for p in later.objects.pods}
    # a and b are where the recorded run bound them; c was pending at 60 and is carried in.
    assert bound == {"default/a": "n1", "default/b": "n2", "default/c": ""}
    assert later.carried == ["default/c"] and later.arrivals == 2
    assert [(e.at, e.action, e.name) for e in later.events][:2] == [(100.0, "delete", "default/a"), (100.5, "bind", "default/c")]
    out = replay(later, default_config(), samples=2)
    assert out.placements == {"default/c": "n1", "default/d": ""} and out.pending_seconds == [40.0]
    # From 120 on, c is where the recorded run bound it.
    assert {p.key: p.node_name for p in whole().window(120.0, 300.0).objects.pods} == {"default/b": "n2", "default/c": "n1"}


def test_segments_merge_and_digest_is_stable() -> None:
    parts = [replay(seg, default_config(), samples=3) for seg in whole().segments(3)]
    merged = merge(parts)
    again = merge([replay(seg, default_config(), samples=3) for seg in whole().segments(3)])
    assert digest(merged) == digest(again)
    assert merged.placements["default/c"] == "n1" and merged.placed == 3 and merged.arrived == 4
    assert len(merged.samples) == 9
    # JSON both ways (the outcome crosses a task queue) keeps the digest.
    wire = json.loads(json.dumps(merged.to_json()))
    assert digest(RunOutcome.from_json(wire)) == digest(merged)


def test_segments_refuse_zero() -> None:
    with pytest.raises(TraceInputError, match="segments: invalid value 0"):
        whole().segments(0)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"at": 1, "action": "move", "kind": "Pod", "name": "x"}, "change 1: action: invalid value 'move'"),
        ({"at": 1, "action": "add", "kind": "Service", "name": "x"}, "change 1: kind: invalid value 'Service'"),
        ({"at": "soon", "action": "delete", "kind": "Pod", "name": "x"}, "change 1: at: invalid value 'soon'"),
        ({"at": 1, "action": "add", "kind": "Pod", "name": "x"}, "change 1: document: a Pod added must carry its document"),
    ],
    ids=["action", "kind", "at", "document"],
)
def test_bad_changes_are_named(change: dict[str, Any], message: str) -> None:
    with pytest.raises(TraceInputError, match=message):
        trace_from_changes([change], 0, 10)


def test_placement_diff_lists_both_decisions() -> None:
    a = replay(whole(), default_config(), samples=2)
    b = RunOutcome.from_json(a.to_json())
    b.placements["default/c"] = "n3"
    count, rows = placement_diff(a, b)
    assert count == 1 and rows[0]["pod"] == "default/c" and (rows[0]["a"], rows[0]["b"]) == ("n1", "n3")
    assert rows[0]["aDecision"]["outcome"] == "Scheduled"


def test_grid_expands_every_combination() -> None:
    grid = {
        "NodeResourcesFit.scoringStrategy.type": ["LeastAllocated", "MostAllocated"],
        "NodeResourcesBalancedAllocation.weight": [1, 5],
    }
    candidates = expand_grid(DEFAULT, grid)
    assert [label for label, _ in candidates] == [
        "NodeResourcesBalancedAllocation.weight=1, NodeResourcesFit.scoringStrategy.type=LeastAllocated",
        "NodeResourcesBalancedAllocation.weight=1, NodeResourcesFit.scoringStrategy.type=MostAllocated",
        "NodeResourcesBalancedAllocation.weight=5, NodeResourcesFit.scoringStrategy.type=LeastAllocated",
        "NodeResourcesBalancedAllocation.weight=5, NodeResourcesFit.scoringStrategy.type=MostAllocated",
    ]
    for label, doc in candidates:
        parse_config(doc, label)  # each is a valid configuration
    assert "profiles" not in DEFAULT  # the base is not changed


@pytest.mark.parametrize(
    ("grid", "message"),
    [
        ({"weight": [1]}, "grid.weight: expected"),
        ({"X.weight": []}, "non-empty list"),
        ({"A.weight": list(range(9)), "B.weight": list(range(9))}, "81 combinations"),
    ],
    ids=["no-plugin", "empty", "too-many"],
)
def test_bad_grids_are_named(grid: dict[str, list[Any]], message: str) -> None:
    with pytest.raises(GridError, match=message):
        expand_grid(DEFAULT, grid)


def test_openb_default_and_bin_packing_side_by_side() -> None:
    data = need_openb()
    trace = openb_trace(data, nodes=500, pods=1000)
    assert trace.arrivals == 1000 and trace.events[0].at == 0.0
    spread = replay(trace, default_config(), samples=24)
    packed = replay(trace, parse_config(MOST_ALLOCATED, "most"), samples=24)
    assert digest(spread) == digest(replay(trace, default_config(), samples=24))
    assert digest(spread) != digest(packed)
    a, b = summary(spread), summary(packed)
    assert a["pods"] == b["pods"] == 1000 and a["placed"] == b["placed"] == 1000
    assert b["nodesUsed"]["peak"] < a["nodesUsed"]["peak"]  # bin-packing fills fewer nodes
    assert a["gpuFragmentation"] is not None
    count, rows = placement_diff(spread, packed, limit=5)
    assert count > 500 and len(rows) == 5
