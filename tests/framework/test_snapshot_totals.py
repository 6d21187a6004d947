"""Totals the snapshot keeps across rows equal a recount under random churn: the lowest pod priority
per node (DefaultPreemption skips nodes without a possible victim), pods grouped by affinity terms
(InterPodAffinity), the terminating pod count (selector counters leave those pods out), and the
names and NodeInfos as object arrays."""

from __future__ import annotations

import dataclasses
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.framework.snapshot import NO_POD_PRIORITY, Snapshot, affinity_key
from tests.framework.test_selector_counters import NODE_NAMES, OPS
from tests.support.builders import make_node, make_pod
from tests.support.examples import examples

PRIORITIES = st.lists(st.one_of(st.none(), st.integers(-5, 5)), min_size=12, max_size=12)


def recount(snap: Snapshot) -> list[int]:
    """The lowest priority on each node, walking its pods."""
    return [min((p.pod.effective_priority for p in info.pods), default=NO_POD_PRIORITY) for info in snap.node_infos]


@settings(max_examples=examples(150), deadline=None)
@given(priorities=PRIORITIES, ops=st.lists(OPS, min_size=5, max_size=60))
def test_lowest_priority_matches_recount(priorities: list[int | None], ops: list[tuple[Any, ...]]) -> None:
    pods = [make_pod(f"p{i}", priority=prio) for i, prio in enumerate(priorities)]
    snap = Snapshot()
    for name in NODE_NAMES[:3]:
        snap.add_node(make_node(name))
    grown = 0
    for op in ops:
        kind = op[0]
        if kind == "add_node":
            snap.add_node(make_node(op[1]))
        elif kind == "remove_node":
            snap.remove_node(op[1])
        elif kind == "add_pod":
            chosen = pods[op[1] % len(pods)]
            if snap.node_of_pod(chosen.uid) is None:
                snap.add_pod(chosen, op[2])
        elif kind == "remove_pod":
            snap.remove_pod(pods[op[1] % len(pods)])
        elif kind == "grow":
            for _ in range(30):
                snap.add_node(make_node(f"g{grown}"))
                grown += 1
        assert snap.lowest_priority.tolist() == recount(snap)
        # The object arrays of names and NodeInfos (cached per node generation) follow the lists.
        assert snap.name_array().tolist() == snap.names
        assert all(a is b for a, b in zip(snap.info_array().tolist(), snap.node_infos, strict=True))


AFFINITIES = (
    None,
    {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"a": "1"}}, "topologyKey": "zone"}
            ]
        }
    },
    {
        "podAntiAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 3,
                    "podAffinityTerm": {"labelSelector": {"matchLabels": {"a": "1"}}, "topologyKey": "kubernetes.io/hostname"},
                }
            ]
        }
    },
)


def regroup(snap: Snapshot) -> dict[object, list[int]]:
    """Pods with pod (anti-)affinity per node, grouped by their terms, walking every pod."""
    out: dict[object, list[int]] = {}
    for pos, info in enumerate(snap.node_infos):
        for pod_info in info.pods:
            if pod_info.has_affinity:
                out.setdefault(affinity_key(pod_info), [0] * snap.num_nodes)[pos] += 1
    return out


@settings(max_examples=examples(150), deadline=None)
@given(
    kinds=st.lists(st.integers(0, len(AFFINITIES) - 1), min_size=12, max_size=12),
    terminating=st.lists(st.booleans(), min_size=12, max_size=12),
    ops=st.lists(OPS, min_size=5, max_size=60),
)
def test_affinity_groups_and_terminating_count_match_recount(
    kinds: list[int], terminating: list[bool], ops: list[tuple[Any, ...]]
) -> None:
    pods = []
    for i, (kind, gone) in enumerate(zip(kinds, terminating, strict=True)):
        made = make_pod(f"p{i}", spec={"affinity": AFFINITIES[kind]} if AFFINITIES[kind] else None)
        if gone:
            made = made.with_changes(meta=dataclasses.replace(made.meta, deletion_timestamp=1.0))
        pods.append(made)
    snap = Snapshot()
    for name in NODE_NAMES[:3]:
        snap.add_node(make_node(name))
    for op in ops:
        if op[0] == "add_node":
            snap.add_node(make_node(op[1]))
        elif op[0] == "remove_node":
            snap.remove_node(op[1])
        elif op[0] == "add_pod":
            chosen = pods[op[1] % len(pods)]
            if snap.node_of_pod(chosen.uid) is None:
                snap.add_pod(chosen, op[2])
        elif op[0] == "remove_pod":
            snap.remove_pod(pods[op[1] % len(pods)])
        groups = {affinity_key(info): arr.tolist() for info, arr in snap.affinity_groups()}
        assert groups == regroup(snap)
        assert snap.terminating_pods == sum(
            1 for info in snap.node_infos for p in info.pods if p.pod.meta.deletion_timestamp is not None
        )
