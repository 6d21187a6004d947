"""VolumeZone: a pod's bound PVs' zone and region labels must match the node's
(kubernetes/kubernetes `pkg/scheduler/framework/plugins/volumezone`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scheduler.api.objects import Pod
from scheduler.api.storage import PersistentVolume
from scheduler.framework import signers
from scheduler.framework.interface import Handle
from scheduler.framework.nodeinfo import NodeInfo
from scheduler.framework.types import (
    ActionType,
    ClusterEvent,
    Code,
    CycleState,
    PreFilterResult,
    Status,
    skip,
    unresolvable,
)
from scheduler.plugins.volumeutil import NotFound, get_claim, get_class, get_volume, storage_lister

NAME = "VolumeZone"
STATE_KEY = "PreFilter" + NAME
ERR_REASON_CONFLICT = "node(s) had no available volume zone"
LABEL_ZONE_BETA = "failure-domain.beta.kubernetes.io/zone"
LABEL_REGION_BETA = "failure-domain.beta.kubernetes.io/region"
LABEL_ZONE = "topology.kubernetes.io/zone"
LABEL_REGION = "topology.kubernetes.io/region"
TOPOLOGY_LABELS = (LABEL_ZONE_BETA, LABEL_REGION_BETA, LABEL_ZONE, LABEL_REGION)
MULTI_ZONE_DELIMITER = "__"


@dataclass(frozen=True, slots=True)
class PVTopology:
    """One topology label of a PV: the key and the zones (or regions) it allows."""

    pv_name: str
    key: str
    values: frozenset[str]


def translate_to_ga_label(label: str) -> str:
    """The GA topology label for a deprecated failure-domain one."""
    return {LABEL_REGION_BETA: LABEL_REGION, LABEL_ZONE_BETA: LABEL_ZONE}.get(label, label)


def label_zones_to_set(value: str) -> frozenset[str] | None:
    """Split a `__`-separated zone list; None when an element is empty (`LabelZonesToSet`)."""
    zones = [z.strip() for z in value.split(MULTI_ZONE_DELIMITER)]
    if any(not z for z in zones):
        return None
    return frozenset(zones)


def pv_topologies(pv: PersistentVolume) -> list[PVTopology]:
    """The PV's topology labels (unparsable values are ignored, as upstream logs and skips them)."""
    out = []
    for key in TOPOLOGY_LABELS:
        if key in pv.labels:
            zones = label_zones_to_set(pv.labels[key])
            if zones is not None:
                out.append(PVTopology(pv.name, key, zones))
    return out


def node_matches(topologies: list[PVTopology], labels: dict[str, str]) -> bool:
    """A node without any topology label matches; otherwise every PV topology must."""
    if not any(key in labels for key in TOPOLOGY_LABELS):
        return True
    for topo in topologies:
        value = labels.get(topo.key)
        if value is None:
            value = labels.get(translate_to_ga_label(topo.key))
        if value is None or value not in topo.values:
            return False
    return True


class VolumeZone:
    """PreFilter reads the pod's PVs' topology; Filter compares it with the node's labels."""

    name = NAME

    def sign_pod(self, pod: Pod) -> signers.Signed:
        """The volumes but configMaps and secrets."""
        return signers.signed((signers.VOLUMES, signers.volumes(pod)))

    def __init__(self, handle: Handle) -> None:
        self.handle = handle

    def _topologies(self, pod: Pod) -> tuple[list[PVTopology], Status]:
        lister = storage_lister(self.handle)
        out: list[PVTopology] = []
        try:
            for v in pod.volumes:
                if v.source != "persistentVolumeClaim":
                    continue
                if not v.claim_name:
                    return [], unresolvable("PersistentVolumeClaim had no name")
                pvc = get_claim(lister, pod.namespace, v.claim_name)
                if not pvc.volume_name:
                    class_name = pvc.storage_class
                    if not class_name:
                        return [], unresolvable("PersistentVolumeClaim had no pv name and storageClass name")
                    sc = get_class(lister, class_name)
                    if sc.volume_binding_mode == "WaitForFirstConsumer":
                        continue
                    return [], unresolvable("PersistentVolume had no name")
                out.extend(pv_topologies(get_volume(lister, pvc.volume_name)))
        except NotFound as exc:
            return [], unresolvable(str(exc))
        return out, Status()

    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        """Skip unless some bound PV of the pod carries a topology label."""
        if not pod.volumes:
            return None, skip()
        topologies, status = self._topologies(pod)
        if not status.success:
            return None, status
        if not topologies:
            return None, skip()
        state.write(STATE_KEY, topologies)
        return None, Status()

    def pre_filter_extensions(self) -> None:
        """No AddPod/RemovePod."""
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """UnschedulableAndUnresolvable when the node is outside a PV's zones or regions."""
        if not pod.volumes:
            return Status()
        topologies = state.get(STATE_KEY)
        if topologies is None:
            topologies, status = self._topologies(pod)
            if not status.success:
                return status
        if node_matches(topologies, node_info.node.labels):
            return Status()
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_CONFLICT,))

    def events_to_register(self) -> list[ClusterEvent]:
        """A new WaitForFirstConsumer class, node label changes, claim or PV changes."""
        return [
            ClusterEvent("StorageClass", ActionType.ADD),
            ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
            ClusterEvent("PersistentVolumeClaim", ActionType.ADD | ActionType.UPDATE),
            ClusterEvent("PersistentVolume", ActionType.ADD | ActionType.UPDATE),
        ]


def new(args: Any, handle: Handle) -> VolumeZone:
    """Build VolumeZone (no args)."""
    return VolumeZone(handle)


__all__ = ["ERR_REASON_CONFLICT", "NAME", "VolumeZone", "new", "node_matches", "pv_topologies"]
