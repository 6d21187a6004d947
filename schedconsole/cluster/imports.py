"""Importing a kubectl file: parse, default, and create every object through the engine, or none.

Embedded, the web process does it; in production the `schedconsole.cluster.import` task does it
on a task worker, so parsing a large file never holds up the web process.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from schedconsole.engine import operations as ops
from schedconsole.engine.bridge import BadInput, parse_documents, with_defaults
from schedconsole.engine.client import EngineCallError, call

LOST_WORKER_SECONDS = 4.0
"""How long a task's worker may stay silent before the caller stops waiting for it."""
Progress = Callable[..., None]
"""`progress(phase, done, total, force=False)`: where a background import is (see `jobs.Progress`)."""


def import_text(text: str, source: str, progress: Progress | None = None) -> dict[str, Any]:
    """`{"ok": result}` or `{"error": {"status", "message", "field"?}}`: the engine creates all or nothing.
    With `progress`, it is told the documents parsed, then prepared, of the total, then applied."""
    report: Progress = progress or (lambda *args, **kwargs: None)
    # A first guess at the total while parsing: one document per `---` line (corrected once read).
    guess = max(1, text.count("\n---") + (0 if text.lstrip().startswith("---") else 1))
    try:
        documents = parse_documents(text, source, (lambda n: report("parsing", n, max(n, guess))) if progress else None)
    except BadInput as exc:
        return {"error": {"status": 400, "field": "file", "message": exc.message}}
    if not documents:
        return {"error": {"status": 400, "field": "file", "message": f"{source}: no objects passed to import"}}
    total = len(documents)
    report("parsing", total, total, force=True)
    prepared = []
    for i, d in enumerate(documents, start=1):
        prepared.append(with_defaults(d, d.get("kind", "")) if isinstance(d, dict) else d)
        report("preparing", i, total)
    report("checking and applying (all or none)", 0, total, force=True)
    try:
        answer = call(ops.Create(documents=prepared, source=source), timeout=_apply_timeout(total))
    except EngineCallError as exc:
        return {"error": {"status": exc.status, "field": exc.field or "file", "message": exc.message}}
    if not answer["created"]:
        # Only kinds the engine does not read: say which, rather than 201 for nothing stored.
        skipped = "; ".join(answer["warnings"]) or "nothing to create"
        return {
            "error": {"status": 400, "field": "file", "message": f"{source}: no object of a kind the scheduler reads ({skipped})"}
        }
    report("applied", total, total, force=True)
    return {"ok": answer}


def _apply_timeout(documents: int) -> float | None:
    """Large files get longer than a control call's usual wait (about 10000 objects a second)."""
    from django.conf import settings

    return max(float(settings.CONTROL_TIMEOUT_SECONDS), documents / 10000 * 4) if documents > 10000 else None


class WorkerLost(RuntimeError):
    """The worker running a task (or, before one takes it, every worker of its queue) stopped answering."""


def await_task(result: Any, wait: float, queue: str = "celery") -> Any:
    """`result.get(timeout=wait)`, but given up within about LOST_WORKER_SECONDS once the worker
    running the task stops answering pings, or, while no worker has taken it, once no worker
    consumes its queue: a client whose task worker died waited out the whole `wait` (120 s)."""
    from celery.exceptions import TimeoutError as CeleryTimeout

    from schedconsole.celery import app

    deadline = time.monotonic() + wait
    silent_since: float | None = None
    while True:
        try:
            return result.get(timeout=min(1.0, max(0.01, deadline - time.monotonic())))
        except CeleryTimeout:
            if time.monotonic() >= deadline:
                raise
        try:
            info = result.info if result.state == "STARTED" else None
            worker = info.get("hostname") if isinstance(info, dict) else None
            answering = _answering(app, worker, queue)
        except Exception:  # the broker itself is in trouble: the wait's own errors say so, not this check
            answering = True
        if answering:
            silent_since = None
            continue
        now = time.monotonic()
        silent_since = silent_since or now
        if now - silent_since >= LOST_WORKER_SECONDS:
            who = f"the task worker {worker} running it has not" if worker else f"no task worker of the queue {queue!r} has"
            raise WorkerLost(f"{who} answered for {LOST_WORKER_SECONDS:.0f}s (all of it or nothing was applied)")


def _answering(app: Any, worker: str | None, queue: str) -> bool:
    # A connection of its own each time: a pooled one may be stale after a Redis restart.
    with app.connection_for_write() as connection:
        if worker:
            return bool(app.control.ping(destination=[worker], timeout=1, connection=connection))
        queues = app.control.inspect(timeout=1, connection=connection).active_queues() or {}
    return any(q.get("name") == queue for found in queues.values() for q in found)


def run_import(text: str, source: str) -> dict[str, Any]:
    """Import here (embedded) or on a task worker (production), waiting for the answer."""
    from django.conf import settings

    if settings.EMBEDDED:
        return import_text(text, source)
    from celery.exceptions import TaskRevokedError
    from celery.exceptions import TimeoutError as CeleryTimeout
    from kombu.exceptions import OperationalError as BrokerError
    from redis.exceptions import RedisError

    from schedconsole.cluster.tasks import import_file

    wait = settings.IMPORT_TIMEOUT_SECONDS
    result = None
    try:
        # `expires`: a task no worker took in time is dropped, never applied behind the caller's back.
        result = import_file.apply_async(args=(text, source), expires=wait)
        answer: dict[str, Any] = await_task(result, wait)
        return answer
    except WorkerLost as exc:
        return {"error": {"status": 504, "message": f"the import of {source} was not answered: {exc}"}}
    except (CeleryTimeout, TaskRevokedError):
        return {
            "error": {
                "status": 504,
                "message": f"the import of {source} was not answered within {wait}s (is a task worker running?)",
            }
        }
    except (OSError, BrokerError, RedisError) as exc:
        return {"error": {"status": 503, "message": f"the task worker cannot be reached: {exc}"}}
    except Exception as exc:  # the task itself failed: report it, nothing was half-applied
        return {
            "error": {"status": 502, "message": f"the import of {source} failed on the task worker: {type(exc).__name__}: {exc}"}
        }
    finally:
        if result is not None:
            try:
                result.forget()
            except Exception:
                pass
