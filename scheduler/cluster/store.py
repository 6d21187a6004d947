"""The objects a cluster backend keeps in memory, as the scheduler's listers read them, and the
watch that delivers their changes.

Both backends are one: the simulated cluster (cluster/simulated.py) holds its whole state here,
the `kubernetes` backend (kube/backend.py) its informers' cache. Changes are delivered to watchers
synchronously, in order, as informer events would be. Objects are replaced, never mutated, so a
plugin holding an old object keeps a consistent view.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from scheduler.api.objects import TERMINAL_PHASES, Namespace, Node, Pod, PodDisruptionBudget, PriorityClass
from scheduler.api.storage import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
)
from scheduler.api.workloads import SelectingObject
from scheduler.clock import Clock
from scheduler.cluster.errors import APIError, NotFoundError
from scheduler.cluster.events import RecordedEvent, WatchEvent
from scheduler.cluster.pvcontroller import complete_binding


@dataclass(slots=True)
class ClusterStore:
    """Nodes, pods and the other objects scheduling reads, in memory, with their watchers."""

    clock: Clock
    nodes: dict[str, Node] = field(default_factory=dict)
    pods: dict[str, Pod] = field(default_factory=dict)
    namespaces: dict[str, Namespace] = field(default_factory=dict)
    priority_classes: dict[str, PriorityClass] = field(default_factory=dict)
    pdbs: dict[str, PodDisruptionBudget] = field(default_factory=dict)
    # Services and workload controllers by kind, then `namespace/name` (default pod spreading).
    selecting: dict[str, dict[str, SelectingObject]] = field(default_factory=dict)
    persistent_volumes: dict[str, PersistentVolume] = field(default_factory=dict)
    persistent_volume_claims: dict[str, PersistentVolumeClaim] = field(default_factory=dict)
    storage_classes: dict[str, StorageClass] = field(default_factory=dict)
    csi_nodes: dict[str, CSINode] = field(default_factory=dict)
    csi_drivers: dict[str, CSIDriver] = field(default_factory=dict)
    csi_storage_capacities: list[CSIStorageCapacity] = field(default_factory=list)
    extensions: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    deleted: dict[str, Pod] = field(default_factory=dict)
    events: list[RecordedEvent] = field(default_factory=list)
    record_events: bool = True
    # A long-running host (the console) keeps at most this many deleted pods and recorded events,
    # the newest (a finite `simulate` or `bench` run keeps all: None). `events_dropped` counts the
    # events let go, so a reader that remembers a position in `events` can go on from it.
    history_limit: int | None = None
    events_dropped: int = 0
    # Set by the scheduler when API calls take wall-clock time (`Cluster.api_wait`).
    api_wait: Callable[[float], None] | None = None
    _watchers: list[Callable[[WatchEvent], None]] = field(default_factory=list)

    def update_object(self, kind: str, doc: dict[str, Any]) -> None:
        """Replace a custom resource document (PodGroup, Reservation, ...) by kind, namespace and name."""
        meta = doc.get("metadata") or {}
        key = (meta.get("namespace", ""), meta.get("name"))
        items = self.extensions.setdefault(kind, [])
        for i, old in enumerate(items):
            old_meta = old.get("metadata") or {}
            if (old_meta.get("namespace", ""), old_meta.get("name")) == key:
                items[i] = doc
                self._emit(WatchEvent(kind, "MODIFIED", old, doc))
                return
        items.append(doc)
        self._emit(WatchEvent(kind, "ADDED", None, doc))

    def delete_object(self, kind: str, namespace: str, name: str) -> None:
        """Delete a custom resource document by kind, namespace and name."""
        items = self.extensions.get(kind, [])
        for i, old in enumerate(items):
            old_meta = old.get("metadata") or {}
            if (old_meta.get("namespace", "") or "", old_meta.get("name")) in ((namespace, name), ("", name)):
                del items[i]
                self._emit(WatchEvent(kind, "DELETED", old, None))
                return

    def put_namespace(self, namespace: Namespace) -> None:
        """Create or replace a namespace."""
        old = self.namespaces.get(namespace.name)
        self.namespaces[namespace.name] = namespace
        self._emit(WatchEvent("Namespace", "MODIFIED" if old else "ADDED", old, namespace))

    def update_pod(self, pod: Pod) -> None:
        """Replace a live pod with a new version of it (an API update), emitting MODIFIED."""
        old = self.pods.get(pod.uid)
        if old is None:
            raise NotFoundError(f'pods "{pod.name}" not found')
        self.pods[pod.uid] = pod
        self._emit(WatchEvent("Pod", "MODIFIED", old, pod))

    def replace_pod(self, uid: str, **changes: Any) -> Pod:
        """Replace fields of a live pod (what a controller's update does), emitting MODIFIED."""
        return self._replace(uid, **changes)

    # ----- watching ---------------------------------------------------------------------
    def watch(self, handler: Callable[[WatchEvent], None]) -> None:
        """Deliver every later change to handler."""
        self._watchers.append(handler)

    def unwatch(self, handler: Callable[[WatchEvent], None]) -> None:
        """Stop delivering changes to handler."""
        if handler in self._watchers:
            self._watchers.remove(handler)

    def _emit(self, event: WatchEvent) -> None:
        for handler in list(self._watchers):
            handler(event)

    # ----- listers ----------------------------------------------------------------------
    def list_nodes(self) -> list[Node]:
        """All nodes in the order they were added."""
        return list(self.nodes.values())

    def list_pods(self) -> list[Pod]:
        """All live pods in the order they were added."""
        return list(self.pods.values())

    def get_pod(self, uid: str) -> Pod | None:
        """A live pod by uid."""
        return self.pods.get(uid)

    def list_pdbs(self, namespace: str | None = None) -> list[PodDisruptionBudget]:
        """PodDisruptionBudgets, optionally of one namespace."""
        return [p for p in self.pdbs.values() if namespace is None or p.meta.namespace == namespace]

    def _selecting(self, kind: str, namespace: str) -> list[SelectingObject]:
        return [o for o in self.selecting.get(kind, {}).values() if o.namespace == namespace]

    def list_services(self, namespace: str) -> list[SelectingObject]:
        """The Services of a namespace."""
        return self._selecting("Service", namespace)

    def list_replication_controllers(self, namespace: str) -> list[SelectingObject]:
        """The ReplicationControllers of a namespace."""
        return self._selecting("ReplicationController", namespace)

    def list_replica_sets(self, namespace: str) -> list[SelectingObject]:
        """The ReplicaSets of a namespace."""
        return self._selecting("ReplicaSet", namespace)

    def list_stateful_sets(self, namespace: str) -> list[SelectingObject]:
        """The StatefulSets of a namespace."""
        return self._selecting("StatefulSet", namespace)

    def namespace_labels(self, name: str) -> dict[str, str]:
        """A namespace's labels (with the automatic kubernetes.io/metadata.name)."""
        ns = self.namespaces.get(name)
        labels = dict(ns.meta.labels) if ns is not None else {}
        labels.setdefault("kubernetes.io/metadata.name", name)
        return labels

    def get_persistent_volume(self, name: str) -> PersistentVolume | None:
        """A PersistentVolume by name."""
        return self.persistent_volumes.get(name)

    def get_persistent_volume_claim(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        """A PersistentVolumeClaim by namespace and name."""
        return self.persistent_volume_claims.get(f"{namespace}/{name}")

    def list_persistent_volumes(self) -> list[PersistentVolume]:
        """All PersistentVolumes in the order they were added."""
        return list(self.persistent_volumes.values())

    def get_storage_class(self, name: str) -> StorageClass | None:
        """A StorageClass by name."""
        return self.storage_classes.get(name)

    def get_csi_node(self, name: str) -> CSINode | None:
        """The CSINode of a node."""
        return self.csi_nodes.get(name)

    def get_csi_driver(self, name: str) -> CSIDriver | None:
        """A CSIDriver by name."""
        return self.csi_drivers.get(name)

    # ----- storage writes -------------------------------------------------------------------
    def put_persistent_volume(self, pv: PersistentVolume) -> None:
        """Create or update a PersistentVolume."""
        old = self.persistent_volumes.get(pv.name)
        self.persistent_volumes[pv.name] = pv
        self._emit(WatchEvent("PersistentVolume", "MODIFIED" if old else "ADDED", old, pv))

    def put_persistent_volume_claim(self, pvc: PersistentVolumeClaim) -> None:
        """Create or update a PersistentVolumeClaim."""
        old = self.persistent_volume_claims.get(pvc.key)
        self.persistent_volume_claims[pvc.key] = pvc
        self._emit(WatchEvent("PersistentVolumeClaim", "MODIFIED" if old else "ADDED", old, pvc))

    def put_storage_class(self, sc: StorageClass) -> None:
        """Create or update a StorageClass."""
        old = self.storage_classes.get(sc.name)
        self.storage_classes[sc.name] = sc
        self._emit(WatchEvent("StorageClass", "MODIFIED" if old else "ADDED", old, sc))

    def put_csi_node(self, csi_node: CSINode) -> None:
        """Create or update a CSINode."""
        old = self.csi_nodes.get(csi_node.name)
        self.csi_nodes[csi_node.name] = csi_node
        self._emit(WatchEvent("CSINode", "MODIFIED" if old else "ADDED", old, csi_node))

    def put_csi_driver(self, driver: CSIDriver) -> None:
        """Create or update a CSIDriver."""
        old = self.csi_drivers.get(driver.name)
        self.csi_drivers[driver.name] = driver
        self._emit(WatchEvent("CSIDriver", "MODIFIED" if old else "ADDED", old, driver))

    def bind_pod_volumes(self, pod: Pod, pvs: list[PersistentVolume], claims: list[PersistentVolumeClaim]) -> None:
        """VolumeBinding's PreBind writes: PVs with their claimRef and claims with a selected node;
        the cluster then plays the PV controller and the provisioner (see `pvcontroller`)."""
        for pv in pvs:
            self.put_persistent_volume(pv)
        for claim in claims:
            self.put_persistent_volume_claim(claim)
        for pv in pvs:
            ref = pv.claim_ref
            bound = self.get_persistent_volume_claim(ref.namespace, ref.name) if ref is not None else None
            if bound is not None:
                complete_binding(self, bound)
        for claim in claims:
            current = self.get_persistent_volume_claim(claim.namespace, claim.name)
            if current is not None:
                complete_binding(self, current)

    # ----- writes -----------------------------------------------------------------------
    def add_node(self, node: Node) -> None:
        """Create or replace a node."""
        old = self.nodes.get(node.name)
        self.nodes[node.name] = node
        self._emit(WatchEvent("Node", "MODIFIED" if old else "ADDED", old, node))

    def delete_node(self, name: str) -> None:
        """Delete a node."""
        old = self.nodes.pop(name, None)
        if old is not None:
            self._emit(WatchEvent("Node", "DELETED", old, None))

    def _replace(self, uid: str, **changes: Any) -> Pod:
        old = self.pods.get(uid)
        if old is None:
            raise NotFoundError(f'pods "{uid}" not found')
        new = old.with_changes(**changes)
        self.pods[uid] = new
        self._emit(WatchEvent("Pod", "MODIFIED", old, new))
        return new

    def remember_deleted(self, pod: Pod) -> None:
        """Keep a deleted pod (what a run's report reads), the newest `history_limit` of them."""
        self.deleted[pod.uid] = pod
        limit = self.history_limit
        if limit is not None and len(self.deleted) > limit + limit // 4:  # trimmed in steps, not per pod
            for uid in list(itertools.islice(self.deleted, len(self.deleted) - limit)):
                del self.deleted[uid]

    def set_pod_phase(self, pod: Pod, phase: str) -> Pod:
        """Update status.phase, as the kubelet does when a pod's containers finish.

        A pod that reaches Succeeded or Failed stays in the cluster, but the scheduler's
        informer stops listing it (cluster/informer.py), so it leaves the cache.
        """
        current = self.pods.get(pod.uid)
        if current is None:
            raise NotFoundError(f'pods "{pod.name}" not found')
        if current.terminal and phase not in TERMINAL_PHASES:
            raise APIError(f"pod {pod.key}: status.phase: cannot change from terminal phase {current.phase} to {phase}")
        return self._replace(pod.uid, phase=phase)

    def record(self, type_: str, reason: str, obj: str, message: str) -> None:
        """Record a Kubernetes Event."""
        if self.record_events:
            self.events.append(RecordedEvent(self.clock.now(), type_, reason, obj, message))
            limit = self.history_limit
            if limit is not None and len(self.events) > limit + limit // 4:
                drop = len(self.events) - limit
                del self.events[:drop]
                self.events_dropped += drop


__all__ = ["ClusterStore"]
