"""The scheduling queue: activeQ, backoffQ and the unschedulable pool (`internal/queue`).

One queue serves every profile (KEP-1451). activeQ is ordered by the QueueSort plugin;
backoffQ by backoff expiry; pods rejected by plugins wait in the unschedulable pool until a
cluster event that one of their rejecting plugins registered for moves them, or until they
have waited five minutes. PreEnqueue gates pods before they reach activeQ.

Queueing hints (SchedulerQueueingHints, GA and locked on): the pool is indexed by rejecting
plugin, so an event asks only the pods whose rejectors registered for it; each such plugin's
hint (`isSchedulableAfter...`, given the event's old and new object) answers Queue or
QueueSkip, and only a Queue moves the pod to backoffQ or activeQ. A registration without a
hint queues on every matching event.

NextPod (Koordinator's `NextPodPlugin`, frameworkext/framework_extender_factory.go
`InitScheduler`): when a plugin is set as `next_pod`, `pop` asks it first; a pod it names is taken
out of wherever it waits (activeQ, backoffQ, the pool, gated) and scheduled before any other.
"""

from __future__ import annotations

import enum
import heapq
import itertools
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from scheduler.api.objects import Pod
from scheduler.framework.nodeinfo import PodInfo
from scheduler.framework.types import ActionType, ClusterEvent, QueuedPodInfo, QueueingHint, QueueingHintFn, Status

UNSCHEDULABLE_MAX_WAIT = 300.0  # podMaxInUnschedulablePodsDuration


@dataclass(slots=True)
class _Active:
    qpi: QueuedPodInfo
    seq: int
    less: Callable[[QueuedPodInfo, QueuedPodInfo], bool]
    taken: bool = False  # taken out of order by NextPod: skipped when it surfaces

    def __lt__(self, other: _Active) -> bool:
        if self.less(self.qpi, other.qpi):
            return True
        if self.less(other.qpi, self.qpi):
            return False
        return self.seq < other.seq


class Strategy(enum.IntEnum):
    """Where an event sends a pod from the unschedulable pool (`queueingStrategy`)."""

    SKIP = 0
    AFTER_BACKOFF = 1
    IMMEDIATELY = 2


def is_wildcard(event: ClusterEvent) -> bool:
    """An event every plugin cares about (WildCardEvent, UnschedulableTimeout, ForceActivate)."""
    return event.resource == "*" and event.action == ActionType.ALL


class HintMap:
    """The events each profile's plugins registered, with their queueing hints (`QueueingHintMap`).

    Answers, per observed event, which plugins registered a matching event (to pick pods from the
    pool's index) and, per profile, the (plugin, hint) pairs to ask; both are cached per
    (resource, action), since matching never reads the label.
    """

    __slots__ = ("_by_profile", "_hits", "_plugins")

    def __init__(self, registered: Iterable[tuple[str, str, ClusterEvent]]) -> None:
        """`registered`: (profile, plugin, registered event) triples in registration order."""
        self._by_profile: dict[str, list[tuple[str, ClusterEvent]]] = {}
        for profile, plugin, event in registered:
            self._by_profile.setdefault(profile, []).append((plugin, event))
        self._hits: dict[tuple[str, str, int], tuple[tuple[str, QueueingHintFn | None], ...]] = {}
        self._plugins: dict[tuple[str, int], frozenset[str]] = {}

    def hints(self, profile: str, event: ClusterEvent) -> tuple[tuple[str, QueueingHintFn | None], ...] | None:
        """(plugin, hint) for every registration of `profile` matching `event`; None for an unknown profile."""
        key = (profile, event.resource, int(event.action))
        found = self._hits.get(key)
        if found is None:
            entries = self._by_profile.get(profile)
            if entries is None:
                return None
            found = tuple((plugin, registered.hint) for plugin, registered in entries if registered.matches(event))
            self._hits[key] = found
        return found

    def plugins(self, event: ClusterEvent) -> frozenset[str]:
        """Plugins of any profile that registered an event matching `event`."""
        key = (event.resource, int(event.action))
        found = self._plugins.get(key)
        if found is None:
            found = frozenset(
                plugin for entries in self._by_profile.values() for plugin, registered in entries if registered.matches(event)
            )
            self._plugins[key] = found
        return found


class _Places(dict[str, str]):
    """uid -> where the pod is (active, backoff, ...), with a running count per place, so the
    pending-pods gauge costs nothing per failure however many pods the queue holds."""

    __slots__ = ("counts",)

    def __init__(self) -> None:
        super().__init__()
        self.counts: dict[str, int] = {}

    def __setitem__(self, uid: str, where: str) -> None:
        old = self.get(uid)
        if old is not None:
            self.counts[old] -= 1
        self.counts[where] = self.counts.get(where, 0) + 1
        super().__setitem__(uid, where)

    def __delitem__(self, uid: str) -> None:
        self.counts[self[uid]] -= 1
        super().__delitem__(uid)

    def pop(self, uid: str, default: Any = None) -> Any:
        """dict.pop, keeping the counts."""
        if uid in self:
            self.counts[self[uid]] -= 1
        return super().pop(uid, default)


class _Pool:
    """The unschedulable pool: pods by uid in arrival order, indexed by rejecting plugin.

    An event asks only the pods one of whose rejectors registered for it (and the pods no
    plugin rejected, which any event moves), never the whole pool.
    """

    __slots__ = ("_by_plugin", "_order", "_pods", "_rejectors", "_seq", "_unrejected")

    def __init__(self) -> None:
        self._pods: dict[str, QueuedPodInfo] = {}
        self._order: dict[str, int] = {}
        self._rejectors: dict[str, frozenset[str]] = {}
        self._by_plugin: dict[str, dict[str, None]] = {}
        self._unrejected: dict[str, None] = {}
        self._seq = itertools.count()

    def __setitem__(self, uid: str, qpi: QueuedPodInfo) -> None:
        # As a dict: replacing a pod keeps its place in the arrival order.
        if uid in self._pods:
            self._unindex(uid)
        else:
            self._order[uid] = next(self._seq)
        self._pods[uid] = qpi
        rejectors = frozenset(qpi.unschedulable_plugins | qpi.pending_plugins)
        self._rejectors[uid] = rejectors
        if not rejectors:
            self._unrejected[uid] = None
        for plugin in rejectors:
            self._by_plugin.setdefault(plugin, {})[uid] = None

    def pop(self, uid: str, default: QueuedPodInfo | None = None) -> QueuedPodInfo | None:
        """Remove a pod, returning it (or default)."""
        qpi = self._pods.pop(uid, None)
        if qpi is None:
            return default
        del self._order[uid]
        self._unindex(uid)
        return qpi

    def _unindex(self, uid: str) -> None:
        rejectors = self._rejectors.pop(uid)
        if not rejectors:
            del self._unrejected[uid]
        for plugin in rejectors:
            bucket = self._by_plugin[plugin]
            del bucket[uid]
            if not bucket:
                del self._by_plugin[plugin]

    def __delitem__(self, uid: str) -> None:
        if self.pop(uid) is None:
            raise KeyError(uid)

    def __len__(self) -> int:
        return len(self._pods)

    def __contains__(self, uid: object) -> bool:
        return uid in self._pods

    def __iter__(self) -> Iterator[str]:
        return iter(self._pods)

    def get(self, uid: str) -> QueuedPodInfo | None:
        """A pod by uid."""
        return self._pods.get(uid)

    def items(self) -> list[tuple[str, QueuedPodInfo]]:
        """(uid, pod) pairs in arrival order."""
        return list(self._pods.items())

    def values(self) -> list[QueuedPodInfo]:
        """Pods in arrival order."""
        return list(self._pods.values())

    def rejected_by(self, plugins: Collection[str]) -> list[tuple[str, QueuedPodInfo]]:
        """(uid, pod) pairs, in arrival order, of pods that no plugin or one of `plugins` rejected."""
        uids: set[str] = set(self._unrejected)
        for plugin in plugins:
            bucket = self._by_plugin.get(plugin)
            if bucket:
                uids.update(bucket)
        if len(uids) == len(self._pods):
            return list(self._pods.items())
        order = self._order
        pods = self._pods
        return [(uid, pods[uid]) for uid in sorted(uids, key=order.__getitem__)]


class SchedulingQueue:
    """kube-scheduler's PriorityQueue over a clock that may be virtual."""

    def __init__(
        self,
        less: Callable[[QueuedPodInfo, QueuedPodInfo], bool],
        pre_enqueue: Callable[[Pod], Status],
        hints: HintMap,
        now: Callable[[], float],
        initial_backoff: float = 1.0,
        max_backoff: float = 10.0,
        pop_from_backoff: bool = True,
        sort_key: Callable[[QueuedPodInfo], tuple[Any, ...]] | None = None,
    ) -> None:
        """`hints`: the events each profile's plugins registered, with their queueing hints;
        `sort_key`: `less` as a key, when the QueueSort plugin has one."""
        self._less = less
        self._sort_key = sort_key
        self._pre_enqueue = pre_enqueue
        self.hints = hints
        self._now = now
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self.pop_from_backoff = pop_from_backoff
        # Heap items: (*sort key, seq, entry) when the QueueSort plugin gives a key (tuples compare
        # without a Python call), else (entry,) ordered by `less`.
        self._active: list[tuple[Any, ...]] = []
        self._backoff: list[tuple[float, int, QueuedPodInfo]] = []
        self._unschedulable = _Pool()
        self._where = _Places()
        self._infos: dict[str, QueuedPodInfo] = {}
        self._seq = itertools.count()
        self.scheduling_cycle = 0
        self._in_flight: dict[str, int] = {}
        # Events seen while pods were in flight (`inFlightEvents`), with their objects.
        self._events: list[tuple[ClusterEvent, Any, Any]] = []
        # The position of `_events[0]` among all events recorded; `_in_flight` holds positions.
        self._events_base = 0
        self._error_pods: set[str] = set()
        self.nominated: dict[str, dict[str, PodInfo]] = {}
        self._nominated_node: dict[str, str] = {}
        # The NextPod plugin (name, callable) consulted before activeQ; see the module docstring.
        self.next_pod: tuple[str, Callable[[], Pod | None]] | None = None
        # The activeQ entry of each pod there, so that NextPod can take one out of order.
        self._active_entry: dict[str, _Active] = {}
        # Told of a queueing hint that raised (the Scheduler counts it in its metrics).
        self.on_error: Callable[[str, BaseException], None] = lambda source, exc: None

    # ----- adding ------------------------------------------------------------------------
    def add(self, pod: Pod) -> None:
        """A new pending pod: gated by PreEnqueue, else into activeQ.

        Its `status.nominatedNodeName` reaches the nominator only when it enters activeQ, as in
        kube-scheduler's `moveToActiveQ`: a gated pod holds nothing on the node another
        component nominated it to.
        """
        now = self._now()
        qpi = QueuedPodInfo(pod=pod, timestamp=now)
        self._infos[pod.uid] = qpi
        if self._to_active_or_gated(qpi) and pod.nominated_node_name:
            self.add_nominated(pod, pod.nominated_node_name)

    def _to_active_or_gated(self, qpi: QueuedPodInfo) -> bool:
        status = self._pre_enqueue(qpi.pod)
        if not status.success:
            qpi.gated_by = status.plugin
            qpi.gated_message = status.message
            qpi.unschedulable_plugins = {status.plugin} if status.plugin else set()
            self._unschedulable[qpi.pod.uid] = qpi
            self._where[qpi.pod.uid] = "gated"
            return False
        qpi.gated_by = ""
        qpi.gated_message = ""
        seq = next(self._seq)
        entry = _Active(qpi, seq, self._less)
        key = self._sort_key
        heapq.heappush(self._active, (*key(qpi), seq, entry) if key is not None else (entry,))
        if self.next_pod is not None:
            self._active_entry[qpi.pod.uid] = entry
        self._where[qpi.pod.uid] = "active"
        return True

    def _backoff_duration(self, qpi: QueuedPodInfo) -> float:
        if qpi.attempts == 0:
            return 0.0
        duration = self.initial_backoff
        for _ in range(1, qpi.attempts):
            if duration > self.max_backoff - duration:
                return self.max_backoff
            duration += duration
        return duration

    def _to_backoff_or_active(self, qpi: QueuedPodInfo) -> None:
        expiry = qpi.timestamp + self._backoff_duration(qpi)
        if expiry > self._now():
            qpi.backoff_until = expiry
            heapq.heappush(self._backoff, (expiry, next(self._seq), qpi))
            self._where[qpi.pod.uid] = "backoff"
        else:
            self._to_active_or_gated(qpi)

    # ----- popping and failures ---------------------------------------------------------------
    def pop(self) -> QueuedPodInfo | None:
        """The next pod to schedule, or None. With PopFromBackoffQ, an empty activeQ takes
        the backoffQ pod closest to expiry (pods that failed with an error excepted)."""
        self.flush_backoff()
        if self.next_pod is not None:
            pulled = self._pull()
            if pulled is not None:
                return pulled
        while self._active or self._backoff:
            if self._active:
                top = heapq.heappop(self._active)[-1]
                if top.taken:
                    continue
                qpi = top.qpi
                if self.next_pod is not None:
                    self._active_entry.pop(qpi.pod.uid, None)
            elif self.pop_from_backoff:
                candidates = [
                    e
                    for e in self._backoff
                    if e[2].pod.uid not in self._error_pods and self._where.get(e[2].pod.uid) == "backoff"
                ]
                if not candidates:
                    return None
                entry = min(candidates)
                self._backoff.remove(entry)
                heapq.heapify(self._backoff)
                qpi = entry[2]
            else:
                return None
            if self._where.get(qpi.pod.uid) not in ("active", "backoff"):
                continue  # a stale heap entry (deleted or moved since)
            qpi.pulled_by = ""
            return self._start(qpi)
        return None

    def _start(self, qpi: QueuedPodInfo) -> QueuedPodInfo:
        self._where[qpi.pod.uid] = "in-flight"
        self.scheduling_cycle += 1
        qpi.attempts += 1
        if qpi.initial_attempt_timestamp is None:
            qpi.initial_attempt_timestamp = self._now()
        self._in_flight[qpi.pod.uid] = self._events_base + len(self._events)
        return qpi

    def _pull(self) -> QueuedPodInfo | None:
        """The pod the NextPod plugin names, taken out of the queue; None when it names none.
        A pod the queue does not hold waiting (another scheduler's, in flight) is passed over."""
        assert self.next_pod is not None
        name, next_pod = self.next_pod
        while (pod := next_pod()) is not None:
            uid = pod.uid
            qpi = self._infos.get(uid)
            where = self._where.get(uid)
            if qpi is None or where not in ("active", "backoff", "unschedulable", "gated"):
                continue
            entry = self._active_entry.pop(uid, None)
            if entry is not None:
                entry.taken = True
            self._unschedulable.pop(uid, None)
            qpi.gated_by = qpi.gated_message = ""
            qpi.pulled_by = name
            return self._start(qpi)
        return None

    def done(self, uid: str) -> None:
        """The pod's scheduling attempt finished (it was bound, requeued or deleted)."""
        self._in_flight.pop(uid, None)
        self._prune_events()
        if self._where.get(uid) == "in-flight":
            self._where.pop(uid, None)
            self._infos.pop(uid, None)

    def requeue_failed(self, qpi: QueuedPodInfo, rejectors: set[str], is_error: bool) -> None:
        """A failed attempt: backoffQ when it errored or an event during the attempt may help it,
        else the unschedulable pool (`AddUnschedulableIfNotPresent`)."""
        uid = qpi.pod.uid
        if self._where.get(uid) != "in-flight":
            return
        qpi.timestamp = self._now()
        qpi.unschedulable_plugins = set(rejectors)
        start = self._in_flight.get(uid, self._events_base + len(self._events)) - self._events_base
        missed = self._events[max(0, start) :]
        self._in_flight.pop(uid, None)
        if is_error:
            self._error_pods.add(uid)
        else:
            self._error_pods.discard(uid)
        if is_error:
            self._to_backoff_or_active(qpi)
        else:
            # `determineSchedulingHintForInFlightPod`: did an event during the attempt help?
            strategy = Strategy.AFTER_BACKOFF if not rejectors else Strategy.SKIP
            for event, old, new in missed:
                if strategy != Strategy.SKIP and not qpi.pending_plugins:
                    break
                strategy = max(strategy, self.worth_requeuing(qpi, event, old, new))
                if strategy == Strategy.IMMEDIATELY:
                    break
            if strategy == Strategy.SKIP:
                self._unschedulable[uid] = qpi
                self._where[uid] = "unschedulable"
            else:
                self._requeue(qpi, strategy)
        self._prune_events()

    def _prune_events(self) -> None:
        """Forget events no pod in flight can have missed (upstream trims `inFlightEvents` in
        `done` the same way), so a long run with bindings always in flight keeps few."""
        events = self._events
        if not self._in_flight:
            self._events_base += len(events)
            events.clear()
            return
        # Positions grow in pop order and the dict keeps that order: the first is the oldest.
        drop = next(iter(self._in_flight.values())) - self._events_base
        # Trim in large steps: a deletion from the front moves the rest of the list.
        if drop > 0 and (drop >= 256 or 2 * drop >= len(events)):
            del events[:drop]
            self._events_base += drop

    # ----- events ---------------------------------------------------------------------------
    def worth_requeuing(self, qpi: QueuedPodInfo, event: ClusterEvent, old: Any = None, new: Any = None) -> Strategy:
        """`isPodWorthRequeuing`: ask the hints of the plugins that rejected the pod and
        registered for the event. A Queue from a plugin the pod is pending on skips backoff."""
        pending = qpi.pending_plugins
        rejectors = qpi.unschedulable_plugins | pending
        if not rejectors:
            return Strategy.AFTER_BACKOFF
        if is_wildcard(event):
            # A wildcard event carrying a pod (ForceActivate) is for that pod alone.
            if new is not None and (not isinstance(new, Pod) or new.uid != qpi.pod.uid):
                return Strategy.SKIP
            return Strategy.AFTER_BACKOFF
        entries = self.hints.hints(qpi.pod.scheduler_name, event)
        if entries is None:
            return Strategy.AFTER_BACKOFF
        strategy = Strategy.SKIP
        for plugin, hint in entries:
            if plugin not in rejectors:
                continue
            if hint is not None:
                try:
                    answer = hint(qpi.pod, old, new)
                except Exception as exc:
                    # As upstream: a hint that fails is logged and queues the pod.
                    self.on_error(f"QueueingHint/{plugin}", exc)
                    answer = QueueingHint.QUEUE
                if answer == QueueingHint.QUEUE_SKIP:
                    continue
            if plugin in pending:
                return Strategy.IMMEDIATELY
            if not pending:
                return Strategy.AFTER_BACKOFF
            strategy = Strategy.AFTER_BACKOFF
        return strategy

    def _requeue(self, qpi: QueuedPodInfo, strategy: Strategy) -> None:
        """`requeuePodWithQueueingStrategy` for a pod out of the pool (strategy is not SKIP)."""
        if strategy == Strategy.AFTER_BACKOFF and self._where.get(qpi.pod.uid) != "gated":
            self._to_backoff_or_active(qpi)
        else:
            self._to_active_or_gated(qpi)

    def move_all(
        self, event: ClusterEvent, old: Any = None, new: Any = None, pre_check: Callable[[Pod], bool] | None = None
    ) -> int:
        """`MoveAllToActiveOrBackoffQueue`: move the pods whose rejectors' hints answer Queue
        for this event (with the object before and after it) out of the unschedulable pool.

        Only pods rejected by a plugin that registered for the event, or by none, are asked;
        with `pre_check`, only pods it accepts (upstream's `PreEnqueueCheck`).
        """
        wildcard = is_wildcard(event)
        plugins = self.hints.plugins(event) if not wildcard else frozenset()
        if self._in_flight and (wildcard or plugins):
            self._events.append((event, old, new))
        pool = self._unschedulable
        candidates = pool.items() if wildcard else pool.rejected_by(plugins)
        moved = 0
        if pre_check is not None:
            candidates = [(uid, qpi) for uid, qpi in candidates if pre_check(qpi.pod)]
        for uid, qpi in candidates:
            strategy = self.worth_requeuing(qpi, event, old, new)
            if strategy == Strategy.SKIP:
                continue
            del pool[uid]
            moved += 1
            self._requeue(qpi, strategy)
        return moved

    def activate(self, pods: list[Pod]) -> None:
        """Move these pods straight to activeQ if they wait in backoffQ or the pool."""
        for pod in pods:
            where = self._where.get(pod.uid)
            qpi = self._infos.get(pod.uid)
            if qpi is None or where not in ("backoff", "unschedulable", "gated"):
                continue
            self._unschedulable.pop(pod.uid, None)
            self._to_active_or_gated(qpi)

    def flush_backoff(self) -> None:
        """Pods whose backoff expired go to activeQ."""
        now = self._now()
        while self._backoff and self._backoff[0][0] <= now:
            _, _, qpi = heapq.heappop(self._backoff)
            if self._where.get(qpi.pod.uid) == "backoff":
                self._to_active_or_gated(qpi)

    def flush_unschedulable_leftover(self) -> int:
        """Pods in the pool for five minutes or more are retried."""
        now = self._now()
        stale = [
            q
            for q in self._unschedulable.values()
            if now - q.timestamp >= UNSCHEDULABLE_MAX_WAIT and self._where.get(q.pod.uid) == "unschedulable"
        ]
        for qpi in stale:
            del self._unschedulable[qpi.pod.uid]
            self._to_backoff_or_active(qpi)
        return len(stale)

    def next_backoff_expiry(self) -> float | None:
        """When the earliest backoff ends, if any pod backs off."""
        live = [e[0] for e in self._backoff if self._where.get(e[2].pod.uid) == "backoff"]
        return min(live) if live else None

    # ----- updates and deletes --------------------------------------------------------------
    def update(self, pod: Pod) -> None:
        """A pending pod changed: keep its place, refresh its object; gated pods re-run PreEnqueue."""
        qpi = self._infos.get(pod.uid)
        if qpi is None:
            self.add(pod)
            return
        qpi.pod = pod
        if self._where.get(pod.uid) == "gated":
            del self._unschedulable[pod.uid]
            self._to_active_or_gated(qpi)

    def delete(self, pod: Pod) -> None:
        """A pending pod is gone."""
        self._where.pop(pod.uid, None)
        self._infos.pop(pod.uid, None)
        self._unschedulable.pop(pod.uid, None)
        self._active_entry.pop(pod.uid, None)
        self._error_pods.discard(pod.uid)
        self.delete_nominated(pod)

    def info(self, uid: str) -> QueuedPodInfo | None:
        """The queue's record of a pod."""
        return self._infos.get(uid)

    def where(self, uid: str) -> str | None:
        """active, backoff, unschedulable, gated, in-flight or None."""
        return self._where.get(uid)

    def pending(self) -> dict[str, int]:
        """Counts per queue, as `scheduler_pending_pods{queue}` reports them."""
        held = self._where.counts
        return {where: held.get(where, 0) for where in ("active", "backoff", "unschedulable", "gated")}

    def pending_uids(self) -> list[str]:
        """The uids of every pod waiting in the queue (activeQ, backoffQ, the pool, gated)."""
        return [uid for uid, where in self._where.items() if where != "in-flight"]

    def unschedulable_pods(self) -> list[QueuedPodInfo]:
        """Pods in the unschedulable pool or gated."""
        return list(self._unschedulable.values())

    def retrying(self) -> list[QueuedPodInfo]:
        """Pods in activeQ or backoffQ: those the loop will try again without any event."""
        return [self._infos[uid] for uid, where in self._where.items() if where in ("active", "backoff") and uid in self._infos]

    def has_runnable(self) -> bool:
        """Whether any pod is in activeQ or backoffQ."""
        return any(w in ("active", "backoff") for w in self._where.values())

    # ----- nominated pods ----------------------------------------------------------------
    def add_nominated(self, pod: Pod, node: str) -> None:
        """Record that a pod is nominated to run on node."""
        self.delete_nominated(pod)
        self.nominated.setdefault(node, {})[pod.uid] = PodInfo.of(pod)
        self._nominated_node[pod.uid] = node

    def delete_nominated(self, pod: Pod) -> None:
        """Forget a pod's nomination."""
        node = self._nominated_node.pop(pod.uid, None)
        if node is not None:
            pods = self.nominated.get(node, {})
            pods.pop(pod.uid, None)
            if not pods:
                self.nominated.pop(node, None)

    def nominated_pods_for_node(self, node: str) -> list[PodInfo]:
        """Pods nominated to node."""
        return list(self.nominated.get(node, {}).values())

    def nominated_node_of(self, uid: str) -> str | None:
        """The node a pod is nominated to."""
        return self._nominated_node.get(uid)
