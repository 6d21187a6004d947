"""Properties of PodTopologySpread on random small clusters.

The batch Filter/Score agree with the per-node forms (codes, reasons, raw and normalized scores,
also after AddPod/RemovePod), and the vectorized PreFilter/PreScore state equals a node-by-node
port of upstream's loops.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.api.objects import Node, Pod
from scheduler.framework.nodeinfo import NodeInfo, PodInfo
from scheduler.framework.snapshot import Snapshot
from scheduler.framework.types import CycleState
from scheduler.plugins.podtopologyspread.common import (
    MAX_INT32,
    Constraint,
    Domains,
    count_pods_match,
    match_node_inclusion_policies,
    node_has_all_keys,
    required_node_affinity,
    topology_normalizing_weight,
)
from scheduler.plugins.podtopologyspread.filtering import PreFilterState
from scheduler.plugins.podtopologyspread.scoring import PreScoreState
from tests.plugins.podtopologyspread.helpers import (
    SYSTEM_ARGS,
    FakeCluster,
    list_args,
    node,
    pod,
    service,
    setup,
    spread,
)
from tests.support.examples import examples

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
KEYS = (HOSTNAME, ZONE, "rack")
TAINT_CHOICES = (
    {"key": "t", "effect": "NoSchedule"},
    {"key": "p", "effect": "PreferNoSchedule"},
    {"key": "x", "value": "1", "effect": "NoExecute"},
)
SELECTORS: tuple[dict[str, Any] | None, ...] = (
    None,
    {},
    {"matchExpressions": [{"key": "foo", "operator": "Exists"}]},
    {"matchLabels": {"app": "a"}},
    {"matchExpressions": [{"key": "bar", "operator": "DoesNotExist"}]},
)
POD_LABELS = st.fixed_dictionaries(
    {},
    optional={"foo": st.just(""), "bar": st.just(""), "app": st.sampled_from(["a", "b"])},
)


@st.composite
def nodes_strategy(draw: st.DrawFn) -> list[Node]:
    count = draw(st.integers(1, 7))
    out = []
    for i in range(count):
        name = f"n{i}"
        labels: dict[str, str] = {}
        if draw(st.integers(0, 9)) < 8:
            labels[HOSTNAME] = name
        zone = draw(st.sampled_from([None, "", "z1", "z2", "z3"]))
        if zone is not None:
            labels[ZONE] = zone
        rack = draw(st.sampled_from([None, "r1", "r2"]))
        if rack is not None:
            labels["rack"] = rack
        if draw(st.booleans()):
            labels["foo"] = ""
        taints = [t for t in TAINT_CHOICES if draw(st.integers(0, 3)) == 0]
        out.append(node(name, labels, taints))
    return out


@st.composite
def constraint_strategy(draw: st.DrawFn) -> dict[str, Any]:
    hard = draw(st.booleans())
    return spread(
        draw(st.integers(1, 3)),
        draw(st.sampled_from(KEYS)),
        "DoNotSchedule" if hard else "ScheduleAnyway",
        draw(st.sampled_from(SELECTORS)),
        min_domains=draw(st.sampled_from([None, 1, 2, 4])) if hard else None,
        affinity_policy=draw(st.sampled_from([None, "Honor", "Ignore"])),
        taints_policy=draw(st.sampled_from([None, "Honor", "Ignore"])),
        match_label_keys=draw(st.sampled_from([None, ["app"]])),
    )


@st.composite
def scenario(draw: st.DrawFn) -> dict[str, Any]:
    nodes = draw(nodes_strategy())
    existing = []
    for i in range(draw(st.integers(0, 14))):
        existing.append(
            pod(
                f"e{i}",
                draw(POD_LABELS),
                on=nodes[draw(st.integers(0, len(nodes) - 1))].name,
                namespace=draw(st.sampled_from(["default", "default", "other"])),
                terminating=draw(st.integers(0, 5)) == 0,
            )
        )
    # Half the pods rely on default constraints, which need a Service selecting app=a.
    use_defaults = draw(st.booleans())
    constraints = [] if use_defaults else draw(st.lists(constraint_strategy(), min_size=1, max_size=3))
    labels = draw(POD_LABELS)
    if use_defaults and draw(st.integers(0, 3)) > 0:
        labels["app"] = "a"
    incoming = pod(
        "incoming",
        labels,
        constraints=constraints,
        node_selector={"foo": ""} if draw(st.booleans()) else None,
        tolerations=[{"key": "t", "operator": "Exists"}] if draw(st.booleans()) else None,
    )
    system = draw(st.booleans())
    args = SYSTEM_ARGS if system else list_args(spread(1, "rack", "DoNotSchedule"), spread(2, ZONE, "ScheduleAnyway"))
    cluster = FakeCluster(services=[service({"app": "a"})]) if draw(st.integers(0, 3)) > 0 else None
    candidates = draw(st.permutations(range(len(nodes))))
    candidates = candidates[: draw(st.integers(0, len(nodes)))]
    return {
        "nodes": nodes,
        "existing": existing,
        "incoming": incoming,
        "args": args,
        "cluster": cluster,
        "candidates": candidates,
        "added": (draw(POD_LABELS), draw(st.integers(0, len(nodes) - 1))),
        "removed": draw(st.integers(0, max(0, len(existing) - 1))),
    }


def _table(domains: Domains) -> dict[str, int]:
    """A domain table as upstream's value -> count map."""
    slots = {**domains.values, **domains.extra}
    return {value: int(domains.counts[slot]) for value, slot in slots.items() if domains.present[slot]}


def _reference_pre_filter(constraints: tuple[Constraint, ...], incoming: Pod, snap: Snapshot) -> list[dict[str, int]]:
    """`calPreFilterState`'s per-value counts, node by node as upstream loops."""
    require = required_node_affinity(incoming)
    out: list[dict[str, int]] = [{} for _ in constraints]
    for info in snap.node_infos:
        node = info.node
        if not node_has_all_keys(node.labels, constraints):
            continue
        for i, c in enumerate(constraints):
            if match_node_inclusion_policies(c, incoming, node, require):
                value = node.labels[c.topology_key]
                out[i][value] = out[i].get(value, 0) + count_pods_match(info.pods, c.selector, incoming.namespace)
    return out


def _reference_pre_score(
    constraints: tuple[Constraint, ...], incoming: Pod, snap: Snapshot, filtered: list[NodeInfo], require_all: bool
) -> tuple[set[str], list[dict[str, int] | None], list[float]]:
    """`initPreScoreState` + `PreScore`: ignored nodes, per-value counts (None for hostname), weights."""
    ignored: set[str] = set()
    counts: list[dict[str, int] | None] = [None if c.topology_key == HOSTNAME else {} for c in constraints]
    for info in filtered:
        labels = info.node.labels
        if require_all and not node_has_all_keys(labels, constraints):
            ignored.add(info.node.name)
            continue
        for table, c in zip(counts, constraints, strict=True):
            if table is not None:
                table.setdefault(labels.get(c.topology_key, ""), 0)
    weights = [topology_normalizing_weight(len(filtered) - len(ignored) if table is None else len(table)) for table in counts]
    require = required_node_affinity(incoming)
    for info in snap.node_infos:
        node = info.node
        if require_all and not node_has_all_keys(node.labels, constraints):
            continue
        for table, c in zip(counts, constraints, strict=True):
            if table is None or not match_node_inclusion_policies(c, incoming, node, require):
                continue
            value = node.labels.get(c.topology_key, "")
            if value in table:
                table[value] += count_pods_match(info.pods, c.selector, incoming.namespace)
    return ignored, counts, weights


def _check_filter(pl: Any, snap: Any, incoming: Pod, state: CycleState) -> None:
    positions = np.asarray(snap.order[::-1], dtype=np.int64)
    batch = pl.filter_batch(state, incoming, snap, positions)
    for i, pos in enumerate(positions):
        status = pl.filter(state, incoming, snap.node_infos[pos])
        assert int(batch.codes[i]) == int(status.code)
        if not status.success:
            assert batch.reasons(i) == status.reasons


@settings(max_examples=examples(250), deadline=None)
@given(scenario())
def test_batch_matches_per_node(case: dict[str, Any]) -> None:
    pl, snap = setup(case["nodes"], case["existing"], args=case["args"], cluster=case["cluster"])
    incoming: Pod = case["incoming"]

    state = CycleState()
    _, status = pl.pre_filter(state, incoming, snap.node_infos)
    if status.success:
        pre: PreFilterState = state.read("PreFilterPodTopologySpread")
        want = _reference_pre_filter(pre.constraints, incoming, snap)
        assert [_table(d) for d in pre.domains] == want
        assert pre.min_match == [min(t.values()) if t else MAX_INT32 for t in want]
        _check_filter(pl, snap, incoming, state)
        # Preemption's dry run: remove one pod, add another, on a copy of the state.
        twin = state.clone()
        if case["existing"]:
            victim = case["existing"][case["removed"]]
            host = snap.get(victim.node_name)
            assert host is not None
            assert pl.remove_pod(twin, incoming, PodInfo.of(victim), host).success
        labels, where = case["added"]
        extra = pod("added", labels)
        assert pl.add_pod(twin, incoming, PodInfo.of(extra), snap.node_infos[where]).success
        _check_filter(pl, snap, incoming, twin)

    infos = [snap.node_infos[i] for i in case["candidates"]]
    state = CycleState()
    if not pl.pre_score(state, incoming, infos).success:
        return
    scored: PreScoreState = state.read("PreScorePodTopologySpread")
    require_all = bool(incoming.spread_constraints) or not pl.system_defaulted
    ignored, counts, weights = _reference_pre_score(scored.constraints, incoming, snap, infos, require_all)
    assert scored.ignored == ignored
    assert [None if d is None else _table(d) for d in scored.domains] == counts
    assert scored.weights == weights
    per_node = []
    for info in infos:
        value, status = pl.score(state, incoming, info)
        assert status.success
        per_node.append(value)
    positions = np.asarray([info.position for info in infos], dtype=np.int64)
    batch = pl.score_batch(state, incoming, snap, positions)
    assert batch.dtype == np.int64
    assert batch.tolist() == per_node
    one = np.asarray(per_node, dtype=np.int64)
    assert pl.normalize_score(state, incoming, one).success
    assert pl.normalize_score(state, incoming, batch).success
    assert one.tolist() == batch.tolist()
    assert all(0 <= s <= 100 for s in batch.tolist())
