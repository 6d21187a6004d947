"""VolumeZone, cases ported from kubernetes/kubernetes
pkg/scheduler/framework/plugins/volumezone/volume_zone_test.go (TestSingleZone, TestMultiZone, TestWithBinding)."""

from __future__ import annotations

import pytest

from scheduler.framework.types import Code, CycleState
from scheduler.plugins.volumezone import ERR_REASON_CONFLICT, VolumeZone
from tests.plugins.volumes.helpers import StorageHandle, pod_with, pv, pvc, sc
from tests.support.builders import make_node, make_pod

BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"

DOCS = [
    pv("Vol_1", labels={BETA_ZONE: "us-west1-a"}),
    pv("Vol_2", labels={BETA_REGION: "us-west1", "uselessLabel": "none"}),
    pv("Vol_Stable_1", labels={ZONE: "us-west1-a"}),
    pv("Vol_Stable_2", labels={REGION: "us-west1", "uselessLabel": "none"}),
    pv("Vol_Stable_3", labels={ZONE: "us-west1-a", REGION: "us-west1-a"}),
    pv("Vol_Multi", labels={ZONE: "us-west1-c__us-west1-a"}),
    pvc("PVC_1", volume="Vol_1"),
    pvc("PVC_2", volume="Vol_2"),
    pvc("PVC_4", volume="Vol_not_exist"),
    pvc("PVC_Stable_1", volume="Vol_Stable_1"),
    pvc("PVC_Stable_2", volume="Vol_Stable_2"),
    pvc("PVC_Stable_3", volume="Vol_Stable_3"),
    pvc("PVC_Multi", volume="Vol_Multi"),
    pvc("PVC_NoSC", cls="Class_0"),
    pvc("PVC_EmptySC"),
    pvc("PVC_WaitSC", cls="Class_Wait"),
    pvc("PVC_ImmediateSC", cls="Class_Immediate"),
    sc("Class_Wait"),
    sc("Class_Immediate", mode="Immediate"),
]

UNRESOLVABLE = Code.UNSCHEDULABLE_AND_UNRESOLVABLE


@pytest.mark.parametrize(
    ("claim", "labels", "pre_filter", "filter_"),
    [
        (None, {BETA_ZONE: "us-west1-a"}, (Code.SKIP, ""), (Code.SUCCESS, "")),
        ("PVC_1", {}, (Code.SUCCESS, ""), (Code.SUCCESS, "")),
        ("PVC_1", {BETA_ZONE: "us-west1-a", "uselessLabel": "none"}, (Code.SUCCESS, ""), (Code.SUCCESS, "")),
        ("PVC_2", {BETA_REGION: "us-west1"}, (Code.SUCCESS, ""), (Code.SUCCESS, "")),
        ("PVC_2", {BETA_REGION: "no_us-west1"}, (Code.SUCCESS, ""), (UNRESOLVABLE, ERR_REASON_CONFLICT)),
        ("PVC_1", {BETA_ZONE: "no_us-west1-a"}, (Code.SUCCESS, ""), (UNRESOLVABLE, ERR_REASON_CONFLICT)),
        ("PVC_Stable_1", {ZONE: "us-west1-a"}, (Code.SUCCESS, ""), (Code.SUCCESS, "")),
        ("PVC_Stable_2", {REGION: "us-west1"}, (Code.SUCCESS, ""), (Code.SUCCESS, "")),
        ("PVC_Stable_2", {REGION: "no_us-west1"}, (Code.SUCCESS, ""), (UNRESOLVABLE, ERR_REASON_CONFLICT)),
        ("PVC_Stable_1", {ZONE: "no_us-west1-a"}, (Code.SUCCESS, ""), (UNRESOLVABLE, ERR_REASON_CONFLICT)),
        ("PVC_Stable_3", {ZONE: "us-west1-a"}, (Code.SUCCESS, ""), (UNRESOLVABLE, ERR_REASON_CONFLICT)),
        ("PVC_Stable_1", {BETA_ZONE: "us-west1-a"}, (Code.SUCCESS, ""), (UNRESOLVABLE, ERR_REASON_CONFLICT)),
        ("PVC_1", {ZONE: "us-west1-a"}, (Code.SUCCESS, ""), (Code.SUCCESS, "")),
        ("PVC_1", {ZONE: "us-west1-b"}, (Code.SUCCESS, ""), (UNRESOLVABLE, ERR_REASON_CONFLICT)),
        ("PVC_Multi", {ZONE: "us-west1-a"}, (Code.SUCCESS, ""), (Code.SUCCESS, "")),
        ("PVC_Multi", {ZONE: "us-west1-b"}, (Code.SUCCESS, ""), (UNRESOLVABLE, ERR_REASON_CONFLICT)),
        ("PVC_WaitSC", {BETA_ZONE: "us-west1-a"}, (Code.SKIP, ""), (Code.SUCCESS, "")),
        (
            "PVC_EmptySC",
            {BETA_ZONE: "us-west1-a"},
            (UNRESOLVABLE, "PersistentVolumeClaim had no pv name and storageClass name"),
            (UNRESOLVABLE, "PersistentVolumeClaim had no pv name and storageClass name"),
        ),
        (
            "PVC_NoSC",
            {BETA_ZONE: "us-west1-a"},
            (UNRESOLVABLE, 'storageclass.storage.k8s.io "Class_0" not found'),
            (UNRESOLVABLE, 'storageclass.storage.k8s.io "Class_0" not found'),
        ),
        (
            "PVC_ImmediateSC",
            {BETA_ZONE: "us-west1-a"},
            (UNRESOLVABLE, "PersistentVolume had no name"),
            (UNRESOLVABLE, "PersistentVolume had no name"),
        ),
        (
            "PVC_4",
            {BETA_ZONE: "us-west1-a"},
            (UNRESOLVABLE, 'persistentvolume "Vol_not_exist" not found'),
            (UNRESOLVABLE, 'persistentvolume "Vol_not_exist" not found'),
        ),
    ],
    ids=[
        "pod without volume",
        "node without labels",
        "beta zone label matched",
        "beta region label matched",
        "beta region label doesn't match",
        "beta zone label doesn't match",
        "zone label matched",
        "region label matched",
        "region label doesn't match",
        "zone label doesn't match",
        "pv with zone and region, node with only zone",
        "pv with zone,node with beta zone",
        "pv with beta label,node with ga label, matched",
        "pv with beta label,node with ga label, don't match",
        "multi zone matched",
        "multi zone doesn't match",
        "unbound volume wait storage class",
        "unbound volume empty storage class",
        "unbound volume no storage class",
        "unbound volume immediate binding mode",
        "pv not found",
    ],
)
def test_volume_zone(claim: str | None, labels: dict[str, str], pre_filter: tuple[Code, str], filter_: tuple[Code, str]) -> None:
    node = make_node("host1", labels=labels)
    handle = StorageHandle([node], [], DOCS)
    plugin = VolumeZone(handle)
    pod = pod_with("pod_1", claim) if claim else make_pod("pod_1")
    state = CycleState()
    _, status = plugin.pre_filter(state, pod, [])
    assert (status.code, status.message) == pre_filter
    got = plugin.filter(state, pod, handle.snapshot.node_infos[0])
    assert (got.code, got.message) == filter_
