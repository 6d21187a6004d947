"""NodeName: spec.nodeName restricts the pod to one node; batch agreement."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.framework.types import ActionType, ClusterEvent, Code, CycleState
from scheduler.plugins import nodename
from scheduler.plugins.nodename import REASON, NodeName
from tests.support.batch import assert_batch_filter_agrees
from tests.support.builders import make_node, make_pod, make_snapshot
from tests.support.examples import examples
from tests.support.fakes import FakeHandle

# kubernetes/kubernetes pkg/scheduler/framework/plugins/nodename/node_name_test.go
CASES = [
    ("no host specified", "", "foo", True),
    ("host matches", "foo", "foo", True),
    ("host doesn't match", "bar", "foo", False),
]


@pytest.mark.parametrize(("wanted", "node", "fits"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_filter(wanted: str, node: str, fits: bool) -> None:
    snap = make_snapshot([make_node(node)])
    plugin = nodename.new(None, FakeHandle(snap))
    pod = make_pod("p", node_name=wanted)
    status = plugin.filter(CycleState(), pod, snap.node_infos[0])
    if fits:
        assert status.code == Code.SUCCESS
    else:
        assert (status.code, status.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (REASON,))
    assert_batch_filter_agrees(plugin, CycleState(), pod, snap, np.zeros(1, dtype=np.int64))


def test_has_no_pre_filter_and_registers_node_add() -> None:
    plugin = NodeName()
    assert not hasattr(plugin, "pre_filter")
    assert plugin.events_to_register() == [ClusterEvent("Node", ActionType.ADD)]


@settings(max_examples=examples(100), deadline=None)
@given(n=st.integers(1, 8), wanted=st.sampled_from(["", "n0", "n3", "ghost"]), data=st.data())
def test_batch_agrees_with_per_node(n: int, wanted: str, data: st.DataObject) -> None:
    snap = make_snapshot([make_node(f"n{i}") for i in range(n)])
    plugin = nodename.new(None, FakeHandle(snap))
    order = data.draw(st.permutations(range(n)))
    positions = np.asarray(order[: data.draw(st.integers(0, n))], dtype=np.int64)
    assert_batch_filter_agrees(plugin, CycleState(), make_pod("p", node_name=wanted), snap, positions)
