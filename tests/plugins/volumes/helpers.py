"""Builders for storage objects and a handle whose cluster holds them (volume plugin tests)."""

from __future__ import annotations

from typing import Any

from scheduler.api.loader import ClusterObjects
from scheduler.api.objects import Node, Pod
from scheduler.api.storage import (
    parse_csi_driver,
    parse_csi_node,
    parse_persistent_volume,
    parse_persistent_volume_claim,
    parse_storage_class,
)
from scheduler.clock import VirtualClock
from scheduler.cluster.simulated import SimulatedCluster
from tests.support.builders import make_pod, make_snapshot
from tests.support.fakes import FakeHandle

ZONE = "topology.kubernetes.io/zone"


def pvc(
    name: str,
    cls: str | None = None,
    volume: str = "",
    bound: bool = False,
    modes: tuple[str, ...] = ("ReadWriteOnce",),
    size: str = "1Gi",
    annotations: dict[str, str] | None = None,
    phase: str = "Pending",
    **extra: Any,
) -> dict[str, Any]:
    """A PersistentVolumeClaim document; `bound` adds bind-completed, as the PV controller does."""
    ann = dict(annotations or {})
    if bound:
        ann["pv.kubernetes.io/bind-completed"] = "yes"
    spec: dict[str, Any] = {"accessModes": list(modes), "resources": {"requests": {"storage": size}}, **extra}
    if cls is not None:
        spec["storageClassName"] = cls
    if volume:
        spec["volumeName"] = volume
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-pvc-{name}", "annotations": ann},
        "spec": spec,
        "status": {"phase": "Bound" if bound else phase},
    }


def pv(
    name: str,
    cls: str = "",
    size: str = "1Gi",
    zone: str = "",
    labels: dict[str, str] | None = None,
    claim: str = "",
    modes: tuple[str, ...] = ("ReadWriteOnce",),
    driver: str = "",
    phase: str = "Available",
) -> dict[str, Any]:
    """A PersistentVolume document, pinned to a zone when given, pre-bound when `claim` is given."""
    spec: dict[str, Any] = {"capacity": {"storage": size}, "accessModes": list(modes), "storageClassName": cls}
    if zone:
        spec["nodeAffinity"] = {
            "required": {"nodeSelectorTerms": [{"matchExpressions": [{"key": ZONE, "operator": "In", "values": [zone]}]}]}
        }
    if claim:
        spec["claimRef"] = {"namespace": "default", "name": claim}
    if driver:
        spec["csi"] = {"driver": driver, "volumeHandle": f"handle-{name}"}
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": spec,
        "status": {"phase": phase},
    }


def sc(
    name: str,
    mode: str = "WaitForFirstConsumer",
    provisioner: str = "kubernetes.io/no-provisioner",
    zones: list[str] | None = None,
) -> dict[str, Any]:
    """A StorageClass document."""
    doc: dict[str, Any] = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": provisioner,
        "volumeBindingMode": mode,
    }
    if zones:
        doc["allowedTopologies"] = [{"matchLabelExpressions": [{"key": ZONE, "values": zones}]}]
    return doc


def csinode(node: str, limits: dict[str, int], annotations: dict[str, str] | None = None) -> dict[str, Any]:
    """A CSINode with one driver per limit."""
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSINode",
        "metadata": {"name": node, "annotations": annotations or {}},
        "spec": {"drivers": [{"name": d, "nodeID": node, "allocatable": {"count": c}} for d, c in limits.items()]},
    }


def pod_with(
    name: str, *claims: str, node_name: str = "", volumes: list[dict[str, Any]] | None = None, priority: int | None = None
) -> Pod:
    """A pod using the claims (and any other volumes given)."""
    vols = [{"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(claims)] + list(volumes or [])
    return make_pod(name, node_name=node_name, spec={"volumes": vols}, priority=priority)


class StorageHandle(FakeHandle):
    """A FakeHandle whose cluster is a SimulatedCluster holding the storage objects."""

    def __init__(self, nodes: list[Node], pods: list[Pod], docs: list[dict[str, Any]]) -> None:
        super().__init__(make_snapshot(nodes, pods))
        objs = ClusterObjects(nodes=list(nodes), pods=list(pods))
        parsers = {
            "PersistentVolume": (parse_persistent_volume, objs.persistent_volumes),
            "PersistentVolumeClaim": (parse_persistent_volume_claim, objs.persistent_volume_claims),
            "StorageClass": (parse_storage_class, objs.storage_classes),
            "CSINode": (parse_csi_node, objs.csi_nodes),
            "CSIDriver": (parse_csi_driver, objs.csi_drivers),
        }
        for doc in docs:
            parse, target = parsers[doc["kind"]]
            target.append(parse(doc))  # type: ignore[operator]
        self.sim = SimulatedCluster.from_objects(objs, VirtualClock(self._now))

    def cluster(self) -> Any:
        return self.sim
