"""One scheduling attempt (kube-scheduler's schedule_one.go): the scheduling cycle (PreFilter, Filter
with nominated pods, PostFilter, Score, host selection, assume, Reserve, Permit) and the binding cycle
(waiting at Permit, PreBind, Bind, PostBind) that follows it as a separate task; a failure there
unreserves, forgets the assumed pod and requeues it. Each attempt is recorded and published."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from scheduler.api.objects import Pod
from scheduler.apicalls import STEP_WAIT_SECONDS, ApiCalls
from scheduler.cache import Cache
from scheduler.cluster.contract import RemoteCluster
from scheduler.cluster.errors import APIError, NotFoundError, Retry
from scheduler.framework.batch import OpportunisticBatch, other_nodes
from scheduler.framework.feasible import FilterOutcome
from scheduler.framework.nodeinfo import NodeInfo
from scheduler.framework.runtime import Framework, ScoreOutcome, absent_nodes_reason
from scheduler.framework.snapshot import Snapshot
from scheduler.framework.types import (
    ActionType,
    ClusterEvent,
    Code,
    CycleState,
    QueuedPodInfo,
    Status,
    error,
    fit_error_message,
)
from scheduler.metrics import Metrics
from scheduler.nodestatus import NodeStatusReader
from scheduler.plugins.defaultbinder import NAME as DEFAULT_BINDER
from scheduler.preemption.evaluator import NOMINATING_KEY, VICTIMS_KEY
from scheduler.queue import SchedulingQueue
from scheduler.records import AttemptRecord

MIN_FEASIBLE_NODES_TO_FIND = 100


MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5


ERR_NO_NODES_AVAILABLE = "no nodes available to schedule pods"
"""kube-scheduler's ErrNoNodesAvailable: an error status, not a FitError."""


def num_feasible_nodes_to_find(percentage: int | None, num_all_nodes: int) -> int:
    """How many feasible nodes to look for before scoring (`numFeasibleNodesToFind`)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    pct = percentage or 0
    if pct == 0:
        pct = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    found = num_all_nodes * pct // 100
    return max(found, MIN_FEASIBLE_NODES_TO_FIND)


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


class ScheduleOne(ApiCalls):
    """The Scheduler's scheduling and binding cycles (a part of `Scheduler`; what it shares with
    `ApiCalls` is declared there)."""

    _attempt_marks: dict[str, int]
    _changes: int
    _default_binder_only: set[str]
    _every_node: bool
    _failures: dict[str, tuple[tuple[Any, ...], int]]
    _futile: dict[str, int]
    _popped: bool
    _repeated: dict[str, int]
    _timers: list[tuple[float, str, str]]
    attempt_count: int
    batches: dict[str, OpportunisticBatch]
    cache: Cache
    config: Any
    first_pop_at: float | None
    keep_records: bool
    last_bound_at: float | None
    listeners: list[Callable[[AttemptRecord], None]]
    metrics: Metrics
    next_start_index: int
    plugin_timing_every: int
    keep_raw_scores: bool
    profiles: dict[str, Framework]
    queue: SchedulingQueue
    records: list[AttemptRecord]
    rng: random.Random
    scheduled_count: int
    snapshot: Snapshot
    waiting: dict[str, WaitingPodImpl]

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
        if fwk.has("pre_enqueue") and not qpi.pulled_by:
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
        state.keep_raw_scores = self.keep_raw_scores
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
        batch = self.batches.get(fwk.profile_name)
        try:
            node, rejectors, status = self._schedule_pod(fwk, state, pod, record, batch)
            if node is None:
                self._handle_failure(fwk, state, qpi, status, rejectors, record, started)
            else:
                self._assume_reserve_permit(fwk, state, qpi, node, record, started)
        except Exception as exc:
            self._cycle_failed(fwk, state, qpi, record, exc, started)
        finally:
            state.end_cycle()
        self._publish(record)
        return record

    def _cycle_failed(
        self, fwk: Framework, state: CycleState, qpi: QueuedPodInfo, record: AttemptRecord, exc: Exception, started: float
    ) -> None:
        """The cycle's own code raised (a plugin's exception is an Error status already): logged
        with its traceback and counted (`scheduling cycle`), and the attempt ends as an Error
        status does: FailedScheduling, PodScheduled=False, backoff. The loop goes on."""
        self.metrics.background_error("scheduling cycle", exc)
        pod = qpi.pod
        if record.outcome in ("Scheduled", "Waiting"):
            return  # past Permit: the binding cycle owns the pod
        if record.node is not None and self.cache.is_assumed(pod.uid):
            assumed = pod.with_changes(node_name=record.node)
            self.contained("scheduling cycle", fwk.run_unreserve, state, assumed, record.node)
            self.contained("scheduling cycle", self.cache.forget, assumed)
        if self.queue.where(pod.uid) != "in-flight":
            return  # the failure was handled before the exception
        status = error(exc)
        record.outcome, record.message, record.node = "Error", status.message, None
        self.contained("scheduling cycle", self._requeue_after_assume, fwk, qpi, status, started)

    def _bound_meanwhile(self, pod: Pod) -> bool:
        """Whether the informer saw the pod bound (by another scheduler) or gone since it was
        queued: a failed binding requeues a pod that a rival bound first (kube-scheduler's
        "Pod has been assigned to node. Abort adding it back to queue.")."""
        current = self.cluster.get_pod(pod.uid)
        return current is None or bool(current.node_name)

    def _schedule_pod(
        self, fwk: Framework, state: CycleState, pod: Pod, record: AttemptRecord, batch: OpportunisticBatch | None = None
    ) -> tuple[str | None, set[str], Status]:
        """PreFilter, Filter and Score; returns the chosen node or the failure's status.

        With a batch (OpportunisticBatching), the node the previous pod's list offers is tried
        first, and the nodes this cycle scored but did not take are stored for the next pod."""
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
        hint, signature, cycle = "", None, self.queue.scheduling_cycle
        if batch is not None:
            hint, signature = batch.get_node_hint(state, pod, cycle)
            record.node_hint = hint
        t1 = time.perf_counter()
        outcome = self._find_nodes_that_fit(fwk, state, pod, pre_result, hint)
        record.timings["Filter"] = time.perf_counter() - t1
        record.filter_outcome = outcome
        if outcome.error is not None:
            return None, set(), outcome.error
        feasible = outcome.feasible
        record.feasible_nodes = len(feasible)
        record.evaluated_nodes = len(feasible) + len(outcome.failed_positions)
        if len(feasible) == 0:
            if pre_rejectors:
                # Nodes the PreFilter result left out count as rejected by the restricting plugins.
                record.absent_reason = absent_nodes_reason(pre_rejectors)
            return None, outcome.rejectors() | pre_rejectors, Status(Code.UNSCHEDULABLE, (), "")
        if len(feasible) == 1:
            node = snap.names[int(feasible[0])]
            if batch is not None:
                batch.store_schedule_results(signature, hint, node, None, cycle)
            return node, set(), Status()
        t2 = time.perf_counter()
        scores = fwk.run_score(state, pod, feasible)
        record.timings["Score"] = time.perf_counter() - t2
        if scores.error is not None:
            return None, set(), scores.error
        record.score_outcome = scores
        chosen = self._select_host(scores)
        if batch is not None:
            batch.store_schedule_results(signature, hint, snap.names[chosen], other_nodes(scores, chosen, snap.names), cycle)
        return snap.names[chosen], set(), Status()

    def _find_nodes_that_fit(self, fwk: Framework, state: CycleState, pod: Pod, pre_result: Any, hint: str = "") -> FilterOutcome:
        snap = self.snapshot
        n = snap.num_nodes
        nominated_here = self._nominated_positions(pod)
        # A pod nominated by an earlier preemption tries its nominated node first; so does one
        # that the batch gave a hint (`evaluateNominatedNode`: the nomination wins).
        first_try = pod.nominated_node_name or hint
        if first_try and first_try in snap.position:
            pos = snap.position[first_try]
            if pre_result is None or pre_result.node_names is None or first_try in pre_result.node_names:
                first = fwk.find_feasible(
                    state,
                    pod,
                    np.asarray([pos], dtype=np.int64),
                    1,
                    self._nominated_filter(fwk, state, pod),
                    frozenset(nominated_here & {pos}),
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
        if self._every_node:
            return 100
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
            pi
            for pi in self.queue.nominated_pods_for_node(info.name)
            if pi.pod.uid != pod.uid and pi.pod.effective_priority >= prio
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
            record.message = fit_error_message(
                self.snapshot.num_nodes, pre_msg, (), post_msg, {} if pre_msg else statuses.reason_counts()
            )
        record.outcome = "Error" if is_error else ("Nominated" if nominated else "Unschedulable")
        record.nominated_node = nominated
        condition = self._scheduled_false(pod, is_error, record.message)
        if nominated:
            self.queue.add_nominated(pod, nominated)
            self._patch_nominated(pod, nominated, condition)
        else:
            if state.get(NOMINATING_KEY) == "":
                self._clear_nominated(pod)
            self._write_condition(pod, condition)
        self.contained("events", self.cluster.record, "Warning", "FailedScheduling", pod.key, record.message)
        self.queue.requeue_failed(qpi, rejectors, is_error)
        self.metrics.attempt("error" if is_error else "unschedulable", fwk.profile_name, time.perf_counter() - started)
        self._update_pending()
        self._note_failure(pod.uid, (record.outcome, record.message))

    def _clear_nominated(self, pod: Pod) -> None:
        """PostFilter asked to drop the pod's nomination (preemption cannot help it any more)."""
        self.queue.delete_nominated(pod)
        current = self.cluster.get_pod(pod.uid)
        if current is not None and current.nominated_node_name:
            self._patch_nominated(current, "")

    def _scheduled_false(self, pod: Pod, is_error: bool, message: str) -> dict[str, Any] | None:
        """The PodScheduled=False condition kube-scheduler writes on a failed attempt, when the
        backend keeps pod conditions (a real API server: `kubectl describe` and autoscalers read
        it) and the pod's differs; else None."""
        wanted = getattr(self.cluster, "scheduling_condition", None)
        return wanted(pod, "SchedulerError" if is_error else "Unschedulable", message) if wanted is not None else None

    def _write_condition(self, pod: Pod, condition: dict[str, Any] | None) -> None:
        """Patch the condition on the API pool; a refusal is counted, never the loop's concern."""
        if condition is None:
            return

        def write() -> None:
            try:
                self.cluster.add_pod_condition(pod, condition)
            except NotFoundError:
                pass  # deleted meanwhile
            except APIError as exc:
                self.metrics.background_error("pod status", exc)

        self.run_api_task(write)

    def _patch_nominated(self, pod: Pod, node: str, condition: dict[str, Any] | None = None) -> None:
        what = "nominatedNodeName patch" if node else "nominatedNodeName clear"
        self.note_api_call(pod, pod, what, "started")
        try:
            # The preemptor's one status patch carries its PodScheduled=False too, as upstream's
            # (only a remote backend's `scheduling_condition` gives one: see `_scheduled_false`).
            if condition:
                updated = cast(RemoteCluster, self.cluster).set_nominated_node(pod, node, condition)
            else:
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
        self,
        fwk: Framework,
        state: CycleState,
        qpi: QueuedPodInfo,
        assumed: Pod,
        node: str,
        started: float,
        record: AttemptRecord,
    ) -> bool:
        """A remote cluster's binding cycle without a pool thread, when all it has to do is
        DefaultBinder's request: no PreBind plugin has work for this pod (PreBindPreFlight said
        Skip). The request goes out now and its answer finishes the cycle on this thread, from
        `_poll_bindings` between later cycles (see cluster/inflight.py). False: bind on the pool."""
        binder = self._async_binder
        if binder is None or fwk.profile_name not in self._default_binder_only or getattr(self._on_pool, "active", False):
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
                    status = fwk.plugin_failed("Bind", DEFAULT_BINDER, error(failure))  # as RunBindPlugins wraps it
                    self.contained("binding", self._binding_failed, fwk, state, qpi, assumed, node, status, started, record)
                else:
                    self.contained("binding", self._binding_succeeded, fwk, state, qpi, assumed, node, started, record)

        if not binder.bind_async(assumed, node, answered):
            return False
        self._in_flight_api += 1
        return True

    def _poll_bindings(self) -> bool:
        """Finish the binding cycles whose answers have arrived (see `_bind_on_loop`)."""
        return bool(self._async_binder is not None and self._async_binder.poll_async())

    def finish_bindings(self, timeout: float = 30.0) -> None:
        """Wait for the answers to the binding requests `_bind_on_loop` sent (at most `timeout`
        seconds) and finish their cycles: before a shutdown, or before another scheduler takes
        over the same cluster."""
        deadline = time.monotonic() + timeout
        while self._async_binder is not None and self._async_binder.async_pending and time.monotonic() < deadline:
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
        self._write_condition(qpi.pod, self._scheduled_false(qpi.pod, is_error, status.message))
        self.contained("events", self.cluster.record, "Warning", "FailedScheduling", qpi.pod.key, status.message)
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
        self,
        fwk: Framework,
        state: CycleState,
        qpi: QueuedPodInfo,
        assumed: Pod,
        node: str,
        started: float,
        record: AttemptRecord,
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
        self._repeated.pop(assumed.uid, None)
        self.scheduled_count += 1
        self.last_bound_at = time.perf_counter()
        self.contained(
            "events", self.cluster.record, "Normal", "Scheduled", assumed.key, f"Successfully assigned {assumed.key} to {node}"
        )
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
            self.contained("record listener", listener, record)

    def _update_pending(self) -> None:
        counts = self.queue.pending()
        self.metrics.set_pending(counts)

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
        if previous is not None and previous[1] == start == end:
            self._repeated[uid] = end
        else:
            self._repeated.pop(uid, None)

    def evaluate(self, pod: Pod, profile: str | None = None, every_node: bool = False) -> AttemptRecord:
        """A what-if: PreFilter, Filter and Score for `pod` against the current snapshot
        (`every_node`: as with percentageOfNodesToScore 100, no sampling).

        Nothing changes: no assume, no PostFilter (preemption would make API calls), no events,
        and the sampling start index and tie-break generator are restored afterwards.
        """
        name = profile or pod.scheduler_name
        fwk = self.profiles.get(name)
        if fwk is None:
            raise KeyError(name)
        with self.lock:
            start_index, rng_state = self.next_start_index, self.rng.getstate()
            self._every_node = every_node
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
                state = CycleState()
                state.dry_run = True
                try:
                    node, _, status = self._schedule_pod(fwk, state, pod, record)
                finally:
                    state.end_cycle()
                if node is not None:
                    record.outcome, record.node = "Scheduled", node
                elif status.code == Code.ERROR:
                    record.outcome, record.message = "Error", status.message
                else:
                    statuses = NodeStatusReader(record)
                    pre_msg = status.message if record.pre_filter_statuses else ""
                    record.message = fit_error_message(
                        self.snapshot.num_nodes, pre_msg, (), "", {} if pre_msg else statuses.reason_counts()
                    )
                return record
            finally:
                self._every_node = False
                self.next_start_index = start_index
                self.rng.setstate(rng_state)
