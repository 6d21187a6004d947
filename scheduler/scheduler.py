"""The scheduler: one queue and one cache for all profiles, a framework per profile (KEP-1451).

As kube-scheduler splits its Scheduler over scheduler.go, schedule_one.go and eventhandlers.go,
`Scheduler` here is the construction and the task loop, with its parts in their own modules:
`schedule_one.ScheduleOne` (the scheduling and binding cycles), `eventhandlers.EventHandlers`
(cluster events into the cache and queue) and `apicalls.ApiCalls` (API work off the scheduling
thread). `run` drives everything on the clock:
with a virtual clock it advances time to the next backoff expiry or Permit timeout instead
of sleeping, and stops when no pod can make further progress: nothing is due but retries
that cannot change anything (the same failure again, with nothing changed in the cluster
since; only the clock moved). Timed events that do change things still run: Permit timeouts,
delayed API calls, and moments plugins register with `wake_at` (reservation or metric expiry).
A host that runs the engine for ever (the console) drives `step`/`next_wakeup` itself and is
not subject to that rule.
"""

from __future__ import annotations

import heapq
import itertools
import random
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, cast

from scheduler.api.objects import Pod
from scheduler.apicalls import STEP_WAIT_SECONDS, ApiCallEvent
from scheduler.cache import Cache
from scheduler.clock import Clock
from scheduler.cluster.contract import AsyncBinder, Cluster, PluginCluster, RemoteCluster
from scheduler.cluster.informer import visible
from scheduler.config.features import FeatureGates
from scheduler.config.types import SchedulerConfiguration, with_gated_plugins
from scheduler.eventhandlers import EventHandlers
from scheduler.framework.batch import opportunistic_batches
from scheduler.framework.interface import PluginFactory, WaitingPod
from scheduler.framework.runtime import Framework, FrameworkError
from scheduler.framework.snapshot import Snapshot
from scheduler.framework.types import (
    ActionType,
    ClusterEvent,
)
from scheduler.frameworkext.extender import Extender
from scheduler.metrics import Metrics
from scheduler.plugins.defaultbinder import NAME as DEFAULT_BINDER
from scheduler.queue import HintMap, SchedulingQueue
from scheduler.records import AttemptRecord
from scheduler.schedule_one import ScheduleOne, WaitingPodImpl

API_WORKERS = 16
"""Threads making API calls (binding cycles, asynchronous preemption) when calls take time."""


@dataclass(frozen=True, slots=True)
class RunEnd:
    """Why `Scheduler.run` returned, and what was left."""

    reason: str
    """finished (no pod pending), no-progress (pods left that cannot progress), max-attempts or until."""
    pending: int
    stuck: tuple[str, ...] = ()
    """Pods (namespace/name) whose retries could change nothing, when the reason is no-progress."""

    def describe(self) -> str:
        """One line for a user: which limit ended the run and what is left."""
        if self.reason == "finished":
            return "finished: every pod was handled"
        if self.reason == "no-progress":
            shown = ", ".join(self.stuck[:3]) + (f" and {len(self.stuck) - 3} more" if len(self.stuck) > 3 else "")
            retrying = f"; retrying {shown} could change nothing" if self.stuck else ""
            return f"stopped: no further progress possible, {self.pending} pod(s) left pending{retrying}"
        return f"stopped at the {'--max-attempts' if self.reason == 'max-attempts' else '--until'} limit, {self.pending} pod(s) left pending"


class ProfileHandle:
    """The handle each profile's plugins receive."""

    def __init__(self, scheduler: Scheduler, profile_name: str) -> None:
        self._scheduler = scheduler
        self.snapshot: Snapshot = scheduler.snapshot
        self.profile_name = profile_name
        self.framework: Framework | None = None

    def now(self) -> float:
        """The scheduler's clock."""
        return self._scheduler.clock.now()

    def cluster(self) -> PluginCluster:
        """The cluster backend."""
        return self._scheduler.cluster

    def waiting_pods(self) -> list[WaitingPod]:
        """Pods held at Permit."""
        return [w for w in self._scheduler.waiting.values()]

    def get_waiting_pod(self, uid: str) -> WaitingPodImpl | None:
        """A pod held at Permit, by uid."""
        return self._scheduler.waiting.get(uid)

    def activate(self, pods: list[Pod]) -> None:
        """Move pods to activeQ."""
        self._scheduler.queue.activate(pods)

    def wake_at(self, moment: float) -> None:
        """Wake the loop at `moment`, when time alone changes this plugin's answers (expiries)."""
        self._scheduler.wake_at(moment)

    @property
    def queue(self) -> SchedulingQueue:
        """The shared scheduling queue (nominated pods live there)."""
        return self._scheduler.queue

    @property
    def scheduler(self) -> Scheduler:
        """The scheduler itself, for plugins that drive asynchronous work (preemption)."""
        return self._scheduler


class Scheduler(ScheduleOne, EventHandlers):
    """Schedules the pending pods of a cluster with one or more profiles."""

    def __init__(
        self,
        config: SchedulerConfiguration,
        cluster: PluginCluster,
        clock: Clock,
        registry: Mapping[str, PluginFactory],
        seed: int | None = None,
        feature_gates: FeatureGates | None = None,
        keep_records: bool = True,
        extender: Extender | None = None,
        metrics: Metrics | None = None,
    ) -> None:
        if feature_gates is not None:
            config = with_gated_plugins(config, feature_gates.enabled)
        self.config = config
        self.cluster: PluginCluster = cluster
        self.clock = clock
        self.feature_gates = feature_gates
        self.snapshot = Snapshot()
        self.cache = Cache(self.snapshot)
        # A host that rebuilds its profiles hands the old registry over so counters keep counting.
        self.metrics = metrics if metrics is not None else Metrics()
        self.rng = random.Random(seed)
        self.next_start_index = 0
        self.waiting: dict[str, WaitingPodImpl] = {}
        self._timers: list[tuple[float, str, str]] = []
        self.tasks: deque[Callable[[], None]] = deque()
        # Tasks due at a later (virtual) moment: asynchronous API calls an injected fault delays.
        self._delayed: list[tuple[float, int, Callable[[], None]]] = []
        self._delayed_seq = itertools.count()
        # Changes of the cluster due at a moment (a reservation's expiry): the run advances to
        # them only while pods wait, since only then can they change an outcome.
        self._timed_events: list[tuple[float, int, Callable[[], None]]] = []
        self._popped = False
        # Progress accounting for run()'s stop rule: a counter of changes (cluster events,
        # Permit timeouts, delayed calls, timed plugin moments) and each pod's last failure.
        self._changes = 0
        self._attempt_marks: dict[str, int] = {}
        self._failures: dict[str, tuple[tuple[Any, ...], int]] = {}
        self._futile: dict[str, int] = {}
        # Pods that failed twice, whatever the failures said, with nothing changed in between (the
        # mark of that moment): a gang group retried by NextPod round after round on an unchanged
        # cluster fails differently each round, yet makes no progress (see `_cycling`).
        self._repeated: dict[str, int] = {}
        self.run_end: RunEnd | None = None
        self.listeners: list[Callable[[AttemptRecord], None]] = []
        # Time each plugin in every Nth attempt (0: never); see `CycleState.plugin_timings`.
        self.plugin_timing_every = 0
        # Keep each attempt's scores before NormalizeScore (the console's result annotations).
        self.keep_raw_scores = False
        # Told of each step of a preemption's API calls as it happens (`note_api_call`).
        self.api_call_listeners: list[Callable[[ApiCallEvent], None]] = []
        self.records: list[AttemptRecord] = []
        self.keep_records = keep_records
        # Koordinator's framework extender: proxied plugin factories, services, hooks, debug flags.
        self.extender = extender if extender is not None else Extender()
        self.lock = self.extender.lock
        self.profiles: dict[str, Framework] = self._build_profiles(config, self.extender.registry(registry))
        self.batches = opportunistic_batches(self.profiles, config, feature_gates, clock.now, self.snapshot, self.metrics)
        first = next(iter(self.profiles.values()))
        pop_from_backoff = True
        if feature_gates is not None:
            pop_from_backoff = bool(feature_gates.enabled("SchedulerPopFromBackoffQ"))
        self.queue = SchedulingQueue(
            less=first.less,
            pre_enqueue=self._pre_enqueue,
            hints=HintMap((name, plugin, event) for name, fwk in self.profiles.items() for event, plugin in fwk.events),
            now=clock.now,
            initial_backoff=float(config.pod_initial_backoff_seconds),
            max_backoff=float(config.pod_max_backoff_seconds),
            pop_from_backoff=pop_from_backoff,
            sort_key=first.sort_key,
        )
        # scheduler_pending_pods is read from the queue whenever metrics are exported.
        self.metrics.pending_source = self.queue.pending
        self.queue.on_error = self.metrics.background_error
        self.extender.bind(self)
        self.listeners.append(self.extender.publish)
        self.first_pop_at: float | None = None
        self.last_bound_at: float | None = None
        self.scheduled_count = 0
        self.attempt_count = 0
        self._every_node = False  # `evaluate(every_node=True)` in progress
        self._attach_api(cluster)

    def _build_profiles(self, config: SchedulerConfiguration, registry: Mapping[str, PluginFactory]) -> dict[str, Framework]:
        """One framework per profile, keyed by schedulerName (KEP-1451)."""
        profiles: dict[str, Framework] = {}
        for index, profile in enumerate(config.profiles):
            handle = ProfileHandle(self, profile.scheduler_name)
            try:
                fwk = Framework.build(profile, registry, handle, self.metrics)
            except FrameworkError as exc:
                # Name the file and the profile, as the config loader's own errors do.
                raise FrameworkError(
                    f"{getattr(config, 'source', '<config>')}: profiles[{index}] ({profile.scheduler_name}): {exc}"
                ) from exc
            handle.framework = fwk
            profiles[profile.scheduler_name] = fwk
        return profiles

    def _attach_api(self, cluster: Cluster) -> None:
        """How API calls are made: with API calls that take wall-clock time, binding cycles and
        asynchronous preemptions run on a small pool, as kube-scheduler's goroutines do, so the
        scheduling loop goes on; a real API server's backend is attached to this lock."""
        self._pool: Any = None
        self._in_flight_api = 0
        self._api_done = threading.Condition(self.lock)
        # Set when work arrives for the loop (a task from another thread, API work finished): `step`
        # waits on it instead of spinning while only API work is in flight.
        self._work_arrived = threading.Event()
        self._on_pool = threading.local()
        remote = bool(getattr(cluster, "remote_api", False))
        if float(getattr(cluster, "api_latency", 0.0) or 0.0) > 0 or remote:
            self._pool = ThreadPoolExecutor(max_workers=API_WORKERS, thread_name_prefix="api")
            cluster.api_wait = self._api_wait
        if remote:
            # A real API server (kube/backend.py): its informers apply changes under this
            # lock, and its requests release the lock on the pool as `_api_wait` does.
            backend = cast(RemoteCluster, cluster)  # it says so with `remote_api`
            backend.attach(self.lock, self._api_unlocked, self.submit)
            backend.on_error = self.metrics.background_error
        # Plain bindings go out from the scheduling thread itself (`_bind_on_loop`), in the
        # profiles whose only Bind plugin is DefaultBinder.
        self._async_binder = cast(AsyncBinder, cluster) if remote and callable(getattr(cluster, "bind_async", None)) else None
        self._default_binder_only = {name for name, fwk in self.profiles.items() if fwk.plugin_names("bind") == [DEFAULT_BINDER]}

    def start(self) -> None:
        """Load the cluster's current state (the informers' initial list) and watch it."""
        for node in self.cluster.list_nodes():
            self.cache.add_node(node)
        self.snapshot.namespaces = {name: self.cluster.namespace_labels(name) for name in self.cluster.namespaces}
        # The informer's initial list holds no Succeeded or Failed pods (see cluster/informer.py).
        pods = [pod for pod in self.cluster.list_pods() if visible(pod)]
        for pod in pods:
            if pod.node_name:
                self.cache.add_pod(pod)
        for pod in pods:
            if not pod.node_name and self._responsible_for(pod) and not pod.terminating:
                self.queue.add(pod)
        self.cluster.watch(self.on_event)
        self._update_pending()
        self.extender.run()

    def submit(self, task: Callable[[], None], delay: float = 0.0) -> None:
        """Run `task` between scheduling cycles, after `delay` seconds of (virtual) time."""
        if delay <= 0:
            self.tasks.append(task)
            self._work_arrived.set()
        else:
            heapq.heappush(self._delayed, (self.clock.now() + delay, next(self._delayed_seq), task))

    def add_timed_event(self, at: float, task: Callable[[], None]) -> None:
        """Run `task` between cycles once the clock reaches `at` (a timed change of the cluster)."""
        heapq.heappush(self._timed_events, (at, next(self._delayed_seq), task))

    def shutdown(self, timeout: float = 30.0) -> None:
        """Wait for API work in flight (answers to this thread's requests for at most `timeout`
        seconds) and stop the pool."""
        self.finish_bindings(timeout)
        if self._pool is not None:
            self._pool.shutdown(wait=True)

    def _release_delayed(self) -> None:
        now = self.clock.now()
        while self._delayed and self._delayed[0][0] <= now:
            self.tasks.append(heapq.heappop(self._delayed)[2])
            self._changes += 1
        # Timed events (expiries) change what scheduling sees: each one counts as progress.
        while self._timed_events and self._timed_events[0][0] <= now:
            self.tasks.append(heapq.heappop(self._timed_events)[2])
            self._changes += 1

    # ----- progress ---------------------------------------------------------------------------
    def wake_at(self, moment: float) -> None:
        """Register a moment at which time alone changes a plugin's answers (a node metric
        expires): the loop wakes then, counts it as a change, and retries unschedulable pods."""

        def retry_unschedulable() -> None:
            self.queue.move_all(ClusterEvent("*", ActionType.ALL, "WildCardEvent"))

        self.add_timed_event(moment, retry_unschedulable)

    def _cycling(self) -> list[str] | None:
        """Every pending pod failed twice with nothing changed since, and nothing is in flight:
        the loop only goes round (PopFromBackoffQ and NextPod keep it busy). The pods, else None."""
        if len(self._repeated) < self._pending_count() or self.waiting or self.tasks or self._delayed:
            return None
        if self._in_flight_api or self._timed_events:
            return None
        mark = self._mark()
        pending = self.queue.pending_uids()
        if any(self._repeated.get(uid) != mark for uid in pending):
            return None
        return sorted(info.pod.key for uid in pending if (info := self.queue.info(uid)) is not None)

    def _only_futile_retries_left(self) -> list[str] | None:
        """The pods waiting for a retry when every such retry is known to change nothing, else None."""
        if self.waiting or self._delayed or self._timed_events or self.tasks:
            return None
        mark = self._mark()
        retrying = self.queue.retrying()
        if any(self._futile.get(qpi.pod.uid) != mark for qpi in retrying):
            return None
        return sorted(qpi.pod.key for qpi in retrying)

    def _run_tasks(self) -> bool:
        ran = False
        self._release_delayed()
        while self.tasks:
            self.contained("task", self.tasks.popleft())
            ran = True
            self._release_delayed()
        return ran

    def _expire_permits(self) -> bool:
        now = self.clock.now()
        due = [t for t in self._timers if t[0] <= now]
        if not due:
            return False
        self._changes += 1
        self._timers = [t for t in self._timers if t[0] > now]
        for _, uid, plugin in due:
            waiting = self.waiting.get(uid)
            if waiting is not None and plugin in waiting.pending:
                waiting.reject(
                    plugin, f"rejected due to timeout after waiting {go_duration(waiting.timeouts[plugin])} at plugin {plugin}"
                )
        return True

    def next_wakeup(self) -> float | None:
        """The next moment something is due: a backoff expiry, a Permit timeout, a delayed task
        or a timed event (`add_timed_event`, `wake_at`) while pods are pending."""
        moments = [t[0] for t in self._timers if t[1] in self.waiting]
        if self._delayed:
            moments.append(self._delayed[0][0])
        expiry = self.queue.next_backoff_expiry()
        if expiry is not None:
            moments.append(expiry)
        if self._timed_events and (self.waiting or any(self.queue.pending().values())):
            moments.append(self._timed_events[0][0])
        return min(moments) if moments else None

    def step(self) -> bool:
        """One turn of the loop without waiting: due tasks, Permit timeouts, one scheduling cycle.

        Returns whether anything happened. A host that owns the loop (the console's engine
        thread) calls this between its own work and waits on `next_wakeup` itself.
        """
        with self.lock:
            self._work_arrived.clear()
            ran = self._poll_bindings()
            ran = self._run_tasks() or ran
            ran = self._expire_permits() or ran
            ran = self._run_tasks() or ran
            record = self.schedule_one()
            if ran or record is not None or self._popped or self.tasks:
                return True
            if not self._in_flight_api:
                return False
        # Only API work is in flight: it will bind, fail or activate pods, and a remote cluster's
        # informers post their changes as tasks. Wait for either (lock released) rather than spin
        # on the lock and the interpreter lock the pool threads need to finish it.
        self._wait_for_api(STEP_WAIT_SECONDS)
        return True

    def flush_queues(self) -> None:
        """Move pods whose backoff expired, and pods left unschedulable too long, back to activeQ."""
        with self.lock:
            self.queue.flush_backoff()
            self.queue.flush_unschedulable_leftover()
            self._update_pending()

    def run(self, max_attempts: int | None = None, until: float | None = None) -> RunEnd:
        """Schedule until no pod can make further progress, or until a limit is hit; say which.

        When nothing is runnable, time moves to the next due moment (a backoff expiry, a Permit
        timeout, a delayed task, a `wake_at` moment): a virtual clock jumps there, the wall clock
        is slept on. Pods left in the unschedulable pool for five minutes are retried as
        upstream's flush does. The run stops when the only things due are retries known to be
        futile (see `_note_failure`), or at `max_attempts` scheduling attempts, or when the next
        due moment lies beyond `until`. A host running for ever uses `step` instead.
        """
        # The caller may have changed what no event reports (a test's fake, a host's setting):
        # futility is judged afresh in every run.
        self._futile.clear()
        self._repeated.clear()
        while True:
            if self._in_flight_api:
                # Let a pool thread whose API call has returned take the lock now, so bindings
                # finish alongside scheduling instead of piling up behind it.
                time.sleep(0)
            # REST handlers read live state under the same lock; it is never held while sleeping.
            with self.lock:
                self._poll_bindings()
                self._run_tasks()
                self._expire_permits()
                self._run_tasks()
                if max_attempts is not None and self.attempt_count >= max_attempts:
                    return self._end("max-attempts")
                if self._repeated:
                    cycling = self._cycling()
                    if cycling is not None:
                        return self._end("no-progress", cycling)
                if self.schedule_one() is not None or self._popped or self.tasks:
                    continue
                answers = bool(self._async_binder is not None and self._async_binder.async_pending)
                if self._in_flight_api and not answers:
                    # API work in flight will bind, fail or activate pods: wait for it.
                    self._api_done.wait(timeout=0.05)
                    continue
                if not answers:
                    wake = self.next_wakeup()
                    if wake is None:
                        return self._end("finished" if not self._pending_count() else "no-progress")
                    if until is not None and wake > until:
                        return self._end("until")
                    stuck = self._only_futile_retries_left()
                    if stuck is not None:
                        return self._end("no-progress", stuck)
                    if self.clock.virtual:
                        self.clock.advance_to(wake)
            if answers:
                # Answers to this thread's own requests (`_bind_on_loop`): wait, lock released.
                self._wait_for_api(STEP_WAIT_SECONDS)
                continue
            if not self.clock.virtual:
                assert wake is not None
                time.sleep(max(0.0, wake - self.clock.now()))
            with self.lock:
                self.queue.flush_backoff()
                self.queue.flush_unschedulable_leftover()

    def _pending_count(self) -> int:
        return sum(self.queue.pending().values()) + len(self.waiting)

    def _end(self, reason: str, stuck: list[str] | None = None) -> RunEnd:
        self._update_pending()
        self.run_end = RunEnd(reason, self._pending_count(), tuple(stuck or ()))
        return self.run_end


def go_duration(seconds: float) -> str:
    """Format seconds as Go's time.Duration prints them (10s, 1m30s, 1.5s)."""
    if seconds < 60:
        return f"{seconds:g}s"
    minutes, rest = divmod(seconds, 60)
    if minutes < 60:
        return f"{int(minutes)}m{rest:g}s"
    hours, minutes = divmod(minutes, 60)
    return f"{int(hours)}h{int(minutes)}m{rest:g}s"


__all__ = ["RunEnd", "Scheduler"]
