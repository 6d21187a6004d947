"""Celery tasks that reach the engine. They only translate: the work is in `ops` on the engine thread."""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any

from celery import shared_task

from schedconsole.engine import bridge
from schedconsole.engine.host import EngineTimeout, EngineUnavailable, get_host


@shared_task(name="schedconsole.engine.control")
def control(op: str, payload: dict[str, Any] | None = None, timeout: float | None = None) -> dict[str, Any]:
    """Run one control operation on this process's engine; errors come back as data. An engine
    worker that does not lead answers 503 (Koordinator's wording for a non-leader)."""
    from schedconsole.engine.leader import NOT_LEADER
    from schedconsole.engine.worker import role

    engine_role = role()
    if engine_role is not None and not engine_role.leading:
        return {"error": {"status": 503, "message": NOT_LEADER}}
    try:
        return {"ok": get_host().call(op, payload, timeout)}
    except Exception as exc:
        return answer(exc)


def submit(op: str, payload: dict[str, Any] | None = None) -> Future[Any]:
    """Hand a control operation to this process's engine without waiting (async callers)."""
    return get_host().submit(op, payload)


def answer(exc: Exception) -> dict[str, Any]:
    """An engine refusal as data: the HTTP status, the message, and the field when there is one."""
    if isinstance(exc, bridge.BadInput):
        return {"error": {"status": 400, "field": exc.field, "message": exc.message}}
    if isinstance(exc, bridge.NotFound):
        return {"error": {"status": 404, "message": str(exc.args[0]) if exc.args else "not found"}}
    if isinstance(exc, EngineUnavailable):
        return {"error": {"status": 503, "message": str(exc)}}
    if isinstance(exc, EngineTimeout):
        return {"error": {"status": 504, "message": str(exc)}}
    raise exc


@shared_task(name="schedconsole.history.prune")
def prune_history() -> int:
    """Delete attempts past the retention window; returns how many."""
    from schedconsole.history.services import prune

    return prune()
