"""Login with failures limited three ways, none of which lets one client lock another out.

The user name is counted as Django's login form reads it (`AuthenticationForm`: stripped, NFKC):
`"viewer1   "` and `"ｖiewer1"` log in as `viewer1`, so they share its counter. Failures are
counted per address and name (SCHEDCONSOLE_LOGIN_RATE_LIMIT a minute), per address over all
names (SCHEDCONSOLE_LOGIN_ADDRESS_LIMIT), and, for names no user has, over all addresses
(SCHEDCONSOLE_LOGIN_UNKNOWN_LIMIT): logins with fresh names made every password check cost a
hash, and 16 such clients slowed an operator's API 22x. Past a limit the answer is 429 before any
password is checked. A limit on a name is kept per address, so guessing from one address cannot
lock the name's owner out at another; the global limit applies to unknown names only, so it
cannot lock out anyone who has an account.
"""

from __future__ import annotations

import hashlib
import unicodedata
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.views import LoginView
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse

WINDOW_SECONDS = 60


def login_name(raw: object) -> str:
    """The user name as Django's login form reads it: stripped, then NFKC-normalised."""
    return unicodedata.normalize("NFKC", str(raw or "").strip())[:150]


def _key(*parts: str) -> str:
    # Cache keys must be short and plain: hash what a client sent.
    return "login-failures:" + hashlib.sha256("\x00".join(parts).encode()).hexdigest()


def _count(key: str) -> int:
    value = cache.get(key, 0)
    return int(value) if isinstance(value, int) else 0


def _fail(key: str) -> None:
    cache.add(key, 0, WINDOW_SECONDS)
    try:
        cache.incr(key)
    except ValueError:  # expired in between
        cache.set(key, 1, WINDOW_SECONDS)


class RateLimitedLoginView(LoginView):
    """Django's session login; 429 past any of the three limits."""

    template_name = "registration/login.html"

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        """Refuse while a limit is exceeded; count a failure otherwise."""
        address = str(request.META.get("REMOTE_ADDR", ""))
        name = login_name(request.POST.get("username"))
        keys = [_key("name", address, name), _key("address", address)]
        limits = [settings.LOGIN_RATE_LIMIT, settings.LOGIN_ADDRESS_LIMIT]
        if not get_user_model().objects.filter(username=name).exists():
            keys.append(_key("unknown"))
            limits.append(settings.LOGIN_UNKNOWN_LIMIT)
        if any(_count(key) >= limit for key, limit in zip(keys, limits, strict=True)):
            form = self.get_form()
            form.add_error(None, "Too many failed logins; wait a minute and try again.")
            response = self.render_to_response(self.get_context_data(form=form))
            response.status_code = 429
            response["Retry-After"] = str(WINDOW_SECONDS)
            return response
        response = super().post(request, *args, **kwargs)
        if response.status_code != 302:
            for key in keys:
                _fail(key)
        return response
