"""Koordinator's routes (`/apis/v1/...`, `/debug/flags/s|f`) answered by the engine, and `/metrics`.

These are async views: each waits for the engine in a worker thread, so many clients can wait at
once and the engine answers all queued requests between two scheduling cycles.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from asgiref.sync import sync_to_async
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.middleware.csrf import CsrfViewMiddleware
from django.views.decorators.csrf import csrf_exempt

from schedconsole.accounts.permissions import OPERATOR, VIEWER, roles
from schedconsole.api.fastpath import audit_flags, identify
from schedconsole.engine.client import EngineCallError, acall

SAFE = ("GET", "HEAD", "OPTIONS")


async def authenticate(request: HttpRequest) -> tuple[str | None, frozenset[str], bool]:
    """The user name (session or `Authorization: Token ...`), their roles, and whether a token was used."""
    header = request.headers.get("Authorization", "")
    if header.startswith("Token "):
        found = await identify("token", header[6:].strip())
        return (found[0], found[1], True) if found is not None else (None, frozenset(), True)
    user = await request.auser()
    if not user.is_authenticated:
        return None, frozenset(), False
    return user.username, frozenset(await sync_to_async(roles)(user)), False


def _message(status: int, message: str) -> JsonResponse:
    return JsonResponse({"message": message}, status=status)


async def _authorize(request: HttpRequest) -> tuple[Any, HttpResponse | None]:
    user, held, by_token = await authenticate(request)
    if user is None:
        return None, _message(401, "authentication required: log in or send Authorization: Token <token>")
    need = VIEWER if request.method in SAFE else OPERATOR
    if need not in held:
        return None, _message(403, f"you need the {need} role for {request.method} {request.path}")
    if not by_token and request.method not in SAFE:
        refused = CsrfViewMiddleware(lambda r: HttpResponse()).process_view(request, lambda r: HttpResponse(), (), {})
        if refused is not None:
            return None, _message(403, "CSRF token missing or incorrect")
    return user, None


async def _engine(op: str, payload: dict[str, Any] | None = None) -> Any:
    return await acall(op, payload)


@csrf_exempt
async def koordinator_route(request: HttpRequest, path: str = "") -> HttpResponse:
    """Any `/apis/v1/...` or `/debug/flags/...` call, passed to the engine's route table."""
    user, refused = await _authorize(request)
    if refused is not None:
        return refused
    payload = {
        "method": request.method,
        "path": request.path,
        "body": base64.b64encode(request.body).decode(),
        "query": {k: v for k, v in request.GET.items()},
    }
    try:
        answer = await _engine("dispatch", payload)
    except EngineCallError as exc:
        return _message(exc.status, exc.message)
    body = base64.b64decode(answer["body"])
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
        text = await _engine("metrics")
    except EngineCallError as exc:
        return _message(exc.status, exc.message)
    return HttpResponse(text, content_type="text/plain; version=0.0.4; charset=utf-8")


async def healthz(request: HttpRequest) -> HttpResponse:
    """The process is up."""
    return HttpResponse("ok\n", content_type="text/plain")


def _database() -> str:
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute("SELECT 1")
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
        await acall("ping", None, 3)
        checks["engine"] = "ok"
    except EngineCallError as exc:
        checks["engine"] = f"failed: {exc.message}"
        ready = False
    return HttpResponse(json.dumps({"ready": ready, "checks": checks}), status=200 if ready else 503, content_type="application/json")
