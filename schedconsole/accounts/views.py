"""Login with a rate limit on failures per address and user name."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.views import LoginView
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse

WINDOW_SECONDS = 60


def _key(request: HttpRequest) -> str:
    username = str(request.POST.get("username", ""))[:150].lower()
    return f"login-failures:{request.META.get('REMOTE_ADDR', '')}:{username}"


class RateLimitedLoginView(LoginView):
    """Django's session login; more than SCHEDCONSOLE_LOGIN_RATE_LIMIT failures a minute get 429."""

    template_name = "registration/login.html"

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        """Refuse while the limit is exceeded; count a failure otherwise."""
        key = _key(request)
        if cache.get(key, 0) >= settings.LOGIN_RATE_LIMIT:
            form = self.get_form()
            form.add_error(None, "Too many failed logins; wait a minute and try again.")
            response = self.render_to_response(self.get_context_data(form=form))
            response.status_code = 429
            return response
        response = super().post(request, *args, **kwargs)
        if response.status_code != 302:
            cache.add(key, 0, WINDOW_SECONDS)
            try:
                cache.incr(key)
            except ValueError:
                cache.set(key, 1, WINDOW_SECONDS)
        return response
