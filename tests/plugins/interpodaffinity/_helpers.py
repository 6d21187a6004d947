"""Pod/term builders and runners shared by the InterPodAffinity tests.

They mirror the `st.MakePod().PodAffinityIn(...)` wrappers upstream's tests use.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from scheduler.api.objects import Node, Pod
from scheduler.framework.snapshot import Snapshot
from scheduler.framework.types import Code, CycleState, Status
from scheduler.plugins.interpodaffinity import InterPodAffinity, new
from tests.support.builders import make_node, make_pod, make_snapshot
from tests.support.fakes import FakeHandle

# scoring_test.go's `namespaces`: two teams of two namespaces each.
TEAM_NAMESPACES = {
    "subteam1.team1": {"team": "team1"},
    "subteam2.team1": {"team": "team1"},
    "subteam1.team2": {"team": "team2"},
    "subteam2.team2": {"team": "team2"},
}

_names = itertools.count()


def term(
    key: str,
    op: str,
    values: list[str] | None = None,
    topology: str = "region",
    namespaces: list[str] | None = None,
    namespace_selector: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A PodAffinityTerm whose labelSelector has one expression."""
    expr: dict[str, Any] = {"key": key, "operator": op}
    if values is not None:
        expr["values"] = values
    raw: dict[str, Any] = {"labelSelector": {"matchExpressions": [expr]}, "topologyKey": topology}
    if namespaces is not None:
        raw["namespaces"] = namespaces
    if namespace_selector is not None:
        raw["namespaceSelector"] = namespace_selector
    return raw


def multi_term(exprs: list[dict[str, Any]], topology: str) -> dict[str, Any]:
    """A PodAffinityTerm with several ANDed expressions."""
    return {"labelSelector": {"matchExpressions": exprs}, "topologyKey": topology}


def team_selector(team: str) -> dict[str, Any]:
    """namespaceSelector `team In (team)`."""
    return {"matchExpressions": [{"key": "team", "operator": "In", "values": [team]}]}


def affinity(
    required: list[dict[str, Any]] | None = None,
    preferred: list[tuple[int, dict[str, Any]]] | None = None,
    anti_required: list[dict[str, Any]] | None = None,
    anti_preferred: list[tuple[int, dict[str, Any]]] | None = None,
) -> dict[str, Any]:
    """spec.affinity with pod affinity and anti-affinity sections."""
    req = "requiredDuringSchedulingIgnoredDuringExecution"
    pref = "preferredDuringSchedulingIgnoredDuringExecution"
    out: dict[str, Any] = {}
    if required or preferred:
        out["podAffinity"] = {
            req: required or [],
            pref: [{"weight": w, "podAffinityTerm": t} for w, t in preferred or []],
        }
    if anti_required or anti_preferred:
        out["podAntiAffinity"] = {
            req: anti_required or [],
            pref: [{"weight": w, "podAffinityTerm": t} for w, t in anti_preferred or []],
        }
    return out


def pod(
    labels: dict[str, str] | None = None,
    node: str = "",
    namespace: str = "default",
    aff: dict[str, Any] | None = None,
    name: str | None = None,
) -> Pod:
    """A pod (unique name unless given) with labels, a node and an affinity section."""
    spec = {"affinity": aff} if aff else None
    return make_pod(name or f"p{next(_names)}", namespace=namespace, node_name=node, labels=labels, spec=spec)


def node(name: str, labels: dict[str, str]) -> Node:
    """A node with the given labels (plus kubernetes.io/hostname from the builder)."""
    return make_node(name, labels=labels)


def setup(
    nodes: list[Node],
    pods: list[Pod],
    namespaces: dict[str, dict[str, str]] | None = None,
    args: object | None = None,
) -> tuple[InterPodAffinity, Snapshot]:
    """The plugin over a snapshot of these nodes and pods."""
    snap = make_snapshot(nodes, pods, namespaces)
    return new(args, FakeHandle(snap)), snap


def verdict(status: Status) -> tuple[Code, tuple[str, ...]]:
    """A status as (code, reasons) for comparisons."""
    return status.code, status.reasons


def run_filter(
    plugin: InterPodAffinity, snap: Snapshot, incoming: Pod
) -> tuple[Status, list[tuple[Code, tuple[str, ...]]] | None]:
    """PreFilter, then Filter per node; also asserts the batch form agrees node by node."""
    state = CycleState()
    _, pre = plugin.pre_filter(state, incoming, snap.node_infos)
    if not pre.success:
        return pre, None
    per_node = [verdict(plugin.filter(state, incoming, info)) for info in snap.node_infos]
    positions = np.arange(snap.num_nodes, dtype=np.int64)
    batch = plugin.filter_batch(state, incoming, snap, positions)
    batch_verdicts = [(Code(int(c)), batch.reasons(i) if c else ()) for i, c in enumerate(batch.codes)]
    assert batch_verdicts == per_node
    return pre, per_node


def run_score(plugin: InterPodAffinity, snap: Snapshot, incoming: Pod) -> tuple[Status, list[int] | None]:
    """PreScore, Score per node and NormalizeScore; also asserts the batch form agrees."""
    state = CycleState()
    pre = plugin.pre_score(state, incoming, snap.node_infos)
    if not pre.success:
        return pre, None
    raw = [plugin.score(state, incoming, info) for info in snap.node_infos]
    assert all(status.success for _, status in raw)
    scores = np.array([s for s, _ in raw], dtype=np.int64)
    batch = plugin.score_batch(state, incoming, snap, np.arange(snap.num_nodes, dtype=np.int64))
    assert batch.tolist() == scores.tolist()
    ext = plugin.score_extensions()
    assert ext.normalize_score(state, incoming, scores).success
    return pre, scores.tolist()
