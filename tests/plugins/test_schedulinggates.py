"""SchedulingGates: PreEnqueue holds gated pods."""

from __future__ import annotations

import pytest

from scheduler.framework.types import ActionType, ClusterEvent, Code
from scheduler.plugins import schedulinggates
from scheduler.plugins.schedulinggates import SchedulingGates
from tests.support.builders import make_pod, make_snapshot
from tests.support.fakes import FakeHandle

# kubernetes/kubernetes pkg/scheduler/framework/plugins/schedulinggates/scheduling_gates_test.go
CASES = [
    ("pod does not carry scheduling gates", [], None),
    ("pod carries scheduling gates", ["foo", "bar"], "waiting for scheduling gates: [foo bar]"),
    ("one gate", ["example.com/wait"], "waiting for scheduling gates: [example.com/wait]"),
]


@pytest.mark.parametrize(("gates", "want"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_pre_enqueue(gates: list[str], want: str | None) -> None:
    plugin = schedulinggates.new(None, FakeHandle(make_snapshot([])))
    status = plugin.pre_enqueue(make_pod("p", spec={"schedulingGates": [{"name": g} for g in gates]}))
    if want is None:
        assert status.code == Code.SUCCESS
    else:
        assert (status.code, status.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (want,))


def test_events_to_register() -> None:
    assert SchedulingGates().events_to_register() == [ClusterEvent("Pod", ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)]
    assert SchedulingGates.name == "SchedulingGates"
