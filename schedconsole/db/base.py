"""Django's PostgreSQL backend with at most `SCHEDCONSOLE_DB_POOL_MAX` open connections per process.

Under ASGI every request runs its database work on a thread of its own, and Django opens one
connection per thread: 50 concurrent API clients held 50 connections per web process and
exhausted PostgreSQL's default 100. Here each new connection first takes one of the process's
slots, waiting up to `SCHEDCONSOLE_DB_POOL_TIMEOUT` seconds for one to be given back; a request
that gets none fails with OperationalError, which the 500 handler answers as 503 with
`Retry-After` (as it does while the database is away). A slot is given back when its connection
object is gone (closed at the end of the request, or collected with a thread that ended), so a
slot cannot leak. Connections are not kept between requests (`CONN_MAX_AGE` 0, as Django advises
under ASGI), so one lost in an outage is never reused: the next request connects afresh.

psycopg's own pool (Django 5.1's `OPTIONS["pool"]`) would also reuse connections; it needs the
`psycopg-pool` package, which the runtime lock does not hold.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

from django.conf import settings
from django.db.backends.postgresql import base
from django.db.utils import OperationalError

_slots: threading.BoundedSemaphore | None = None
_slots_lock = threading.Lock()


def slots() -> threading.BoundedSemaphore:
    """The process's connection slots (made on first use, from the settings)."""
    global _slots
    with _slots_lock:
        if _slots is None:
            _slots = threading.BoundedSemaphore(settings.DB_POOL_MAX)
        return _slots


def in_use() -> int:
    """How many slots are taken now."""
    return int(settings.DB_POOL_MAX - slots()._value)  # BoundedSemaphore keeps its count there


class DatabaseWrapper(base.DatabaseWrapper):
    """The PostgreSQL backend; each connection holds a slot while it is open."""

    def get_new_connection(self, conn_params: dict[str, Any]) -> Any:
        """Take a slot (or fail after the timeout), then connect; the slot follows the connection."""
        held = slots()
        if not held.acquire(timeout=settings.DB_POOL_TIMEOUT_SECONDS):
            raise OperationalError(
                f"no database connection free: all {settings.DB_POOL_MAX} of this process are in use "
                "(SCHEDCONSOLE_DB_POOL_MAX); try again shortly"
            )
        try:
            connection = super().get_new_connection(conn_params)
        except BaseException:
            held.release()
            raise
        weakref.finalize(connection, held.release)
        return connection
