"""What kube-controller-manager's PV controller and an external provisioner do once the
scheduler's VolumeBinding PreBind has written its decisions, played by the simulated cluster.

A real cluster completes binding asynchronously and VolumeBinding polls for it; the simulated
one completes it at once: a PV whose claimRef names an unbound claim binds both (claim gets
`volumeName` and the bind-completed annotation, both turn `Bound`); a claim annotated with a
selected node gets a provisioned PV (`pvc-<claim uid>`), pinned to the node's values of the
class's allowedTopologies keys (else of the CSI driver's topology keys on that node), then bound.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

from scheduler.api.storage import (
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_PROVISIONED_BY,
    ANN_SELECTED_NODE,
    ANN_STORAGE_PROVISIONER,
    PersistentVolume,
    PersistentVolumeClaim,
    parse_persistent_volume,
)


def _with_status(raw: dict[str, Any], phase: str) -> dict[str, Any]:
    doc = copy.deepcopy(raw)
    doc.setdefault("status", {})["phase"] = phase
    return doc


def bound_pair(pv: PersistentVolume, pvc: PersistentVolumeClaim) -> tuple[PersistentVolume, PersistentVolumeClaim]:
    """The PV and claim as the PV controller leaves them once it bound them to each other."""
    annotations = {**pvc.meta.annotations, ANN_BIND_COMPLETED: "yes"}
    if ANN_BOUND_BY_CONTROLLER in pv.meta.annotations:
        annotations[ANN_BOUND_BY_CONTROLLER] = "yes"
    raw = _with_status(pvc.raw, "Bound")
    raw.setdefault("spec", {})["volumeName"] = pv.name
    raw.setdefault("metadata", {})["annotations"] = annotations
    new_claim = replace(pvc, meta=replace(pvc.meta, annotations=annotations), volume_name=pv.name, phase="Bound", raw=raw)
    return replace(pv, phase="Bound", raw=_with_status(pv.raw, "Bound")), new_claim


def provisioned_volume(cluster: Any, pvc: PersistentVolumeClaim, node_name: str) -> PersistentVolume | None:
    """The PV an external provisioner creates for a claim scheduled to `node_name` (None without a provisioner)."""
    sc = cluster.get_storage_class(pvc.storage_class)
    node = cluster.nodes.get(node_name)
    if sc is None or node is None or not sc.provisioner:
        return None
    keys = [key for term in sc.allowed_topologies for key, _ in term.expressions]
    if not keys:
        csi_node = cluster.get_csi_node(node_name)
        driver = next((d for d in csi_node.drivers if d.name == sc.provisioner), None) if csi_node is not None else None
        keys = list(driver.topology_keys) if driver is not None else []
    expressions = [
        {"key": key, "operator": "In", "values": [node.labels[key]]} for key in dict.fromkeys(keys) if key in node.labels
    ]
    spec: dict[str, Any] = {
        "capacity": {"storage": str(pvc.request)},
        "accessModes": list(pvc.access_modes),
        "volumeMode": pvc.volume_mode,
        "storageClassName": sc.name,
        "persistentVolumeReclaimPolicy": "Delete",
        "csi": {"driver": sc.provisioner, "volumeHandle": f"pvc-{pvc.meta.uid}"},
        "claimRef": {
            "kind": "PersistentVolumeClaim",
            "apiVersion": "v1",
            "namespace": pvc.namespace,
            "name": pvc.name,
            "uid": pvc.meta.uid,
        },
    }
    if expressions:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": expressions}]}}
    return parse_persistent_volume(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": f"pvc-{pvc.meta.uid}", "annotations": {ANN_PROVISIONED_BY: sc.provisioner}},
            "spec": spec,
            "status": {"phase": "Bound"},
        }
    )


def complete_binding(cluster: Any, pvc: PersistentVolumeClaim) -> None:
    """Bind or provision one claim the scheduler just wrote, as the controllers would."""
    if pvc.fully_bound:
        return
    pv = cluster.get_persistent_volume(pvc.volume_name) if pvc.volume_name else None
    if pv is None:
        pv = next(
            (
                v
                for v in cluster.list_persistent_volumes()
                if v.claim_ref is not None
                and v.claim_ref.namespace == pvc.namespace
                and v.claim_ref.name == pvc.name
                and (not v.claim_ref.uid or v.claim_ref.uid == pvc.meta.uid)
            ),
            None,
        )
    if pv is None and ANN_SELECTED_NODE in pvc.meta.annotations:
        sc = cluster.get_storage_class(pvc.storage_class)
        if sc is not None and sc.provisioner:
            annotations = {**pvc.meta.annotations, ANN_STORAGE_PROVISIONER: sc.provisioner}
            pvc = replace(pvc, meta=replace(pvc.meta, annotations=annotations))
        pv = provisioned_volume(cluster, pvc, pvc.meta.annotations[ANN_SELECTED_NODE])
        if pv is None:
            return
    if pv is None:
        return
    new_pv, new_claim = bound_pair(pv, pvc)
    cluster.put_persistent_volume(new_pv)
    cluster.put_persistent_volume_claim(new_claim)
