"""API work off the scheduling thread: binding cycles and asynchronous preemption run on a small pool
when API calls take wall-clock time (kube-scheduler runs them on goroutines), with the scheduler's lock
released while a request is in flight; the steps of a preemption's calls are told to listeners."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from scheduler.api.objects import Pod
from scheduler.clock import Clock
from scheduler.cluster.contract import AsyncBinder, Cluster
from scheduler.metrics import Metrics

STEP_WAIT_SECONDS = 0.005
"""How long `step` waits for work when only API calls are in flight (a host then serves its own
requests; work arriving ends the wait at once)."""


@dataclass(frozen=True, slots=True)
class ApiCallEvent:
    """One step of an API call made for a preemption: the preemptor, the pod the call is about,
    the call (`DisruptionTarget patch`, `delete`, `nominatedNodeName patch`, ...) and its phase."""

    at: float
    preemptor: str
    preemptor_uid: str
    target: str
    call: str
    phase: str
    error: str = ""


class ApiCalls:
    """The Scheduler's API work off the scheduling thread (a part of `Scheduler`)."""

    _api_done: threading.Condition
    _async_binder: AsyncBinder | None
    _in_flight_api: int
    _on_pool: threading.local
    _pool: Any
    _work_arrived: threading.Event
    api_call_listeners: list[Callable[[ApiCallEvent], None]]
    clock: Clock
    cluster: Cluster
    lock: threading.RLock
    metrics: Metrics
    tasks: deque[Callable[[], None]]

    def note_api_call(self, preemptor: Pod, target: Pod, call: str, phase: str, error: str = "") -> None:
        """One step (`started`, `finished`, `error`) of an API call made for a preemption, told to
        `api_call_listeners` when it happens; nothing is built when no one listens."""
        if not self.api_call_listeners:
            return
        event = ApiCallEvent(self.clock.now(), preemptor.key, preemptor.uid, target.key, call, phase, error)
        for listener in self.api_call_listeners:
            listener(event)

    def contained(self, source: str, call: Callable[..., Any], *args: Any) -> None:
        """Run work beside the scheduling cycles (a task, an Event, a listener, a binding's
        answer): an exception is logged, counted in `schedconsole_background_errors_total{source}`
        (the Cluster page lists it) and the loop goes on, as kube-scheduler logs and carries on."""
        try:
            call(*args)
        except Exception as exc:
            self.metrics.background_error(source, exc)

    @property
    def api_calls_off_thread(self) -> bool:
        """Whether API work (binding, asynchronous preemption) runs on the pool."""
        return self._pool is not None

    def run_api_task(self, task: Callable[[], None]) -> None:
        """Run work that makes API calls: on the pool when calls take time, else between cycles."""
        if self._pool is None:
            self.tasks.append(task)
            return
        self._in_flight_api += 1
        self._pool.submit(self._run_on_pool, task)

    def _run_on_pool(self, task: Callable[[], None]) -> None:
        self._on_pool.active = True
        try:
            with self.lock:
                try:
                    self.contained("api task", task)
                finally:
                    self._in_flight_api -= 1
                    self._api_done.notify_all()
                    self._work_arrived.set()
        finally:
            self._on_pool.active = False

    def _api_wait(self, seconds: float) -> None:
        """An API call's wall-clock wait: a pool thread lets the engine go on meanwhile; the
        scheduling thread blocks, as a synchronous call blocks kube-scheduler's loop."""
        if getattr(self._on_pool, "active", False):
            self.lock.release()
            try:
                time.sleep(seconds)
            finally:
                self.lock.acquire()
        else:
            time.sleep(seconds)

    def _api_unlocked(self, call: Callable[[], Any]) -> Any:
        """Make a remote API call: on the pool the lock is released meanwhile (like `_api_wait`)."""
        if not getattr(self._on_pool, "active", False):
            return call()
        self.lock.release()
        try:
            return call()
        finally:
            self.lock.acquire()

    def _wait_for_api(self, timeout: float) -> None:
        """Wait (lock released) for API work in flight: an answer to a request this thread sent
        (`_bind_on_loop`), else a task posted or pool work ended."""
        binder = self._async_binder
        if binder is not None and binder.async_pending:
            binder.wait_async(timeout)
        else:
            self._work_arrived.wait(timeout)
