"""Koordinator's polled routes (`/apis/v1/...`, `/debug/flags/...`, `/metrics`) through Django
with a middleware stack of one, async-native.

Django adapts each sync middleware of `MIDDLEWARE` to an async request with a hop to the
request's thread and back, twice per middleware: through the full stack these routes were 14x
slower under many pollers. They need none of what those middleware do beyond what `Polled`
does here without leaving the event loop: the ALLOWED_HOSTS check, the HTTPS redirect and
security headers (SecurityMiddleware's own methods, which do no I/O), the control-character
check of the query, and a lazy session and user. Authentication and permissions are the views'
(`api/koord.py`): DRF's token authentication or the session, CSRF on session writes.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from importlib import import_module
from typing import Any

from asgiref.sync import markcoroutinefunction
from django.conf import settings
from django.contrib.auth.middleware import auser, get_user
from django.core.handlers.asgi import ASGIHandler
from django.core.handlers.exception import convert_exception_to_response
from django.http import HttpRequest, HttpResponse
from django.middleware.security import SecurityMiddleware
from django.utils.functional import SimpleLazyObject

from schedconsole.limits import refuse_control_characters

PREFIXES = ("/apis/v1/", "/debug/flags/", "/metrics")


class Polled:
    """The one middleware of the polled routes."""

    sync_capable = False
    async_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        self.get_response = get_response
        self.security = SecurityMiddleware(get_response)
        self.sessions = import_module(settings.SESSION_ENGINE).SessionStore
        markcoroutinefunction(self)

    async def __call__(self, request: HttpRequest) -> HttpResponse:
        request.get_host()  # DisallowedHost: a 400, as through CommonMiddleware
        early = self.security.process_request(request) or refuse_control_characters(request)
        if early is not None:
            return early
        request.session = self.sessions(request.COOKIES.get(settings.SESSION_COOKIE_NAME))
        request.user = SimpleLazyObject(lambda: get_user(request))  # type: ignore[assignment]  # as AuthenticationMiddleware sets it
        request.auser = partial(auser, request)  # as AuthenticationMiddleware sets it
        response: HttpResponse = await self.get_response(request)
        return self.security.process_response(request, response)


class PolledHandler(ASGIHandler):
    """Django's ASGI handler with `Polled` in place of `MIDDLEWARE`."""

    def load_middleware(self, is_async: bool = False) -> None:
        """Build the chain: exception handling, `Polled`, the view."""
        self._view_middleware: list[Any] = []
        self._template_response_middleware: list[Any] = []
        self._exception_middleware: list[Any] = []
        handler = convert_exception_to_response(self._get_response_async)  # type: ignore[attr-defined]  # BaseHandler's, untyped in django-stubs
        self._middleware_chain = convert_exception_to_response(Polled(handler))


class Router:
    """ASGI: the polled routes to `PolledHandler`, everything else to the full Django app."""

    def __init__(self, polled: Any, rest: Any) -> None:
        self.polled = polled
        self.rest = rest

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Dispatch by path."""
        if scope["type"] == "http" and scope.get("path", "").startswith(PREFIXES):
            await self.polled(scope, receive, send)
        else:
            await self.rest(scope, receive, send)
