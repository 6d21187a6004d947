"""Celery tasks that reach the engine. They only translate: the work is in `ops` on the engine thread."""

from __future__ import annotations

from typing import Any

from celery import shared_task

from schedconsole.engine import bridge
from schedconsole.engine.host import EngineTimeout, EngineUnavailable, get_host


@shared_task(name="schedconsole.engine.control")
def control(op: str, payload: dict[str, Any] | None = None, timeout: float | None = None) -> dict[str, Any]:
    """Run one control operation on this process's engine; errors come back as data."""
    try:
        return {"ok": get_host().call(op, payload, timeout)}
    except bridge.BadInput as exc:
        return {"error": {"status": 400, "field": exc.field, "message": exc.message}}
    except bridge.NotFound as exc:
        return {"error": {"status": 404, "message": str(exc.args[0]) if exc.args else "not found"}}
    except EngineUnavailable as exc:
        return {"error": {"status": 503, "message": str(exc)}}
    except EngineTimeout as exc:
        return {"error": {"status": 504, "message": str(exc)}}


@shared_task(name="schedconsole.history.prune")
def prune_history() -> int:
    """Delete attempts past the retention window; returns how many."""
    from schedconsole.history.services import prune

    return prune()
