"""NodeVolumeLimits: a node's CSI attach limits (CSINode `allocatable.count` per driver) against
the unique volumes already on the node plus the pod's new ones
(kubernetes/kubernetes `pkg/scheduler/framework/plugins/nodevolumelimits/csi.go`).

Not modelled: VolumeAttachment objects (volumes attached without a pod) and the translation
of in-tree PersistentVolume sources to CSI; inline GCE PD and AWS EBS volumes count under their
CSI driver when the CSINode lists the in-tree plugin as migrated.
"""

from __future__ import annotations

from typing import Any

from scheduler.api.objects import Pod
from scheduler.api.storage import MIGRATED_PLUGINS_ANNOTATION, CSINode, PersistentVolumeClaim
from scheduler.api.volumes import Volume
from scheduler.framework import signers
from scheduler.framework.interface import Handle
from scheduler.framework.nodeinfo import NodeInfo
from scheduler.framework.types import (
    ActionType,
    ClusterEvent,
    CycleState,
    PreFilterResult,
    Status,
    error,
    skip,
    unresolvable,
    unschedulable,
)
from scheduler.plugins.volumeutil import storage_lister

NAME = "NodeVolumeLimits"
ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED = "node(s) exceed max volume count"
UNBOUND_VOLUME_PREFIX = "unbound"
"""Stands for upstream's random prefix of the volume id given to claims not bound yet."""
IN_TREE_TO_CSI = {
    "kubernetes.io/gce-pd": "pd.csi.storage.gke.io",
    "kubernetes.io/aws-ebs": "ebs.csi.aws.com",
    "kubernetes.io/azure-disk": "disk.csi.azure.com",
    "kubernetes.io/cinder": "cinder.csi.openstack.org",
}
INLINE_PLUGIN = {"gcePersistentDisk": "kubernetes.io/gce-pd", "awsElasticBlockStore": "kubernetes.io/aws-ebs"}


class LookupFailed(Exception):
    """A claim of the pod being scheduled is missing; NotFound makes the node unresolvable."""


def is_csi_migration_on(csi_node: CSINode | None, plugin: str) -> bool:
    """The in-tree plugin is migrated on this node: listed in the CSINode's migrated-plugins annotation."""
    if csi_node is None or plugin not in IN_TREE_TO_CSI:
        return False
    listed = csi_node.meta.annotations.get(MIGRATED_PLUGINS_ANNOTATION, "")
    return plugin in listed.split(",")


class NodeVolumeLimits:
    """Filter: the node's per-driver attach limits must hold with the pod's new volumes."""

    name = NAME

    def sign_pod(self, pod: Pod) -> signers.Signed:
        """The volumes but configMaps and secrets."""
        return signers.signed((signers.VOLUMES, signers.volumes(pod)))

    def __init__(self, handle: Handle) -> None:
        self.handle = handle

    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        """Skip unless the pod has a claim, a generic ephemeral volume or a migratable inline disk."""
        for v in pod.volumes:
            if v.source in ("persistentVolumeClaim", "ephemeral") or v.source in INLINE_PLUGIN:
                return None, Status()
        return None, skip()

    def pre_filter_extensions(self) -> None:
        """No AddPod/RemovePod."""
        return None

    def _driver_info(self, lister: Any, csi_node: CSINode | None, pvc: PersistentVolumeClaim) -> tuple[str, str]:
        """(driver, volume handle) of a claim: its bound PV's CSI source, else its class's provisioner."""
        if pvc.volume_name:
            pv = lister.get_persistent_volume(pvc.volume_name)
            if pv is not None:
                if pv.csi is None:
                    return "", ""
                return pv.csi.driver, pv.csi.volume_handle
        class_name = pvc.storage_class
        if not class_name:
            return "", ""
        sc = lister.get_storage_class(class_name)
        if sc is None:
            return "", ""
        handle = f"{UNBOUND_VOLUME_PREFIX}-{pvc.namespace}/{pvc.name}"
        if sc.provisioner in IN_TREE_TO_CSI:
            if not is_csi_migration_on(csi_node, sc.provisioner):
                return "", ""
            return IN_TREE_TO_CSI[sc.provisioner], handle
        return sc.provisioner, handle

    def _attachable(self, lister: Any, pod: Pod, csi_node: CSINode | None, new_pod: bool, result: dict[str, str]) -> None:
        """Add the pod's attachable volumes (unique name -> driver) to result (`filterAttachableVolumes`)."""
        for v in pod.volumes:
            if v.source == "persistentVolumeClaim":
                claim_name = v.claim_name
            elif v.source == "ephemeral":
                claim_name = f"{pod.name}-{v.name}"
            else:
                self._inline(v, csi_node, result)
                continue
            if not claim_name:
                raise RuntimeError("PersistentVolumeClaim had no name")
            pvc = lister.get_persistent_volume_claim(pod.namespace, claim_name)
            if pvc is None:
                if new_pod:
                    raise LookupFailed(
                        f'looking up PVC {pod.namespace}/{claim_name}: persistentvolumeclaim "{claim_name}" not found'
                    )
                continue
            if v.source == "ephemeral" and pod.uid not in pvc.owner_uids:
                raise RuntimeError(
                    f"PVC {pvc.namespace}/{pvc.name} was not created for pod {pod.namespace}/{pod.name} (pod is not owner)"
                )
            driver, handle = self._driver_info(lister, csi_node, pvc)
            if driver and handle:
                result[f"{driver}/{handle}"] = driver

    @staticmethod
    def _inline(v: Volume, csi_node: CSINode | None, result: dict[str, str]) -> None:
        plugin = INLINE_PLUGIN.get(v.source)
        if plugin is None or not is_csi_migration_on(csi_node, plugin):
            return
        driver = IN_TREE_TO_CSI[plugin]
        result[f"{driver}/{v.disk}"] = driver

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Unschedulable when a driver's attached plus new unique volumes exceed its limit."""
        if not pod.volumes:
            return Status()
        lister = storage_lister(self.handle)
        csi_node: CSINode | None = lister.get_csi_node(node_info.name)
        new_volumes: dict[str, str] = {}
        try:
            self._attachable(lister, pod, csi_node, True, new_volumes)
        except LookupFailed as exc:
            return unresolvable(str(exc))
        except RuntimeError as exc:
            return error(str(exc))
        if not new_volumes:
            return Status()
        limits = csi_node.limits() if csi_node is not None else {}
        if not limits:
            return Status()
        attached: dict[str, str] = {}
        try:
            for info in node_info.pods:
                if info.pod.volumes:
                    self._attachable(lister, info.pod, csi_node, False, attached)
        except RuntimeError as exc:
            return error(str(exc))
        attached_count: dict[str, int] = {}
        for unique, driver in attached.items():
            new_volumes.pop(unique, None)
            attached_count[driver] = attached_count.get(driver, 0) + 1
        new_count: dict[str, int] = {}
        for driver in new_volumes.values():
            new_count[driver] = new_count.get(driver, 0) + 1
        for driver, count in new_count.items():
            limit = limits.get(driver)
            if limit is not None and attached_count.get(driver, 0) + count > limit:
                return unschedulable(ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)
        return Status()

    def events_to_register(self) -> list[ClusterEvent]:
        """A CSINode added or raised, a pod with volumes deleted, a claim added."""
        return [
            ClusterEvent("CSINode", ActionType.ADD | ActionType.UPDATE),
            ClusterEvent("Pod", ActionType.DELETE),
            ClusterEvent("PersistentVolumeClaim", ActionType.ADD),
        ]


def new(args: Any, handle: Handle) -> NodeVolumeLimits:
    """Build NodeVolumeLimits (no args)."""
    return NodeVolumeLimits(handle)
