"""Login on every page; APIs authenticate in their views (sessions or tokens)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse

# Views under these prefixes answer 401/403 themselves (DRF), so scripts with tokens work.
API_PREFIXES = ("/api/", "/apis/", "/debug/flags/", "/metrics", "/k8s/")
OPEN_PATHS = ("/healthz", "/readyz", "/accounts/login/", "/favicon.ico")


def _open(path: str) -> bool:
    return path in OPEN_PATHS or path.startswith((settings.STATIC_URL, *API_PREFIXES))


class LoginRequiredMiddleware:
    """Redirect anonymous visitors of pages to the login page (sync and async, so async views
    such as Koordinator's routes are not funnelled through one thread)."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> Any:
        if self.is_async:
            return self._acall(request)
        if not _open(request.path) and not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path(), settings.LOGIN_URL)
        return self.get_response(request)

    async def _acall(self, request: HttpRequest) -> HttpResponse:
        if not _open(request.path) and not (await request.auser()).is_authenticated:
            return redirect_to_login(request.get_full_path(), settings.LOGIN_URL)
        response: Awaitable[HttpResponse] = self.get_response(request)
        return await response
