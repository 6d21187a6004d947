"""Koordinator's routes (`/apis/v1/...`, `/debug/flags/s|f`) answered by the engine, and `/metrics`.

These are async views: each waits for the engine in a worker thread, so many clients can wait at
once and the engine answers all queued requests between two scheduling cycles.
"""

from __future__ import annotations

import json
from typing import Any

from asgiref.sync import sync_to_async
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.middleware.csrf import CsrfViewMiddleware
from django.views.decorators.csrf import csrf_exempt

from schedconsole.accounts.authentication import token_identity
from schedconsole.accounts.permissions import OPERATOR, VIEWER, roles
from schedconsole.engine import operations as ops
from schedconsole.engine.client import EngineCallError, acall

SAFE = ("GET", "HEAD", "OPTIONS")


async def authenticate(request: HttpRequest) -> tuple[str | None, frozenset[str], bool]:
    """The user name (session, or `Authorization: Token|Bearer ...` through DRF's token
    authentication), their roles, and whether a token header was sent. Looked up per request,
    never cached: a deleted token or a logged-out session is refused at once."""
    if request.headers.get("Authorization", "").split(" ", 1)[0].lower() in ("token", "bearer"):
        user, held, _ = await sync_to_async(token_identity)(request)
        return (user.get_username(), frozenset(held), True) if user is not None else (None, frozenset(), True)
    session_user = await request.auser()
    if not session_user.is_authenticated:
        return None, frozenset(), False
    return session_user.username, frozenset(await sync_to_async(roles)(session_user)), False


async def audit_flags(user: str, path: str) -> None:
    """Keep a change of the debug flags made through Koordinator's routes in the audit log."""
    from schedconsole.profiles.models import AuditEntry

    flags = await acall(ops.GetDebugFlags())
    await AuditEntry.objects.acreate(user=user, action="debug-flags.set", target=path, after=flags)


def _message(status: int, message: str) -> JsonResponse:
    return JsonResponse({"message": message}, status=status)


async def _authorize(request: HttpRequest) -> tuple[Any, HttpResponse | None]:
    user, held, by_token = await authenticate(request)
    if user is None:
        return None, _message(401, "authentication required: log in or send Authorization: Token <token> (or Bearer)")
    need = VIEWER if request.method in SAFE else OPERATOR
    if need not in held:
        return None, _message(403, f"you need the {need} role for {request.method} {request.path}")
    if not by_token and request.method not in SAFE:
        refused = CsrfViewMiddleware(lambda r: HttpResponse()).process_view(request, lambda r: HttpResponse(), (), {})
        if refused is not None:
            return None, _message(403, "CSRF token missing or incorrect")
    return user, None


@csrf_exempt
async def koordinator_route(request: HttpRequest, path: str = "") -> HttpResponse:
    """Any `/apis/v1/...` or `/debug/flags/...` call, passed to the engine's route table."""
    user, refused = await _authorize(request)
    if refused is not None:
        return refused
    op = ops.Dispatch(
        method=request.method or "GET",
        path=request.path,
        body=request.body,
        query={k: request.GET.get(k, "") for k in request.GET},
    )
    try:
        answer = await acall(op)
    except EngineCallError as exc:
        return _message(exc.status, exc.message)
    body = ops.route_body(answer)
    if request.path.startswith("/debug/flags/") and request.method not in SAFE and answer["status"] == 200:
        await audit_flags(user or "", request.path)
    return HttpResponse(body, status=answer["status"], content_type=answer["contentType"])


@csrf_exempt
async def metrics(request: HttpRequest) -> HttpResponse:
    """The engine's Prometheus registry (viewer role; scrape with a token)."""
    _, refused = await _authorize(request)
    if refused is not None:
        return refused
    try:
        text = await acall(ops.GetMetrics())
    except EngineCallError as exc:
        return _message(exc.status, exc.message)
    return HttpResponse(text, content_type="text/plain; version=0.0.4; charset=utf-8")


async def healthz(request: HttpRequest) -> HttpResponse:
    """The process is up."""
    return HttpResponse("ok\n", content_type="text/plain")


def _database() -> str:
    from django.db import connection

    # On a pool thread, outside any request: close the connection here, or that thread keeps it
    # (a connection lost in an outage was reused by every later probe until a restart).
    try:
        with connection.cursor() as cur:
            cur.execute("SELECT 1")
    finally:
        connection.close()
    return "ok"


def _broker() -> str:
    from django.conf import settings

    if settings.EMBEDDED:
        return "ok (in-memory)"
    from schedconsole.celery import app

    with app.connection_for_write() as conn:
        conn.ensure_connection(max_retries=1, timeout=2)
    return "ok"


async def readyz(request: HttpRequest) -> HttpResponse:
    """Database, broker and engine answering; 503 naming what is not."""
    checks: dict[str, str] = {}
    ready = True
    for name, check in (("database", _database), ("broker", _broker)):
        try:
            checks[name] = await sync_to_async(check, thread_sensitive=False)()
        except Exception as exc:
            checks[name] = f"failed: {exc}"
            ready = False
    try:
        await acall(ops.Ping(), 3)
        checks["engine"] = "ok"
    except EngineCallError as exc:
        checks["engine"] = f"failed: {exc.message}"
        ready = False
    if not await _logged_in(request):
        # Probes need the verdict only; what failed and why (hosts, errors) is for logged-in users.
        checks = {name: "ok" if text.startswith("ok") else "failed" for name, text in checks.items()}
    return HttpResponse(
        json.dumps({"ready": ready, "checks": checks}), status=200 if ready else 503, content_type="application/json"
    )


async def _logged_in(request: HttpRequest) -> bool:
    try:
        user = await request.auser()
    except Exception:  # the session store is the database, which may be what failed
        return False
    return bool(user.is_authenticated)
