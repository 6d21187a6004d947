"""The generic preemption evaluator, as kube-scheduler's `pkg/scheduler/framework/preemption`.

`Evaluator.preempt` fetches the latest preemptor, asks the plugin whether it may preempt,
dry-runs preemption on the nodes whose filter status is Unschedulable (from a random offset,
stopping once enough candidates are found, preferring ones that violate no PDB), picks the
best candidate (`pick_one_node_for_preemption`) and prepares it: the victims get the
DisruptionTarget condition and are deleted (waiting pods are rejected at Permit instead) and
lower-priority pods nominated to the node lose their nomination. With asynchronous
preemption (KEP-4832) that preparation runs as a task outside the scheduling cycle; the
preemptor is held by PreEnqueue until it finishes, and on any API failure its nomination is
cleared and it is activated.

API calls go through `_api_call`, a generator that yields the virtual delay an injected fault
asks for: the synchronous path waits (the virtual clock moves on, as a blocked scheduler
would), the asynchronous path resumes later as another task.
"""

from __future__ import annotations

import functools
import itertools
import operator
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

import numpy as np
import numpy.typing as npt

from scheduler.api.objects import Pod, PodDisruptionBudget
from scheduler.cluster.contract import FaultServing, PluginCluster
from scheduler.cluster.errors import APIError, NotFoundError
from scheduler.framework.nodeinfo import NodeInfo
from scheduler.framework.types import Code, CycleState, Status, error, fit_error_message, unresolvable, unschedulable

VICTIMS_KEY = "preemption/victims"
"""Cycle state key: the chosen candidate's victims (list of Pods), read by the attempt record."""
NOMINATING_KEY = "preemption/nominated-node"
"""Cycle state key: "" when PostFilter asks to clear the preemptor's nomination (ModeOverride)."""

NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"
NO_CANDIDATE = "no candidate node for preemption"
DISRUPTION_TARGET = "DisruptionTarget"
PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"
GOROUTINE_SUCCESS = "success"
GOROUTINE_ERROR = "error"
MAX_INT32 = 2**31 - 1
MIN_INT64 = -(2**63)

ApiSteps = Generator[float, None, Any]
"""A sequence of API calls: yields virtual seconds to wait before the next call, returns its result."""


PARALLELISM = 16
"""The framework's parallelizer workers (`parallelize.DefaultParallelism`)."""


@dataclass(slots=True)
class Victims:
    """The pods to preempt on a node (most important first) and how many PDBs that violates."""

    pods: list[Pod]
    num_pdb_violations: int = 0


@dataclass(slots=True)
class Candidate:
    """A node the preemptor can be nominated to, with the victims to evict there."""

    name: str
    victims: Victims


class PreemptionPlugin(Protocol):
    """What a preemption plugin decides for the generic evaluator (upstream `preemption.Interface`)."""

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        """A random offset and how many candidates to shortlist."""
        ...

    def pod_eligible_to_preempt_others(self, pod: Pod, nominated_node_status: Status | None) -> tuple[bool, str]:
        """Whether the pod may preempt, and the reason when it may not."""
        ...

    def select_victims_on_node(
        self, state: CycleState, pod: Pod, node_info: NodeInfo, pdbs: list[PodDisruptionBudget]
    ) -> tuple[list[Pod], int, Status]:
        """The fewest pods to evict from (a copy of) the node so the pod fits, and the PDB violations."""
        ...

    def ordered_score_funcs(self, nodes_to_victims: dict[str, Victims]) -> list[Callable[[str], int]] | None:
        """Custom candidate ordering, or None for the default one."""
        ...


# ----- pure helpers --------------------------------------------------------------------------
def pod_start_time(pod: Pod, now: float) -> float:
    """`util.GetPodStartTime`: status.startTime, or now for pods that have not started."""
    return pod.start_time if pod.start_time is not None else now


def more_important_pod(a: Pod, b: Pod, now: float) -> bool:
    """`util.MoreImportantPod`: higher priority, then the earlier start time."""
    pa, pb = a.effective_priority, b.effective_priority
    if pa != pb:
        return pa > pb
    return pod_start_time(a, now) < pod_start_time(b, now)


def sort_by_importance(pods: list[Any], more_important: Callable[[Pod, Pod], bool], key: Callable[[Any], Pod]) -> None:
    """Sort in place, most important first (stable for ties)."""

    def compare(x: Any, y: Any) -> int:
        if more_important(key(x), key(y)):
            return -1
        if more_important(key(y), key(x)):
            return 1
        return 0

    pods.sort(key=functools.cmp_to_key(compare))


def earliest_start_time_of_highest_priority(victims: Victims, now: float) -> float | None:
    """`util.GetEarliestPodStartTime`: the earliest start among the highest-priority victims."""
    if not victims.pods:
        return None
    earliest = pod_start_time(victims.pods[0], now)
    top = victims.pods[0].effective_priority
    for pod in victims.pods:
        prio = pod.effective_priority
        if prio == top:
            earliest = min(earliest, pod_start_time(pod, now))
        elif prio > top:
            top = prio
            earliest = pod_start_time(pod, now)
    return earliest


def default_score_funcs(nodes_to_victims: dict[str, Victims], now: float) -> list[Callable[[str], int]]:
    """The default candidate ordering, best first, each a score to maximize."""

    def fewest_pdb_violations(node: str) -> int:
        return -nodes_to_victims[node].num_pdb_violations

    def lowest_highest_priority(node: str) -> int:
        return -nodes_to_victims[node].pods[0].effective_priority

    def smallest_priority_sum(node: str) -> int:
        # Shifting by MaxInt32+1 makes every term positive, so a node with a few negative
        # priority victims does not beat one with fewer victims of the same priority.
        return -sum(p.effective_priority + MAX_INT32 + 1 for p in nodes_to_victims[node].pods)

    def fewest_victims(node: str) -> int:
        return -len(nodes_to_victims[node].pods)

    def latest_start_time(node: str) -> int:
        earliest = earliest_start_time_of_highest_priority(nodes_to_victims[node], now)
        if earliest is None:
            return MIN_INT64
        return round(earliest * 1e9)

    return [fewest_pdb_violations, lowest_highest_priority, smallest_priority_sum, fewest_victims, latest_start_time]


def pick_one_node_for_preemption(
    nodes_to_victims: dict[str, Victims], score_funcs: list[Callable[[str], int]] | None, now: float
) -> str:
    """`pickOneNodeForPreemption`: apply each score in turn to the nodes tied so far; the first remaining wins."""
    if not nodes_to_victims:
        return ""
    remaining = list(nodes_to_victims)
    for score in score_funcs or default_score_funcs(nodes_to_victims, now):
        best = MIN_INT64
        selected: list[str] = []
        for node in remaining:
            value = score(node)
            if value > best:
                best = value
                selected = []
            if value == best:
                selected.append(node)
        if len(selected) == 1:
            return selected[0]
        remaining = selected
    return remaining[0]


def aggregate_errors(messages: list[str]) -> str:
    """`utilerrors.NewAggregate(errs).Error()`: one message as is, several deduplicated in brackets."""
    seen: list[str] = []
    for msg in messages:
        if msg not in seen:
            seen.append(msg)
    if not seen:
        return ""
    if len(seen) == 1:
        return seen[0]
    return "[" + ", ".join(seen) + "]"


def dry_run_fit_error(num_all_nodes: int, statuses: dict[str, Status]) -> str:
    """FitError text for a failed dry run; nodes not dry-run count as "Preemption is not helpful"."""
    counts: dict[str, int] = {}
    # Nodes without a possible victim share one Status object, entered one after another: count
    # runs of the same object, then each run's reasons once.
    for _, run in itertools.groupby(statuses.values(), key=id):
        same = list(run)
        for reason in same[0].reasons:
            counts[reason] = counts.get(reason, 0) + len(same)
    absent = num_all_nodes - len(statuses)
    if absent > 0:
        counts[NOT_HELPFUL] = counts.get(NOT_HELPFUL, 0) + absent
    return fit_error_message(num_all_nodes, "", (), "", counts)


def disruption_condition(preemptor: Pod) -> dict[str, str]:
    """The condition a victim gets before deletion."""
    return {
        "type": DISRUPTION_TARGET,
        "status": "True",
        "reason": PREEMPTION_BY_SCHEDULER,
        "message": f"{preemptor.scheduler_name}: preempting to accommodate a higher priority pod",
    }


def _has_condition(pod: Pod, condition: dict[str, str]) -> bool:
    """Whether patching the condition would change nothing (`apipod.UpdatePodCondition` is false)."""
    for existing in pod.conditions:
        if existing.get("type") == condition["type"]:
            return all(existing.get(k) == v for k, v in condition.items())
    return False


def _no_note(phase: str, err: str) -> None:
    """No listener: nothing to report."""


class _CandidateList:
    """Candidates found so far, capped at the number asked for (extra ones are dropped)."""

    __slots__ = ("capacity", "items")

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.items: list[Candidate] = []

    def add(self, candidate: Candidate) -> None:
        if len(self.items) < self.capacity:
            self.items.append(candidate)


@dataclass(slots=True)
class _AsyncRun:
    """Bookkeeping of one asynchronous preemption."""

    started_virtual: float
    busy: float = 0.0
    step_started: float = 0.0
    result: str = GOROUTINE_SUCCESS


@dataclass(slots=True)
class Evaluator:
    """Runs preemption for a plugin; shared by every cycle of one profile."""

    plugin_name: str
    handle: Any
    plugin: PreemptionPlugin
    enable_async: bool
    preempting: set[str] = field(default_factory=set)
    last_victim: dict[str, Pod] = field(default_factory=dict)
    preempt_pod: Callable[[Candidate, Pod, Pod], ApiSteps] = field(init=False)
    # The last `potential_nodes` answer with its snapshot rows (read back by `_snapshot_rows`).
    _potential_rows: tuple[list[NodeInfo], npt.NDArray[np.int64]] | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        # Exposed so tests can replace how one victim is preempted, as upstream's PreemptPod.
        self.preempt_pod = self._preempt_pod

    # ----- handle access ---------------------------------------------------------------------
    def _cluster(self) -> PluginCluster:
        cluster: PluginCluster = self.handle.cluster()
        return cluster

    def _scheduler(self) -> Any:
        return getattr(self.handle, "scheduler", None)

    def _metrics(self) -> Any:
        sched = self._scheduler()
        return sched.metrics if sched is not None else None

    # ----- PreEnqueue support -------------------------------------------------------------------
    def is_pod_running_preemption(self, uid: str) -> bool:
        """Whether the pod's asynchronous preemption is still in flight (`IsPodRunningPreemption`)."""
        if uid not in self.preempting:
            return False
        last = self.last_victim.get(uid)
        if last is None:
            return True
        cluster = self._cluster()
        current = cluster.get_pod(last.uid) if cluster is not None else None
        # The last victim already gone (or going) means the preemption is done even if
        # the task has not cleaned up yet; its deletion event must be able to release the pod.
        return current is not None and not current.terminating

    # ----- Preempt ------------------------------------------------------------------------------
    def preempt(self, state: CycleState, pod: Pod, statuses: Callable[[str], Status]) -> tuple[str | None, Status]:
        """Returns (node, Success), ("", Unschedulable) to clear the nomination, or (None, failure)."""
        cluster = self._cluster()
        if cluster is not None and hasattr(cluster, "get_pod"):
            latest = cluster.get_pod(pod.uid)
            if latest is None:
                return None, error(f'pod "{pod.name}" not found')
            pod = latest
        nominated_status = statuses(pod.nominated_node_name) if pod.nominated_node_name else None
        eligible, msg = self.plugin.pod_eligible_to_preempt_others(pod, nominated_status)
        if not eligible:
            return None, unschedulable(msg)
        snapshot = self.handle.snapshot
        candidates, node_statuses, err = self.find_candidates(state, pod, statuses)
        if err and not candidates:
            return None, error(err)
        if not candidates:
            return "", unschedulable(dry_run_fit_error(snapshot.num_nodes, node_statuses))
        best = self.select_candidate(candidates)
        if best is None or not best.name:
            return None, unschedulable(NO_CANDIDATE)
        state.write(VICTIMS_KEY, list(best.victims.pods))
        if self.enable_async:
            self.prepare_candidate_async(best, pod)
        else:
            status = self.prepare_candidate(best, pod)
            if not status.success:
                return None, status
        return best.name, Status()

    def potential_nodes(self, statuses: Callable[[str], Status]) -> list[NodeInfo]:
        """Nodes whose filter status is Unschedulable, in node-tree order (`NodesForStatusCode`)."""
        snapshot = self.handle.snapshot
        rows_with_code = getattr(statuses, "rows_with_code", None)
        if callable(rows_with_code):
            wanted_rows = np.zeros(snapshot.num_nodes, dtype=np.bool_)
            wanted_rows[rows_with_code(Code.UNSCHEDULABLE)] = True
            order = snapshot.order
            rows = order[wanted_rows[order]]
            potential: list[NodeInfo] = snapshot.info_array()[rows].tolist()
            # `_snapshot_rows` reads these rows back instead of asking each NodeInfo.
            self._potential_rows = (potential, rows.astype(np.int64, copy=False))
            return potential
        fast = getattr(statuses, "names_with_code", None)
        if callable(fast):
            wanted = set(fast(Code.UNSCHEDULABLE))
            infos, names = snapshot.node_infos, snapshot.names
            order = snapshot.order
            rows = order.tolist() if hasattr(order, "tolist") else [int(p) for p in order]
            return [infos[p] for p in rows if names[p] in wanted]
        out = []
        for p in snapshot.order:
            info = snapshot.node_infos[int(p)]
            if statuses(info.name).code == Code.UNSCHEDULABLE:
                out.append(info)
        return out

    def find_candidates(
        self, state: CycleState, pod: Pod, statuses: Callable[[str], Status]
    ) -> tuple[list[Candidate], dict[str, Status], str]:
        """Dry-run preemption on the potential nodes; returns candidates, per-node statuses and errors."""
        if self.handle.snapshot.num_nodes == 0:
            return [], {}, "no nodes available"
        potential = self.potential_nodes(statuses)
        if not potential:
            return [], {}, ""
        cluster = self._cluster()
        pdbs = list(cluster.list_pdbs()) if cluster is not None and hasattr(cluster, "list_pdbs") else []
        offset, count = self.plugin.get_offset_and_num_candidates(len(potential))
        return self.dry_run_preemption(state, pod, potential, pdbs, offset, count)

    def dry_run_preemption(
        self,
        state: CycleState,
        pod: Pod,
        potential: list[NodeInfo],
        pdbs: list[PodDisruptionBudget],
        offset: int,
        num_candidates: int,
    ) -> tuple[list[Candidate], dict[str, Status], str]:
        """Select victims on copies of the nodes from `offset` (wrapping) until enough candidates,
        at least one of them violating no PDB, are found. Non-violating candidates come first."""
        non_violating = _CandidateList(num_candidates)
        violating = _CandidateList(num_candidates)
        node_statuses: dict[str, Status] = {}
        errors: list[str] = []
        n = len(potential)
        rows = self._snapshot_rows(potential)
        possible = self._rows_with_possible_victims(pod, rows)
        # The walk order from the random offset; nodes that cannot hold a victim are answered in
        # bulk below, with the status select_victims_on_node would give, without copying them.
        rotated = (offset + np.arange(n, dtype=np.int64)) % n
        walk = rotated.tolist()
        skipped_upto = n
        if possible is not None:
            steps = np.flatnonzero(possible[rotated]).tolist()
        else:
            steps = list(range(n))
        shortcut = getattr(self.plugin, "victims_by_arithmetic", None)
        # No node to dry-run (no potential node holds a lower-priority pod): nothing to stand in for.
        stand_in = shortcut(state, pod, potential, rows, pdbs) if steps and callable(shortcut) and rows is not None else None
        for i in steps:
            info = potential[walk[i]]
            found = stand_in(walk[i]) if stand_in is not None else None
            if found is None:
                found = self.plugin.select_victims_on_node(state.clone(), pod, info.clone(), pdbs)
            pods, num_violations, status = found
            if status.success and pods:
                candidate = Candidate(info.name, Victims(pods, num_violations))
                (non_violating if num_violations == 0 else violating).add(candidate)
                found = len(non_violating.items)
                if found > 0 and found + len(violating.items) >= num_candidates:
                    skipped_upto = i
                    break
                continue
            if status.success:
                status = error(f'expected at least one victim pod on node "{info.name}"')
            if status.code == Code.ERROR:
                errors.append(status.message)
            node_statuses[info.name] = status
        if possible is not None:
            no_victims = unresolvable(NO_VICTIMS)
            passed = rotated[:skipped_upto]
            idle = passed[~possible[passed]]
            if rows is not None:
                names = self.handle.snapshot.name_array()
                node_statuses.update(dict.fromkeys(names[rows[idle]].tolist(), no_victims))
            else:
                for j in idle.tolist():
                    node_statuses[potential[j].name] = no_victims
        return non_violating.items + violating.items, node_statuses, aggregate_errors(errors)

    def _snapshot_rows(self, potential: list[NodeInfo]) -> npt.NDArray[np.int64] | None:
        """The snapshot rows of the potential nodes; None unless every one is the snapshot's own
        NodeInfo (a test may pass detached copies)."""
        if not potential:
            return None
        known = self._potential_rows
        if known is not None and known[0] is potential:
            return known[1]
        infos = self.handle.snapshot.node_infos
        rows = np.fromiter((info.position for info in potential), dtype=np.int64, count=len(potential))
        if rows.min() < 0 or rows.max() >= len(infos) or any(map(operator.is_not, (infos[r] for r in rows.tolist()), potential)):
            return None
        return rows

    def _rows_with_possible_victims(self, pod: Pod, rows: npt.NDArray[np.int64] | None) -> npt.NDArray[np.bool_] | None:
        """Per potential node, whether it may hold a victim; None when the plugin cannot tell."""
        ask = getattr(self.plugin, "may_hold_victims", None)
        if not callable(ask) or rows is None:
            return None
        mask: npt.NDArray[np.bool_] | None = ask(pod, rows)
        return mask

    def select_candidate(self, candidates: list[Candidate]) -> Candidate | None:
        """The best candidate (`SelectCandidate`)."""
        if not candidates:
            return None
        if len(candidates) == 1:
            return candidates[0]
        victims = {c.name: c.victims for c in candidates}
        funcs = self.plugin.ordered_score_funcs(victims)
        node = pick_one_node_for_preemption(victims, funcs, self.handle.now())
        if node in victims:
            return Candidate(node, victims[node])
        return candidates[0]

    # ----- preparing the chosen candidate -----------------------------------------------------------
    def _api_call(self, verb: str, pod: Pod, call: Callable[[], Any], what: str = "", preemptor: Pod | None = None) -> ApiSteps:
        """Make one API call, first yielding the delay an injected fault asks for. `what` and
        `preemptor` name the call for the scheduler's API-call listeners (started, finished, error)."""
        note = self._api_note(preemptor, pod, what or verb)
        note("started", "")
        try:
            cluster = self._cluster()
            faults = getattr(cluster, "faults", None)
            if faults is None:
                result = call()
            else:
                decision = faults.check(verb, pod.namespace, pod.name)
                if decision is not None:
                    if decision.delay > 0:
                        yield decision.delay
                    cast(FaultServing, cluster).serve(decision, wait=False)
                with faults.bypass():
                    result = call()
        except Exception as exc:
            note("error", str(exc))
            raise
        note("finished", "")
        return result

    def _api_note(self, preemptor: Pod | None, target: Pod, what: str) -> Callable[[str, str], None]:
        """Report one step of a preemption's API work to `Scheduler.note_api_call` (a no-op
        without a scheduler or a preemptor)."""
        note = getattr(self._scheduler(), "note_api_call", None)
        if note is None or preemptor is None:
            return _no_note
        return lambda phase, err: note(preemptor, target, what, phase, err)

    def _preempt_pod(self, c: Candidate, preemptor: Pod, victim: Pod) -> ApiSteps:
        """Reject a victim waiting at Permit, else mark it DisruptionTarget and delete it; then the event."""
        cluster = self._cluster()
        waiting = self.handle.get_waiting_pod(victim.uid)
        if waiting is not None:
            waiting.reject(self.plugin_name, "preempted")
            self._api_note(preemptor, victim, "reject at Permit")("finished", "")
        else:
            condition = disruption_condition(preemptor)
            if not _has_condition(victim, condition):
                try:
                    yield from self._api_call(
                        "patch", victim, lambda: cluster.add_pod_condition(victim, condition), "DisruptionTarget patch", preemptor
                    )
                except NotFoundError:
                    return None  # the victim is already gone
            try:
                yield from self._api_call("delete", victim, lambda: cluster.delete_pod(victim), "delete", preemptor)
            except NotFoundError:
                return None
        cluster.record("Normal", "Preempted", victim.key, f"Preempted by pod {preemptor.uid} on node {c.name}")
        return None

    def lower_priority_nominated_pods(self, pod: Pod, node: str) -> list[Pod]:
        """Pods nominated to node with a lower priority than pod (`getLowerPriorityNominatedPods`)."""
        queue = getattr(self.handle, "queue", None)
        if queue is None:
            return []
        prio = pod.effective_priority
        return [pi.pod for pi in queue.nominated_pods_for_node(node) if pi.pod.effective_priority < prio]

    def _clear_nominated_node_name(self, pods: list[Pod], preemptor: Pod | None = None) -> ApiSteps:
        """Clear status.nominatedNodeName of each pod; raises one APIError naming every failure."""
        cluster = self._cluster()
        queue = getattr(self.handle, "queue", None)
        failures: list[str] = []
        for p in pods:
            current = cluster.get_pod(p.uid) if cluster is not None else None
            if current is None or not current.nominated_node_name:
                # Nothing to patch; drop a nomination the scheduler still holds in memory.
                if queue is not None:
                    queue.delete_nominated(p)
                continue
            try:
                yield from self._api_call(
                    "patch",
                    current,
                    functools.partial(cluster.set_nominated_node, current, ""),
                    "nominatedNodeName clear",
                    preemptor,
                )
            except APIError as exc:
                failures.append(str(exc))
        if failures:
            raise APIError(aggregate_errors(failures))
        return None

    def _wait(self, steps: ApiSteps) -> Any:
        """Run API steps synchronously: an injected delay blocks (the virtual clock moves on)."""
        clock = getattr(self._scheduler(), "clock", None)
        try:
            delay = next(steps)
            while True:
                if clock is not None and clock.virtual:
                    clock.advance_to(clock.now() + delay)
                elif delay > 0:
                    time.sleep(delay)
                delay = steps.send(None)
        except StopIteration as stop:
            return stop.value

    def prepare_candidate(self, c: Candidate, pod: Pod) -> Status:
        """Synchronous preparation inside PostFilter; the first failed call fails PostFilter.

        Upstream preempts the victims in parallel (`Parallelizer().Until`, 16 workers), each
        victim's status patch and delete one after the other, so the scheduling thread waits
        for the longest chain of calls, not their sum (see `_in_parallel`).
        """
        victims = [v for v in c.victims.pods if not v.terminating]  # terminating: deletion already started
        try:
            self._in_parallel([functools.partial(self._preempt_now, c, pod, victim) for victim in victims])
        except APIError as exc:
            return error(exc)
        metrics = self._metrics()
        if metrics is not None:
            metrics.preemption_victims.observe(len(c.victims.pods))
        try:
            self._wait(self._clear_nominated_node_name(self.lower_priority_nominated_pods(pod, c.name), pod))
        except APIError:
            pass  # not critical: those pods just keep a stale nomination a little longer
        return Status()

    def _preempt_now(self, c: Candidate, pod: Pod, victim: Pod) -> None:
        self._wait(self.preempt_pod(c, pod, victim))

    def _in_parallel(self, jobs: list[Callable[[], None]]) -> None:
        """Run jobs that make API calls as `Parallelizer().Until` would: with a simulated API
        latency, each job's calls are made at once and timed, then the caller waits once for the
        makespan of the jobs handed in order to PARALLELISM workers (the first failure stops, as
        upstream's cancel). A backend without simulated latency runs them one by one."""
        cluster = self._cluster()
        latency = float(getattr(cluster, "api_latency", 0.0) or 0.0)
        if latency <= 0 or len(jobs) < 2:
            for job in jobs:
                job()
            return
        wait: Callable[[float], None] | None = cluster.api_wait
        spent = [0.0]

        def record(seconds: float) -> None:
            spent[0] += seconds

        per_job: list[float] = []
        # Callers hold the scheduler's lock, and pool threads make calls only under it, so no
        # other thread reads `api_wait` while it records.
        cluster.api_wait = record
        try:
            for job in jobs:
                spent[0] = 0.0
                try:
                    job()
                finally:
                    per_job.append(spent[0])
        finally:
            cluster.api_wait = wait
            workers = [0.0] * min(PARALLELISM, len(per_job))
            for seconds in per_job:
                workers[workers.index(min(workers))] += seconds
            if workers and max(workers) > 0:
                (wait or time.sleep)(max(workers))

    def prepare_candidate_async(self, c: Candidate, pod: Pod) -> None:
        """Start the preparation as a task outside the scheduling cycle (KEP-4832)."""
        metrics = self._metrics()
        if metrics is not None:
            metrics.preemption_victims.observe(len(c.victims.pods))
        victims = [v for v in c.victims.pods if not v.terminating]
        if not victims:
            return
        self.preempting.add(pod.uid)
        run = _AsyncRun(started_virtual=self.handle.now())
        steps = self._async_preemption(c, pod, victims, run)
        self._drive(steps, run)

    def _drive(self, steps: ApiSteps, run: _AsyncRun) -> None:
        sched = self._scheduler()

        def step() -> None:
            run.step_started = time.perf_counter()
            try:
                delay = next(steps)
            except StopIteration:
                return
            finally:
                run.busy += time.perf_counter() - run.step_started
            sched.submit(step, delay)

        if sched is None:
            for _ in steps:  # no scheduler to run tasks: finish now, ignoring delays
                pass
            return
        if getattr(sched, "api_calls_off_thread", False):
            # API calls take wall-clock time: the whole "goroutine" runs on the scheduler's pool.
            sched.run_api_task(lambda: self._run_all(steps, run))
            return
        sched.submit(step, 0.0)

    def _run_all(self, steps: ApiSteps, run: _AsyncRun) -> None:
        """Run every step at once; an injected delay waits (virtual time moves on)."""
        run.step_started = time.perf_counter()
        try:
            self._wait(steps)
        finally:
            run.busy += time.perf_counter() - run.step_started

    def _async_preemption(self, c: Candidate, pod: Pod, victims: list[Pod], run: _AsyncRun) -> ApiSteps:
        """The preemption "goroutine": clear lower nominations, preempt all victims but the last,
        then the last one (recorded so PreEnqueue can see when it is gone)."""
        try:
            yield from self._clear_nominated_node_name(self.lower_priority_nominated_pods(pod, c.name), pod)
        except APIError:
            run.result = GOROUTINE_ERROR  # not critical, but counted as an error as upstream
        preempt_last = True
        if len(victims) > 2 and float(getattr(self._cluster(), "api_latency", 0.0) or 0.0) > 0:
            # All but the last in parallel, as upstream's goroutine does (see `_in_parallel`).
            try:
                self._in_parallel([functools.partial(self._preempt_now, c, pod, victim) for victim in victims[:-1]])
            except APIError:
                run.result = GOROUTINE_ERROR
                preempt_last = False
        else:
            for victim in victims[:-1]:
                try:
                    yield from self.preempt_pod(c, pod, victim)
                except APIError:
                    run.result = GOROUTINE_ERROR
                    preempt_last = False  # skip the rest so the preemptor gets back sooner
                    break
        if preempt_last:
            self.last_victim[pod.uid] = victims[-1]
            try:
                yield from self.preempt_pod(c, pod, victims[-1])
            except APIError:
                run.result = GOROUTINE_ERROR
        self.preempting.discard(pod.uid)
        self.last_victim.pop(pod.uid, None)
        if run.result == GOROUTINE_ERROR:
            yield from self._after_failure(pod)
        self._api_note(pod, pod, "preemption")("finished" if run.result == GOROUTINE_SUCCESS else "error", "")
        self._observe(run)
        return None

    def _after_failure(self, pod: Pod) -> ApiSteps:
        """A failed call must not leave the pod stuck: clear its nomination and activate it."""
        queue = getattr(self.handle, "queue", None)
        if queue is not None:
            queue.delete_nominated(pod)
        cluster = self._cluster()
        current = cluster.get_pod(pod.uid) if cluster is not None else None
        if current is not None and current.nominated_node_name:
            try:
                yield from self._api_call(
                    "patch", current, functools.partial(cluster.set_nominated_node, current, ""), "nominatedNodeName clear", pod
                )
            except APIError:
                pass  # the in-memory nomination is gone; the pod is retried anyway
        self.handle.activate([current or pod])
        return None

    def _observe(self, run: _AsyncRun) -> None:
        metrics = self._metrics()
        if metrics is None:
            return
        # Seconds spent making the calls plus the virtual time injected delays added.
        busy = run.busy + (time.perf_counter() - run.step_started if run.step_started else 0.0)
        seconds = busy + max(0.0, self.handle.now() - run.started_virtual)
        metrics.preemption_goroutines_duration.labels(run.result).observe(seconds)
        metrics.preemption_goroutines_execution.labels(run.result).inc()


__all__ = [
    "NOMINATING_KEY",
    "NOT_HELPFUL",
    "VICTIMS_KEY",
    "Candidate",
    "Evaluator",
    "PreemptionPlugin",
    "Victims",
    "aggregate_errors",
    "default_score_funcs",
    "disruption_condition",
    "dry_run_fit_error",
    "earliest_start_time_of_highest_priority",
    "more_important_pod",
    "pick_one_node_for_preemption",
    "pod_start_time",
    "sort_by_importance",
]
