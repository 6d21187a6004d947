"""Celery tasks that reach the engine. They only translate: the work is in `ops` on the engine thread."""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

from celery import shared_task

from schedconsole.engine import bridge
from schedconsole.engine.host import EngineTimeout, EngineUnavailable, get_host
from schedconsole.engine.leader import NOT_LEADER
from schedconsole.engine.operations import from_wire
from schedconsole.engine.store import NotStored
from schedconsole.engine.worker import role


class Refusal(TypedDict):
    """Why the engine did not answer: the HTTP status to reply with, the message, the field at fault."""

    status: int
    message: str
    field: NotRequired[str]


class ControlAnswer(TypedDict, total=False):
    """The control task's answer: `ok` (the operation's result, JSON) or `error`."""

    ok: Any
    error: Refusal


@shared_task(name="schedconsole.engine.control")
def control(op: str, fields: dict[str, Any] | None = None, timeout: float | None = None) -> ControlAnswer:
    """Run one operation (its name and fields, as `operations.to_wire` writes them) on this
    process's engine; errors come back as data. An engine worker that does not lead answers 503
    (Koordinator's wording for a non-leader)."""
    engine_role = role()
    if engine_role is not None and not engine_role.leading:
        return ControlAnswer(error=Refusal(status=503, message=NOT_LEADER))
    try:
        return ControlAnswer(ok=get_host().call(from_wire(op, fields), timeout))
    except Exception as exc:
        return ControlAnswer(error=refusal(exc))


def refusal(exc: Exception) -> Refusal:
    """An engine refusal as data: the HTTP status, the message, and the field when there is one;
    anything else is raised again."""
    if isinstance(exc, bridge.BadInput):
        return Refusal(status=400, field=exc.field, message=exc.message)
    if isinstance(exc, bridge.NotFound):
        return Refusal(status=404, message=str(exc.args[0]) if exc.args else "not found")
    if isinstance(exc, EngineUnavailable):
        return Refusal(status=503, message=str(exc))
    if isinstance(exc, EngineTimeout):
        return Refusal(status=504, message=str(exc))
    if isinstance(exc, NotStored):
        return Refusal(status=500, message=str(exc))
    raise exc


@shared_task(name="schedconsole.history.prune")
def prune_history() -> int:
    """Delete attempts past the retention window; returns how many."""
    from schedconsole.history.services import prune

    return prune()
