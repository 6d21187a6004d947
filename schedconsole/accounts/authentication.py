"""Who is calling: DRF's token authentication under both of its usual schemes, for the API, `/k8s`
and Koordinator's routes alike (one path, no cache: deleting a token or a user takes effect at once)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from rest_framework.authentication import TokenAuthentication, get_authorization_header
from rest_framework.exceptions import AuthenticationFailed

from schedconsole.accounts.permissions import roles

SCHEMES = (b"token", b"bearer")


class BearerTokenAuthentication(TokenAuthentication):
    """`Authorization: Token <key>` (DRF's) or `Authorization: Bearer <key>` (kubectl's, OAuth's)."""

    def authenticate(self, request: Any) -> tuple[Any, Any] | None:
        """The token's user, None without a token header, AuthenticationFailed for a bad one."""
        auth = get_authorization_header(request).split()
        if not auth or auth[0].lower() not in SCHEMES:
            return None
        if len(auth) != 2:
            raise AuthenticationFailed("Invalid token header: send 'Authorization: Token <key>' or 'Bearer <key>'")
        try:
            key = auth[1].decode()
        except UnicodeError:
            raise AuthenticationFailed("Invalid token header: the key holds invalid characters") from None
        return self.authenticate_credentials(key)

    def authenticate_header(self, request: Any) -> str:
        """What a 401 names (`WWW-Authenticate`)."""
        return "Bearer"


def token_identity(request: Any) -> tuple[AbstractBaseUser | None, set[str], bool]:
    """The user of the request's token header with their roles, and whether a header was sent
    (sync: one query for the token and its user, one for the groups)."""
    try:
        found = BearerTokenAuthentication().authenticate(request)
    except AuthenticationFailed:
        return None, set(), True
    if found is None:
        return None, set(), False
    user = found[0]
    return user, roles(user), True
