"""GangScheduling: kube-scheduler's own all-or-nothing gangs for pods of a Workload (gate GangScheduling,
alpha in v1.35, which needs GenericWorkload).

Upstream: kubernetes/kubernetes `pkg/scheduler/framework/plugins/gangscheduling/gangscheduling.go`
and `pkg/scheduler/backend/workloadmanager/` (podgroupinfo.go, workloadmanager.go) at v1.35.4.

- A pod with `spec.workloadRef` belongs to the gang (Workload, pod group, replica key).
- PreEnqueue holds it (UnschedulableAndUnresolvable) while its Workload does not exist, while
  the Workload has no such pod group, and while the gang has fewer pods than `minCount`.
- Reserve counts it assumed; Unreserve forgets it.
- Permit: while fewer than `minCount` gang pods are assumed or bound, it waits (Wait, until the
  gang's scheduling deadline, 5 minutes after the first pod waited), activating the gang's pods
  not yet scheduled; the pod that completes the quorum allows every waiting gang pod.
- Events: a pod of the same gang added, or its Workload added, may let a held pod in.

Pods of a `basic` pod group, and pods without a workloadRef, pass every point.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scheduler.api.objects import Pod, WorkloadRef
from scheduler.api.workload import Workload, parse_workload
from scheduler.cluster.informer import pod_informer_view, visible
from scheduler.framework.interface import Handle
from scheduler.framework.types import ActionType, ClusterEvent, Code, CycleState, QueueingHint, Status

NAME = "GangScheduling"
DEFAULT_SCHEDULING_TIMEOUT = 300.0
"""`DefaultSchedulingTimeoutDuration`: how long a gang may wait at Permit for its quorum."""
WAITING_AT_PERMIT = "waiting for minCount pods from a gang to be waiting on permit"
WAITING_TO_APPEAR = "waiting for minCount pods from a gang to appear in scheduling queue"

GangKey = tuple[str, str, str, str]
"""(namespace, workload, pod group, replica key): one gang (`podGroupKey`)."""


def gang_key(namespace: str, ref: WorkloadRef) -> GangKey:
    """The gang a pod of this namespace and workloadRef belongs to."""
    return (namespace, ref.name, ref.pod_group, ref.replica_key)


@dataclass(slots=True)
class PodGroupInfo:
    """One gang's pods: all of them, and which are unscheduled, assumed (past Reserve) or bound."""

    pods: dict[str, Pod] = field(default_factory=dict)
    unscheduled: set[str] = field(default_factory=set)
    assumed: set[str] = field(default_factory=set)
    assigned: set[str] = field(default_factory=set)
    deadline: float | None = None

    def add_pod(self, pod: Pod) -> None:
        """A pod of the gang appeared."""
        self.pods[pod.uid] = pod
        (self.assigned if pod.node_name else self.unscheduled).add(pod.uid)

    def update_pod(self, old: Pod, new: Pod) -> None:
        """A pod of the gang changed; bound now, it counts as assigned."""
        self.pods[new.uid] = new
        if not old.node_name and new.node_name:
            self.assigned.add(new.uid)
            self.unscheduled.discard(new.uid)
            self.assumed.discard(new.uid)

    def delete_pod(self, uid: str) -> None:
        """A pod of the gang is gone."""
        self.pods.pop(uid, None)
        self.unscheduled.discard(uid)
        self.assumed.discard(uid)
        self.assigned.discard(uid)

    def assume(self, uid: str) -> None:
        """`AssumePod`: the pod passed Reserve."""
        self.assumed.add(uid)
        self.unscheduled.discard(uid)

    def forget(self, uid: str) -> None:
        """`ForgetPod`: the pod was unreserved."""
        self.unscheduled.add(uid)
        self.assumed.discard(uid)

    def scheduling_timeout(self, now: float) -> float:
        """`SchedulingTimeout`: the time left until the gang's deadline, a new one once it passed
        (or is now: on a virtual clock that stands still, the moment of the timeout itself)."""
        if self.deadline is None or self.deadline <= now:
            self.deadline = now + DEFAULT_SCHEDULING_TIMEOUT
        return self.deadline - now


class WorkloadManager:
    """The gangs of pods with a workloadRef, kept up to date from the pod informer (`workloadManager`)."""

    def __init__(self) -> None:
        self.gangs: dict[GangKey, PodGroupInfo] = {}

    def add_pod(self, pod: Pod) -> None:
        """Register a pod before the queue sees it."""
        if pod.workload_ref is None:
            return
        self.gangs.setdefault(gang_key(pod.namespace, pod.workload_ref), PodGroupInfo()).add_pod(pod)

    def update_pod(self, old: Pod, new: Pod) -> None:
        """A pod changed (bound, most often)."""
        if new.workload_ref is None:
            return
        key = gang_key(new.namespace, new.workload_ref)
        info = self.gangs.get(key)
        if info is None:
            self.gangs[key] = info = PodGroupInfo()
            info.add_pod(new)
            return
        info.update_pod(old, new)

    def delete_pod(self, pod: Pod) -> None:
        """A pod is gone; an empty gang is forgotten."""
        if pod.workload_ref is None:
            return
        key = gang_key(pod.namespace, pod.workload_ref)
        info = self.gangs.get(key)
        if info is None:
            return
        info.delete_pod(pod.uid)
        if not info.pods:
            del self.gangs[key]

    def pod_group_info(self, pod: Pod) -> PodGroupInfo | None:
        """The gang of a pod with a workloadRef, None when unknown."""
        assert pod.workload_ref is not None
        return self.gangs.get(gang_key(pod.namespace, pod.workload_ref))

    def on_event(self, event: Any) -> None:
        """Follow the pod informer (terminal pods arrive as deletions)."""
        if event.kind != "Pod":
            return
        if event.type == "ADDED":
            self.add_pod(event.new)
        elif event.type == "MODIFIED":
            self.update_pod(event.old, event.new)
        elif event.type == "DELETED":
            self.delete_pod(event.old)


def _workload_of(doc: Any) -> Workload | None:
    try:
        return parse_workload(doc)
    except ValueError:
        return None


class GangScheduling:
    """All-or-nothing scheduling for the pods of a Workload's gang pod group."""

    name = NAME

    def __init__(self, handle: Handle, manager: WorkloadManager | None = None) -> None:
        self.handle = handle
        cluster = handle.cluster()
        self.manager = manager if manager is not None else WorkloadManager()
        if manager is None and cluster is not None:
            for pod in cluster.list_pods():
                if visible(pod):
                    self.manager.add_pod(pod)
            cluster.watch(self._on_watch)

    def _on_watch(self, event: Any) -> None:
        seen = pod_informer_view(event) if event.kind == "Pod" else None
        if seen is not None:
            self.manager.on_event(seen)

    def workload(self, namespace: str, name: str) -> Workload | None:
        """The Workload of this namespace and name, None when it does not exist (or is invalid)."""
        cluster = self.handle.cluster()
        extensions = getattr(cluster, "extensions", None) or {}
        for doc in extensions.get("Workload", ()):
            meta = doc.get("metadata") or {}
            if meta.get("name") == name and (meta.get("namespace") or "default") == namespace:
                return _workload_of(doc)
        return None

    # ----- events --------------------------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEvent]:
        """A pod of the same gang added (workloadRef is immutable, so no updates); its Workload added."""
        return [
            ClusterEvent("Pod", ActionType.ADD, hint=self.is_schedulable_after_pod_added),
            ClusterEvent("Workload", ActionType.ADD, hint=self.is_schedulable_after_workload_added),
        ]

    def is_schedulable_after_pod_added(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """Queue when the added pod has the same namespace and workloadRef."""
        if pod.workload_ref is None or new is None or new.workload_ref is None:
            return QueueingHint.QUEUE_SKIP
        if pod.namespace != new.namespace or pod.workload_ref != new.workload_ref:
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE

    def is_schedulable_after_workload_added(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """Queue when the added Workload is the pod's (same namespace and name)."""
        meta = (new or {}).get("metadata") or {}
        if pod.workload_ref is None or (meta.get("namespace") or "default") != pod.namespace:
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE if meta.get("name") == pod.workload_ref.name else QueueingHint.QUEUE_SKIP

    # ----- extension points ------------------------------------------------------------------------
    def pre_enqueue(self, pod: Pod) -> Status:
        """Hold a gang pod until its Workload exists and the gang has minCount pods."""
        ref = pod.workload_ref
        if ref is None:
            return Status()
        workload = self.workload(pod.namespace, ref.name)
        if workload is None:
            return _unresolvable(f'waiting for pods\'s workload "{ref.name}" to appear in scheduling queue')
        policy = workload.policy(ref.pod_group)
        if policy is None:
            return _unresolvable(f'pod group "{ref.pod_group}" doesn\'t exist for a workload "{workload.name}"')
        if policy.min_count is None:
            return Status()
        info = self.manager.pod_group_info(pod)
        if info is None:
            return Status(Code.ERROR, ("internal pod group state doesn't exist for a pod's workload",))
        if len(info.pods) < policy.min_count:
            return _unresolvable(WAITING_TO_APPEAR)
        return Status()

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """The pod counts as assumed toward the gang's quorum."""
        if pod.workload_ref is None:
            return Status()
        info = self.manager.pod_group_info(pod)
        if info is None:
            return Status(Code.ERROR, ("internal pod group state doesn't exist for a pod's workload",))
        info.assume(pod.uid)
        return Status()

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """The pod no longer counts toward the quorum."""
        if pod.workload_ref is None:
            return
        info = self.manager.pod_group_info(pod)
        if info is not None:
            info.forget(pod.uid)

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, float]:
        """Wait until minCount gang pods are assumed or bound, then allow all that wait."""
        ref = pod.workload_ref
        if ref is None:
            return Status(), 0.0
        workload = self.workload(pod.namespace, ref.name)
        if workload is None:
            return Status(
                Code.ERROR,
                (f'failed to get workload {pod.namespace}/{ref.name}: workload.scheduling.k8s.io "{ref.name}" not found',),
            ), 0.0
        policy = workload.policy(ref.pod_group)
        if policy is None:
            return Status(Code.ERROR, (f'pod group "{ref.pod_group}" doesn\'t exist for a workload "{workload.name}"',)), 0.0
        if policy.min_count is None:
            return Status(), 0.0
        info = self.manager.pod_group_info(pod)
        if info is None:
            return Status(Code.ERROR, ("internal pod group state doesn't exist for a pod's workload",)), 0.0
        if len(info.assumed | info.assigned) < policy.min_count:
            # The gang's other pods may have waited for this one: let them try now.
            self.handle.activate([info.pods[uid] for uid in sorted(info.unscheduled) if uid in info.pods])
            return Status(Code.WAIT, (WAITING_AT_PERMIT,)), info.scheduling_timeout(self.handle.now())
        for uid in sorted(info.assumed):
            waiting = self.handle.get_waiting_pod(uid)
            if waiting is not None:
                waiting.allow(NAME)
        return Status(), 0.0


def _unresolvable(message: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (message,))


def new(args: object | None, handle: Handle) -> GangScheduling:
    """Build the plugin; it takes no args."""
    return GangScheduling(handle)
