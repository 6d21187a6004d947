"""Snapshot selector counters stay equal to a recount from scratch under random churn.

The recount uses PodTopologySpread's `count_pods_match` (namespace, terminating pods, selector),
the semantics the counters must keep.
"""

from __future__ import annotations

import dataclasses
from typing import Any
from unittest import mock

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.api.objects import Pod
from scheduler.api.selectors import LabelSelector, parse_label_selector
from scheduler.framework import snapshot as snapshot_module
from scheduler.framework.snapshot import Snapshot
from scheduler.plugins.podtopologyspread.common import count_pods_match
from tests.support.builders import make_node, make_pod
from tests.support.examples import examples

NAMESPACES = ("default", "other")
SELECTORS: tuple[LabelSelector, ...] = tuple(
    parse_label_selector(raw, "selector")
    for raw in (
        {},
        {"matchExpressions": [{"key": "foo", "operator": "Exists"}]},
        {"matchLabels": {"app": "a"}},
        {"matchExpressions": [{"key": "bar", "operator": "DoesNotExist"}]},
        {"matchExpressions": [{"key": "app", "operator": "In", "values": ["a", "b"]}]},
    )
)
NODE_NAMES = tuple(f"n{i}" for i in range(4))
LABELS = st.fixed_dictionaries({}, optional={"foo": st.just(""), "bar": st.just("x"), "app": st.sampled_from(["a", "b"])})


@st.composite
def pods_strategy(draw: st.DrawFn) -> list[Pod]:
    out = []
    for i in range(draw(st.integers(1, 12))):
        made = make_pod(f"p{i}", namespace=draw(st.sampled_from(NAMESPACES)), labels=draw(LABELS))
        if draw(st.integers(0, 4)) == 0:
            made = made.with_changes(meta=dataclasses.replace(made.meta, deletion_timestamp=1.0))
        out.append(made)
    return out


ADD_POD = st.tuples(st.just("add_pod"), st.integers(0, 11), st.sampled_from(NODE_NAMES))
REMOVE_POD = st.tuples(st.just("remove_pod"), st.integers(0, 11))
OPS = st.one_of(
    st.tuples(st.just("add_node"), st.sampled_from(NODE_NAMES), st.sampled_from(["z1", "z2"])),
    st.tuples(st.just("remove_node"), st.sampled_from(NODE_NAMES)),
    ADD_POD,
    ADD_POD,
    REMOVE_POD,
    REMOVE_POD,
    st.tuples(st.just("count"), st.sampled_from(NAMESPACES), st.integers(0, len(SELECTORS) - 1)),
    st.tuples(st.just("grow")),
)


def recount(snap: Snapshot, namespace: str, selector: LabelSelector) -> list[int]:
    """Matching pods per node, walking every pod."""
    return [count_pods_match(info.pods, selector, namespace) for info in snap.node_infos]


def check_live(snap: Snapshot) -> None:
    """Every live counter (read without touching the LRU order) equals a recount."""
    for namespace, by_selector in snap._counters.items():
        for selector, arr in by_selector.items():
            assert arr[: snap.num_nodes].tolist() == recount(snap, namespace, selector), (namespace, selector)


@settings(max_examples=examples(150), deadline=None)
@given(pods=pods_strategy(), ops=st.lists(OPS, min_size=5, max_size=60), bound=st.sampled_from([2, 64]), warm=st.booleans())
def test_selector_counters_match_recount(pods: list[Pod], ops: list[tuple[Any, ...]], bound: int, warm: bool) -> None:
    snap = Snapshot()
    for name in NODE_NAMES[:3]:
        snap.add_node(make_node(name))
    grown = 0
    with mock.patch.object(snapshot_module, "MAX_SELECTOR_COUNTERS", bound):
        if warm:
            # Counters live from the start, so every later add/remove must keep them right.
            for namespace in NAMESPACES:
                for selector in SELECTORS:
                    snap.selector_counts(namespace, selector)
        for op in ops:
            kind = op[0]
            if kind == "add_node":
                snap.add_node(make_node(op[1], labels={"topology.kubernetes.io/zone": op[2]}))
            elif kind == "remove_node":
                snap.remove_node(op[1])
            elif kind == "add_pod":
                chosen = pods[op[1] % len(pods)]
                if snap.node_of_pod(chosen.uid) is None:
                    snap.add_pod(chosen, op[2])
            elif kind == "remove_pod":
                snap.remove_pod(pods[op[1] % len(pods)])
            elif kind == "count":
                namespace, selector = op[1], SELECTORS[op[2]]
                counts = snap.selector_counts(namespace, selector)
                assert counts.dtype == np.int64
                assert counts.tolist() == recount(snap, namespace, selector)
            else:
                # Enough nodes to push the rows past the arrays' initial capacity.
                for _ in range(30):
                    snap.add_node(make_node(f"g{grown}"))
                    grown += 1
            assert sum(len(by) for by in snap._counters.values()) <= bound
            check_live(snap)
        for namespace in NAMESPACES:
            for selector in SELECTORS:
                assert snap.selector_counts(namespace, selector).tolist() == recount(snap, namespace, selector)
        check_live(snap)
