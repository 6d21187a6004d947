"""Importing a kubectl file: parse, default, and create every object through the engine, or none.

Embedded, the web process does it; in production the `schedconsole.cluster.import` task does it
on a task worker, so parsing a large file never holds up the web process.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from schedconsole.engine.bridge import BadInput, parse_documents, with_defaults
from schedconsole.engine.client import EngineCallError, call

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
        answer = call("create", {"documents": prepared, "source": source}, timeout=_apply_timeout(total))
    except EngineCallError as exc:
        return {"error": {"status": exc.status, "field": exc.field or "file", "message": exc.message}}
    report("applied", total, total, force=True)
    return {"ok": answer}


def _apply_timeout(documents: int) -> float | None:
    """Large files get longer than a control call's usual wait (about 10000 objects a second)."""
    from django.conf import settings

    return max(float(settings.CONTROL_TIMEOUT_SECONDS), documents / 10000 * 4) if documents > 10000 else None


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
        answer: dict[str, Any] = result.get(timeout=wait)
        return answer
    except (CeleryTimeout, TaskRevokedError):
        return {"error": {"status": 504, "message": f"the import of {source} was not answered within {wait}s (is a task worker running?)"}}
    except (OSError, BrokerError, RedisError) as exc:
        return {"error": {"status": 503, "message": f"the task worker cannot be reached: {exc}"}}
    except Exception as exc:  # the task itself failed: report it, nothing was half-applied
        return {"error": {"status": 502, "message": f"the import of {source} failed on the task worker: {type(exc).__name__}: {exc}"}}
    finally:
        if result is not None:
            try:
                result.forget()
            except Exception:
                pass
