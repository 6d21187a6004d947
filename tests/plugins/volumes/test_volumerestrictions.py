"""VolumeRestrictions, cases ported from kubernetes/kubernetes
pkg/scheduler/framework/plugins/volumerestrictions/volume_restrictions_test.go
(TestGCEDiskConflicts, TestAWSDiskConflicts, TestRBDDiskConflicts, TestISCSIDiskConflicts, TestAccessModeConflicts)."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.framework.nodeinfo import PodInfo
from scheduler.framework.types import Code, CycleState
from scheduler.plugins.volumerestrictions import (
    ERR_REASON_DISK_CONFLICT,
    ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT,
    VolumeRestrictions,
)
from tests.plugins.volumes.helpers import StorageHandle, pod_with, pvc
from tests.support.builders import make_node

GCE_A = {"name": "a", "gcePersistentDisk": {"pdName": "foo"}}
GCE_B = {"name": "b", "gcePersistentDisk": {"pdName": "bar"}}
GCE_A_RO = {"name": "a", "gcePersistentDisk": {"pdName": "foo", "readOnly": True}}
AWS_A = {"name": "a", "awsElasticBlockStore": {"volumeID": "foo"}}
AWS_A_RO = {"name": "a", "awsElasticBlockStore": {"volumeID": "foo", "readOnly": True}}
AWS_B = {"name": "b", "awsElasticBlockStore": {"volumeID": "bar"}}
RBD_A = {"name": "a", "rbd": {"monitors": ["a", "b"], "pool": "foo", "image": "bar"}}
RBD_B = {"name": "b", "rbd": {"monitors": ["c", "d"], "pool": "foo", "image": "bar"}}
RBD_C = {"name": "c", "rbd": {"monitors": ["b"], "pool": "foo", "image": "bar", "readOnly": True}}
ISCSI_A = {"name": "a", "iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2016-12.server:storage.target01", "lun": 0}}
ISCSI_B = {"name": "b", "iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2017-12.server:storage.target01", "lun": 0}}
ISCSI_A_RO = {
    "name": "a",
    "iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2016-12.server:storage.target01", "lun": 0, "readOnly": True},
}


@pytest.mark.parametrize(
    ("volume", "existing", "want"),
    [
        (GCE_A, [], Code.SUCCESS),
        (GCE_A, [[GCE_B]], Code.SUCCESS),
        (GCE_A, [[GCE_B], [GCE_A]], Code.UNSCHEDULABLE),
        (GCE_A_RO, [[GCE_A_RO]], Code.SUCCESS),
        (GCE_A_RO, [[GCE_A]], Code.UNSCHEDULABLE),
        (AWS_A, [[AWS_B]], Code.SUCCESS),
        (AWS_A, [[AWS_B], [AWS_A]], Code.UNSCHEDULABLE),
        (AWS_A_RO, [[AWS_A_RO]], Code.UNSCHEDULABLE),
        (RBD_A, [[RBD_B]], Code.SUCCESS),
        (RBD_A, [[RBD_B], [RBD_A]], Code.UNSCHEDULABLE),
        (RBD_A, [[RBD_C]], Code.UNSCHEDULABLE),
        (RBD_B, [[RBD_C]], Code.SUCCESS),
        (ISCSI_A, [[ISCSI_B]], Code.SUCCESS),
        (ISCSI_A, [[ISCSI_B], [ISCSI_A]], Code.UNSCHEDULABLE),
        (ISCSI_A_RO, [[ISCSI_A_RO]], Code.SUCCESS),
    ],
    ids=[
        "gce nothing",
        "gce one state",
        "gce two state",
        "gce both read-only",
        "gce one read-only",
        "aws one state",
        "aws two state",
        "aws read-only still conflicts",
        "rbd one state",
        "rbd two state",
        "rbd overlapping monitors",
        "rbd no monitor overlap",
        "iscsi one state",
        "iscsi two state",
        "iscsi both read-only",
    ],
)
def test_disk_conflicts(volume: dict[str, Any], existing: list[list[dict[str, Any]]], want: Code) -> None:
    node = make_node("node-1")
    running = [pod_with(f"running-{i}", node_name="node-1", volumes=v) for i, v in enumerate(existing)]
    handle = StorageHandle([node], running, [])
    plugin = VolumeRestrictions(handle)
    pod = pod_with("p", volumes=[volume])
    state = CycleState()
    _, pre = plugin.pre_filter(state, pod, [])
    assert pre.success
    status = plugin.filter(state, pod, handle.snapshot.node_infos[0])
    assert status.code == want
    if want != Code.SUCCESS:
        assert status.message == ERR_REASON_DISK_CONFLICT


CLAIMS = [
    pvc("claim-with-rwop-1", modes=("ReadWriteOncePod",), volume="pv-1", bound=True),
    pvc("claim-with-rwop-2", modes=("ReadWriteOncePod",), volume="pv-2", bound=True),
    pvc("claim-rwo", modes=("ReadWriteOnce",), volume="pv-3", bound=True),
]


@pytest.mark.parametrize(
    ("claims", "existing", "pre_filter", "filter_"),
    [
        (["claim-with-rwop-1"], [], (Code.SKIP, ""), None),
        (["claim-rwo"], [["claim-rwo"]], (Code.SKIP, ""), None),
        (["claim-with-rwop-1"], [["claim-with-rwop-2"]], (Code.SKIP, ""), None),
        (
            ["claim-with-rwop-1"],
            [["claim-with-rwop-1"]],
            (Code.SUCCESS, ""),
            (Code.UNSCHEDULABLE, ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT),
        ),
        (
            ["claim-not-found"],
            [],
            (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'persistentvolumeclaim "claim-not-found" not found'),
            None,
        ),
    ],
    ids=[
        "nothing running",
        "ReadWriteOnce claim in use",
        "other ReadWriteOncePod claim in use",
        "ReadWriteOncePod claim in use",
        "claim not found",
    ],
)
def test_access_mode_conflicts(
    claims: list[str], existing: list[list[str]], pre_filter: tuple[Code, str], filter_: tuple[Code, str] | None
) -> None:
    node = make_node("node-1")
    running = [pod_with(f"running-{i}", *c, node_name="node-1") for i, c in enumerate(existing)]
    handle = StorageHandle([node], running, CLAIMS)
    plugin = VolumeRestrictions(handle)
    pod = pod_with("p", *claims)
    state = CycleState()
    _, status = plugin.pre_filter(state, pod, [])
    assert (status.code, status.message) == pre_filter
    if filter_ is not None:
        got = plugin.filter(state, pod, handle.snapshot.node_infos[0])
        assert (got.code, got.message) == filter_


def test_removing_the_holder_in_a_dry_run_lifts_the_conflict() -> None:
    node = make_node("node-1")
    holder = pod_with("holder", "claim-with-rwop-1", node_name="node-1")
    handle = StorageHandle([node], [holder], CLAIMS)
    plugin = VolumeRestrictions(handle)
    pod = pod_with("p", "claim-with-rwop-1")
    state = CycleState()
    plugin.pre_filter(state, pod, [])
    info = handle.snapshot.node_infos[0]
    assert plugin.filter(state, pod, info).code == Code.UNSCHEDULABLE
    assert plugin.remove_pod(state, pod, PodInfo.of(holder), info).success
    assert plugin.filter(state, pod, info).success
    assert plugin.add_pod(state, pod, PodInfo.of(holder), info).success
    assert plugin.filter(state, pod, info).code == Code.UNSCHEDULABLE
