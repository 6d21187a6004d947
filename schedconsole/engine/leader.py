"""One leader among the engine workers: a Redis lock with a TTL that the leader renews, and a
fencing token in the database.

Any number of engine workers run `LeaderElector`. The one whose `SET NX PX` succeeds increments
the token in `EngineLease` (waiting for the row lock, hence for any batch the previous leader is
still committing), and only then loads the cluster and starts scheduling. The store writes each
batch under that row's lock and only while it still holds the leader's token, so a leader that was
paused past its TTL (a stopped process, a long GC, a partition) finds on waking that it is fenced
and stops: its bindings are never stored, hence never acknowledged.

Redis may lose the lock (a restart: our Redis keeps nothing on disk). The leader then takes the key
again with its own identity and goes on if the token is still its own; if another worker got there
first, the token has moved and the old leader steps down.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import cast

from django.conf import settings
from django.db import close_old_connections, connection, transaction
from redis import Redis

from schedconsole.engine.models import EngineLease

log = logging.getLogger(__name__)
LEADER_KEY = "schedconsole:engine:leader"
NOT_LEADER = "the instance is not leader"
_RENEW = """
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0
"""
_RELEASE = """
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('del', KEYS[1])
end
return 0
"""


def redis_client(url: str | None = None) -> Redis:
    """A Redis client with short timeouts (a dead Redis must not hang a request or the elector)."""
    return Redis.from_url(url or settings.REDIS_URL, socket_timeout=5, socket_connect_timeout=5, health_check_interval=10)


def leader_hostname(client: Redis) -> str | None:
    """The Celery hostname of the current leader, or None when no engine holds the lock."""
    # redis-py types a command's answer as sync-or-async; this client is synchronous: bytes or None.
    value = cast("bytes | None", client.get(LEADER_KEY))
    if not value:
        return None
    return value.decode().split("#", 1)[0]


def bump_fence(identity: str) -> int:
    """Take the next token (after any batch the old leader is committing) and return it."""
    EngineLease.objects.get_or_create(id=1)  # made by a migration; a flushed database lacks it
    with transaction.atomic():
        lease = EngineLease.objects.select_for_update().get(id=1)
        lease.token += 1
        lease.holder = identity
        lease.acquired = datetime.now(tz=UTC)
        lease.save(update_fields=["token", "holder", "acquired"])
    return lease.token


def current_fence() -> int:
    """The token now in the database."""
    return int(EngineLease.objects.values_list("token", flat=True).filter(id=1).first() or 0)


def check_fence(token: int) -> bool:
    """Inside the store's transaction: lock the lease row and tell whether `token` still holds it."""
    qs = EngineLease.objects.values_list("token", flat=True)
    if connection.vendor == "postgresql":
        # A leader frozen inside this transaction must not keep its successor waiting on the row
        # lock: PostgreSQL ends the session once it idles here longer than the lock's TTL.
        with connection.cursor() as cur:
            cur.execute(f"SET LOCAL idle_in_transaction_session_timeout = {int(max(settings.ENGINE_LEADER_TTL, 5) * 1000)}")
        qs = qs.select_for_update()
    return int(qs.filter(id=1).first() or 0) == token


class LeaderElector:
    """Campaigns for the lock, renews it while leading, and calls back on each change.

    `on_elected(token)` and `on_lost()` run on a separate thread, one at a time and in order, so a
    slow start (loading a large cluster) never delays a renewal.
    """

    def __init__(
        self,
        hostname: str,
        on_elected: Callable[[int], None],
        on_lost: Callable[[], None],
        ttl: float | None = None,
        redis_url: str | None = None,
        key: str = LEADER_KEY,
        failed: Callable[[], bool] | None = None,
    ) -> None:
        self.hostname = hostname
        self.identity = f"{hostname}#{os.getpid()}@{socket.gethostname()}/{uuid.uuid4().hex[:12]}"
        self.ttl = float(ttl if ttl is not None else settings.ENGINE_LEADER_TTL)
        self.token: int | None = None
        self._on_elected = on_elected
        self._on_lost = on_lost
        self._stop = threading.Event()
        self._actions: list[tuple[str, int]] = []
        self._actions_ready = threading.Condition()
        self.key = key
        self._failed = failed
        self._client = redis_client(redis_url)
        self._renew = self._client.register_script(_RENEW)
        self._release = self._client.register_script(_RELEASE)
        self._thread = threading.Thread(target=self._campaign, name="schedconsole-leader", daemon=True)
        self._worker = threading.Thread(target=self._act, name="schedconsole-leader-actions", daemon=True)
        self.last_renewed = 0.0

    @property
    def leading(self) -> bool:
        """Whether this worker holds the lock (as far as it last knew)."""
        return self.token is not None

    def start(self) -> None:
        """Start campaigning."""
        self._thread.start()
        self._worker.start()

    def stop(self) -> None:
        """Stop campaigning, give up the lock (a follower takes over at once) and stop the engine."""
        self._stop.set()
        self._thread.join(self.ttl)
        if self.token is not None:
            self.token = None
            try:
                self._release(keys=[self.key], args=[self.identity])
            except Exception:
                log.warning("leader: could not release the lock", exc_info=True)
            self._queue("lost", 0)
        self._queue("exit", 0)
        self._worker.join(60)

    def fenced(self) -> None:
        """The store found the token moved: step down (another engine leads now)."""
        if self.token is not None:
            self.step_down(f"fenced off (token {self.token} is no longer the lease's)")

    def step_down(self, reason: str) -> None:
        """Give the lock up and stop the engine; campaign again afterwards."""
        if self.token is None:
            return
        log.error("leader: %s; stepping down", reason)
        self.token = None
        try:
            self._release(keys=[self.key], args=[self.identity])
        except Exception:
            log.warning("leader: could not release the lock", exc_info=True)
        self._queue("lost", 0)

    # ----- the campaign -------------------------------------------------------------------------
    def _campaign(self) -> None:
        period = max(0.2, self.ttl / 3)
        while not self._stop.is_set():
            try:
                if self.token is None:
                    self._try_acquire()
                else:
                    self._keep()
            except Exception:
                # Redis or the database is away: a leader goes on (the fence keeps it honest), a
                # follower tries again.
                log.warning("leader: campaign step failed", exc_info=True)
                close_old_connections()
            self._stop.wait(period)
        connection.close()

    def _try_acquire(self) -> None:
        if not self._client.set(self.key, self.identity, nx=True, px=int(self.ttl * 1000)):
            return
        try:
            token = bump_fence(self.identity)
        except Exception:
            self._release(keys=[self.key], args=[self.identity])
            raise
        self.token = token
        self.last_renewed = time.monotonic()
        log.warning("leader: %s leads with token %d", self.hostname, token)
        self._queue("elected", token)

    def _keep(self) -> None:
        if self._failed is not None and self._failed():
            self.step_down("the engine failed (see the error above)")
            return
        if self._renew(keys=[self.key], args=[self.identity, int(self.ttl * 1000)]):
            self.last_renewed = time.monotonic()
            return
        # Not ours any more. If the key is simply gone (Redis restarted), take it back, but only
        # while no other engine has moved the token.
        if self._client.set(self.key, self.identity, nx=True, px=int(self.ttl * 1000)):
            if current_fence() == self.token:
                self.last_renewed = time.monotonic()
                log.warning("leader: the lock was lost (Redis restarted?) and is taken back with token %s", self.token)
                return
            self._release(keys=[self.key], args=[self.identity])
        log.error("leader: lost the lock to %s", self._client.get(self.key))
        self.token = None
        self._queue("lost", 0)

    # ----- callbacks, in order, off the campaign thread -------------------------------------------
    def _queue(self, action: str, token: int) -> None:
        with self._actions_ready:
            self._actions.append((action, token))
            self._actions_ready.notify()

    def _act(self) -> None:
        while True:
            with self._actions_ready:
                while not self._actions:
                    self._actions_ready.wait()
                action, token = self._actions.pop(0)
            if action == "exit":
                return
            try:
                if action == "elected":
                    if self.token == token:  # not already lost again
                        self._on_elected(token)
                else:
                    self._on_lost()
            except Exception:
                log.exception("leader: %s callback failed", action)
                if action == "elected":
                    self.step_down("the engine could not start")
            finally:
                close_old_connections()
