"""The engine inside a Celery worker (`celery -A schedconsole worker -Q engine`).

A worker bootstep campaigns for leadership when the worker consumes the `engine` queue. The
leader rebuilds the engine from the database and schedules; followers wait. Control tasks are
sent to the leader's own queue (Celery's `worker_direct` queue of the hostname the lock names),
so only the leader answers them; a follower that still receives one (the lock moved while the task
was queued) answers 503 "the instance is not leader". Warm shutdown stops the engine after its
current cycle, writes what the store holds and gives the lock up, so a follower takes over at once.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from celery import bootsteps

log = logging.getLogger(__name__)
ENGINE_QUEUE = "engine"


class EngineRole:
    """This worker's part: campaigning, and the engine while it leads."""

    def __init__(self, hostname: str) -> None:
        from schedconsole.engine.leader import LeaderElector

        self.hostname = hostname
        self._lock = threading.Lock()
        self.elector = LeaderElector(hostname, self._elected, self._lost, failed=self._failed)

    def start(self) -> None:
        """Begin campaigning."""
        self.elector.start()

    def stop(self) -> None:
        """Give up leadership and stop the engine (warm shutdown)."""
        self.elector.stop()

    @property
    def leading(self) -> bool:
        """Whether this worker schedules now."""
        from schedconsole.engine.host import get_host

        return self.elector.leading and get_host().running

    def _failed(self) -> bool:
        from schedconsole.engine.host import get_host

        return get_host().failed

    def _elected(self, token: int) -> None:
        from schedconsole.engine.host import get_host

        with self._lock:
            host = get_host()
            if host.running:
                host.stop()
            host.start(fence=token, on_fenced=self.elector.fenced)
            log.warning("engine: %s schedules (token %d)", self.hostname, token)

    def _lost(self) -> None:
        from schedconsole.engine.host import get_host

        with self._lock:
            host = get_host()
            if host.engine is not None:
                host.stop()
                log.warning("engine: %s stopped scheduling", self.hostname)


_role: EngineRole | None = None


def role() -> EngineRole | None:
    """This process's engine role, when it is an engine worker."""
    return _role


class EngineStep(bootsteps.StartStopStep):
    """Starts the campaign with the worker and ends it on shutdown (warm or cold)."""

    requires = ("celery.worker.components:Pool",)

    def start(self, worker: Any) -> None:
        """Campaign if this worker consumes the engine queue."""
        global _role
        if ENGINE_QUEUE not in worker.app.amqp.queues.consume_from:
            return
        _role = EngineRole(worker.hostname)
        _role.start()

    def stop(self, parent: Any) -> None:
        """Stop scheduling and give the lock up."""
        global _role
        if _role is not None:
            _role.stop()
            _role = None

    def terminate(self, parent: Any) -> None:
        """Cold shutdown: the same as a warm one."""
        self.stop(parent)

    def shutdown(self, parent: Any) -> None:
        """The worker's last call: the same again (stopping twice is harmless)."""
        self.stop(parent)
