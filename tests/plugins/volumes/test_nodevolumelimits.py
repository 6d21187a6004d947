"""NodeVolumeLimits, cases ported from kubernetes/kubernetes
pkg/scheduler/framework/plugins/nodevolumelimits/csi_test.go (TestCSILimits)."""

from __future__ import annotations

import pytest

from scheduler.framework.types import Code, CycleState
from scheduler.plugins.nodevolumelimits import ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED, NodeVolumeLimits
from tests.plugins.volumes.helpers import StorageHandle, csinode, pod_with, pv, pvc, sc
from tests.support.builders import make_node

EBS = "ebs.csi.aws.com"
GCE = "pd.csi.storage.gke.io"
DOCS = [
    pv("csi-ebs.csi.aws.com-0", driver=EBS, claim="csi-ebs.csi.aws.com-0"),
    pvc("csi-ebs.csi.aws.com-0", volume="csi-ebs.csi.aws.com-0", bound=True),
    pv("csi-ebs.csi.aws.com-1", driver=EBS, claim="csi-ebs.csi.aws.com-1"),
    pvc("csi-ebs.csi.aws.com-1", volume="csi-ebs.csi.aws.com-1", bound=True),
    pv("csi-ebs.csi.aws.com-2", driver=EBS, claim="csi-ebs.csi.aws.com-2"),
    pvc("csi-ebs.csi.aws.com-2", volume="csi-ebs.csi.aws.com-2", bound=True),
    pv("csi-pd.csi.storage.gke.io-0", driver=GCE, claim="csi-pd.csi.storage.gke.io-0"),
    pvc("csi-pd.csi.storage.gke.io-0", volume="csi-pd.csi.storage.gke.io-0", bound=True),
    sc("csi-sc", mode="WaitForFirstConsumer", provisioner=EBS),
    pvc("unbound-0", cls="csi-sc"),
    pvc("unbound-1", cls="csi-sc"),
]


@pytest.mark.parametrize(
    ("new", "existing", "limits", "want"),
    [
        (["csi-ebs.csi.aws.com-0"], [["csi-ebs.csi.aws.com-1"]], {EBS: 4}, Code.SUCCESS),
        (["csi-ebs.csi.aws.com-0"], [["csi-ebs.csi.aws.com-1"], ["csi-ebs.csi.aws.com-2"]], {EBS: 2}, Code.UNSCHEDULABLE),
        (["csi-ebs.csi.aws.com-0"], [["csi-ebs.csi.aws.com-0"], ["csi-ebs.csi.aws.com-1"]], {EBS: 2}, Code.SUCCESS),
        (["csi-ebs.csi.aws.com-0"], [["csi-pd.csi.storage.gke.io-0"]], {EBS: 1, GCE: 1}, Code.SUCCESS),
        (["csi-ebs.csi.aws.com-0"], [["csi-ebs.csi.aws.com-1"]], {}, Code.SUCCESS),
        (["unbound-0"], [["csi-ebs.csi.aws.com-1"]], {EBS: 1}, Code.UNSCHEDULABLE),
        (["unbound-0", "unbound-1"], [], {EBS: 2}, Code.SUCCESS),
        (["unbound-0", "unbound-1"], [["csi-ebs.csi.aws.com-1"]], {EBS: 2}, Code.UNSCHEDULABLE),
        (["missing"], [], {EBS: 2}, Code.UNSCHEDULABLE_AND_UNRESOLVABLE),
    ],
    ids=[
        "fits when node volume limit >= new pods CSI volume",
        "doesn't when node volume limit <= pods CSI volume",
        "should count in-use volumes once",
        "should not count other drivers",
        "no limits on the CSINode",
        "unbound claim counts under the class provisioner",
        "two unbound claims within the limit",
        "two unbound claims over the limit",
        "missing claim of the new pod",
    ],
)
def test_csi_limits(new: list[str], existing: list[list[str]], limits: dict[str, int], want: Code) -> None:
    node = make_node("node-1")
    running = [pod_with(f"running-{i}", *c, node_name="node-1") for i, c in enumerate(existing)]
    handle = StorageHandle([node], running, [*DOCS, csinode("node-1", limits)])
    plugin = NodeVolumeLimits(handle)
    pod = pod_with("p", *new)
    state = CycleState()
    _, pre = plugin.pre_filter(state, pod, [])
    assert pre.success
    status = plugin.filter(state, pod, handle.snapshot.node_infos[0])
    assert status.code == want
    if want == Code.UNSCHEDULABLE:
        assert status.message == ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED
    if want == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
        assert status.message == 'looking up PVC default/missing: persistentvolumeclaim "missing" not found'


def test_pod_without_claims_is_skipped() -> None:
    handle = StorageHandle([make_node("node-1")], [], DOCS)
    _, status = NodeVolumeLimits(handle).pre_filter(CycleState(), pod_with("p", volumes=[{"name": "e", "emptyDir": {}}]), [])
    assert status.code == Code.SKIP
