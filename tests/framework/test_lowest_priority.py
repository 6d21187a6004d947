"""The snapshot's lowest pod priority per node equals a recount under random churn (the array
DefaultPreemption reads to skip nodes that cannot hold a victim)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.framework.snapshot import NO_POD_PRIORITY, Snapshot
from tests.builders import make_node, make_pod
from tests.framework.test_selector_counters import NODE_NAMES, OPS

PRIORITIES = st.lists(st.one_of(st.none(), st.integers(-5, 5)), min_size=12, max_size=12)


def recount(snap: Snapshot) -> list[int]:
    """The lowest priority on each node, walking its pods."""
    return [min((p.pod.effective_priority for p in info.pods), default=NO_POD_PRIORITY) for info in snap.node_infos]


@settings(max_examples=150, deadline=None)
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
