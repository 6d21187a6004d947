"""A NodeInfo clone copies its row's totals: equal to the snapshot's Resource views, independent after."""

from __future__ import annotations

import pytest

from scheduler.framework.nodeinfo import PodInfo
from scheduler.framework.snapshot import Snapshot
from tests.support.builders import make_node, make_pod

GPU = "nvidia.com/gpu"


@pytest.mark.parametrize(
    ("extra", "pod_containers"),
    [
        (None, None),
        ({GPU: 4}, [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1", GPU: "2"}, "limits": {GPU: "2"}}}]),
        ({GPU: 0}, None),
        ({"example.com/foo": 3}, [{"name": "c", "image": "i", "resources": {"requests": {GPU: "1"}, "limits": {GPU: "1"}}}]),
    ],
    ids=["fixed-only", "scalar-used", "scalar-zero-allocatable", "requested-scalar-not-allocatable"],
)
def test_clone_totals_equal_the_row_views(extra: dict[str, int] | None, pod_containers: list[dict[str, object]] | None) -> None:
    snap = Snapshot()
    snap.add_node(make_node("other", extra={"example.com/bar": 1}))
    info = snap.add_node(make_node("n", extra=extra))
    snap.add_pod(make_pod("p", cpu="500m", memory="1Gi", containers=pod_containers), "n")
    pos = info.position
    twin = info.clone()
    assert twin.allocatable == snap.resource_of(pos, "allocatable")
    assert twin.requested == snap.resource_of(pos, "requested")
    assert twin.nonzero_requested == snap.resource_of(pos, "nonzero")
    twin.add_pod(PodInfo.of(make_pod("q", cpu="1")))
    assert twin.requested.milli_cpu == snap.resource_of(pos, "requested").milli_cpu + 1000
    assert info.requested == snap.resource_of(pos, "requested")
