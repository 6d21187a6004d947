"""Waiting for a task gives up soon after the worker running it, or every worker of its queue, goes quiet."""

from __future__ import annotations

from typing import Any

import pytest
from celery.exceptions import TimeoutError as CeleryTimeout

from schedconsole.cluster import imports


class _Result:
    """A task result that never arrives."""

    def __init__(self, state: str, info: Any = None) -> None:
        self.state, self.info = state, info

    def get(self, timeout: float) -> Any:
        raise CeleryTimeout()


@pytest.mark.parametrize(
    ("result", "asked", "text"),
    [
        (_Result("STARTED", {"hostname": "tasks@host", "pid": 7}), "tasks@host", "the task worker tasks@host running it has not"),
        (_Result("PENDING"), None, "no task worker of the queue 'celery' has"),
    ],
    ids=["its-worker-died", "no-worker-at-all"],
)
def test_a_silent_worker_ends_the_wait(monkeypatch, result, asked, text) -> None:
    seen: list[str | None] = []
    monkeypatch.setattr(imports, "LOST_WORKER_SECONDS", 0.0)
    monkeypatch.setattr(imports, "_answering", lambda app, worker, queue: seen.append(worker) or False)
    with pytest.raises(imports.WorkerLost, match=text):
        imports.await_task(result, 60)
    assert seen[0] == asked


def test_an_answering_worker_is_waited_for_until_the_deadline(monkeypatch) -> None:
    checks: list[str | None] = []
    monkeypatch.setattr(imports, "LOST_WORKER_SECONDS", 0.0)
    monkeypatch.setattr(imports, "_answering", lambda app, worker, queue: checks.append(worker) or True)
    with pytest.raises(CeleryTimeout):
        imports.await_task(_Result("STARTED", {"hostname": "tasks@host"}), 0.05)
    assert checks and set(checks) == {"tasks@host"}  # asked, answered, waited on
