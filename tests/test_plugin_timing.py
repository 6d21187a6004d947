"""Per-plugin timing: only sampled attempts are timed, and then every plugin that ran is."""

from __future__ import annotations

import pytest

from tests.preemption.helpers import Env, mk_node, mk_pod


def _run(every: int, pods: int = 4) -> list:
    env = Env([mk_node("node1", "4", "4000"), mk_node("node2", "4", "4000")], default_profile=True)
    env.sched.plugin_timing_every = every
    for i in range(pods):
        env.add(mk_pod(f"p{i}", req=("100m", "100")))
    env.sched.run()
    return env.sched.records


@pytest.mark.parametrize(("every", "timed"), [(0, 0), (1, 4), (2, 2), (10, 0)], ids=["off", "all", "half", "none-yet"])
def test_every_nth_attempt_is_timed(every: int, timed: int) -> None:
    records = _run(every)
    assert len(records) == 4
    assert sum(1 for r in records if r.plugin_timings is not None) == timed


def test_a_timed_attempt_holds_each_plugin_per_extension_point() -> None:
    record = _run(1, pods=1)[0]
    timings = record.plugin_timings
    assert record.outcome == "Scheduled" and timings is not None
    assert {"Filter", "Score"} <= set(timings["NodeResourcesFit"])
    assert "PreFilter" in timings["NodeResourcesFit"] and "Score" in timings["NodeResourcesBalancedAllocation"]
    assert "Filter" in timings["TaintToleration"] and "Score" in timings["TaintToleration"]
    assert all(seconds >= 0 for points in timings.values() for seconds in points.values())
    # Per-plugin times are parts of their extension point's time.
    assert sum(p.get("Filter", 0.0) for p in timings.values()) <= record.timings["Filter"]
