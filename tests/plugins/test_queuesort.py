"""PrioritySort: higher priority first, then earlier queue timestamp."""

from __future__ import annotations

import pytest

from scheduler.framework.types import QueuedPodInfo
from scheduler.plugins import queuesort
from tests.support.builders import make_pod, make_snapshot
from tests.support.fakes import FakeHandle

LOW, HIGH = 1, 2

# kubernetes/kubernetes pkg/scheduler/framework/plugins/queuesort/priority_sort_test.go
CASES: list[tuple[str, int | None, float, int | None, float, bool]] = [
    ("p1.priority less than p2.priority", LOW, 1.0, HIGH, 1.0, False),
    ("p1.priority greater than p2.priority", HIGH, 1.0, LOW, 1.0, True),
    ("equal priority, p1 added to queue earlier", HIGH, 1.0, HIGH, 2.0, True),
    ("equal priority, p2 added to queue earlier", HIGH, 2.0, HIGH, 1.0, False),
    # Not in the upstream table: an unset priority counts as 0; equal timestamps are not less.
    ("unset priority is zero", None, 1.0, -1, 1.0, True),
    ("identical keys are not less", LOW, 1.0, LOW, 1.0, False),
]


@pytest.mark.parametrize(("p1", "t1", "p2", "t2", "want"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_less(p1: int | None, t1: float, p2: int | None, t2: float, want: bool) -> None:
    plugin = queuesort.new(None, FakeHandle(make_snapshot([])))
    a = QueuedPodInfo(make_pod("a", priority=p1), timestamp=t1)
    b = QueuedPodInfo(make_pod("b", priority=p2), timestamp=t2)
    assert plugin.less(a, b) is want
    assert plugin.name == "PrioritySort"
