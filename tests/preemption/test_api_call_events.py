"""`Scheduler.note_api_call`: each step of a preemption's API calls is told to listeners when it happens."""

from __future__ import annotations

from typing import Any

from scheduler.apicalls import ApiCallEvent
from scheduler.cluster.faults import FaultRule
from tests.preemption.helpers import Env, mk_node, mk_pod


def _env(faults: list[FaultRule] | None = None, async_preemption: bool = True) -> tuple[Env, list[ApiCallEvent]]:
    lows = [mk_pod(f"low{i}", node="node1", priority=0, req=("300m", "300"), start=i) for i in (1, 2)]
    env = Env([mk_node("node1", "1000m", "1000")], lows, async_preemption=async_preemption, faults=faults)
    seen: list[ApiCallEvent] = []
    env.sched.api_call_listeners.append(seen.append)
    env.add(mk_pod("preemptor", priority=1000, req=("900m", "100")))
    return env, seen


def _steps(seen: list[ApiCallEvent]) -> list[tuple[str, str, str]]:
    return [(e.call, e.target, e.phase) for e in seen]


def test_each_call_is_told_as_it_starts_and_ends() -> None:
    env, seen = _env()
    first = env.sched.schedule_one()
    assert first is not None and first.outcome == "Nominated"
    # The nomination is patched in the cycle; the victims' calls have not run yet (asynchronous).
    assert _steps(seen) == [
        ("nominatedNodeName patch", "default/preemptor", "started"),
        ("nominatedNodeName patch", "default/preemptor", "finished"),
    ]
    env.sched.run()
    assert _steps(seen)[2:] == [
        ("DisruptionTarget patch", "default/low1", "started"),
        ("DisruptionTarget patch", "default/low1", "finished"),
        ("delete", "default/low1", "started"),
        ("delete", "default/low1", "finished"),
        ("DisruptionTarget patch", "default/low2", "started"),
        ("DisruptionTarget patch", "default/low2", "finished"),
        ("delete", "default/low2", "started"),
        ("delete", "default/low2", "finished"),
        ("preemption", "default/preemptor", "finished"),
    ]
    assert {e.preemptor for e in seen} == {"default/preemptor"}


def test_a_failed_call_is_told_with_its_error_and_the_nomination_cleared() -> None:
    env, seen = _env([FaultRule(verb="delete", pod="low1", count=1, error="etcdserver: request timed out")])
    env.sched.schedule_one()
    env.sched._run_tasks()
    steps = _steps(seen)
    failed = next(e for e in seen if e.phase == "error" and e.call == "delete")
    assert failed.target == "default/low1" and "etcdserver: request timed out" in failed.error
    assert ("nominatedNodeName clear", "default/preemptor", "finished") in steps
    assert steps[-1] == ("preemption", "default/preemptor", "error")


def test_a_delayed_call_is_in_progress_meanwhile() -> None:
    env, seen = _env([FaultRule(verb="delete", pod="low1", delay=5.0)])
    env.sched.schedule_one()
    env.sched._run_tasks()
    started = [e for e in seen if e.call == "delete"]
    assert [(e.target, e.phase) for e in started] == [("default/low1", "started")]
    env.sched.run()
    done = next(e for e in seen if e.call == "delete" and e.phase == "finished")
    assert done.at - started[0].at == 5.0  # the injected latency, on the virtual clock


def test_no_listener_no_events(monkeypatch: Any) -> None:
    lows = [mk_pod("low1", node="node1", priority=0, req=("300m", "300"))]
    env = Env([mk_node("node1", "1000m", "1000")], lows)
    built: list[Any] = []
    monkeypatch.setattr("scheduler.apicalls.ApiCallEvent", lambda *a: built.append(a))
    env.add(mk_pod("preemptor", priority=1000, req=("900m", "100")))
    env.sched.run()
    assert built == []
