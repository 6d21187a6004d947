"""DefaultPreemption: PostFilter preemption of lower-priority pods, and PreEnqueue gating for
asynchronous preemption (KEP-4832, feature gate `SchedulerAsyncPreemption`).

Upstream: kubernetes/kubernetes `pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go`
and `pkg/scheduler/framework/preemption/preemption.go`.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from scheduler.api.objects import Pod, PodDisruptionBudget
from scheduler.config.args import DefaultPreemptionArgs
from scheduler.config.features import KNOWN_FEATURES
from scheduler.framework.interface import Handle
from scheduler.framework.nodeinfo import NodeInfo, PodInfo
from scheduler.framework.types import (
    ActionType,
    ClusterEvent,
    Code,
    CycleState,
    Status,
    error,
    success,
    unresolvable,
)
from scheduler.preemption.evaluator import (
    DISRUPTION_TARGET,
    NO_VICTIMS,
    NOMINATING_KEY,
    PREEMPTION_BY_SCHEDULER,
    Evaluator,
    Victims,
    more_important_pod,
    pod_start_time,
    sort_by_importance,
)

NAME = "DefaultPreemption"
ASYNC_GATE = "SchedulerAsyncPreemption"
WAITING_FOR_PREEMPTION = "waiting for the preemption for this pod to be finished"
NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."

NODE_ONLY_FILTERS = {
    "NodeUnschedulable": "scheduler.plugins.nodeunschedulable",
    "NodeName": "scheduler.plugins.nodename",
    "TaintToleration": "scheduler.plugins.tainttoleration",
    "NodeAffinity": "scheduler.plugins.nodeaffinity",
}
"""In-tree Filter plugins (name -> module) whose verdict reads the node object only, never its pods."""
FIT_FILTER = ("NodeResourcesFit", "scheduler.plugins.noderesources.fit")

IsEligiblePod = Callable[[NodeInfo, PodInfo, Pod], bool]
MoreImportantPod = Callable[[Pod, Pod], bool]


def calculate_num_candidates(num_nodes: int, percentage: int, absolute: int) -> int:
    """How many candidates the dry run must find: a percentage of the nodes, at least `absolute`,
    at most every node (Go int32 arithmetic, truncating)."""
    n = num_nodes * percentage // 100
    if n < absolute:
        n = absolute
    return min(n, num_nodes)


def pod_terminating_by_preemption(pod: Pod) -> bool:
    """A terminating pod whose DisruptionTarget condition says the scheduler preempted it."""
    if not pod.terminating:
        return False
    for condition in pod.conditions:
        if condition.get("type") == DISRUPTION_TARGET:
            return condition.get("status") == "True" and condition.get("reason") == PREEMPTION_BY_SCHEDULER
    return False


def filter_pods_with_pdb_violation(
    pod_infos: list[PodInfo], pdbs: list[PodDisruptionBudget]
) -> tuple[list[PodInfo], list[PodInfo]]:
    """Split pods (order kept) into those whose eviction would violate a PDB and the others.

    Each matching PDB's `disruptionsAllowed` is spent pod by pod; a pod already listed in the
    PDB's `disruptedPods` was processed by the API server and spends nothing. A PDB with an
    empty selector matches nothing here, as upstream.
    """
    allowed = [pdb.disruptions_allowed for pdb in pdbs]
    violating: list[PodInfo] = []
    non_violating: list[PodInfo] = []
    for info in pod_infos:
        pod = info.pod
        violated = False
        if pod.labels:
            for i, pdb in enumerate(pdbs):
                if pdb.meta.namespace != pod.namespace:
                    continue
                if pdb.selector.empty or not pdb.selector.matches(pod.labels):
                    continue
                if pod.name in pdb.disrupted_pods:
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    violated = True
        (violating if violated else non_violating).append(info)
    return violating, non_violating


class _AlwaysFits:
    """A stand-in when no Filter plugin of the cycle reads a node's pods."""

    @staticmethod
    def filter(state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Success."""
        return success()


def _pods_reading_filter(fwk: Any, state: CycleState, sched: Any, node_info: NodeInfo) -> Any:
    """The one Filter plugin whose verdict a reprieve can change, when every other one of this
    cycle reads only the node object (in-tree NODE_ONLY_FILTERS) and no nominated pod, hook or
    PreFilter extension takes part; else None (run the whole filter each time)."""
    if sched is None or fwk is None or not hasattr(fwk, "active_filters"):
        return None
    if sched.queue.nominated.get(node_info.name) or fwk.has_pre_filter_extensions(state):
        return None
    active = fwk.active_filters(state)
    if active is None:
        return None
    found: Any = _AlwaysFits
    for name, plugin in active:
        module = type(plugin).__module__
        if NODE_ONLY_FILTERS.get(name) == module:
            continue
        if (name, module) == FIT_FILTER and found is _AlwaysFits:
            found = plugin
            continue
        return None
    return found


def _always_eligible(node_info: NodeInfo, victim: PodInfo, preemptor: Pod) -> bool:
    """The default extra eligibility rule: none."""
    return True


def _gate_enabled(handle: Any, gate: str) -> bool:
    sched = getattr(handle, "scheduler", None)
    gates = getattr(sched, "feature_gates", None)
    if gates is None:
        return KNOWN_FEATURES[gate].default
    return bool(gates.enabled(gate))


class DefaultPreemption:
    """PostFilter: preempt lower-priority pods so the pod fits; PreEnqueue: hold a pod while its
    asynchronous preemption is in flight."""

    name = NAME

    def __init__(self, args: DefaultPreemptionArgs, handle: Handle, enable_async: bool) -> None:
        self.args = args
        self.handle = handle
        self.enable_async = enable_async
        # Extra victim eligibility on top of "lower priority than the preemptor" (upstream IsEligiblePod).
        self.is_eligible_pod: IsEligiblePod = _always_eligible
        # Victim order, most important first (upstream MoreImportantPod).
        self.more_important_pod: MoreImportantPod = lambda a, b: more_important_pod(a, b, handle.now())
        self._default_more_important_pod = self.more_important_pod
        sched = getattr(handle, "scheduler", None)
        rng: random.Random = sched.rng if sched is not None else random.Random()
        # The dry run's random start among the potential nodes (upstream getOffsetRand).
        self.offset_rand: Callable[[int], int] = rng.randrange
        self.evaluator = Evaluator(NAME, handle, self, enable_async)

    # ----- extension points ---------------------------------------------------------------------
    def post_filter(self, state: CycleState, pod: Pod, statuses: Callable[[str], Status]) -> tuple[str | None, Status]:
        """Preempt; the message of a failure is prefixed with "preemption: "."""
        if self._claimed_by_another_plugin(pod):
            return None, Status(Code.UNSCHEDULABLE)
        metrics = getattr(getattr(self.handle, "scheduler", None), "metrics", None)
        try:
            node, status = self.evaluator.preempt(state, pod, statuses)
        finally:
            if metrics is not None:
                metrics.preemption_attempts.inc()
        if node == "":
            state.write(NOMINATING_KEY, "")
            node = None
        msg = status.message
        if msg:
            prefixed = Status(status.code, (f"preemption: {msg}",), status.plugin, status.error)
            return node, prefixed
        return node, status

    def _claimed_by_another_plugin(self, pod: Pod) -> bool:
        """Another PostFilter plugin of the profile preempts for this pod together with its group
        (`claims_preemption`, Coscheduling's gang-aware preemption): preempting for the pod alone
        would evict victims for a gang that may not fit as a whole."""
        points = getattr(getattr(self.handle, "framework", None), "points", None)
        if not points:
            return False
        for entry in points.get("post_filter", ()):
            claims = getattr(entry.plugin, "claims_preemption", None)
            if claims is not None and entry.plugin is not self and claims(pod):
                return True
        return False

    def pre_enqueue(self, pod: Pod) -> Status:
        """Hold the pod while its asynchronous preemption is running."""
        if not self.enable_async:
            return success()
        if self.evaluator.is_pod_running_preemption(pod.uid):
            return unresolvable(WAITING_FOR_PREEMPTION)
        return success()

    def events_to_register(self) -> list[ClusterEvent]:
        """An assigned pod's deletion may end the preemption a held pod waits for."""
        if not self.enable_async:
            return []
        return [ClusterEvent("Pod", ActionType.DELETE, "AssignedPodDelete")]

    # ----- the evaluator's questions -------------------------------------------------------------
    def calculate_num_candidates(self, num_nodes: int) -> int:
        """Candidates to shortlist for `num_nodes` potential nodes."""
        return calculate_num_candidates(
            num_nodes, self.args.min_candidate_nodes_percentage, self.args.min_candidate_nodes_absolute
        )

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        """A random offset into the potential nodes and the number of candidates to find."""
        return self.offset_rand(num_nodes), self.calculate_num_candidates(num_nodes)

    def ordered_score_funcs(self, nodes_to_victims: dict[str, Victims]) -> list[Callable[[str], int]] | None:
        """None: the evaluator's default candidate ordering."""
        return None

    def is_preemption_allowed(self, node_info: NodeInfo, victim: PodInfo, preemptor: Pod) -> bool:
        """A victim must have lower priority than the preemptor and pass `is_eligible_pod`."""
        return victim.pod.effective_priority < preemptor.effective_priority and self.is_eligible_pod(node_info, victim, preemptor)

    def may_hold_victims(self, pod: Pod, rows: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_] | None:
        """Per snapshot row, whether a pod there has lower priority than `pod`; None when custom
        eligibility rules apply (then only select_victims_on_node can tell)."""
        if (
            self.is_eligible_pod is not _always_eligible
            or type(self).is_preemption_allowed is not DefaultPreemption.is_preemption_allowed
        ):
            return None
        lowest: npt.NDArray[np.int64] = self.handle.snapshot.lowest_priority
        return lowest[rows] < pod.effective_priority

    def pod_eligible_to_preempt_others(self, pod: Pod, nominated_node_status: Status | None) -> tuple[bool, str]:
        """Not with preemptionPolicy Never, nor while a victim it already preempted on its
        nominated node is still terminating (unless that node became unresolvable)."""
        if pod.preemption_policy == "Never":
            return False, NOT_ELIGIBLE_NEVER
        nominated = pod.nominated_node_name
        if nominated:
            if nominated_node_status is not None and nominated_node_status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return True, ""
            info = self.handle.snapshot.get(nominated)
            if info is not None:
                for victim in info.pods:
                    if self.is_preemption_allowed(info, victim, pod) and pod_terminating_by_preemption(victim.pod):
                        return False, NOT_ELIGIBLE_TERMINATING
        return True, ""

    def _filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        fwk = getattr(self.handle, "framework", None)
        sched = getattr(self.handle, "scheduler", None)
        if sched is not None:
            return sched.run_filter_with_nominated_pods(fwk, state, pod, node_info)  # type: ignore[no-any-return]
        return fwk.run_filter_plugins(state, pod, node_info)  # type: ignore[union-attr,no-any-return]

    def _sort_by_importance(self, infos: list[PodInfo]) -> None:
        """Most important first. With the default `more_important_pod` a key sort: the key's `<`
        is exactly that comparison (for one `now`), so the stable sort is the same."""
        if len(infos) < 2:
            return
        if self.more_important_pod is self._default_more_important_pod:
            now = self.handle.now()
            infos.sort(key=lambda info: (-info.pod.effective_priority, pod_start_time(info.pod, now)))
            return
        sort_by_importance(infos, self.more_important_pod, key=lambda info: info.pod)

    def victims_by_arithmetic(
        self, state: CycleState, pod: Pod, potential: list[NodeInfo], rows: npt.NDArray[np.int64], pdbs: list[PodDisruptionBudget]
    ) -> Callable[[int], tuple[list[Pod], int, Status] | None] | None:
        """A stand-in for `select_victims_on_node` on the dry run's potential nodes (the snapshot's
        own NodeInfos, at `rows`), by index, that
        neither copies the node nor the cycle state: None when it cannot stand in this cycle.

        It stands in when the default eligibility rules apply, no hook or PreFilter extension
        takes part, and every Filter plugin of the cycle reads the node object alone except
        NodeResourcesFit: then the node-only plugins' verdicts come from their batch forms over
        the potential rows (the same verdicts), and Fit's verdict as pods are taken off and put
        back from a `Room` of integer totals. A node that would fail after every lower-priority
        pod is gone, or that has pods nominated to it, returns None (the caller runs
        `select_victims_on_node`, which gives that status exactly).
        """
        if type(self).select_victims_on_node is not DefaultPreemption.select_victims_on_node:
            return None
        if (
            self.is_eligible_pod is not _always_eligible
            or type(self).is_preemption_allowed is not DefaultPreemption.is_preemption_allowed
        ):
            return None
        handle = self.handle
        fwk: Any = getattr(handle, "framework", None)
        sched: Any = getattr(handle, "scheduler", None)
        if fwk is None or sched is None or not hasattr(fwk, "active_filters") or fwk.has_pre_filter_extensions(state):
            return None
        if getattr(fwk, "run_hooked_filter", None) is None:
            return None
        active = fwk.active_filters(state)
        if active is None:
            return None
        fit: Any = None
        node_only: list[Any] = []
        for name, plugin in active:
            module = type(plugin).__module__
            if NODE_ONLY_FILTERS.get(name) == module and hasattr(plugin, "filter_batch"):
                node_only.append(plugin)
            elif (name, module) == FIT_FILTER and fit is None:
                fit = plugin
            else:
                return None
        if fit is None or not potential:
            return None
        snapshot = handle.snapshot
        passes = np.ones(len(potential), dtype=np.bool_)
        for plugin in node_only:
            result = plugin.filter_batch(state, pod, snapshot, rows)
            if not result.passed:
                passes &= result.codes == int(Code.SUCCESS)
        table = fit.room_table(state, snapshot, rows)
        if table is None:
            return None
        nominated = sched.queue.nominated
        priority = pod.effective_priority
        no_victims = unresolvable(NO_VICTIMS)

        def select(index: int) -> tuple[list[Pod], int, Status] | None:
            info = potential[index]
            if not passes[index] or nominated.get(info.name):
                return None
            lower = [p for p in info.pods if p.pod.effective_priority < priority]
            if not lower:
                return [], 0, no_victims
            room = table.room(index, len(info.pods))
            room.take_off(lower)
            if not room.fits():
                return None
            self._sort_by_importance(lower)
            violating, non_violating = filter_pods_with_pdb_violation(lower, pdbs) if pdbs else ([], lower)
            # Reprieve most important first, PDB-violating pods before the others.
            victims = room.reprieve(violating)
            num_violating = len(victims)
            victims += room.reprieve(non_violating)
            if violating and non_violating:
                self._sort_by_importance(victims)
            return [p.pod for p in victims], num_violating, Status()

        return select

    def select_victims_on_node(
        self, state: CycleState, pod: Pod, node_info: NodeInfo, pdbs: list[PodDisruptionBudget]
    ) -> tuple[list[Pod], int, Status]:
        """Remove every eligible lower-priority pod; if the pod then fits, add them back most
        important first (PDB-violating ones before the others) while it still fits; the pods
        that could not come back are the victims. `state` and `node_info` are copies."""
        handle = self.handle
        fwk: Any = getattr(handle, "framework", None)
        sched: Any = getattr(handle, "scheduler", None)

        ok = Status()
        # Without AddPod/RemovePod extensions in this cycle only the node copy changes.
        extended = fwk is None or not hasattr(fwk, "has_pre_filter_extensions") or fwk.has_pre_filter_extensions(state)

        def remove(info: PodInfo) -> Status:
            node_info.remove_pod(info.pod)
            if not extended:
                return ok
            return fwk.run_pre_filter_remove_pod(state, pod, info, node_info)  # type: ignore[no-any-return]

        def add(info: PodInfo) -> Status:
            node_info.add_pod(info)
            if not extended:
                return ok
            return fwk.run_pre_filter_add_pod(state, pod, info, node_info)  # type: ignore[no-any-return]

        pods_filter = _pods_reading_filter(fwk, state, sched, node_info)
        # Looked up once per node rather than per filter run (the handle does not change).
        if pods_filter is not None:
            # Every other Filter plugin reads only the node object, which the reprieve never
            # changes; they passed on this copy below, so only the pod-reading one can change.
            fit_filter = pods_filter.filter

            def fits() -> bool:
                return fit_filter(state, pod, node_info).code == Code.SUCCESS  # type: ignore[no-any-return]
        elif sched is not None:
            run_filter_nominated = sched.run_filter_with_nominated_pods

            def fits() -> bool:
                return run_filter_nominated(fwk, state, pod, node_info).code == Code.SUCCESS  # type: ignore[no-any-return]
        else:

            def fits() -> bool:
                return fwk.run_filter_plugins(state, pod, node_info).code == Code.SUCCESS  # type: ignore[no-any-return]

        is_allowed = self.is_preemption_allowed
        potential = [info for info in node_info.pods if is_allowed(node_info, info, pod)]
        for info in potential:
            status = remove(info)
            if not status.success:
                return [], 0, error(status.message)
        if not potential:
            return [], 0, unresolvable(NO_VICTIMS)
        # Affinity of the preemptor to its own victims is not considered, as upstream.
        status = self._filter(state, pod, node_info)
        if not status.success:
            return [], 0, status
        self._sort_by_importance(potential)
        violating, non_violating = filter_pods_with_pdb_violation(potential, pdbs)
        victims: list[PodInfo] = []
        num_violating = 0

        def reprieve(info: PodInfo) -> tuple[bool, Status | None]:
            status = add(info)
            if not status.success:
                return False, error(status.message)
            if fits():
                return True, None
            status = remove(info)
            if not status.success:
                return False, error(status.message)
            victims.append(info)
            return False, None

        for info in violating:
            fit, failure = reprieve(info)
            if failure is not None:
                return [], 0, failure
            if not fit:
                num_violating += 1
        for info in non_violating:
            _, failure = reprieve(info)
            if failure is not None:
                return [], 0, failure
        if violating and non_violating:
            self._sort_by_importance(victims)
        return [info.pod for info in victims], num_violating, Status()


def new(args: object | None, handle: Handle) -> DefaultPreemption:
    """Build the plugin; asynchronous preemption follows the `SchedulerAsyncPreemption` gate."""
    if args is None:
        args = DefaultPreemptionArgs()
    if not isinstance(args, DefaultPreemptionArgs):
        raise TypeError(f"got args of type {type(args).__name__}, want *DefaultPreemptionArgs")
    issues = args.validate("")
    if issues:
        raise ValueError("; ".join(str(i) for i in issues))
    return DefaultPreemption(args, handle, _gate_enabled(handle, ASYNC_GATE))
