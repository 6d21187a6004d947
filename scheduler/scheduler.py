"""The scheduler: one queue and one cache for all profiles, a framework per profile (KEP-1451).

`schedule_one` is kube-scheduler's scheduling cycle (PreFilter, Filter with nominated pods,
PostFilter, Score, host selection, assume, Reserve, Permit); the binding cycle (waiting at
Permit, PreBind, Bind, PostBind) runs after it as a separate task, and a failure there
unreserves, forgets the assumed pod and requeues it. `run` drives everything on the clock:
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
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from scheduler.api.objects import Node, Pod
from scheduler.cache import Cache
from scheduler.clock import Clock
from scheduler.cluster.inflight import Retry
from scheduler.cluster.informer import pod_informer_view, visible
from scheduler.cluster.simulated import APIError, WatchEvent
from scheduler.framework.interface import PluginFactory, WaitingPod
from scheduler.framework.nodeinfo import NodeInfo
from scheduler.framework.runtime import FilterOutcome, Framework, FrameworkError, ScoreOutcome
from scheduler.framework.snapshot import Snapshot
from scheduler.framework.types import (
    FORCE_ACTIVATE,
    ActionType,
    ClusterEvent,
    Code,
    CycleState,
    QueuedPodInfo,
    Status,
    error,
)
from scheduler.frameworkext.extender import Extender
from scheduler.metrics import Metrics
from scheduler.plugins.defaultbinder import NAME as DEFAULT_BINDER
from scheduler.preemption.evaluator import NOMINATING_KEY, VICTIMS_KEY
from scheduler.queue import HintMap, SchedulingQueue
from scheduler.records import AttemptRecord

API_WORKERS = 16
"""Threads making API calls (binding cycles, asynchronous preemption) when calls take time."""
MIN_FEASIBLE_NODES_TO_FIND = 100
STEP_WAIT_SECONDS = 0.005
"""How long `step` waits for work when only API calls are in flight (a host then serves its own
requests; work arriving ends the wait at once)."""
STORAGE_KINDS = ("PersistentVolume", "PersistentVolumeClaim", "StorageClass", "CSINode", "CSIDriver")
_ACTION_LABELS = {ActionType.ADD: "Add", ActionType.DELETE: "Delete", ActionType.UPDATE: "Update"}
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
NO_NODE_AVAILABLE = "0/{} nodes are available"
ERR_NO_NODES_AVAILABLE = "no nodes available to schedule pods"
"""kube-scheduler's ErrNoNodesAvailable: an error status, not a FitError."""


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


def num_feasible_nodes_to_find(percentage: int | None, num_all_nodes: int) -> int:
    """How many feasible nodes to look for before scoring (`numFeasibleNodesToFind`)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    pct = percentage or 0
    if pct == 0:
        pct = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    found = num_all_nodes * pct // 100
    return max(found, MIN_FEASIBLE_NODES_TO_FIND)


def fit_error_message(
    num_all_nodes: int,
    pre_filter_msg: str,
    reasons: Iterable[Iterable[str]],
    post_filter_msg: str,
    reason_counts: Mapping[str, int] | None = None,
) -> str:
    """kube-scheduler's FitError text: a sorted histogram of reasons, then PostFilter's message.

    The histogram comes from `reason_counts` when given (already counted), else from `reasons`.
    """
    msg = NO_NODE_AVAILABLE.format(num_all_nodes) + ":"
    if pre_filter_msg:
        msg += f" {pre_filter_msg}."
    else:
        counts: dict[str, int] = dict(reason_counts) if reason_counts is not None else {}
        if reason_counts is None:
            for node_reasons in reasons:
                for reason in node_reasons:
                    counts[reason] = counts.get(reason, 0) + 1
        parts = sorted(f"{v} {k}" for k, v in counts.items())
        if parts:
            msg += f" {', '.join(parts)}."
    # PostFilter's message is appended as it is, with no period of its own (`FitError.Error`).
    if post_filter_msg:
        msg += f" {post_filter_msg}"
    return msg


class NodeStatusReader:
    """Each node's Filter status for PostFilter (`NodeToStatusReader`); nodes that passed get Success.

    Reads the attempt's arrays directly: no per-node dict is built for thousands of failures.
    """

    __slots__ = ("_index", "_record", "_uniform")

    def __init__(self, record: AttemptRecord) -> None:
        self._record = record
        self._index: dict[str, int] | None = None
        pre = record.pre_filter_statuses
        # A PreFilter rejection gives every node the same status.
        self._uniform = next(iter(pre.values())) if pre else None

    def _status(self, entry: Mapping[str, Any]) -> Status:
        return Status(Code[_CODE_KEYS[entry["code"]]], tuple(entry["reasons"]), entry["plugin"])

    def __call__(self, node_name: str) -> Status:
        if self._uniform is not None:
            return self._status(self._uniform)
        fo = self._record.filter_outcome
        if fo is None:
            return Status()
        if self._index is None:
            names = self._record.names
            self._index = {names[p]: i for i, p in enumerate(fo.failed_positions.tolist())}
        i = self._index.get(node_name)
        if i is None:
            return Status()
        return Status(Code(int(fo.failed_codes[i])), fo.all_reasons()[i], fo.failed_plugins[i])

    def rows_with_code(self, code: Code) -> npt.NDArray[np.int64]:
        """The snapshot rows whose status has this code."""
        if self._uniform is not None:
            if self._uniform["code"] != code.label:
                return np.zeros(0, dtype=np.int64)
            return np.arange(len(self._record.names), dtype=np.int64)
        fo = self._record.filter_outcome
        if fo is None:
            return np.zeros(0, dtype=np.int64)
        rows: npt.NDArray[np.int64] = fo.failed_positions[fo.failed_codes == int(code)]
        return rows

    def names_with_code(self, code: Code) -> list[str]:
        """The nodes whose status has this code (`NodesForStatusCode`, without absent nodes)."""
        if self._uniform is not None:
            return list(self._record.names) if self._uniform["code"] == code.label else []
        fo = self._record.filter_outcome
        if fo is None:
            return []
        names = self._record.names
        return [names[p] for p in fo.failed_positions[fo.failed_codes == int(code)].tolist()]

    def reasons(self) -> list[tuple[str, ...]]:
        """Every failed node's reasons."""
        fo = self._record.filter_outcome
        return fo.all_reasons() if fo is not None else []

    def reason_counts(self) -> dict[str, int]:
        """How many failed nodes gave each reason (for the FailedScheduling histogram)."""
        fo = self._record.filter_outcome
        return fo.reason_counts() if fo is not None else {}


@dataclass(slots=True, eq=False)
class WaitingPodImpl:
    """A pod held at Permit until every waiting plugin allows it, one rejects it, or time runs out."""

    pod: Pod
    node: str
    pending: dict[str, float]
    on_done: Callable[[Status], None]
    timeouts: dict[str, float] = field(default_factory=dict)
    done: bool = False

    def allow(self, plugin: str) -> None:
        """Approve for one plugin; the last approval releases the pod."""
        if self.done:
            return
        self.pending.pop(plugin, None)
        if not self.pending:
            self.done = True
            self.on_done(Status())

    def reject(self, plugin: str, message: str) -> None:
        """Reject the pod."""
        if self.done:
            return
        self.done = True
        self.on_done(Status(Code.UNSCHEDULABLE, (message,), plugin))

    def pending_plugins(self) -> list[str]:
        """Plugins that have not allowed the pod yet."""
        return sorted(self.pending)


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

    def cluster(self) -> Any:
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


class Scheduler:
    """Schedules the pending pods of a cluster with one or more profiles."""

    def __init__(
        self,
        config: Any,
        cluster: Any,
        clock: Clock,
        registry: Mapping[str, PluginFactory],
        seed: int | None = None,
        feature_gates: Any = None,
        keep_records: bool = True,
        extender: Extender | None = None,
        metrics: Metrics | None = None,
    ) -> None:
        self.config = config
        self.cluster = cluster
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
        self.run_end: RunEnd | None = None
        self.listeners: list[Callable[[AttemptRecord], None]] = []
        # Time each plugin in every Nth attempt (0: never); see `CycleState.plugin_timings`.
        self.plugin_timing_every = 0
        # Told of each step of a preemption's API calls as it happens (`note_api_call`).
        self.api_call_listeners: list[Callable[[ApiCallEvent], None]] = []
        self.records: list[AttemptRecord] = []
        self.keep_records = keep_records
        # Koordinator's framework extender: proxied plugin factories, services, hooks, debug flags.
        self.extender = extender if extender is not None else Extender()
        self.lock = self.extender.lock
        registry = self.extender.registry(registry)
        self.profiles: dict[str, Framework] = {}
        for index, profile in enumerate(config.profiles):
            handle = ProfileHandle(self, profile.scheduler_name)
            try:
                fwk = Framework.build(profile, registry, handle, self.metrics)
            except FrameworkError as exc:
                # Name the file and the profile, as the config loader's own errors do.
                raise FrameworkError(f"{getattr(config, 'source', '<config>')}: profiles[{index}] ({profile.scheduler_name}): {exc}") from exc
            handle.framework = fwk
            self.profiles[profile.scheduler_name] = fwk
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
        )
        # scheduler_pending_pods is read from the queue whenever metrics are exported.
        self.metrics.pending_source = self.queue.pending
        self.extender.bind(self)
        self.listeners.append(self.extender.publish)
        self.first_pop_at: float | None = None
        self.last_bound_at: float | None = None
        self.scheduled_count = 0
        self.attempt_count = 0
        # With API calls that take wall-clock time, binding cycles and asynchronous preemptions
        # run on a small pool, as kube-scheduler's goroutines do, so the scheduling loop goes on.
        self._pool: Any = None
        self._in_flight_api = 0
        self._api_done = threading.Condition(self.lock)
        # Set when work arrives for the loop (a task from another thread, API work finished): `step`
        # waits on it instead of spinning while only API work is in flight.
        self._work_arrived = threading.Event()
        self._on_pool = threading.local()
        remote = bool(getattr(cluster, "remote_api", False))
        if float(getattr(cluster, "api_latency", 0.0) or 0.0) > 0 or remote:
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(max_workers=API_WORKERS, thread_name_prefix="api")
            cluster.api_wait = self._api_wait
        if remote:
            # A real API server (cluster/kubernetes.py): its informers apply changes under this
            # lock, and its requests release the lock on the pool as `_api_wait` does.
            cluster.attach(self.lock, self._api_unlocked, self.submit)
        # Plain bindings go out from the scheduling thread itself (`_bind_on_loop`), in the
        # profiles whose only Bind plugin is DefaultBinder.
        self._bind_async = remote and callable(getattr(cluster, "bind_async", None))
        self._default_binder_only = {name for name, fwk in self.profiles.items() if fwk.plugin_names("bind") == [DEFAULT_BINDER]}

    # ----- startup and events --------------------------------------------------------------
    def _pre_enqueue(self, pod: Pod) -> Status:
        fwk = self.profiles.get(pod.scheduler_name)
        return fwk.run_pre_enqueue(pod) if fwk is not None else Status()

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

    def _responsible_for(self, pod: Pod) -> bool:
        return pod.scheduler_name in self.profiles

    def on_event(self, event: WatchEvent) -> None:
        """Apply one cluster change to the cache and the queue."""
        with self.lock:
            self._changes += 1
            if event.kind == "Pod":
                seen = pod_informer_view(event)
                if seen is not None:
                    self._on_pod(seen)
            elif event.kind == "Node":
                self._on_node(event)
            elif event.kind == "Namespace" and event.new is not None:
                self.snapshot.namespaces[event.new.name] = self.cluster.namespace_labels(event.new.name)
            elif event.kind in STORAGE_KINDS:
                # A new PV, claim, class, CSINode or CSIDriver may let pods the volume plugins
                # rejected in; the plugins read these objects from the cluster's listers.
                action = {"ADDED": ActionType.ADD, "DELETED": ActionType.DELETE}.get(event.type, ActionType.UPDATE)
                self.queue.move_all(ClusterEvent(event.kind, action, f"{event.kind}{_ACTION_LABELS[action]}"), event.old, event.new)

    def _on_pod(self, event: WatchEvent) -> None:
        old: Pod | None = event.old
        new: Pod | None = event.new
        if event.type == "DELETED":
            assert old is not None
            if old.node_name or self.cache.is_assumed(old.uid):
                self.cache.remove_pod(old)
                self.queue.move_all(ClusterEvent("Pod", ActionType.DELETE, "AssignedPodDelete"), old, None)
            waiting = self.waiting.get(old.uid)
            if waiting is not None:
                waiting.reject("", "pod was deleted while waiting at Permit")
            self.queue.delete(old)
            return
        assert new is not None
        if new.node_name:
            if old is None or not old.node_name:
                self.cache.add_pod(new)
                self.queue.delete_nominated(new)
                self.queue.move_all(ClusterEvent("Pod", ActionType.ADD, "AssignedPodAdd"), None, new)
            else:
                self.cache.update_pod(old, new)
                if old.labels != new.labels:
                    self.queue.move_all(ClusterEvent("Pod", ActionType.UPDATE_POD_LABEL, "AssignedPodUpdate"), old, new)
            return
        if not self._responsible_for(new) or new.terminating:
            return
        if event.type == "ADDED":
            self.queue.add(new)
        else:
            if new.nominated_node_name:
                self.queue.add_nominated(new, new.nominated_node_name)
            else:
                self.queue.delete_nominated(new)
            if self.queue.where(new.uid) is not None:
                self.queue.update(new)

    def _on_node(self, event: WatchEvent) -> None:
        old: Node | None = event.old
        new: Node | None = event.new
        if event.type == "DELETED":
            assert old is not None
            self.cache.remove_node(old.name)
            self.queue.move_all(ClusterEvent("Node", ActionType.DELETE, "NodeDelete"), old, None)
            return
        assert new is not None
        self.cache.add_node(new)
        if old is None:
            self.queue.move_all(ClusterEvent("Node", ActionType.ADD, "NodeAdd"), None, new)
            return
        action = ActionType(0)
        if old.allocatable != new.allocatable:
            action |= ActionType.UPDATE_NODE_ALLOCATABLE
        if old.labels != new.labels:
            action |= ActionType.UPDATE_NODE_LABEL
        if old.taints != new.taints or old.unschedulable != new.unschedulable:
            action |= ActionType.UPDATE_NODE_TAINT
        if old.annotations != new.annotations:
            action |= ActionType.UPDATE_NODE_ANNOTATION
        if action:
            self.queue.move_all(ClusterEvent("Node", action, "NodeUpdate"), old, new)

    # ----- the scheduling cycle ------------------------------------------------------------
    def schedule_one(self) -> AttemptRecord | None:
        """Pop one pod and run its scheduling cycle; None when nothing is runnable."""
        qpi = self.queue.pop()
        self._popped = qpi is not None
        if qpi is None:
            return None
        if self.first_pop_at is None:
            self.first_pop_at = time.perf_counter()
        pod = qpi.pod
        fwk = self.profiles.get(pod.scheduler_name)
        if fwk is None or pod.terminating or self.cache.is_assumed(pod.uid) or self._bound_meanwhile(pod):
            self.queue.done(pod.uid)
            return None
        if fwk.has("pre_enqueue"):
            gate = fwk.run_pre_enqueue(pod)
            if not gate.success:
                # A pod taken straight from backoffQ skipped PreEnqueue (e.g. while its
                # asynchronous preemption is still running): hold it again, uncounted.
                qpi.attempts -= 1
                self.queue.requeue_failed(qpi, {gate.plugin} if gate.plugin else set(), False)
                self._update_pending()
                return None
        started = time.perf_counter()
        self.attempt_count += 1
        self._attempt_marks[pod.uid] = self._mark()
        state = CycleState()
        record = AttemptRecord(
            at=self.clock.now(),
            pod=pod.key,
            uid=pod.uid,
            profile=fwk.profile_name,
            attempt=qpi.attempts,
            outcome="Unschedulable",
            num_all_nodes=self.snapshot.num_nodes,
            names=self.snapshot.names,
        )
        every = self.plugin_timing_every
        if every and self.attempt_count % every == 0:
            state.plugin_timings = record.plugin_timings = {}
        node, rejectors, status = self._schedule_pod(fwk, state, pod, record)
        if node is None:
            self._handle_failure(fwk, state, qpi, status, rejectors, record, started)
        else:
            self._assume_reserve_permit(fwk, state, qpi, node, record, started)
        self._publish(record)
        return record

    def _bound_meanwhile(self, pod: Pod) -> bool:
        """Whether the informer saw the pod bound (by another scheduler) or gone since it was
        queued: a failed binding requeues a pod that a rival bound first (kube-scheduler's
        "Pod has been assigned to node. Abort adding it back to queue.")."""
        current = self.cluster.get_pod(pod.uid)
        return current is None or bool(current.node_name)

    def _schedule_pod(
        self, fwk: Framework, state: CycleState, pod: Pod, record: AttemptRecord
    ) -> tuple[str | None, set[str], Status]:
        """PreFilter, Filter and Score; returns the chosen node or the failure's status."""
        snap = self.snapshot
        if snap.num_nodes == 0:
            return None, set(), error(ERR_NO_NODES_AVAILABLE)
        t0 = time.perf_counter()
        pre_result, pre_status, pre_rejectors = fwk.run_pre_filter(state, pod)
        record.timings["PreFilter"] = time.perf_counter() - t0
        if not pre_status.success:
            if pre_status.code == Code.ERROR:
                return None, set(), pre_status
            reasons = list(pre_status.reasons)
            record.pre_filter_statuses = {
                name: {"plugin": pre_status.plugin, "code": pre_status.code.label, "reasons": reasons} for name in snap.names
            }
            return None, pre_rejectors, pre_status
        t1 = time.perf_counter()
        outcome = self._find_nodes_that_fit(fwk, state, pod, pre_result)
        record.timings["Filter"] = time.perf_counter() - t1
        record.filter_outcome = outcome
        if outcome.error is not None:
            return None, set(), outcome.error
        feasible = outcome.feasible
        record.feasible_nodes = len(feasible)
        record.evaluated_nodes = len(feasible) + len(outcome.failed_positions)
        if len(feasible) == 0:
            rejectors = outcome.rejectors()
            return None, rejectors, Status(Code.UNSCHEDULABLE, (), "")
        if len(feasible) == 1:
            return snap.names[int(feasible[0])], set(), Status()
        t2 = time.perf_counter()
        scores = fwk.run_score(state, pod, feasible)
        record.timings["Score"] = time.perf_counter() - t2
        if scores.error is not None:
            return None, set(), scores.error
        record.score_outcome = scores
        return snap.names[int(self._select_host(scores))], set(), Status()

    def _find_nodes_that_fit(self, fwk: Framework, state: CycleState, pod: Pod, pre_result: Any) -> FilterOutcome:
        snap = self.snapshot
        n = snap.num_nodes
        nominated_here = self._nominated_positions(pod)
        # A pod nominated by an earlier preemption tries its nominated node first.
        if pod.nominated_node_name and pod.nominated_node_name in snap.position:
            pos = snap.position[pod.nominated_node_name]
            if pre_result is None or pre_result.node_names is None or pod.nominated_node_name in pre_result.node_names:
                first = fwk.find_feasible(
                    state, pod, np.asarray([pos], dtype=np.int64), 1,
                    self._nominated_filter(fwk, state, pod), frozenset(nominated_here & {pos}),
                )
                if first.error is None and len(first.feasible):
                    return first
        order = snap.order
        if self.next_start_index:
            start = self.next_start_index % n
            order = np.concatenate([order[start:], order[:start]])
        if pre_result is not None and pre_result.node_names is not None:
            allowed = np.zeros(n, dtype=np.bool_)
            for name in pre_result.node_names:
                p = snap.position.get(name)
                if p is not None:
                    allowed[p] = True
            order = order[allowed[order]]
        to_find = num_feasible_nodes_to_find(self._percentage(fwk), len(order))
        outcome = fwk.find_feasible(
            state, pod, order, to_find, self._nominated_filter(fwk, state, pod), frozenset(nominated_here)
        )
        if outcome.error is None and n:
            self.next_start_index = (self.next_start_index + outcome.processed) % n
        return outcome

    def _percentage(self, fwk: Framework) -> int | None:
        if fwk.percentage_of_nodes_to_score is not None:
            return int(fwk.percentage_of_nodes_to_score)
        pct = self.config.percentage_of_nodes_to_score
        return None if pct is None else int(pct)

    def _nominated_positions(self, pod: Pod) -> set[int]:
        """Rows of nodes with pods nominated there of equal or higher priority than this pod."""
        if not self.queue.nominated:
            return set()
        prio = pod.effective_priority
        out = set()
        for node, pods in self.queue.nominated.items():
            if any(pi.pod.uid != pod.uid and pi.pod.effective_priority >= prio for pi in pods.values()):
                pos = self.snapshot.position.get(node)
                if pos is not None:
                    out.add(pos)
        return out

    def _nominated_filter(self, fwk: Framework, state: CycleState, pod: Pod) -> Callable[[int], Status]:
        def run(pos: int) -> Status:
            return self.run_filter_with_nominated_pods(fwk, state, pod, self.snapshot.node_infos[pos])

        return run

    def run_filter_with_nominated_pods(self, fwk: Framework, state: CycleState, pod: Pod, info: NodeInfo) -> Status:
        """Filter a node twice when pods of equal or higher priority are nominated to it:
        once as if they were running there, once without (`RunFilterPluginsWithNominatedPods`)."""
        # With phase hooks (frameworkext) the per-node filter runs them first, as Koordinator does.
        run_filters = getattr(fwk, "run_hooked_filter", None) or fwk.run_filter_plugins
        # No pod nominated to this node (the usual case): nothing to add.
        if not self.queue.nominated.get(info.name):
            return run_filters(state, pod, info)
        prio = pod.effective_priority
        nominated = [
            pi for pi in self.queue.nominated_pods_for_node(info.name) if pi.pod.uid != pod.uid and pi.pod.effective_priority >= prio
        ]
        if nominated:
            state_with = state.clone()
            info_with = info.clone()
            for pi in nominated:
                info_with.add_pod(pi)
                status = fwk.run_pre_filter_add_pod(state_with, pod, pi, info_with)
                if not status.success:
                    return status
            status = run_filters(state_with, pod, info_with)
            if not status.success:
                return status
        return run_filters(state, pod, info)

    def _select_host(self, scores: ScoreOutcome) -> int:
        """The highest total; ties are broken uniformly at random (seeded)."""
        totals = scores.totals
        best = int(totals.max())
        tied = np.flatnonzero(totals == best)
        pick = tied[0] if len(tied) == 1 else tied[self.rng.randrange(len(tied))]
        return int(scores.positions[int(pick)])

    # ----- failures ---------------------------------------------------------------------------
    def _handle_failure(
        self,
        fwk: Framework,
        state: CycleState,
        qpi: QueuedPodInfo,
        status: Status,
        rejectors: set[str],
        record: AttemptRecord,
        started: float,
    ) -> None:
        pod = qpi.pod
        is_error = status.code == Code.ERROR
        nominated: str | None = None
        if is_error:
            record.message = status.message
        else:
            statuses = NodeStatusReader(record)
            pre_msg = status.message if record.pre_filter_statuses else ""
            post_msg = ""
            if fwk.has("post_filter"):
                t0 = time.perf_counter()
                nominated, post_status = fwk.run_post_filter(state, pod, statuses)
                record.timings["PostFilter"] = time.perf_counter() - t0
                post_msg = "" if post_status.success else post_status.message
                victims = state.get(VICTIMS_KEY)
                if victims and nominated:
                    record.victims = [v.key for v in victims]
            record.message = fit_error_message(self.snapshot.num_nodes, pre_msg, (), post_msg, {} if pre_msg else statuses.reason_counts())
        record.outcome = "Error" if is_error else ("Nominated" if nominated else "Unschedulable")
        record.nominated_node = nominated
        if nominated:
            self.queue.add_nominated(pod, nominated)
            self._patch_nominated(pod, nominated)
        elif state.get(NOMINATING_KEY) == "":
            self._clear_nominated(pod)
        self.cluster.record("Warning", "FailedScheduling", pod.key, record.message)
        self.queue.requeue_failed(qpi, rejectors, is_error)
        self.metrics.attempt("error" if is_error else "unschedulable", fwk.profile_name, time.perf_counter() - started)
        self._update_pending()
        self._note_failure(pod.uid, (record.outcome, record.message))

    def _clear_nominated(self, pod: Pod) -> None:
        """PostFilter asked to drop the pod's nomination (preemption cannot help it any more)."""
        self.queue.delete_nominated(pod)
        getter = getattr(self.cluster, "get_pod", None)
        current = getter(pod.uid) if callable(getter) else pod
        if current is not None and current.nominated_node_name:
            self._patch_nominated(current, "")

    def _patch_nominated(self, pod: Pod, node: str) -> None:
        what = "nominatedNodeName patch" if node else "nominatedNodeName clear"
        self.note_api_call(pod, pod, what, "started")
        try:
            updated = self.cluster.set_nominated_node(pod, node)
        except APIError as exc:
            self.note_api_call(pod, pod, what, "error", str(exc))
            return
        self.note_api_call(pod, pod, what, "finished")
        qpi = self.queue.info(pod.uid)
        if qpi is not None:
            qpi.pod = updated

    # ----- assume, Reserve, Permit, binding -------------------------------------------------------
    def _assume_reserve_permit(
        self, fwk: Framework, state: CycleState, qpi: QueuedPodInfo, node: str, record: AttemptRecord, started: float
    ) -> None:
        pod = qpi.pod
        record.node = node
        assumed = pod.with_changes(node_name=node)
        self.cache.assume(assumed)
        status = fwk.run_reserve(state, assumed, node)
        if not status.success:
            fwk.run_unreserve(state, assumed, node)
            self.cache.forget(assumed)
            self._fail_after_assume(fwk, qpi, status, record, started, "Rejected")
            return
        permit, waits = fwk.run_permit(state, assumed, node)
        if not permit.success and permit.code != Code.WAIT:
            fwk.run_unreserve(state, assumed, node)
            self.cache.forget(assumed)
            self._fail_after_assume(fwk, qpi, permit, record, started, "Rejected")
            return
        record.outcome = "Scheduled"
        self.queue.delete_nominated(pod)
        if permit.code == Code.WAIT:
            record.outcome = "Waiting"
            now = self.clock.now()

            def released(result: Status) -> None:
                self.waiting.pop(pod.uid, None)
                self.run_api_task(lambda: self._binding_cycle(fwk, state, qpi, assumed, node, started, result, record))

            waiting = WaitingPodImpl(assumed, node, {p: now + t for p, t in waits.items()}, released, dict(waits))
            self.waiting[pod.uid] = waiting
            for plugin, timeout in waits.items():
                self._timers.append((now + timeout, pod.uid, plugin))
            self._update_pending()
            return
        if self._bind_on_loop(fwk, state, qpi, assumed, node, started, record):
            return
        self.run_api_task(lambda: self._binding_cycle(fwk, state, qpi, assumed, node, started, Status(), record))

    def _bind_on_loop(
        self, fwk: Framework, state: CycleState, qpi: QueuedPodInfo, assumed: Pod, node: str, started: float, record: AttemptRecord
    ) -> bool:
        """A remote cluster's binding cycle without a pool thread, when all it has to do is
        DefaultBinder's request: no PreBind plugin has work for this pod (PreBindPreFlight said
        Skip). The request goes out now and its answer finishes the cycle on this thread, from
        `_poll_bindings` between later cycles (see cluster/inflight.py). False: bind on the pool."""
        if not self._bind_async or fwk.profile_name not in self._default_binder_only or getattr(self._on_pool, "active", False):
            return False
        if fwk.run_pre_bind_preflights(state, assumed, node).code != Code.SKIP:
            return False

        def answered(_: Any, failure: BaseException | None) -> None:
            with self.lock:  # held already, unless another scheduler over the cluster polled
                self._in_flight_api -= 1
                self._api_done.notify_all()
                if isinstance(failure, Retry):
                    # Refused for now (429, a 5xx with Retry-After) or sent on a connection the
                    # server had closed: the pool's binding cycle sends it again, as a request on
                    # it would have been retried.
                    retry = failure

                    def again() -> None:
                        if retry.wait > 0:
                            self._api_wait(retry.wait)
                        self._binding_cycle(fwk, state, qpi, assumed, node, started, Status(), record)

                    self.run_api_task(again)
                elif failure is not None:
                    status = error(failure).with_plugin(DEFAULT_BINDER)  # as DefaultBinder reports it
                    self._binding_failed(fwk, state, qpi, assumed, node, status, started, record)
                else:
                    self._binding_succeeded(fwk, state, qpi, assumed, node, started, record)

        if not self.cluster.bind_async(assumed, node, answered):
            return False
        self._in_flight_api += 1
        return True

    def _poll_bindings(self) -> bool:
        """Finish the binding cycles whose answers have arrived (see `_bind_on_loop`)."""
        return bool(self._bind_async and self.cluster.poll_async())

    def finish_bindings(self, timeout: float = 30.0) -> None:
        """Wait for the answers to the binding requests `_bind_on_loop` sent (at most `timeout`
        seconds) and finish their cycles: before a shutdown, or before another scheduler takes
        over the same cluster."""
        deadline = time.monotonic() + timeout
        while self._bind_async and self.cluster.async_pending and time.monotonic() < deadline:
            self._wait_for_api(STEP_WAIT_SECONDS)
            with self.lock:
                self._poll_bindings()

    def _fail_after_assume(
        self, fwk: Framework, qpi: QueuedPodInfo, status: Status, record: AttemptRecord, started: float, outcome: str
    ) -> None:
        is_error = status.code == Code.ERROR
        record.outcome = "Error" if is_error else outcome
        record.node = None
        record.message = status.message
        self._requeue_after_assume(fwk, qpi, status, started)

    def _requeue_after_assume(self, fwk: Framework, qpi: QueuedPodInfo, status: Status, started: float) -> None:
        """A failure after the pod was assumed: event, requeue (the failing plugin rejects it), metrics."""
        is_error = status.code == Code.ERROR
        self.cluster.record("Warning", "FailedScheduling", qpi.pod.key, status.message)
        self.queue.requeue_failed(qpi, {status.plugin} if status.plugin and not is_error else set(), is_error)
        self.metrics.attempt("error" if is_error else "unschedulable", fwk.profile_name, time.perf_counter() - started)
        self._update_pending()
        self._note_failure(qpi.pod.uid, (int(status.code), status.plugin, status.message))

    def _binding_cycle(
        self,
        fwk: Framework,
        state: CycleState,
        qpi: QueuedPodInfo,
        assumed: Pod,
        node: str,
        started: float,
        permit: Status,
        record: AttemptRecord,
    ) -> None:
        if not permit.success:
            self._binding_failed(fwk, state, qpi, assumed, node, permit, started, record)
            return
        status = fwk.run_pre_bind(state, assumed, node)
        if status.success:
            status = fwk.run_bind(state, assumed, node)
            if status.code == Code.SKIP:
                status = error(f"no bind plugin bound pod {assumed.key}")
        if not status.success:
            self._binding_failed(fwk, state, qpi, assumed, node, status, started, record)
            return
        self._binding_succeeded(fwk, state, qpi, assumed, node, started, record)

    def _binding_succeeded(
        self, fwk: Framework, state: CycleState, qpi: QueuedPodInfo, assumed: Pod, node: str, started: float, record: AttemptRecord
    ) -> None:
        if record.outcome == "Waiting":
            # Released from Permit and bound: the attempt's outcome is now known.
            record.outcome = "Scheduled"
            self._publish(record, update=True)
        self.cache.finish_binding(assumed)
        fwk.run_post_bind(state, assumed, node)
        self.queue.done(assumed.uid)
        self._failures.pop(assumed.uid, None)
        self._futile.pop(assumed.uid, None)
        self.scheduled_count += 1
        self.last_bound_at = time.perf_counter()
        self.cluster.record("Normal", "Scheduled", assumed.key, f"Successfully assigned {assumed.key} to {node}")
        self.metrics.attempt("scheduled", fwk.profile_name, self.last_bound_at - started)

    def _binding_failed(
        self,
        fwk: Framework,
        state: CycleState,
        qpi: QueuedPodInfo,
        assumed: Pod,
        node: str,
        status: Status,
        started: float,
        record: AttemptRecord,
    ) -> None:
        fwk.run_unreserve(state, assumed, node)
        self.cache.forget(assumed)
        # The freed resources may let other pods in, as an assigned pod's deletion would.
        self.queue.move_all(ClusterEvent("Pod", ActionType.DELETE, "AssignedPodDelete"), assumed, None)
        is_error = status.code == Code.ERROR
        # Binding belongs to the same attempt: its record is updated, not repeated.
        record.outcome = "Error" if is_error else "Rejected"
        record.message = status.message
        record.node = None
        self._requeue_after_assume(fwk, qpi, status, started)
        self._publish(record, update=True)

    # ----- driving ----------------------------------------------------------------------------
    def _publish(self, record: AttemptRecord, update: bool = False) -> None:
        """Hand a record to the listeners; an update re-sends one already kept."""
        if self.keep_records and not update:
            self.records.append(record)
        for listener in self.listeners:
            listener(record)

    def note_api_call(self, preemptor: Pod, target: Pod, call: str, phase: str, error: str = "") -> None:
        """One step (`started`, `finished`, `error`) of an API call made for a preemption, told to
        `api_call_listeners` when it happens; nothing is built when no one listens."""
        if not self.api_call_listeners:
            return
        event = ApiCallEvent(self.clock.now(), preemptor.key, preemptor.uid, target.key, call, phase, error)
        for listener in self.api_call_listeners:
            listener(event)

    def _update_pending(self) -> None:
        counts = self.queue.pending()
        self.metrics.set_pending(counts)

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
                    task()
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

    def _mark(self) -> int:
        """A number that moves whenever anything a retry depends on may have changed."""
        # Fault rules with a count or an `after` change state without any watch event.
        return self._changes + int(getattr(self.cluster, "state_generation", 0))

    def _note_failure(self, uid: str, failure: tuple[Any, ...]) -> None:
        """Remember a failed attempt; it was futile if it repeated the previous failure with
        nothing changed since that one, nor during the attempt."""
        end = self._mark()
        start = self._attempt_marks.pop(uid, None)
        previous = self._failures.get(uid)
        self._failures[uid] = (failure, end)
        if previous is not None and previous == (failure, start) and start == end:
            self._futile[uid] = end
        else:
            self._futile.pop(uid, None)

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
            self.tasks.popleft()()
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
                waiting.reject(plugin, f"rejected due to timeout after waiting {go_duration(waiting.timeouts[plugin])} at plugin {plugin}")
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

    def _wait_for_api(self, timeout: float) -> None:
        """Wait (lock released) for API work in flight: an answer to a request this thread sent
        (`_bind_on_loop`), else a task posted or pool work ended."""
        if self._bind_async and self.cluster.async_pending:
            self.cluster.wait_async(timeout)
        else:
            self._work_arrived.wait(timeout)

    def flush_queues(self) -> None:
        """Move pods whose backoff expired, and pods left unschedulable too long, back to activeQ."""
        with self.lock:
            self.queue.flush_backoff()
            self.queue.flush_unschedulable_leftover()
            self._update_pending()

    def evaluate(self, pod: Pod, profile: str | None = None) -> AttemptRecord:
        """A what-if: PreFilter, Filter and Score for `pod` against the current snapshot.

        Nothing changes: no assume, no PostFilter (preemption would make API calls), no events,
        and the sampling start index and tie-break generator are restored afterwards.
        """
        name = profile or pod.scheduler_name
        fwk = self.profiles.get(name)
        if fwk is None:
            raise KeyError(name)
        with self.lock:
            start_index, rng_state = self.next_start_index, self.rng.getstate()
            try:
                record = AttemptRecord(
                    at=self.clock.now(),
                    pod=pod.key,
                    uid=pod.uid,
                    profile=name,
                    attempt=0,
                    outcome="Unschedulable",
                    num_all_nodes=self.snapshot.num_nodes,
                    names=list(self.snapshot.names),
                )
                node, _, status = self._schedule_pod(fwk, CycleState(), pod, record)
                if node is not None:
                    record.outcome, record.node = "Scheduled", node
                elif status.code == Code.ERROR:
                    record.outcome, record.message = "Error", status.message
                else:
                    statuses = NodeStatusReader(record)
                    pre_msg = status.message if record.pre_filter_statuses else ""
                    record.message = fit_error_message(self.snapshot.num_nodes, pre_msg, (), "", {} if pre_msg else statuses.reason_counts())
                return record
            finally:
                self.next_start_index = start_index
                self.rng.setstate(rng_state)

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
                if self.schedule_one() is not None or self._popped or self.tasks:
                    continue
                answers = bool(self._bind_async and self.cluster.async_pending)
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


_CODE_KEYS = {
    "Success": "SUCCESS",
    "Error": "ERROR",
    "Unschedulable": "UNSCHEDULABLE",
    "UnschedulableAndUnresolvable": "UNSCHEDULABLE_AND_UNRESOLVABLE",
    "Wait": "WAIT",
    "Skip": "SKIP",
    "Pending": "PENDING",
}

__all__ = ["ERR_NO_NODES_AVAILABLE", "FORCE_ACTIVATE", "RunEnd", "Scheduler", "fit_error_message", "num_feasible_nodes_to_find"]
