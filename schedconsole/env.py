"""Settings from the environment through tiny helpers that fail loudly on a bad value."""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import unquote, urlparse


class SettingError(ValueError):
    """An environment variable whose value cannot be used."""


def env_str(name: str, default: str) -> str:
    """A string variable; empty means the default."""
    return os.getenv(name) or default


def env_bool(name: str, default: bool) -> bool:
    """A boolean variable: true/false, 1/0, yes/no, on/off."""
    raw = os.getenv(name)
    if raw is None or raw == "":
        return default
    value = raw.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise SettingError(f"{name}: invalid boolean {raw!r}; use true or false")


def env_int(name: str, default: int, minimum: int | None = None) -> int:
    """An integer variable, optionally with a lower bound."""
    raw = os.getenv(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise SettingError(f"{name}: invalid integer {raw!r}") from None
    if minimum is not None and value < minimum:
        raise SettingError(f"{name}: {value} is below the minimum {minimum}")
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    """A comma-separated list."""
    raw = os.getenv(name)
    if raw is None or raw.strip() == "":
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def database_from_url(url: str, name: str = "DATABASE_URL") -> dict[str, Any]:
    """A Django DATABASES entry from `sqlite:///path` or `postgres://user:pass@host:port/db`."""
    parsed = urlparse(url)
    if parsed.scheme == "sqlite":
        path = unquote(parsed.path)
        if url.startswith("sqlite:////"):
            path = "/" + path.lstrip("/")
        elif url.startswith("sqlite:///"):
            path = path.lstrip("/")
        if not path:
            raise SettingError(f"{name}: {url!r} names no file; use sqlite:///var/db.sqlite3")
        return {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": path,
            "OPTIONS": {
                "timeout": 30,
                "transaction_mode": "IMMEDIATE",
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            },
        }
    if parsed.scheme in ("postgres", "postgresql"):
        if not parsed.path.strip("/"):
            raise SettingError(f"{name}: {url!r} names no database")
        return {
            # Django's PostgreSQL backend with a bounded number of connections (schedconsole/db/base.py).
            "ENGINE": "schedconsole.db",
            "NAME": unquote(parsed.path.lstrip("/")),
            "USER": unquote(parsed.username or ""),
            "PASSWORD": unquote(parsed.password or ""),
            "HOST": parsed.hostname or "",
            "PORT": str(parsed.port or ""),
            # Not kept between requests (each ASGI request has a thread of its own; a kept connection
            # lost in an outage was reused until a restart); checked before reuse elsewhere.
            "CONN_MAX_AGE": 0,
            "CONN_HEALTH_CHECKS": True,
            "OPTIONS": {"connect_timeout": 5},
        }
    raise SettingError(f"{name}: unsupported scheme {parsed.scheme!r} in {url!r}; use sqlite:/// or postgres://")
