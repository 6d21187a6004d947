"""VolumeRestrictions: in-tree disk conflicts on a node and ReadWriteOncePod claims already in
use (kubernetes/kubernetes `pkg/scheduler/framework/plugins/volumerestrictions`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scheduler.api.objects import Pod
from scheduler.api.volumes import Volume
from scheduler.framework import signers
from scheduler.framework.interface import Handle
from scheduler.framework.nodeinfo import NodeInfo, PodInfo
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
from scheduler.plugins.volumeutil import NotFound, get_claim, storage_lister

NAME = "VolumeRestrictions"
STATE_KEY = "PreFilter" + NAME
ERR_REASON_DISK_CONFLICT = "node(s) had no available disk"
ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT = (
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod"
)
_CHECKED_SOURCES = ("gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi")


@dataclass(slots=True)
class PreFilterState:
    """The pod's ReadWriteOncePod claims and how many of them other pods use."""

    read_write_once_pod_pvcs: frozenset[str]
    conflicting_pvc_ref_count: int

    def update_with_pod(self, pod: Pod, multiplier: int) -> None:
        """Account a pod added to (1) or removed from (-1) a node in a dry run."""
        self.conflicting_pvc_ref_count += multiplier * sum(
            1 for v in pod.volumes if v.source == "persistentVolumeClaim" and v.claim_name in self.read_write_once_pod_pvcs
        )

    def clone(self) -> PreFilterState:
        """A copy for a dry run."""
        return PreFilterState(self.read_write_once_pod_pvcs, self.conflicting_pvc_ref_count)


def needs_restrictions_check(volume: Volume) -> bool:
    """Only in-tree GCE PD, AWS EBS, RBD and iSCSI volumes can conflict on a node."""
    return volume.source in _CHECKED_SOURCES


def is_volume_conflict(volume: Volume, pod: Pod) -> bool:
    """Whether `volume` conflicts with a volume of `pod` (`isVolumeConflict`)."""
    for existing in pod.volumes:
        if existing.source != volume.source or existing.disk != volume.disk:
            continue
        if volume.source == "awsElasticBlockStore":
            return True
        if volume.source == "rbd" and not set(volume.monitors) & set(existing.monitors):
            continue
        if not (volume.read_only and existing.read_only):
            return True
    return False


def satisfy_volume_conflicts(pod: Pod, node_info: NodeInfo) -> bool:
    """No in-tree disk of the pod is in conflicting use on the node."""
    for volume in pod.volumes:
        if not needs_restrictions_check(volume):
            continue
        if any(is_volume_conflict(volume, info.pod) for info in node_info.pods):
            return False
    return True


class VolumeRestrictions:
    """PreFilter counts ReadWriteOncePod claims in use; Filter checks disks and that count."""

    name = NAME

    def sign_pod(self, pod: Pod) -> signers.Signed:
        """The volumes but configMaps and secrets."""
        return signers.signed((signers.VOLUMES, signers.volumes(pod)))

    def __init__(self, handle: Handle) -> None:
        self.handle = handle

    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        """Skip unless the pod has an in-tree disk or a ReadWriteOncePod claim someone uses."""
        if not pod.volumes:
            return None, skip()
        needs_check = any(needs_restrictions_check(v) for v in pod.volumes)
        lister = storage_lister(self.handle)
        rwop: set[str] = set()
        try:
            for v in pod.volumes:
                if v.source != "persistentVolumeClaim":
                    continue
                pvc = get_claim(lister, pod.namespace, v.claim_name)
                if "ReadWriteOncePod" in pvc.access_modes:
                    rwop.add(pvc.name)
        except NotFound as exc:
            return None, unresolvable(str(exc))
        snapshot = self.handle.snapshot
        used = sum(1 for name in rwop if snapshot.is_pvc_used_by_pods(f"{pod.namespace}/{name}"))
        if not needs_check and used == 0:
            return None, skip()
        state.write(STATE_KEY, PreFilterState(frozenset(rwop), used))
        return None, Status()

    def pre_filter_extensions(self) -> VolumeRestrictions:
        """AddPod/RemovePod adjust the in-use count during preemption's dry runs."""
        return self

    def add_pod(self, state: CycleState, pod: Pod, to_add: PodInfo, node_info: NodeInfo) -> Status:
        """A pod added in a dry run may use one of the claims."""
        s = state.get(STATE_KEY)
        if not isinstance(s, PreFilterState):
            return error(f'cannot read "{STATE_KEY}" from cycleState')
        s.update_with_pod(to_add.pod, 1)
        return Status()

    def remove_pod(self, state: CycleState, pod: Pod, to_remove: PodInfo, node_info: NodeInfo) -> Status:
        """A victim removed in a dry run frees the claims it used."""
        s = state.get(STATE_KEY)
        if not isinstance(s, PreFilterState):
            return error(f'cannot read "{STATE_KEY}" from cycleState')
        s.update_with_pod(to_remove.pod, -1)
        return Status()

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Unschedulable on a disk conflict, or while a ReadWriteOncePod claim is in use."""
        if not satisfy_volume_conflicts(pod, node_info):
            return unschedulable(ERR_REASON_DISK_CONFLICT)
        s = state.get(STATE_KEY)
        if not isinstance(s, PreFilterState):
            return error(f'cannot read "{STATE_KEY}" from cycleState')
        if s.conflicting_pvc_ref_count > 0:
            return unschedulable(ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT)
        return Status()

    def events_to_register(self) -> list[ClusterEvent]:
        """A deleted pod frees its disks and claims; a new node or claim may help."""
        return [
            ClusterEvent("Pod", ActionType.DELETE),
            ClusterEvent("Node", ActionType.ADD),
            ClusterEvent("PersistentVolumeClaim", ActionType.ADD),
        ]


def new(args: Any, handle: Handle) -> VolumeRestrictions:
    """Build VolumeRestrictions (no args)."""
    return VolumeRestrictions(handle)
