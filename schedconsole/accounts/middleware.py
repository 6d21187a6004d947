"""Login on every page, and a role: a user in neither group gets 403 (APIs authenticate and
authorize in their views, sessions or tokens)."""

from __future__ import annotations

from collections.abc import Awaitable

from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse, HttpResponseForbidden

from schedconsole.accounts.permissions import roles
from schedconsole.dualmiddleware import DualMiddleware

# Views under these prefixes answer 401/403 themselves (DRF), so scripts with tokens work.
API_PREFIXES = ("/api/", "/apis/", "/debug/flags/", "/metrics", "/k8s/")
OPEN_PATHS = ("/healthz", "/readyz", "/accounts/login/", "/favicon.ico")
# A logged-in user without a role may still log out.
ROLELESS_PATHS = ("/accounts/logout/",)
NO_ROLE = (
    "<!doctype html><title>403</title><h1>Forbidden</h1><p>Your account has no role in this console: "
    "ask an operator to add you to the viewer or operator group.</p>"
)


def _open(path: str) -> bool:
    return path in OPEN_PATHS or path.startswith((settings.STATIC_URL, *API_PREFIXES))


class LoginRequiredMiddleware(DualMiddleware):
    """Redirect anonymous visitors of pages to the login page (sync and async, so async views
    such as Koordinator's routes are not funnelled through one thread)."""

    def _call(self, request: HttpRequest) -> HttpResponse:
        if not _open(request.path):
            if not request.user.is_authenticated:
                return redirect_to_login(request.get_full_path(), settings.LOGIN_URL)
            if request.path not in ROLELESS_PATHS and not roles(request.user):
                return HttpResponseForbidden(NO_ROLE)
        response: HttpResponse = self.get_response(request)
        return response

    async def _acall(self, request: HttpRequest) -> HttpResponse:
        if not _open(request.path):
            user = await request.auser()
            if not user.is_authenticated:
                return redirect_to_login(request.get_full_path(), settings.LOGIN_URL)
            if request.path not in ROLELESS_PATHS and not await sync_to_async(roles)(user):
                return HttpResponseForbidden(NO_ROLE)
        response: Awaitable[HttpResponse] = self.get_response(request)
        return await response
