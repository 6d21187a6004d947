"""Limits every request meets before a view: the body's size however it is framed, and no control
characters in the query string.

Django checks `DATA_UPLOAD_MAX_MEMORY_SIZE` against `Content-Length` only, after its ASGI handler
has read the whole body: a chunked 400 MiB body was read whole. `BodyLimit` counts the body as it
arrives and answers 413 as soon as it passes `SCHEDCONSOLE_UPLOAD_MAX_BYTES` (or at once when
`Content-Length` says it will), and Django stops reading. NUL and other control characters in a
filter reached PostgreSQL, which refuses NUL in text (a 500): `refuse_control_characters` answers
400 naming the parameter.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

from schedconsole.dualmiddleware import DualMiddleware

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class BodyLimit:
    """ASGI middleware: 413 for a body over the upload limit, however it is framed."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on, counting its body."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = settings.UPLOAD_MAX_BYTES
        declared = next((v for k, v in scope.get("headers", []) if k.lower() == b"content-length"), None)
        if declared is not None and declared.strip().isdigit() and int(declared) > limit:
            await _too_large(send, limit)
            return
        received = 0

        async def counted() -> dict[str, Any]:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    await _too_large(send, limit)
                    return {"type": "http.disconnect"}  # Django stops reading and answers nothing more
            return message

        await self.app(scope, counted, send)


async def _too_large(send: Send, limit: int) -> None:
    body = json.dumps({"detail": f"the body is over the limit of {limit} bytes (SCHEDCONSOLE_UPLOAD_MAX_BYTES)"}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def refuse_control_characters(request: HttpRequest) -> HttpResponse | None:
    """400 when a query parameter holds a control character (NUL included), or the path a NUL
    (a name taken from the path reaches PostgreSQL, which stores no NUL), else None."""
    if "\x00" in request.path:
        return JsonResponse({"detail": "the path holds the control character U+0000"}, status=400)
    for key, values in request.GET.lists():
        for value in (key, *values):
            found = _CONTROL.search(value)
            if found:
                return JsonResponse(
                    {
                        "detail": f"query parameter {key!r} holds the control character U+{ord(found.group()):04X}; "
                        "filters take printable text"
                    },
                    status=400,
                )
    return None


class ControlCharactersMiddleware(DualMiddleware):
    """Django middleware (sync and async, no thread hop) around `refuse_control_characters`."""

    def _call(self, request: HttpRequest) -> HttpResponse:
        response: HttpResponse = refuse_control_characters(request) or self.get_response(request)
        return response

    async def _acall(self, request: HttpRequest) -> HttpResponse:
        refused = refuse_control_characters(request)
        if refused is not None:
            return refused
        response: HttpResponse = await self.get_response(request)
        return response
