"""Job-level (gang-aware) preemption for Coscheduling: a gang preempts only when every pending
member of its gang group would then fit.

Facts from koordinator-sh/koordinator `pkg/scheduler/plugins/coscheduling/core/preemption.go`
and the proposal `20240115-support-job-level-preemption.md` (enabled by `CoschedulingArgs`
`enablePreemption`, default false):

- Not with the trigger's `preemptionPolicy: Never`, nor while a member's nominated node still has
  a pod it preempted terminating there.
- Dry run: on every node whose filter status for the trigger is Unschedulable, a copy with every
  eligible lower-priority pod removed (eligible: not labelled
  `scheduling.koordinator.sh/disable-preemptible: "true"`). The pending members are then placed
  one after the other, each on the node, among those the previous member could use, that passes
  the Filter plugins (with the members placed so far) at the lowest preemption cost (per node, the
  rank of each distinct job's victim priority among all victims' priorities, summed), ties by
  node name. Members are taken to be alike: they are filtered with the trigger's PreFilter state,
  as upstream does.
- Any member left without a node: nothing is evicted ("preemption not helpful"), nominations of
  the members are cleared.
- Otherwise victims are chosen per node by reprieve: the possible victims, highest priority first
  (then job key, then name), are added back one by one and kept when every member placed on the
  node still fits; the rest are evicted (DisruptionTarget condition, then deleted; a victim waiting
  at Permit is rejected instead), lower-priority pods nominated to those nodes lose their
  nomination, and every pending member is nominated to its node.

Differences from upstream, each kept small on purpose: members already waiting at Permit keep
waiting on their nodes (upstream rejects them and nominates them back to the same nodes), the API
calls are made inside the cycle (as upstream's job preemption makes them), and pending members are
placed trigger first, then by `namespace/name` (upstream walks a Go map).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from scheduler.api.objects import Pod
from scheduler.cluster.errors import APIError, NotFoundError
from scheduler.framework.nodeinfo import NodeInfo, PodInfo
from scheduler.framework.types import Code, CycleState, Status, error, unschedulable
from scheduler.frameworkext.handle import ExtendedHandle
from scheduler.plugins.defaultpreemption import pod_terminating_by_preemption
from scheduler.preemption.evaluator import VICTIMS_KEY, disruption_condition, dry_run_fit_error

LABEL_DISABLE_PREEMPTIBLE = "scheduling.koordinator.sh/disable-preemptible"
LABEL_QUESTIONED_OBJECT_KEY = "scheduling.koordinator.sh/questioned-object-key"
"""The job a victim belongs to (upstream's `GetExplanationKey`), for costs and victim order."""
NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to terminating pod on the nominated node."
NO_PENDING_PODS = "no pending pods"
NO_POTENTIAL_VICTIMS = "no potential victims"


def pod_preemptible(pod: Pod) -> bool:
    """`IsPodPreemptible`: not labelled disable-preemptible."""
    return pod.labels.get(LABEL_DISABLE_PREEMPTIBLE) != "true"


def job_key(pod: Pod) -> str:
    """The victim's job (empty for pods that name none)."""
    return pod.labels.get(LABEL_QUESTIONED_OBJECT_KEY, "")


def preemption_costs(possible: dict[str, list[Pod]]) -> dict[str, int]:
    """`estimatePreemptionCost`: per node, the sum over its victims' distinct jobs of the rank of
    the job's (first) victim priority among every possible victim's priority."""
    ranks = {p: i for i, p in enumerate(sorted({v.effective_priority for pods in possible.values() for v in pods}))}
    costs = {}
    for node, pods in possible.items():
        seen: set[str] = set()
        cost = 0
        for victim in pods:
            key = job_key(victim)
            if key not in seen:
                seen.add(key)
                cost += ranks[victim.effective_priority]
        costs[node] = cost
    return costs


def victim_order(pods: list[Pod]) -> list[Pod]:
    """`sortVictims`: highest priority first, then job key, then name (the order of reprieves)."""
    return sorted(pods, key=lambda p: (-p.effective_priority, job_key(p), p.name))


@dataclass(slots=True)
class _Node:
    """One potential node of the dry run: a copy without its possible victims, the cycle state
    copy that goes with it, and the members placed on it so far."""

    info: NodeInfo
    state: CycleState
    victims: list[Pod] = field(default_factory=list)
    placed: list[Pod] = field(default_factory=list)


@dataclass(slots=True)
class JobPreemption:
    """Runs one gang group's preemption for the Coscheduling plugin."""

    handle: ExtendedHandle
    plugin_name: str

    # ----- the cycle's tools -------------------------------------------------------------------
    def _framework(self) -> Any:
        return getattr(self.handle, "framework", None)

    def _filter(self, state: CycleState, pod: Pod, info: NodeInfo) -> Status:
        fwk = self._framework()
        sched = getattr(self.handle, "scheduler", None)
        if sched is not None:
            return sched.run_filter_with_nominated_pods(fwk, state, pod, info)  # type: ignore[no-any-return]
        return fwk.run_filter_plugins(state, pod, info)  # type: ignore[no-any-return]

    def _remove(self, state: CycleState, trigger: Pod, info: NodeInfo, victim: PodInfo) -> Status:
        info.remove_pod(victim.pod)
        fwk = self._framework()
        if fwk is None or not fwk.has_pre_filter_extensions(state):
            return Status()
        return fwk.run_pre_filter_remove_pod(state, trigger, victim, info)  # type: ignore[no-any-return]

    def _add(self, state: CycleState, trigger: Pod, info: NodeInfo, added: PodInfo) -> Status:
        info.add_pod(added)
        fwk = self._framework()
        if fwk is None or not fwk.has_pre_filter_extensions(state):
            return Status()
        return fwk.run_pre_filter_add_pod(state, trigger, added, info)  # type: ignore[no-any-return]

    # ----- Preempt -----------------------------------------------------------------------------
    def preempt(
        self, state: CycleState, trigger: Pod, pending: list[Pod], statuses: Callable[[str], Status]
    ) -> tuple[str | None, Status]:
        """Returns (trigger's node, Success) after evicting, ("", Unschedulable) when preemption
        cannot place every pending member, or (None, failure) when the gang may not preempt now."""
        if not pending:
            return None, unschedulable(NO_PENDING_PODS)
        if trigger.preemption_policy == "Never":
            return None, unschedulable(NOT_ELIGIBLE_NEVER)
        for member in pending:
            if self._terminating_victim_on_nominated_node(member, trigger, statuses):
                return None, unschedulable(NOT_ELIGIBLE_TERMINATING)
        snapshot = self.handle.snapshot
        nodes = self._potential_nodes(state, trigger, statuses)
        node_statuses: dict[str, Status] = {}
        for name, node in nodes.items():
            if not node.victims:
                node_statuses[name] = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (NO_POTENTIAL_VICTIMS,))
        if not any(node.victims for node in nodes.values()):
            self._cancel(pending)
            return "", unschedulable(dry_run_fit_error(snapshot.num_nodes, node_statuses))
        placement = self._place(pending, nodes, node_statuses)
        if placement is None:
            self._cancel(pending)
            return "", unschedulable(dry_run_fit_error(snapshot.num_nodes, node_statuses))
        victims: dict[str, list[Pod]] = {}
        for name, node in nodes.items():
            if node.placed:
                chosen, status = self._select_victims(state, trigger, name, node)
                if not status.success:
                    return None, status
                if chosen:
                    victims[name] = chosen
        status = self._evict(trigger, victims)
        if not status.success:
            return None, status
        state.write(VICTIMS_KEY, [v for name in sorted(victims) for v in victims[name]])
        self._nominate(trigger, pending, placement)
        return placement[trigger.uid], Status()

    def _terminating_victim_on_nominated_node(self, member: Pod, trigger: Pod, statuses: Callable[[str], Status]) -> bool:
        """`podEligibleToPreemptOthers` for one member: a pod it preempted still terminating on its nominated node."""
        nominated = member.nominated_node_name
        if not nominated:
            return False
        if member.uid == trigger.uid and statuses(nominated).code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
            return False
        info = self.handle.snapshot.get(nominated)
        if info is None:
            return False
        prio = member.effective_priority
        return any(
            pi.pod.effective_priority < prio and pod_preemptible(pi.pod) and pod_terminating_by_preemption(pi.pod)
            for pi in info.pods
        )

    def _potential_nodes(self, state: CycleState, trigger: Pod, statuses: Callable[[str], Status]) -> dict[str, _Node]:
        """Copies of the nodes where the trigger was Unschedulable, without their possible victims."""
        snapshot = self.handle.snapshot
        prio = trigger.effective_priority
        nodes: dict[str, _Node] = {}
        for row in snapshot.order.tolist():
            info = snapshot.node_infos[row]
            if statuses(info.name).code != Code.UNSCHEDULABLE:
                continue
            node = _Node(info.clone(), state.clone())
            for pi in list(node.info.pods):
                if pi.pod.effective_priority < prio and pod_preemptible(pi.pod):
                    node.victims.append(pi.pod)
                    self._remove(node.state, trigger, node.info, pi)
            nodes[info.name] = node
        return nodes

    def _place(self, pending: list[Pod], nodes: dict[str, _Node], node_statuses: dict[str, Status]) -> dict[str, str] | None:
        """`placeToSchedulePods`: a node for every pending member, or None."""
        costs = preemption_costs({name: node.victims for name, node in nodes.items() if node.victims})
        feasible = sorted(nodes)
        placement: dict[str, str] = {}
        for member in pending:
            fits = []
            for name in feasible:
                node = nodes[name]
                status = self._filter(node.state, member, node.info)
                if status.success:
                    fits.append(name)
                else:
                    node_statuses[name] = status
            if not fits:
                return None
            feasible = fits
            chosen = min(fits, key=lambda n: costs.get(n, 0))  # the first of the cheapest, by name
            node = nodes[chosen]
            node.placed.append(member)
            placement[member.uid] = chosen
            status = self._add(node.state, member, node.info, PodInfo.of(member.with_changes(node_name=chosen)))
            if not status.success:
                node_statuses[chosen] = status
                return None
        return placement

    def _select_victims(self, state: CycleState, trigger: Pod, name: str, node: _Node) -> tuple[list[Pod], Status]:
        """Reprieve the node's possible victims one by one, keeping each that lets every member placed there still fit."""
        node_info = self.handle.snapshot.get(name)
        assert node_info is not None, name  # a candidate is a node of this cycle's snapshot
        base = node_info.clone()
        base_state = state.clone()
        for victim in node.victims:
            found = next((pi for pi in base.pods if pi.pod.uid == victim.uid), None)
            if found is not None:
                status = self._remove(base_state, trigger, base, found)
                if not status.success:
                    return [], error(status.message)
        victims = []
        for victim in victim_order(node.victims):
            info = PodInfo.of(victim)
            status = self._add(base_state, trigger, base, info)
            if not status.success:
                return [], error(status.message)
            if self._members_fit(base_state, base, node.placed, name):
                continue
            status = self._remove(base_state, trigger, base, info)
            if not status.success:
                return [], error(status.message)
            victims.append(victim)
        return victims, Status()

    def _members_fit(self, state: CycleState, info: NodeInfo, members: list[Pod], name: str) -> bool:
        """Whether the members fit on a copy of the node, each added after it passes."""
        trial, trial_state = info.clone(), state.clone()
        for i, member in enumerate(members):
            if not self._filter(trial_state, member, trial).success:
                return False
            if i + 1 < len(members):
                status = self._add(trial_state, members[i + 1], trial, PodInfo.of(member.with_changes(node_name=name)))
                if not status.success:
                    return False
        return True

    # ----- API calls ---------------------------------------------------------------------------
    def _evict(self, trigger: Pod, victims: dict[str, list[Pod]]) -> Status:
        """Reject victims waiting at Permit; mark the others DisruptionTarget and delete them."""
        cluster = self.handle.cluster()
        condition = disruption_condition(trigger)
        for name in sorted(victims):
            for victim in victims[name]:
                waiting = self.handle.get_waiting_pod(victim.uid)
                if waiting is not None:
                    waiting.reject(self.plugin_name, "preempted")
                elif not victim.terminating:
                    try:
                        cluster.add_pod_condition(victim, condition)
                        cluster.delete_pod(victim)
                    except NotFoundError:
                        continue
                    except APIError as exc:
                        return error(exc)
                cluster.record("Normal", "Preempted", victim.key, f"Preempted by pod {trigger.uid} on node {name}")
            self._clear_lower_nominations(trigger, name)
        sched = getattr(self.handle, "scheduler", None)
        metrics = getattr(sched, "metrics", None)
        if metrics is not None:
            metrics.preemption_victims.observe(sum(len(v) for v in victims.values()))
        return Status()

    def _clear_lower_nominations(self, trigger: Pod, node: str) -> None:
        """Lower-priority pods nominated to the node may no longer fit there."""
        queue = getattr(self.handle, "queue", None)
        if queue is None:
            return
        for pi in queue.nominated_pods_for_node(node):
            if pi.pod.effective_priority < trigger.effective_priority:
                self._set_nominated(pi.pod, "")

    def _set_nominated(self, pod: Pod, node: str) -> None:
        cluster = self.handle.cluster()
        current = cluster.get_pod(pod.uid)
        queue = getattr(self.handle, "queue", None)
        if current is None:
            return
        if current.nominated_node_name == node:
            return
        if not node and queue is not None:
            queue.delete_nominated(current)
        try:
            cluster.set_nominated_node(current, node)
        except APIError:
            return  # not critical: the pod keeps a stale nomination a little longer

    def _nominate(self, trigger: Pod, pending: list[Pod], placement: dict[str, str]) -> None:
        """Every pending member but the trigger (the scheduler nominates it) gets its node, and is retried."""
        others = [m for m in pending if m.uid != trigger.uid]
        for member in others:
            self._set_nominated(member, placement[member.uid])
        cluster = self.handle.cluster()
        current = [p for p in (cluster.get_pod(m.uid) for m in others) if p is not None]
        if current:
            self.handle.activate(current)

    def _cancel(self, pending: list[Pod]) -> None:
        """`cancelNomination`: the members keep no nomination from an earlier preemption."""
        for member in pending:
            if member.nominated_node_name:
                self._set_nominated(member, "")


__all__ = [
    "LABEL_DISABLE_PREEMPTIBLE",
    "LABEL_QUESTIONED_OBJECT_KEY",
    "JobPreemption",
    "job_key",
    "pod_preemptible",
    "preemption_costs",
    "victim_order",
]
