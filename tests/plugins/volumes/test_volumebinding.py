"""VolumeBinding, cases ported from kubernetes/kubernetes
pkg/scheduler/framework/plugins/volumebinding/volume_binding_test.go (TestVolumeBinding) and
binder_test.go (TestFindPodVolumesWithoutProvisioning, TestFindPodVolumesWithProvisioning)."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.api.storage import ANN_SELECTED_NODE
from scheduler.config.args import VolumeBindingArgs
from scheduler.framework.types import Code, CycleState
from scheduler.plugins.volumebinding import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NODE_CONFLICT,
    ERR_REASON_PV_NOT_EXIST,
    UNBOUND_IMMEDIATE,
    VolumeBinding,
)
from tests.plugins.volumes.helpers import StorageHandle, pod_with, pv, pvc, sc
from tests.support.builders import make_node, make_pod

ZONE = "topology.kubernetes.io/zone"
IMMEDIATE, WAIT, PROVISION = "immediate-sc", "wait-sc", "provision-sc"
CLASSES = [sc(IMMEDIATE, mode="Immediate"), sc(WAIT), sc(PROVISION, provisioner="pd.csi.storage.gke.io", zones=["zone-a"])]
UNRESOLVABLE = Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def plugin_for(docs: list[dict[str, Any]], pods: list[Any] = ()) -> tuple[VolumeBinding, StorageHandle]:  # type: ignore[assignment]
    nodes = [make_node("node-a", labels={ZONE: "zone-a"}), make_node("node-b", labels={ZONE: "zone-b"})]
    handle = StorageHandle(nodes, list(pods), [*CLASSES, *docs])
    return VolumeBinding(VolumeBindingArgs(), handle, capacity_scoring=False), handle


@pytest.mark.parametrize(
    ("claims", "docs", "pre_filter", "per_node"),
    [
        ([], [], (Code.SKIP, ""), None),
        (
            ["pvc-a"],
            [pvc("pvc-a", IMMEDIATE, volume="pv-a", bound=True), pv("pv-a", IMMEDIATE, claim="pvc-a", phase="Bound")],
            (Code.SUCCESS, ""),
            {"node-a": (Code.SUCCESS, ""), "node-b": (Code.SUCCESS, "")},
        ),
        (
            ["pvc-a"],
            [
                pvc("pvc-a", IMMEDIATE, volume="pv-a", bound=True),
                pv("pv-a", IMMEDIATE, zone="zone-b", claim="pvc-a", phase="Bound"),
            ],
            (Code.SUCCESS, ""),
            {"node-a": (UNRESOLVABLE, ERR_REASON_NODE_CONFLICT), "node-b": (Code.SUCCESS, "")},
        ),
        (["pvc-a"], [pvc("pvc-a", IMMEDIATE)], (UNRESOLVABLE, UNBOUND_IMMEDIATE), None),
        (
            ["pvc-a"],
            [pvc("pvc-a", WAIT), pv("pv-b", WAIT, zone="zone-b")],
            (Code.SUCCESS, ""),
            {"node-a": (UNRESOLVABLE, ERR_REASON_BIND_CONFLICT), "node-b": (Code.SUCCESS, "")},
        ),
        (
            ["pvc-a"],
            [pvc("pvc-a", WAIT)],
            (Code.SUCCESS, ""),
            {"node-a": (UNRESOLVABLE, ERR_REASON_BIND_CONFLICT), "node-b": (UNRESOLVABLE, ERR_REASON_BIND_CONFLICT)},
        ),
        (
            ["pvc-a"],
            [pvc("pvc-a", WAIT, volume="pv-gone", bound=True)],
            (Code.SUCCESS, ""),
            {"node-a": (UNRESOLVABLE, ERR_REASON_PV_NOT_EXIST), "node-b": (UNRESOLVABLE, ERR_REASON_PV_NOT_EXIST)},
        ),
        (
            ["pvc-a"],
            [pvc("pvc-a", PROVISION)],
            (Code.SUCCESS, ""),
            {"node-a": (Code.SUCCESS, ""), "node-b": (UNRESOLVABLE, ERR_REASON_BIND_CONFLICT)},
        ),
        (
            ["pvc-a"],
            [pvc("pvc-a", WAIT, annotations={ANN_SELECTED_NODE: "node-b"})],
            (Code.SUCCESS, ""),
            {"node-a": (UNRESOLVABLE, ERR_REASON_BIND_CONFLICT), "node-b": (UNRESOLVABLE, ERR_REASON_BIND_CONFLICT)},
        ),
        (["pvc-a"], [], (UNRESOLVABLE, 'persistentvolumeclaim "pvc-a" not found'), None),
        (
            ["pvc-a"],
            [pvc("pvc-a", WAIT, volume="pv-a", phase="Lost")],
            (UNRESOLVABLE, 'persistentvolumeclaim "pvc-a" bound to non-existent persistentvolume "pv-a"'),
            None,
        ),
        (["pvc-a"], [pvc("pvc-a", WAIT, volume="pv-a")], (UNRESOLVABLE, UNBOUND_IMMEDIATE), None),
    ],
    ids=[
        "pod has not pvcs",
        "all bound",
        "all bound, PV node affinity mismatch",
        "immediate claims not bound",
        "unbound claim with matching PV in one zone",
        "unbound claim without matching PV",
        "bound claim with a PV that does not exist",
        "unbound claim provisioned in allowed topology",
        "claim with selected node elsewhere (and no provisioner)",
        "pvc not found",
        "pvc lost",
        "claim with volumeName but not bind-completed",
    ],
)
def test_volume_binding_filter(
    claims: list[str], docs: list[dict[str, Any]], pre_filter: tuple[Code, str], per_node: dict[str, tuple[Code, str]] | None
) -> None:
    plugin, handle = plugin_for(docs)
    pod = pod_with("p", *claims) if claims else make_pod("p")
    state = CycleState()
    _, status = plugin.pre_filter(state, pod, [])
    assert (status.code, status.message) == pre_filter
    for info in handle.snapshot.node_infos if per_node else []:
        got = plugin.filter(state, pod, info)
        assert (got.code, got.message) == per_node[info.name], info.name  # type: ignore[index]


def test_smallest_matching_pv_is_chosen_and_bound_at_pre_bind() -> None:
    docs = [
        pvc("pvc-a", WAIT, size="5Gi"),
        pv("pv-big", WAIT, size="50Gi"),
        pv("pv-fit", WAIT, size="10Gi"),
        pv("pv-small", WAIT, size="1Gi"),
    ]
    plugin, handle = plugin_for(docs)
    pod = pod_with("p", "pvc-a").with_changes(node_name="node-a")
    state = CycleState()
    plugin.pre_filter(state, pod, [])
    assert plugin.filter(state, pod, handle.snapshot.node_infos[0]).success
    assert plugin.reserve(state, pod, "node-a").success
    assert plugin.binder.get_pv("pv-fit").claim_ref is not None  # type: ignore[union-attr]
    assert handle.sim.persistent_volumes["pv-fit"].claim_ref is None
    assert plugin.pre_bind_preflight(state, pod, "node-a").code == Code.SUCCESS  # a claim to bind: PreBind has work
    assert plugin.pre_bind(state, pod, "node-a").success
    bound_pv, claim = handle.sim.persistent_volumes["pv-fit"], handle.sim.persistent_volume_claims["default/pvc-a"]
    assert (bound_pv.phase, bound_pv.claim_ref.name) == ("Bound", "pvc-a")  # type: ignore[union-attr]
    assert (claim.phase, claim.volume_name, claim.fully_bound) == ("Bound", "pv-fit", True)
    assert not plugin.binder.assumed_pvs


def test_pre_bind_preflight_skips_a_pod_whose_claims_are_bound() -> None:
    plugin, _ = plugin_for([])
    pod = make_pod("plain")
    state = CycleState()
    plugin.pre_filter(state, pod, [])
    assert plugin.reserve(state, pod, "node-a").success
    assert plugin.pre_bind_preflight(state, pod, "node-a").code == Code.SKIP
    assert plugin.pre_bind_preflight(CycleState(), pod, "node-a").code == Code.SUCCESS  # no state: PreBind reports it


def test_unreserve_forgets_the_assumed_pv() -> None:
    plugin, handle = plugin_for([pvc("pvc-a", WAIT), pv("pv-a", WAIT)])
    pod = pod_with("p", "pvc-a")
    state = CycleState()
    plugin.pre_filter(state, pod, [])
    plugin.filter(state, pod, handle.snapshot.node_infos[0])
    plugin.reserve(state, pod, "node-a")
    assert "pv-a" in plugin.binder.assumed_pvs
    plugin.unreserve(state, pod, "node-a")
    assert not plugin.binder.assumed_pvs


def test_provisioned_claim_gets_a_pv_in_the_nodes_zone() -> None:
    plugin, handle = plugin_for([pvc("pvc-a", PROVISION)])
    pod = pod_with("p", "pvc-a")
    state = CycleState()
    plugin.pre_filter(state, pod, [])
    assert plugin.filter(state, pod, handle.snapshot.node_infos[0]).success
    plugin.reserve(state, pod, "node-a")
    assert plugin.pre_bind(state, pod, "node-a").success
    claim = handle.sim.persistent_volume_claims["default/pvc-a"]
    assert claim.meta.annotations[ANN_SELECTED_NODE] == "node-a"
    provisioned = handle.sim.persistent_volumes[claim.volume_name]
    assert provisioned.node_affinity is not None and provisioned.node_affinity.matches({ZONE: "zone-a"}, "")
    assert not provisioned.node_affinity.matches({ZONE: "zone-b"}, "")


def test_shape_needs_the_storage_capacity_scoring_gate() -> None:
    from scheduler.config.args import UtilizationShapePoint
    from scheduler.plugins.volumebinding import new

    _, handle = plugin_for([])
    with pytest.raises(ValueError, match="turn on the feature gate StorageCapacityScoring"):
        new(VolumeBindingArgs(600, (UtilizationShapePoint(0, 10),)), handle)


@pytest.mark.parametrize(
    ("requested", "capacity", "want"),
    [([], [], 0), ([50], [100], 50), ([100], [100], 0), ([0], [100], 100), ([150], [100], 0), ([10, 90], [100, 100], 50)],
    ids=["no classes", "half used", "full", "empty", "over capacity", "two classes averaged"],
)
def test_capacity_scorer_default_shape(requested: list[int], capacity: list[int], want: int) -> None:
    # volumebinding/scorer_test.go: default shape {0: 10, 100: 0} scaled to 0..100.
    from scheduler.plugins.volumebinding import DEFAULT_SHAPE, build_scorer

    scorer = build_scorer(DEFAULT_SHAPE)
    classes = {f"c{i}": [r, c] for i, (r, c) in enumerate(zip(requested, capacity, strict=True))}
    assert scorer(classes) == want
