"""Coscheduling: Koordinator's gang scheduling (all or nothing) for gangs and gang groups.

Upstream: koordinator-sh/koordinator `pkg/scheduler/plugins/coscheduling/coscheduling.go` and
`core/core.go`; intent from KEP-34 (kubernetes-sigs/scheduler-plugins Coscheduling).

- PreEnqueue turns a member away (UnschedulableAndUnresolvable) while its gang is unknown or not
  initialised or any gang of its group has fewer children than min-available; it lets one
  representative member of the group into the active queue and gates the others
  (`RecordIfNoRepresentatives`); while the group's scheduling context runs, members not
  attempted in it are gated too. A once-satisfied gang under the once-satisfied policy always
  passes.
- BeforePreFilter (run before every PreFilter plugin) repeats the basic checks and starts the
  group's scheduling context (`context.py`) with the first member; later members of a context
  whose cycle already failed are turned away with the group's failure message.
- NextPod: while a context runs, the scheduler takes the group's pending members from here, one
  per cycle, before any other pod; when all were attempted the group's waiting members are
  rejected and the context ends.
- Permit counts the member as assumed and waits (the gang's waiting time) until every gang of
  the group is valid for its match policy; then it allows every waiting member of the group
  and ends the context.
- PostFilter: with `enablePreemption` (CoschedulingArgs, default false as upstream) job-level
  preemption for the group's pending members (`preemption.py`), which evicts only when every one
  of them would then fit (DefaultPreemption leaves these members to it, `claims_preemption`);
  else Unschedulable with no message.
- AfterPostFilter (after every PostFilter plugin; its status is dropped, so its text is not in
  the FailedScheduling message): records the group's failure message and, for a Strict gang,
  rejects the group's waiting members.
- Unreserve: a Strict gang that is not once satisfied rejects its group's waiting members.
- PreBind writes the binding group's id and member count on the pod; PostBind marks the group
  once satisfied, which is irreversible.

There is no QueueSort here: enabling Coscheduling through multiPoint next to PrioritySort must
stay valid (one queue sort per profile); members are kept together by the representative and
NextPod instead. Unlike upstream (which registers no events), pods this plugin rejected are
moved back when a pod is deleted or a node changes, so a gang retries when room may have
appeared instead of after the five-minute flush; a pod bound elsewhere moves none of them.
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
    fit_error_message,
    unresolvable,
    unschedulable,
)
from scheduler.frameworkext.handle import ExtendedHandle
from scheduler.frameworkext.services import Request, RouteGroup, error_message
from scheduler.plugins.coscheduling.context import (
    ERR_POD_HAS_NOT_BEEN_ATTEMPTED,
    ERR_POD_NOT_IN_GANG_CACHE,
    ERR_REPRESENTATIVE_EXISTS,
    REASON_ALL_PENDING_PODS_ATTEMPTED,
    REASON_GANG_IS_NIL,
    GangSchedulingContext,
)
from scheduler.plugins.coscheduling.controller import PodGroupController
from scheduler.plugins.coscheduling.gang import Gang, GangCache, go_list
from scheduler.plugins.coscheduling.preemption import JobPreemption
from scheduler.preemption.evaluator import NOMINATING_KEY

NAME = "Coscheduling"
# apis/extension/coscheduling.go: (group id, member count) pairs, the internal ones first.
BIND_GANG_ANNOTATIONS = (
    "internal.scheduling.koordinator.sh/bind-gang-group-id",
    "internal.scheduling.koordinator.sh/bind-gang-member-count",
    "scheduling.koordinator.sh/bind-gang-group-id",
    "scheduling.koordinator.sh/bind-gang-member-count",
)


class Coscheduling:
    """Gang scheduling: a gang's members bind together or not at all."""

    name = NAME

    def __init__(self, args: CoschedulingArgs, handle: ExtendedHandle) -> None:
        self.args = args
        self.handle: ExtendedHandle = handle
        self.cache = GangCache(args.default_timeout_seconds, args.default_match_policy, handle.now)
        # The group being scheduled back to back (`GangSchedulingContextHolder`), if any.
        self.context: GangSchedulingContext | None = None
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
        elif kind == "PodGroup" and event.new is not None:
            gang = self.cache.on_pod_group(parse_pod_group(event.new))
            self._requeue_if_worth(gang)
            self.controller.sync(gang.name)

    def _on_pod_event(self, kind: str, old: Pod | None, new: Pod | None) -> None:
        if kind == "DELETED":
            assert old is not None
            if not is_reserve_pod(old):
                self.cache.on_pod_delete(old)
                self._sync_gang_of(old)
            return
        assert new is not None
        if is_reserve_pod(new):
            return
        gang = self.cache.on_pod(new)
        if gang is None:
            return
        if old is None and not new.node_name:
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
        """A pod deleted or a node changed may let a rejected gang fit. A pod bound never does
        (upstream registers no event at all; its gang cache activates members as they arrive)."""
        return [
            ClusterEvent("Pod", ActionType.DELETE),
            ClusterEvent("Node", ActionType.ALL),
        ]

    # ----- the checks shared by PreEnqueue and BeforePreFilter ----------------------------------------
    def _check(self, pod: Pod) -> tuple[Gang | None, Status]:
        """The gang of a member that must be checked further, or None; a failure's status."""
        name = gang_name(pod)
        if not name or is_reserve_pod(pod):
            return None, Status()
        gang = self.cache.get(gang_id(pod.namespace, name))
        if gang is None:
            return None, unresolvable(f"can't find gang, gangName: {gang_id(pod.namespace, name)}, podName: {pod.key}")
        if not gang.has_init:
            return None, unresolvable(f"gang has not init, gangName: {gang.name}, podName: {pod.key}")
        if gang.match_policy == MATCH_ONCE_SATISFIED and gang.once_satisfied:
            return None, Status()
        message = self._basic_check(gang, pod)
        if message:
            if gang.group_info is not None:
                gang.group_info.delete_if_representative(pod.key)
            return None, unresolvable(message)
        return gang, Status()

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

    # ----- queueing ----------------------------------------------------------------------------------
    def pre_enqueue(self, pod: Pod) -> Status:
        """`PodGroupManager.PreEnqueue`: the basic checks, then one representative per group."""
        gang, status = self._check(pod)
        if gang is None:
            return status
        context = self.context
        if context is not None and gang.name in context.gang_group and pod.key not in context.attempted:
            # Members are pulled through NextPod while their group is being scheduled.
            return unresolvable(ERR_POD_HAS_NOT_BEEN_ATTEMPTED.format(gang.group_id))
        if pod.key not in gang.pending:
            return unresolvable(ERR_POD_NOT_IN_GANG_CACHE.format(pod.key))
        info = gang.group_info
        if info is not None:
            representative = info.record_if_no_representative(pod.key)
            if representative != pod.key:
                return unresolvable(ERR_REPRESENTATIVE_EXISTS.format(representative, gang.group_id))
        return Status()

    def next_pod(self) -> Pod | None:
        """`PodGroupManager.NextPod`: the next pending member of the group being scheduled, or None."""
        context = self.context
        if context is None:
            return None
        gang = self.cache.of_pod(context.first_pod)
        if gang is None:
            self._reject_members(context.gang_group, REASON_GANG_IS_NIL)
            self.context = None
            return None
        for member in self.cache.group_gangs(gang):
            if member is None:
                continue
            for key, pod in member.pending.items():
                if key not in context.attempted:
                    context.attempted.add(key)
                    return pod
        self._reject_members(context.gang_group, REASON_ALL_PENDING_PODS_ATTEMPTED)
        self.context = None
        return None

    # ----- PreFilter ---------------------------------------------------------------------------------
    def before_pre_filter(self, state: CycleState, pod: Pod) -> tuple[Pod | None, Status]:
        """`BeforePreFilter`: the basic checks; the first member starts its group's scheduling
        context, later members of a context that already failed are turned away."""
        gang, status = self._check(pod)
        if gang is None:
            return None, status
        context = self.context
        if context is None:
            if state.dry_run:
                return None, Status()  # a what-if starts no gang scheduling context
            self.context = GangSchedulingContext(pod, frozenset(gang.group), gang.group_id, self.handle.now())
            if gang.group_info is not None:
                gang.group_info.representative = ""  # ClearCurrentRepresentative
            return None, Status()
        if context.failed_message:
            return None, unresolvable(context.failed_message)
        return None, Status()

    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        """Nothing to restrict (upstream's PreFilter only plans network topology)."""
        return None, Status()

    def pre_filter_extensions(self) -> None:
        """No AddPod/RemovePod."""
        return None

    # ----- PostFilter --------------------------------------------------------------------------------
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
        """`PodGroupManager.PostFilter`: with `enablePreemption`, preempt for the whole gang group
        when every pending member would then fit; otherwise Unschedulable with no message."""
        if not self.claims_preemption(pod):
            return None, Status(Code.UNSCHEDULABLE)
        gang = self.cache.of_pod(pod)
        assert gang is not None  # claims_preemption found it
        self._record_failure(pod, statuses)
        node, preempted = self._preempt(state, pod, gang, statuses)
        if node == "" and not preempted.success and preempted.code != Code.ERROR:
            state.write(NOMINATING_KEY, "")
        return node, preempted

    def after_post_filter(self, state: CycleState, pod: Pod, statuses: Callable[[str], Status], post_status: Status) -> None:
        """`AfterPostFilter`: record the group's failure; a Strict gang rejects the group's waiting
        members. Runs after every PostFilter plugin; its status is dropped, as upstream's is."""
        name = gang_name(pod)
        if not name or is_reserve_pod(pod):
            return
        gang = self.cache.get(gang_id(pod.namespace, name))
        if gang is None or (gang.match_policy == MATCH_ONCE_SATISFIED and gang.once_satisfied):
            return
        message = self._record_failure(pod, statuses)
        if gang.mode == GANG_MODE_STRICT:
            if gang.group_info is not None:
                gang.group_info.clear_waiting_gangs()
            self.controller.unschedulable(gang, message)
            self._reject_members(frozenset(gang.group), message)

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

    def _record_failure(self, pod: Pod, statuses: Callable[[str], Status]) -> str:
        """`summaryAndRecordFailedMessage`: the group, the member and its FitError, kept in the
        scheduling context (the first failure of a context wins)."""
        context = self.context
        if context is None:
            return f'gets rejected due to member pod "{pod.key}" is unschedulable'
        if context.failed_message:
            return context.failed_message
        reasons = getattr(statuses, "reasons", None)
        fit = fit_error_message(self.handle.snapshot.num_nodes, "", reasons() if callable(reasons) else [], "")
        waiting = sum(len(g.waiting) for gid in context.gang_group if (g := self.cache.get(gid)) is not None)
        context.failed_message = (
            f'GangGroup "{context.gang_group_id}" gets rejected due to member Pod "{pod.key}" is unschedulable '
            f'with reason "{fit}", alreadyWaitForBound: {waiting}'
        )
        return context.failed_message

    def _reject_members(self, gangs: frozenset[str], message: str) -> None:
        """`rejectGangGroup`: reject the waiting members of these gangs."""
        for waiting in self.handle.waiting_pods():
            wpod = waiting.pod
            wname = gang_name(wpod)
            if wname and gang_id(wpod.namespace, wname) in gangs:
                waiting.reject(NAME, message)

    # ----- Permit and after --------------------------------------------------------------------------
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
            if gang.group_info is not None:
                gang.group_info.waiting_gangs.update(gang.group)  # AddWaitingGang
            return Status(Code.WAIT), gang.wait_time
        self._allow_group(gang)
        self.context = None  # SucceedGangScheduling
        return Status(), 0.0

    def _allow_group(self, gang: Gang) -> None:
        """`AllowGangGroup`: record the binding members (once), release every waiting member of
        the group; the group is now satisfied."""
        info = gang.group_info
        if info is not None:
            info.once_satisfied = True
            if not info.binding_members:
                info.binding_members = {p.uid for g in self.cache.group_gangs(gang) if g is not None for p in g.waiting.values()}
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
        gang.del_assumed(pod)
        if gang.match_policy == MATCH_ONCE_SATISFIED and gang.once_satisfied:
            return
        if gang.mode == GANG_MODE_STRICT:
            self._reject_members(frozenset(gang.group), f'Gang "{gang.name}" gets rejected due to Pod "{pod.name}" in Unreserve')

    def _binding_info(self, pod: Pod) -> tuple[str, int] | None:
        """`GetGangBindingInfo`: the group id and member count PreBind writes, for a member of a
        group bound together (more than one member recorded when it was allowed)."""
        gang = self.cache.of_pod(pod)
        info = gang.group_info if gang is not None else None
        if info is None or len(info.binding_members) <= 1 or pod.uid not in info.binding_members:
            return None
        return info.group_id, len(info.binding_members)

    def pre_bind_preflight(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Skip for a pod PreBind writes nothing on."""
        if is_reserve_pod(pod) or self._binding_info(pod) is None:
            return Status(Code.SKIP)
        return Status()

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Koordinator's PreBind: the gang group's id and binding member count on the member
        (`internal.scheduling.koordinator.sh/bind-gang-group-id`, `.../bind-gang-member-count`,
        and the deprecated `scheduling.koordinator.sh/` copies); removed from any other pod."""
        if is_reserve_pod(pod):
            return Status()
        found = self._binding_info(pod)
        if found is None:
            stale: dict[str, str | None] = {key: None for key in BIND_GANG_ANNOTATIONS if key in pod.annotations}
            return self._patch(pod, stale) if stale else Status()
        group_id, count = found
        values: dict[str, str | None] = {key: group_id for key in BIND_GANG_ANNOTATIONS[0::2]}
        values.update({key: str(count) for key in BIND_GANG_ANNOTATIONS[1::2]})
        return self._patch(pod, values)

    def _patch(self, pod: Pod, annotations: dict[str, str | None]) -> Status:
        try:
            self.handle.cluster().patch_annotations(pod, annotations)
        except Exception as exc:  # the API refused: binding fails and the pod is retried
            return Status(Code.ERROR, (f"patch gang binding annotations: {exc}",), error=exc)
        return Status()

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
