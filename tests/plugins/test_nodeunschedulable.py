"""NodeUnschedulable: cordoned nodes, the unschedulable toleration, batch agreement."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.framework.types import ActionType, ClusterEvent, Code, CycleState
from scheduler.plugins import nodeunschedulable
from scheduler.plugins.nodeunschedulable import REASON_UNSCHEDULABLE, NodeUnschedulable
from tests.support.batch import assert_batch_filter_agrees
from tests.support.builders import make_node, make_pod, make_snapshot
from tests.support.examples import examples
from tests.support.fakes import FakeHandle

UNSCHEDULABLE_KEY = "node.kubernetes.io/unschedulable"

# kubernetes/kubernetes pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable_test.go
CASES: list[tuple[str, list[dict[str, Any]], bool, bool]] = [
    ("unschedulable node rejects a pod without tolerations", [], True, False),
    ("normal node admits the pod", [], False, True),
    ("unschedulable node admits a pod tolerating the taint", [{"key": UNSCHEDULABLE_KEY, "effect": "NoSchedule"}], True, True),
    # Not in the upstream table: other ways a toleration does or does not match the taint.
    ("Exists on the key tolerates", [{"key": UNSCHEDULABLE_KEY, "operator": "Exists"}], True, True),
    ("wildcard toleration tolerates", [{"operator": "Exists"}], True, True),
    ("wrong effect does not tolerate", [{"key": UNSCHEDULABLE_KEY, "operator": "Exists", "effect": "NoExecute"}], True, False),
    ("a value does not tolerate the value-less taint", [{"key": UNSCHEDULABLE_KEY, "value": "true"}], True, False),
]


@pytest.mark.parametrize(("tolerations", "cordoned", "fits"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_filter(tolerations: list[dict[str, Any]], cordoned: bool, fits: bool) -> None:
    snap = make_snapshot([make_node("n", unschedulable=cordoned)])
    plugin = nodeunschedulable.new(None, FakeHandle(snap))
    pod = make_pod("p", spec={"tolerations": tolerations})
    status = plugin.filter(CycleState(), pod, snap.node_infos[0])
    if fits:
        assert status.code == Code.SUCCESS
    else:
        assert (status.code, status.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (REASON_UNSCHEDULABLE,))
    assert_batch_filter_agrees(plugin, CycleState(), pod, snap, np.zeros(1, dtype=np.int64))


def test_events_to_register() -> None:
    assert NodeUnschedulable().events_to_register() == [
        ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
        ClusterEvent("Pod", ActionType.UPDATE_POD_TOLERATION),
    ]
    assert NodeUnschedulable.name == "NodeUnschedulable"


@settings(max_examples=examples(100), deadline=None)
@given(
    cordoned=st.lists(st.booleans(), min_size=1, max_size=10),
    tolerates=st.booleans(),
    data=st.data(),
)
def test_batch_agrees_with_per_node(cordoned: list[bool], tolerates: bool, data: st.DataObject) -> None:
    snap = make_snapshot([make_node(f"n{i}", unschedulable=c) for i, c in enumerate(cordoned)])
    plugin = nodeunschedulable.new(None, FakeHandle(snap))
    tolerations = [{"key": UNSCHEDULABLE_KEY, "operator": "Exists"}] if tolerates else []
    pod = make_pod("p", spec={"tolerations": tolerations})
    order = data.draw(st.permutations(range(len(cordoned))))
    positions = np.asarray(order[: data.draw(st.integers(0, len(order)))], dtype=np.int64)
    assert_batch_filter_agrees(plugin, CycleState(), pod, snap, positions)
