"""The long-lived engine: one thread owns the scheduler; everything else talks to it through `call`.

The engine thread alternates between control requests (plugin routes, what-if, cluster edits,
profile changes; each runs between two scheduling cycles, so it sees a consistent state) and
turns of the scheduler loop. When nothing is runnable it sleeps until the next due moment or
until a request arrives. Attempts go to the store (history) and to the live publisher
(websockets) through queues; the engine never waits for either.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, TypeVar

from django.conf import settings

from schedconsole.engine import bridge
from schedconsole.engine.operations import Operation, StartSync
from schedconsole.engine.store import NotStored, Store, load_documents

log = logging.getLogger(__name__)
IDLE_WAIT = 0.5
SYNC_SAVE_SECONDS = 10.0  # how often a running sync's mirrored objects are saved (when they changed)
_FIRE_AND_FORGET: Future[Any] = Future()  # marks posted work that nobody waits for
T = TypeVar("T")


class EngineUnavailable(RuntimeError):
    """No engine is running in this process (503)."""


class EngineTimeout(TimeoutError):
    """The engine did not answer in time (504)."""


class EngineHost:
    """Owns one Engine, its thread, its store and its live publisher."""

    def __init__(self) -> None:
        self.engine: bridge.Engine | None = None
        self.store: Store | None = None
        self.live: Any = None
        self._thread: threading.Thread | None = None
        self._requests: deque[tuple[Callable[[], Any], Future[Any]]] = deque()
        self._wake = threading.Event()
        self._stop = False
        self.started_at = 0.0
        self.error: BaseException | None = None
        self._sync_saved_at = 0.0
        self._sync_saved_applied: int | None = None

    @property
    def failed(self) -> bool:
        """Whether the engine loop or its store died of an error (a leader must then step down)."""
        return self.error is not None or (self.store is not None and self.store.failed is not None)

    @property
    def running(self) -> bool:
        """Whether the engine thread is alive."""
        return self._thread is not None and self._thread.is_alive()

    # ----- lifecycle ---------------------------------------------------------------------------
    def start(
        self,
        *,
        live: bool = True,
        seed: int | None = None,
        run: bool = True,
        fence: int | None = None,
        on_fenced: Callable[[], None] | None = None,
    ) -> None:
        """Rebuild the engine from the database and start its thread (`run=False`: build only,
        the caller drives `engine.step()` itself). `fence`: the leader's token, checked by every
        write; `on_fenced` runs (on the store's thread) if another engine has taken over."""
        from schedconsole.engine.state import ensure_state, initial_flags
        from schedconsole.live.publisher import LivePublisher

        document = ensure_state()
        self.store = Store(self.post, fence=fence, on_fenced=on_fenced, on_dropped=self._on_dropped)
        self.store.start()
        self.live = LivePublisher() if live else None
        hooks = bridge.Hooks(on_record=self._on_record, on_change=self.store.put_change, on_bind=self._on_bind)
        top_n, failures = initial_flags()
        if settings.CLUSTER_MODE != "simulated":
            self.engine = _build_remote(document, hooks, settings.ENGINE_SEED if seed is None else seed, top_n, failures)
        else:
            self.engine = bridge.Engine.build(
                document,
                bridge.load_objects(load_documents(), "database"),
                hooks,
                seed=settings.ENGINE_SEED if seed is None else seed,
                debug_top_n=top_n,
                debug_filter_failure=failures,
            )
        self.engine.plugin_timing(settings.PLUGIN_TIMING_EVERY)
        self.engine.set_annotate_results(settings.RESULT_ANNOTATIONS)
        # Work from the engine's own threads (a live cluster's sync) is handed to this loop.
        self.engine.extra["post"] = self.post
        if settings.CLUSTER_MODE == "simulated":
            self._resume_sync()
        if self.live is not None:
            self.live.start()
        self._stop = False
        self.started_at = time.time()
        if run:
            self._thread = threading.Thread(target=self._loop, name="schedconsole-engine", daemon=True)
            self._thread.start()

    def stop(self, *, run_pending: bool = False, timeout: float = 30.0) -> None:
        """Stop after the current cycle; bindings not yet begun are dropped (as if the process died)
        unless `run_pending`; everything already handed to the store is written."""
        self._stop = True
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
        if self.engine is not None:
            self._save_sync(force=True)  # the engine thread has ended: what the sync mirrored is settled
            if run_pending:
                while self.engine.step():
                    pass
            self.engine.stop()
        for _, future in list(self._requests):
            if future is not _FIRE_AND_FORGET and future.set_running_or_notify_cancel():
                future.set_exception(EngineUnavailable("the engine stopped"))
        self._requests.clear()
        if self.store is not None:
            self.store.stop(timeout)
        if self.live is not None:
            self.live.stop()
        self._thread = None
        self.store = None
        self.live = None

    # ----- the continuous sync across restarts ----------------------------------------------------
    def _resume_sync(self) -> None:
        """Start the sync an operator started and did not stop (see schedconsole/cluster/sync.py)
        from what it had mirrored; a failure to connect is kept for the Cluster page."""
        from schedconsole.cluster import sync

        row = sync.intent()
        if row is None or not row.running or self.engine is None:
            return
        op: StartSync = sync.start_operation(row)
        try:
            self.engine.sync_start(op.kubeconfig, op.context, op.in_cluster, op.keep_bindings, known=row.mirrored)
        except bridge.BadInput as exc:
            log.warning("the cluster sync did not resume: %s", exc.message)
            sync.note_resumed(exc.message)
            return
        log.info("the cluster sync resumed (%d objects mirrored before)", len(row.mirrored))
        sync.note_resumed()
        self._sync_saved_applied = None

    def _save_sync(self, force: bool = False) -> None:
        """Save what the running sync has mirrored, if it changed (every SYNC_SAVE_SECONDS, and when
        stopping), on the store's thread once the mirrored objects themselves are committed."""
        engine, store = self.engine, self.store
        if engine is None or store is None or (not force and time.monotonic() - self._sync_saved_at < SYNC_SAVE_SECONDS):
            return
        self._sync_saved_at = time.monotonic()
        applied = engine.sync_applied()
        if applied is None or applied == self._sync_saved_applied:
            return
        snapshot = engine.sync_snapshot()
        if snapshot is None:
            return
        from schedconsole.cluster.sync import save_mirrored

        self._sync_saved_applied = applied
        store.after_commit(lambda: save_mirrored(snapshot))

    # ----- requests ------------------------------------------------------------------------------
    def post(self, fn: Callable[[], None]) -> None:
        """Run fn on the engine thread between cycles (fire and forget)."""
        self._requests.append((fn, _FIRE_AND_FORGET))
        self._wake.set()

    def submit(self, op: Operation[T]) -> Future[T]:
        """Queue an operation for the engine thread; its future carries the JSON result."""
        if not self.running or self.engine is None:
            raise EngineUnavailable("the engine is not running")
        engine = self.engine
        future: Future[T] = Future()
        self._requests.append((lambda: op.run(self.engine or engine), future))
        self._wake.set()
        return future

    def _answer(self, fn: Callable[[], Any], future: Future[Any]) -> None:
        """Run one operation; if it changed cluster objects, answer only once they are stored, so
        an acknowledged change survives the engine's death the moment after."""
        store = self.store
        before = store.changes_queued if store is not None else 0
        try:
            result = fn()
        except BaseException as exc:
            future.set_exception(exc)
            return
        after = store.changes_queued if store is not None else 0
        if store is None or after == before:
            future.set_result(result)
            return

        def settle() -> None:
            # A change the database refused is not acknowledged: the caller hears it was not stored.
            lost = store.dropped_between(before, after)
            if lost:
                future.set_exception(NotStored(f"not stored: the database refused {'; '.join(lost)}"))
            else:
                future.set_result(result)

        store.after_commit(settle)

    def call(self, op: Operation[T], timeout: float | None = None) -> T:
        """Run an operation on the engine thread and return its JSON result."""
        future = self.submit(op)
        try:
            return future.result(timeout if timeout is not None else settings.CONTROL_TIMEOUT_SECONDS)
        except FutureTimeout:
            future.cancel()
            raise EngineTimeout(
                f"the engine did not answer {op.wire_name!r} within {timeout or settings.CONTROL_TIMEOUT_SECONDS}s"
            ) from None

    def _serve_requests(self) -> None:
        while self._requests:
            fn, future = self._requests.popleft()
            if future is _FIRE_AND_FORGET:
                try:
                    fn()
                except Exception as exc:  # work the engine's own threads handed over: counted, the loop goes on
                    if self.engine is not None:
                        self.engine.background_error("posted work", exc)
                    else:
                        log.exception("posted work failed")
                continue
            if not future.set_running_or_notify_cancel():
                continue
            self._answer(fn, future)

    # ----- the loop --------------------------------------------------------------------------------
    def _loop(self) -> None:
        engine = self.engine
        assert engine is not None
        try:
            while not self._stop:
                if self._requests:
                    self._serve_requests()
                    engine = self.engine or engine
                self._save_sync()
                if engine.step():
                    continue
                wake = engine.next_wakeup()
                wait = IDLE_WAIT if wake is None else min(IDLE_WAIT, max(0.0, wake - engine.now()))
                if not self._requests:
                    self._wake.wait(wait)
                self._wake.clear()
                engine.idle_tick()
        except BaseException as exc:
            self.error = exc
            log.exception("the engine loop stopped")

    # ----- hooks from the engine -------------------------------------------------------------------
    def _on_record(self, record: bridge.Record, update: bool) -> None:
        row = self.store.put_record(record, update) if self.store is not None else None
        if self.live is not None and not update:
            self.live.put(record, row)

    def _on_dropped(self, kind: str, key: str, message: str, created: bool) -> None:
        """A write the database refused (on the engine thread): counted, a Warning Event on the object,
        and a pod whose creation was refused forgotten (see `Engine.not_stored`)."""
        if self.engine is not None:
            self.engine.not_stored(kind, key, message, created)

    def _on_bind(self, uid: str, pod: str, node: str, apply: Callable[[], None]) -> None:
        assert self.store is not None
        self.store.put_bind(uid, pod, node, apply)


def _build_remote(document: dict[str, Any], hooks: bridge.Hooks, seed: int, top_n: int, failures: bool) -> bridge.Engine:
    """The engine over a live cluster (SCHEDCONSOLE_MODE cluster or shadow): its objects are the
    cluster's, so only attempts are stored, not objects or bindings."""
    remote_hooks = bridge.Hooks(on_record=hooks.on_record)
    return bridge.Engine.build_remote(
        document,
        remote_hooks,
        mode=settings.CLUSTER_MODE,
        kubeconfig=settings.KUBECONFIG,
        context=settings.KUBE_CONTEXT,
        in_cluster=settings.KUBE_IN_CLUSTER,
        qps=settings.KUBE_API_QPS,
        burst=settings.KUBE_API_BURST,
        shadow_profile=settings.SHADOW_PROFILE,
        lease_namespace=settings.LEASE_NAMESPACE,
        seed=seed,
        debug_top_n=top_n,
        debug_filter_failure=failures,
    )


_host: EngineHost | None = None
_host_lock = threading.Lock()


def get_host() -> EngineHost:
    """This process's engine host (made on first use, started by whoever runs the engine)."""
    global _host
    with _host_lock:
        if _host is None:
            _host = EngineHost()
        return _host
