"""Work the engine's own threads hand to the engine loop (`EngineHost.post`, e.g. a live sync's
changes) that raises is logged and counted, listed on the Cluster page's errors, and the loop
goes on serving and scheduling."""

from __future__ import annotations

import threading

from schedconsole.engine import operations as ops


def test_posted_work_that_raises_does_not_end_the_loop(engine) -> None:
    ran = threading.Event()
    engine.post(lambda: 1 / 0)
    engine.post(ran.set)
    assert ran.wait(10)
    assert engine.running and engine.error is None
    status = engine.call(ops.GetClusterStatus())
    errors = {e["source"]: e for e in status.get("errors") or []}
    assert errors["posted work"]["count"] == 1
    assert errors["posted work"]["last"] == "ZeroDivisionError: division by zero"
