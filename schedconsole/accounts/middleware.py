"""Login on every page; APIs authenticate in their views (sessions or tokens)."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse

# Views under these prefixes answer 401/403 themselves (DRF), so scripts with tokens work.
API_PREFIXES = ("/api/", "/apis/", "/debug/flags/", "/metrics", "/k8s/")
OPEN_PATHS = ("/healthz", "/readyz", "/accounts/login/")


class LoginRequiredMiddleware:
    """Redirect anonymous visitors of pages to the login page."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        path = request.path
        open_path = path in OPEN_PATHS or path.startswith((settings.STATIC_URL, *API_PREFIXES))
        if not open_path and not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path(), settings.LOGIN_URL)
        return self.get_response(request)
