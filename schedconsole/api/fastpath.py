"""A lean ASGI path for the routes that dashboards and scripts poll (`/apis/v1/...`, `/debug/flags/...`).

Django's middleware chain runs each sync middleware on one shared thread, so under many
concurrent pollers every request queues for that thread several times. These routes need
none of it: they authenticate by token (any method) or session (reads only), call the engine
and relay its answer. Anything else (a session PUT, which needs Django's CSRF check) falls
through to the Django views in `koord.py`, which behave the same.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Awaitable, Callable
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qsl

from asgiref.sync import sync_to_async
from django.conf import settings
from django.http.request import validate_host

from schedconsole.accounts.permissions import OPERATOR, VIEWER, roles
from schedconsole.engine.client import EngineCallError, acall

PREFIXES = ("/apis/v1/", "/debug/flags/")
SAFE = ("GET", "HEAD", "OPTIONS")
CACHE_SECONDS = 5.0
Scope = dict[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Awaitable[None]]

_users: dict[str, tuple[float, str, frozenset[str]]] = {}


def _token_user(key: str) -> tuple[str, frozenset[str]] | None:
    from rest_framework.authtoken.models import Token

    token = Token.objects.select_related("user").filter(key=key).first()
    if token is None or not token.user.is_active:
        return None
    return token.user.username, frozenset(roles(token.user))


def _session_user(session_key: str) -> tuple[str, frozenset[str]] | None:
    from importlib import import_module
    from types import SimpleNamespace

    from django.contrib.auth import get_user

    store = import_module(settings.SESSION_ENGINE).SessionStore(session_key)
    user = get_user(SimpleNamespace(session=store))  # type: ignore[arg-type]
    if not user.is_authenticated:
        return None
    return user.username, frozenset(roles(user))


async def identify(kind: str, key: str) -> tuple[str, frozenset[str]] | None:
    """The user name and roles behind a token or a session key, kept for a few seconds: scrapers
    and dashboards poll these routes, and a database round trip per call would dominate."""
    cache_key = f"{kind}:{key}"
    cached = _users.get(cache_key)
    if cached is not None and cached[0] > time.monotonic():
        return cached[1], cached[2]
    found = await sync_to_async(_token_user if kind == "token" else _session_user)(key)
    if found is not None:
        _users[cache_key] = (time.monotonic() + CACHE_SECONDS, *found)
    return found


class FastRoutes:
    """Serve Koordinator's routes without Django's middleware; defer to Django when unsure."""

    def __init__(self, django_app: ASGIApp) -> None:
        self.django_app = django_app

    async def __call__(self, scope: Scope, receive: Callable[[], Awaitable[Any]], send: Callable[[Any], Awaitable[None]]) -> None:
        """Handle the request or pass it on."""
        path = scope.get("path", "")
        if scope["type"] != "http" or not path.startswith(PREFIXES):
            await self.django_app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        method = scope["method"]
        host = headers.get("host", "").rsplit(":", 1)[0] if not headers.get("host", "").startswith("[") else headers["host"].split("]")[0] + "]"
        if not validate_host(host, settings.ALLOWED_HOSTS):
            await _reply(send, 400, {"message": f"invalid Host header {headers.get('host', '')!r}; add it to ALLOWED_HOSTS"})
            return
        auth = headers.get("authorization", "")
        if auth.startswith("Token "):
            who = await identify("token", auth[6:].strip())
        elif method in SAFE:
            cookie = SimpleCookie(headers.get("cookie", ""))
            morsel = cookie.get(settings.SESSION_COOKIE_NAME)
            who = await identify("session", morsel.value) if morsel is not None else None
        else:
            await self.django_app(scope, receive, send)  # a session write: Django checks CSRF
            return
        if who is None:
            await _reply(send, 401, {"message": "authentication required: log in or send Authorization: Token <token>"})
            return
        need = VIEWER if method in SAFE else OPERATOR
        if need not in who[1]:
            await _reply(send, 403, {"message": f"you need the {need} role for {method} {path}"})
            return
        body = await _body(receive)
        payload = {
            "method": method,
            "path": path,
            "body": base64.b64encode(body).decode(),
            "query": dict(parse_qsl(scope.get("query_string", b"").decode("latin-1"))),
        }
        try:
            answer = await acall("dispatch", payload)
        except EngineCallError as exc:
            await _reply(send, exc.status, {"message": exc.message})
            return
        if path.startswith("/debug/flags/") and method not in SAFE and answer["status"] == 200:
            await audit_flags(who[0], path)
        await _send(send, answer["status"], answer["contentType"], base64.b64decode(answer["body"]))


async def audit_flags(user: str, path: str) -> None:
    """Keep a change of the debug flags made through Koordinator's routes in the audit log."""
    from schedconsole.profiles.models import AuditEntry

    flags = await acall("debug_flags")
    await AuditEntry.objects.acreate(user=user, action="debug-flags.set", target=path, after=flags)


async def _body(receive: Callable[[], Awaitable[Any]]) -> bytes:
    chunks = []
    size = 0
    while True:
        message = await receive()
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > settings.UPLOAD_MAX_BYTES:
            break
        chunks.append(chunk)
        if not message.get("more_body"):
            break
    return b"".join(chunks)


async def _reply(send: Callable[[Any], Awaitable[None]], status: int, body: dict[str, str]) -> None:
    await _send(send, status, "application/json", json.dumps(body).encode())


async def _send(send: Callable[[Any], Awaitable[None]], status: int, content_type: str, body: bytes) -> None:
    await send({"type": "http.response.start", "status": status, "headers": [(b"content-type", content_type.encode()), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
