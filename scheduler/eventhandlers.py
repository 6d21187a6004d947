"""Cluster events into the cache and the queue (kube-scheduler's eventhandlers.go): pods and nodes
as the informers deliver them, storage and the other kinds as the events that move unschedulable
pods back, and the PreEnqueue check the queue asks for."""

from __future__ import annotations

import dataclasses
import threading
from typing import Any

from scheduler.api.meta import ObjectMeta
from scheduler.api.objects import Node, Pod
from scheduler.cache import Cache
from scheduler.cluster.contract import Cluster
from scheduler.cluster.events import WatchEvent
from scheduler.cluster.informer import pod_informer_view
from scheduler.framework.runtime import Framework
from scheduler.framework.snapshot import Snapshot
from scheduler.framework.types import (
    ActionType,
    ClusterEvent,
    Status,
)
from scheduler.queue import SchedulingQueue
from scheduler.schedule_one import WaitingPodImpl

STORAGE_KINDS = ("PersistentVolume", "PersistentVolumeClaim", "StorageClass", "CSINode", "CSIDriver")


_ACTION_LABELS = {ActionType.ADD: "Add", ActionType.DELETE: "Delete", ActionType.UPDATE: "Update"}

# Annotations a simulator writes on a pod with the result of its attempt (kube-scheduler-simulator's
# keys): no plugin reads them, so a pod update that changes only these changes nothing a retry
# depends on.
RESULT_ANNOTATION_PREFIX = "kube-scheduler-simulator.sigs.k8s.io/"


def results_only(event: WatchEvent) -> bool:
    """Whether a pod update changed nothing but result annotations (the same object otherwise)."""
    old, new = event.old, event.new
    if event.kind != "Pod" or old is None or new is None or old.meta is new.meta:
        return False
    if any(getattr(old, f) is not getattr(new, f) for f in _POD_FIELDS):
        return False
    a, b = old.meta, new.meta
    if any(getattr(a, f) != getattr(b, f) for f in _META_FIELDS):
        return False
    changed = {k for k in a.annotations.keys() | b.annotations.keys() if a.annotations.get(k) != b.annotations.get(k)}
    return all(k.startswith(RESULT_ANNOTATION_PREFIX) for k in changed)


_POD_FIELDS = tuple(f.name for f in dataclasses.fields(Pod) if f.name not in ("meta", "kube_qos"))
_META_FIELDS = tuple(f.name for f in dataclasses.fields(ObjectMeta) if f.name != "annotations")


class EventHandlers:
    """The Scheduler's event handlers (a part of `Scheduler`)."""

    _changes: int
    cache: Cache
    cluster: Cluster
    feature_gates: Any
    lock: threading.RLock
    profiles: dict[str, Framework]
    queue: SchedulingQueue
    snapshot: Snapshot
    waiting: dict[str, WaitingPodImpl]

    # ----- startup and events --------------------------------------------------------------
    def _pre_enqueue(self, pod: Pod) -> Status:
        fwk = self.profiles.get(pod.scheduler_name)
        return fwk.run_pre_enqueue(pod) if fwk is not None else Status()

    def _responsible_for(self, pod: Pod) -> bool:
        return pod.scheduler_name in self.profiles

    def on_event(self, event: WatchEvent) -> None:
        """Apply one cluster change to the cache and the queue."""
        with self.lock:
            if not results_only(event):
                self._changes += 1
            if event.kind == "Pod":
                seen = pod_informer_view(event)
                if seen is not None:
                    self._on_pod(seen)
            elif event.kind == "Node":
                self._on_node(event)
            elif event.kind == "Namespace" and event.new is not None:
                self.snapshot.namespaces[event.new.name] = self.cluster.namespace_labels(event.new.name)
            elif event.kind in STORAGE_KINDS or event.kind == "Workload":
                # A new PV, claim, class, CSINode or CSIDriver may let pods the volume plugins
                # rejected in; the plugins read these objects from the cluster's listers.
                action = {"ADDED": ActionType.ADD, "DELETED": ActionType.DELETE}.get(event.type, ActionType.UPDATE)
                self.queue.move_all(
                    ClusterEvent(event.kind, action, f"{event.kind}{_ACTION_LABELS[action]}"), event.old, event.new
                )

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
            if old.nominated_node_name and not (old.node_name or waiting is not None):
                # `deletePodFromSchedulingQueue`: a deleted pod that held a nominated node frees
                # it for pods of lower or equal priority, which treated it as assigned there.
                limit = old.effective_priority
                self.queue.move_all(
                    ClusterEvent("Pod", ActionType.DELETE, "AssignedPodDelete"),
                    old,
                    None,
                    lambda p: p.effective_priority <= limit,
                )
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
            if self.feature_gates is not None and self.feature_gates.enabled("GangScheduling"):
                # A new gang pod may complete its gang's quorum (`addPodToSchedulingQueue`).
                self.queue.move_all(ClusterEvent("Pod", ActionType.ADD, "UnscheduledPodAdd"), None, new)
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
