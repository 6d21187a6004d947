"""Coscheduling: Koordinator's gang scheduling (all or nothing) for gangs and gang groups.

Upstream: koordinator-sh/koordinator `pkg/scheduler/plugins/coscheduling/coscheduling.go` and
`core/core.go`; intent from KEP-34 (kubernetes-sigs/scheduler-plugins Coscheduling).

- PreEnqueue and PreFilter turn a member away (UnschedulableAndUnresolvable) while its gang is
  unknown or not initialised, while any gang of its group has fewer children than
  min-available, and, after a Strict group was rejected, until the cluster changes (see
  `GangGroupInfo`); a once-satisfied gang under the once-satisfied policy always passes.
- Permit counts the member as assumed and waits (the gang's waiting time) until every gang of
  the group is valid for its match policy; then it allows every waiting member of the group.
- PostFilter: a Strict gang rejects the group's waiting members with Koordinator's message and
  returns `Gang "<ns/name>" gets rejected due to pod is unschedulable`; NonStrict and
  once-satisfied gangs do not reject anyone.
- With `enablePreemption` (CoschedulingArgs, default false as upstream), PostFilter first tries
  job-level preemption for the group's pending members (`preemption.py`): it evicts only when
  every one of them would then fit, and DefaultPreemption leaves these members to it
  (`claims_preemption`).
- Unreserve: a Strict gang that is not once satisfied rejects its group's waiting members.
- PostBind marks the group once satisfied, which is irreversible.

There is no QueueSort here: enabling Coscheduling through multiPoint next to PrioritySort must
stay valid (one queue sort per profile), so gang members are ordered by PrioritySort and
all-or-nothing is enforced at Permit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from scheduler.api.objects import Pod
from scheduler.api.podgroup import GANG_MODE_STRICT, MATCH_ONCE_SATISFIED, gang_id, gang_name, parse_pod_group
from scheduler.api.reservation import is_reserve_pod
from scheduler.config.args import CoschedulingArgs
from scheduler.framework.nodeinfo import NodeInfo
from scheduler.framework.types import (
    ActionType,
    ClusterEvent,
    Code,
    CycleState,
    PreFilterResult,
    Status,
    unresolvable,
    unschedulable,
)
from scheduler.frameworkext.services import Request, RouteGroup, error_message
from scheduler.plugins.coscheduling.controller import PodGroupController
from scheduler.plugins.coscheduling.gang import Gang, GangCache, go_list
from scheduler.plugins.coscheduling.preemption import JobPreemption
from scheduler.preemption.evaluator import NOMINATING_KEY

NAME = "Coscheduling"


class Coscheduling:
    """Gang scheduling: a gang's members bind together or not at all."""

    name = NAME

    def __init__(self, args: CoschedulingArgs, handle: Any) -> None:
        self.args = args
        self.handle = handle
        self.cache = GangCache(args.default_timeout_seconds, args.default_match_policy)
        # Bumped by every cluster change that could let a rejected gang fit now.
        self.version = 0
        informers = handle.informer_factory()
        for doc in informers.objects("PodGroup"):
            self.cache.on_pod_group(parse_pod_group(doc))
        for pod in informers.pods():
            if not is_reserve_pod(pod):
                self.cache.on_pod(pod)
        self.controller = PodGroupController(self)
        self.preemption = JobPreemption(handle, NAME)
        informers.add_event_handler(self._on_event)

    # ----- informers -----------------------------------------------------------------------------
    def _on_event(self, event: Any) -> None:
        kind = event.kind
        if kind == "Pod":
            self._on_pod_event(event.type, event.old, event.new)
        elif kind == "Node":
            self.version += 1
        elif kind == "PodGroup" and event.new is not None:
            old = event.old or {}
            if old.get("spec") != event.new.get("spec") or (old.get("metadata") or {}).get("annotations") != (
                event.new.get("metadata") or {}
            ).get("annotations"):
                self.version += 1
            gang = self.cache.on_pod_group(parse_pod_group(event.new))
            self._requeue_if_worth(gang)
            self.controller.sync(gang.name)

    def _on_pod_event(self, kind: str, old: Pod | None, new: Pod | None) -> None:
        if kind == "DELETED":
            assert old is not None
            if old.node_name:
                self.version += 1
            if not is_reserve_pod(old):
                self.cache.on_pod_delete(old)
                self._sync_gang_of(old)
            return
        assert new is not None
        if old is None or old.node_name != new.node_name:
            if new.node_name:
                self.version += 1
        if is_reserve_pod(new):
            return
        gang = self.cache.on_pod(new)
        if gang is None:
            return
        if old is None and not new.node_name:
            self.version += 1
            self._requeue_if_worth(gang)
        self.controller.sync(gang.name)

    def _sync_gang_of(self, pod: Pod) -> None:
        name = gang_name(pod)
        if name:
            self.controller.sync(gang_id(pod.namespace, name))

    def _requeue_if_worth(self, gang: Gang) -> None:
        """A gang that now has min-available children: let its gated members try (`isGangWorthRequeue`)."""
        if gang.has_init and len(gang.children) >= gang.min_required and gang.pending:
            self.handle.activate(list(gang.pending.values()))

    def events_to_register(self) -> list[ClusterEvent]:
        """Pods bound or deleted and node changes may let a rejected gang fit."""
        return [
            ClusterEvent("Pod", ActionType.ADD | ActionType.DELETE),
            ClusterEvent("Node", ActionType.ALL),
        ]

    # ----- the checks shared by PreEnqueue and PreFilter -------------------------------------------------
    def _admit(self, pod: Pod) -> Status:
        name = gang_name(pod)
        if not name or is_reserve_pod(pod):
            return Status()
        gang = self.cache.get(gang_id(pod.namespace, name))
        if gang is None:
            return unresolvable(f"can't find gang, gangName: {gang_id(pod.namespace, name)}, podName: {pod.key}")
        if not gang.has_init:
            return unresolvable(f"gang has not init, gangName: {gang.name}, podName: {pod.key}")
        if gang.match_policy == MATCH_ONCE_SATISFIED and gang.once_satisfied:
            return Status()
        message = self._basic_check(gang, pod)
        if message:
            return unresolvable(message)
        info = gang.group_info
        if info is not None and info.failed_version == self.version and info.failed_message:
            return unresolvable(info.failed_message)
        return Status()

    def _basic_check(self, gang: Gang, pod: Pod) -> str:
        """`basicGangRequirementsCheck`: every gang of the group exists, is initialised and has enough children."""
        missing, not_init, short = [], [], []
        for gid, member in zip(gang.group, self.cache.group_gangs(gang), strict=True):
            if member is None:
                missing.append(gid)
            elif not member.has_init:
                not_init.append(gid)
            elif len(member.children) < member.min_required:
                short.append(gid)
        failed = []
        if missing:
            failed.append(f"memberGangs {go_list(missing)} doesn't exists")
        if not_init:
            failed.append(f"memberGangs {go_list(not_init)} has not init")
        if short:
            failed.append(f"memberGangs {go_list(gang.group)} child pod not collect enough")
        if not failed:
            return ""
        return f"gangGroup {go_list(gang.group)} basic check: {', '.join(failed)}, current gang: {gang.name}, podName: {pod.key}"

    # ----- extension points ----------------------------------------------------------------------
    def pre_enqueue(self, pod: Pod) -> Status:
        """Gate members of gangs that cannot be scheduled yet."""
        return self._admit(pod)

    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        """The same checks at the start of the cycle (Koordinator's BeforePreFilter)."""
        return None, self._admit(pod)

    def pre_filter_extensions(self) -> None:
        """No AddPod/RemovePod."""
        return None

    def claims_preemption(self, pod: Pod) -> bool:
        """With `enablePreemption`, this plugin preempts for the members of a gang that is still
        all-or-nothing (not once satisfied under once-satisfied), so DefaultPreemption must not
        preempt for them one by one."""
        if not self.args.enable_preemption or is_reserve_pod(pod):
            return False
        gang = self.cache.of_pod(pod)
        if gang is None or not gang.has_init:
            return False
        return not (gang.match_policy == MATCH_ONCE_SATISFIED and gang.once_satisfied)

    def post_filter(self, state: CycleState, pod: Pod, statuses: Callable[[str], Status]) -> tuple[str | None, Status]:
        """With `enablePreemption`, preempt for the whole gang group when every pending member
        would then fit; otherwise a Strict gang whose member cannot fit rejects the whole group."""
        name = gang_name(pod)
        if not name or is_reserve_pod(pod):
            return None, Status(Code.UNSCHEDULABLE)
        gang = self.cache.get(gang_id(pod.namespace, name))
        if gang is None:
            return None, unschedulable(f'Pod "{pod.key}" cannot find Gang "{name}"')
        preempted: Status | None = None
        if self.claims_preemption(pod):
            node, preempted = self._preempt(state, pod, gang, statuses)
            if preempted.success or preempted.code == Code.ERROR:
                return node, preempted
            if node == "":
                state.write(NOMINATING_KEY, "")
        if gang.match_policy == MATCH_ONCE_SATISFIED and gang.once_satisfied:
            return None, Status(Code.UNSCHEDULABLE)
        if gang.mode != GANG_MODE_STRICT:
            return None, preempted or Status(Code.UNSCHEDULABLE)
        message = self._failed_message(gang, pod, statuses)
        self._reject_group(gang, message)
        if preempted is not None:
            return None, preempted
        return None, unschedulable(f'Gang "{gang.name}" gets rejected due to pod is unschedulable')

    def _preempt(self, state: CycleState, pod: Pod, gang: Gang, statuses: Callable[[str], Status]) -> tuple[str | None, Status]:
        """Job-level preemption for the group's pending members, trigger first; a failure's message
        is prefixed with "preemption: " as upstream's PostFilter does."""
        cluster = self.handle.cluster()
        trigger = cluster.get_pod(pod.uid) or pod
        others = {}
        for member_gang in self.cache.group_gangs(gang):
            for key, member in (member_gang.pending if member_gang is not None else {}).items():
                current = cluster.get_pod(member.uid)
                if current is not None and not current.node_name and not current.terminating and current.uid != trigger.uid:
                    others[key] = current
        pending = [trigger] + [others[k] for k in sorted(others)]
        metrics = getattr(getattr(self.handle, "scheduler", None), "metrics", None)
        if metrics is not None:
            metrics.preemption_attempts.inc()
        node, status = self.preemption.preempt(state, trigger, pending, statuses)
        if status.message and not status.success:
            status = Status(status.code, (f"preemption: {status.message}",), status.plugin, status.error)
        return node, status

    def _failed_message(self, gang: Gang, pod: Pod, statuses: Callable[[str], Status]) -> str:
        """`summaryAndRecordFailedMessage`: the group, the member and its FitError."""
        from scheduler.scheduler import fit_error_message

        reasons = getattr(statuses, "reasons", None)
        fit = fit_error_message(self.handle.snapshot.num_nodes, "", reasons() if callable(reasons) else [], "")
        waiting = sum(len(g.waiting) for g in self.cache.group_gangs(gang) if g is not None)
        return (
            f'GangGroup "{gang.group_id}" gets rejected due to member Pod "{pod.key}" is unschedulable '
            f'with reason "{fit}", alreadyWaitForBound: {waiting}'
        )

    def _reject_group(self, gang: Gang, message: str) -> None:
        """Remember the failure for this cluster version and reject the group's waiting members."""
        info = gang.group_info
        if info is not None and info.failed_version != self.version:
            info.failed_message = message
            info.failed_version = self.version
            self.controller.unschedulable(gang, message)
        members = set(gang.group)
        for waiting in self.handle.waiting_pods():
            wpod = waiting.pod
            wname = gang_name(wpod)
            if wname and gang_id(wpod.namespace, wname) in members:
                waiting.reject(NAME, message)

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, float]:
        """Wait until every gang of the group has enough members assumed, then allow them all."""
        name = gang_name(pod)
        if not name or is_reserve_pod(pod):
            return Status(), 0.0
        gang = self.cache.get(gang_id(pod.namespace, name))
        if gang is None:
            return unschedulable("Gang not found"), 0.0
        gang.add_assumed(pod, self.handle.now())
        if not all(g is not None and g.valid_for_permit() for g in self.cache.group_gangs(gang)):
            return Status(Code.WAIT), gang.wait_time
        self._allow_group(gang)
        return Status(), 0.0

    def _allow_group(self, gang: Gang) -> None:
        """`AllowGangGroup`: release every waiting member of the group; the group is now satisfied."""
        if gang.group_info is not None:
            gang.group_info.once_satisfied = True
        members = set(gang.group)
        for waiting in self.handle.waiting_pods():
            wpod = waiting.pod
            wname = gang_name(wpod)
            if wname and gang_id(wpod.namespace, wname) in members:
                waiting.allow(NAME)

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Nothing to reserve; Unreserve is what matters."""
        return Status()

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """The member leaves Permit; a Strict gang not once satisfied rejects the group."""
        gang = self.cache.of_pod(pod)
        if gang is None or is_reserve_pod(pod):
            return
        started = gang.assumed_at.get(pod.key)
        timed_out = started is not None and self.handle.now() - started >= gang.wait_time
        gang.del_assumed(pod)
        if gang.match_policy == MATCH_ONCE_SATISFIED and gang.once_satisfied:
            return
        message = f'Gang "{gang.name}" gets rejected due to Pod "{pod.name}" in Unreserve'
        if gang.mode == GANG_MODE_STRICT:
            self._reject_group(gang, message)
        elif timed_out and gang.group_info is not None and gang.group_info.failed_version != self.version:
            # A NonStrict member that timed out: retrying on an unchanged cluster would time out again.
            gang.group_info.failed_message = message
            gang.group_info.failed_version = self.version

    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """The member is bound: once satisfied, irreversibly."""
        gang = self.cache.of_pod(pod)
        if gang is not None and not is_reserve_pod(pod):
            gang.add_bound(pod.with_changes(node_name=node_name))
            self.controller.sync(gang.name)

    # ----- REST (plugin_service.go) ------------------------------------------------------------------
    def register_endpoints(self, group: RouteGroup) -> None:
        """`GET /gang/:namespace/:name` and `GET /gangs`."""
        group.get("/gang/:namespace/:name", self._gang)
        group.get("/gangs", self._gangs)

    def _gang(self, request: Request) -> tuple[int, Any]:
        ns, name = request.params["namespace"], request.params["name"]
        gang = self.cache.get(gang_id(ns, name))
        if gang is None:
            return error_message(404, f"cannot find gang {ns}/{name}")
        return 200, gang.summary()

    def _gangs(self, request: Request) -> tuple[int, Any]:
        return 200, {gid: gang.summary() for gid, gang in sorted(self.cache.gangs.items())}

    # ----- ControllerProvider ------------------------------------------------------------------------
    def new_controllers(self) -> list[PodGroupController]:
        """The PodGroup status controller."""
        return [self.controller]


def new(args: CoschedulingArgs | None, handle: Any) -> Coscheduling:
    """Build the plugin; args default as Koordinator defaults them."""
    return Coscheduling(args if args is not None else CoschedulingArgs(), handle)


__all__ = ["NAME", "Coscheduling", "new"]
