"""NodeResourcesFit scoring: LeastAllocated, MostAllocated and RequestedToCapacityRatio."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.api.objects import Node, Pod
from scheduler.config.args import (
    NodeResourcesFitArgs,
    RequestedToCapacityRatioParam,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
)
from scheduler.framework.snapshot import Snapshot
from scheduler.framework.types import Code, CycleState
from scheduler.plugins.noderesources import fit
from scheduler.plugins.noderesources.fit import NodeResourcesFit
from scheduler.plugins.noderesources.resource_allocation import (
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
)
from tests.plugins.noderesources.helpers import (
    bare_container_pod,
    container,
    node,
    pod,
    random_cluster,
    random_pod,
    resource_specs,
)
from tests.support.builders import make_node, make_pod, make_snapshot
from tests.support.examples import examples
from tests.support.fakes import FakeHandle

DEFAULT = [("cpu", 1), ("memory", 1)]
EXTENDED = "abc.com/xyz"
EXTENDED_SET = [("cpu", 1), ("memory", 1), (EXTENDED, 1)]


def strategy_args(
    kind: str, resources: list[tuple[str, int]], shape: list[tuple[int, int]] | None = None
) -> NodeResourcesFitArgs:
    """NodeResourcesFitArgs with this scoring strategy (shape points on upstream's 0..10 scale)."""
    ratio = None
    if kind == REQUESTED_TO_CAPACITY_RATIO and shape is not None:
        ratio = RequestedToCapacityRatioParam(tuple(UtilizationShapePoint(u, s) for u, s in shape))
    specs = tuple(ResourceSpec(n, w) for n, w in resources)
    return NodeResourcesFitArgs(scoring_strategy=ScoringStrategy(kind, specs, ratio))


def cores(cpu: str, memory: str, **extra: str) -> dict[str, str]:
    """st.MakePod().Req / MakeNode().Capacity amounts: cpu in whole cores, as upstream's tests."""
    return {"cpu": cpu, "memory": memory, **extra}


def capacity_node(name: str, cpu: str, memory: str, extra: dict[str, str | int] | None = None) -> Node:
    """st.MakeNode().Capacity(...): allocatable = capacity, 32 pods."""
    return node(name, cpu, memory, pods=32, extra=extra)


def scores_both_ways(plugin: NodeResourcesFit, incoming: Pod, snap: Snapshot, pre_score: bool = True) -> list[int]:
    """Per-node scores, after asserting the batch form gives the same."""
    state = CycleState()
    if pre_score:
        assert plugin.pre_score(state, incoming, snap.node_infos).code == Code.SUCCESS
    per_node = []
    for info in snap.node_infos:
        value, status = plugin.score(state, incoming, info)
        assert status.success
        per_node.append(value)
    batch = plugin.score_batch(state, incoming, snap, np.arange(snap.num_nodes, dtype=np.int64))
    assert batch.dtype == np.int64
    assert batch.tolist() == per_node
    return per_node


def two_container_pod(node_name: str = "") -> Pod:
    return pod(cores("1000", "2000"), cores("2000", "3000"), node=node_name)


# pkg/scheduler/framework/plugins/noderesources/least_allocated_test.go
LEAST = [
    (
        "nothing scheduled, nothing requested",
        pod(),
        [capacity_node("node1", "4000", "10000"), capacity_node("node2", "4000", "10000")],
        [],
        DEFAULT,
        [100, 100],
    ),
    (
        "nothing scheduled, resources requested, differently sized nodes",
        two_container_pod(),
        [capacity_node("node1", "4000", "10000"), capacity_node("node2", "6000", "10000")],
        [],
        DEFAULT,
        [37, 50],
    ),
    (
        "no resources requested, pods scheduled",
        pod(),
        [capacity_node("node1", "4000", "10000"), capacity_node("node2", "4000", "10000")],
        [pod(node="node1"), pod(node="node1"), pod(node="node2"), pod(node="node2")],
        DEFAULT,
        [100, 100],
    ),
    (
        "no resources requested, pods scheduled with resources",
        pod(),
        [capacity_node("node1", "10000", "20000"), capacity_node("node2", "10000", "20000")],
        [
            pod(cores("3000", "0"), node="node1"),
            pod(cores("3000", "0"), node="node1"),
            pod(cores("3000", "0"), node="node2"),
            pod(cores("3000", "5000"), node="node2"),
        ],
        DEFAULT,
        [70, 57],
    ),
    (
        "resources requested, pods scheduled with resources",
        two_container_pod(),
        [capacity_node("node1", "10000", "20000"), capacity_node("node2", "10000", "20000")],
        [pod(cores("3000", "0"), node="node1"), pod(cores("3000", "5000"), node="node2")],
        DEFAULT,
        [57, 45],
    ),
    (
        "resources requested, pods scheduled with resources, differently sized nodes",
        two_container_pod(),
        [capacity_node("node1", "10000", "20000"), capacity_node("node2", "10000", "50000")],
        [pod(cores("3000", "0"), node="node1"), pod(cores("3000", "5000"), node="node2")],
        DEFAULT,
        [57, 60],
    ),
    (
        "requested resources exceed node capacity",
        pod(cores("3000", "0")),
        [capacity_node("node1", "4000", "10000"), capacity_node("node2", "4000", "10000")],
        [pod(cores("3000", "0"), node="node1"), pod(cores("3000", "5000"), node="node2")],
        DEFAULT,
        [50, 25],
    ),
    (
        "zero node resources, pods scheduled with resources",
        pod(),
        [capacity_node("node1", "0", "0"), capacity_node("node2", "0", "0")],
        [pod(cores("3000", "0"), node="node1"), pod(cores("3000", "5000"), node="node2")],
        DEFAULT,
        [0, 0],
    ),
    (
        "different weight on CPU and memory, differently sized nodes",
        two_container_pod(),
        [capacity_node("node1", "4000", "10000"), capacity_node("node2", "6000", "10000")],
        [],
        [("memory", 2), ("cpu", 1)],
        [41, 50],
    ),
    (
        "bypass extended resource if the pod does not request",
        two_container_pod(),
        [capacity_node("node1", "6000", "10000"), capacity_node("node2", "6000", "10000", {EXTENDED: 4})],
        [],
        EXTENDED_SET,
        [50, 50],
    ),
    (
        "honor extended resource if the pod requests",
        pod(cores("3000", "5000", **{EXTENDED: "2"})),
        [capacity_node("node1", "6000", "10000", {EXTENDED: 4}), capacity_node("node2", "6000", "10000", {EXTENDED: 10})],
        [],
        EXTENDED_SET,
        [50, 60],
    ),
    (
        "if the node doesn't have a resource",
        pod(cores("3000", "4000")),
        [capacity_node("node1", "6000", "10000"), capacity_node("node2", "6000", "10000", {EXTENDED: 4})],
        [],
        [(EXTENDED, 2), ("cpu", 1), ("memory", 1)],
        [55, 55],
    ),
]

# pkg/scheduler/framework/plugins/noderesources/most_allocated_test.go
MOST = [
    (
        "nothing scheduled, nothing requested",
        pod(),
        [capacity_node("node1", "4000", "10000"), capacity_node("node2", "4000", "10000")],
        [],
        DEFAULT,
        [0, 0],
    ),
    (
        "nothing scheduled, resources requested, differently sized nodes",
        two_container_pod(),
        [capacity_node("node1", "4000", "10000"), capacity_node("node2", "6000", "10000")],
        [],
        DEFAULT,
        [62, 50],
    ),
    (
        "no resources requested, pods scheduled with resources",
        pod(),
        [capacity_node("node1", "10000", "20000"), capacity_node("node2", "10000", "20000")],
        [
            pod(cores("3000", "0"), node="node1"),
            pod(cores("3000", "0"), node="node1"),
            pod(cores("3000", "0"), node="node2"),
            pod(cores("3000", "5000"), node="node2"),
        ],
        DEFAULT,
        [30, 42],
    ),
    (
        "resources requested, pods scheduled with resources",
        two_container_pod(),
        [capacity_node("node1", "10000", "20000"), capacity_node("node2", "10000", "20000")],
        [pod(cores("3000", "0"), node="node1"), pod(cores("3000", "5000"), node="node2")],
        DEFAULT,
        [42, 55],
    ),
    (
        "resources requested equal node capacity",
        pod(cores("2000", "4000"), cores("3000", "5000")),
        [capacity_node("node1", "5000", "10000"), capacity_node("node2", "10000", "9000")],
        [],
        DEFAULT,
        [95, 75],
    ),
    (
        "different weight on CPU and memory",
        two_container_pod(),
        [capacity_node("node1", "4000", "10000"), capacity_node("node2", "6000", "10000")],
        [],
        [("memory", 2), ("cpu", 1)],
        [58, 50],
    ),
    (
        "no resources requested, pods scheduled, nonzero request for resource",
        bare_container_pod(),
        [capacity_node("node1", "250m", "1000Mi"), capacity_node("node2", "250m", "1000Mi")],
        [bare_container_pod("node1"), bare_container_pod("node1")],
        DEFAULT,
        [80, 30],
    ),
    (
        "bypass extended resource if the pod does not request",
        two_container_pod(),
        [capacity_node("node1", "6000", "10000"), capacity_node("node2", "6000", "10000", {EXTENDED: 4})],
        [],
        EXTENDED_SET,
        [50, 50],
    ),
    (
        "honor extended resource if the pod request",
        pod(cores("3000", "5000", **{EXTENDED: "2"})),
        [capacity_node("node1", "6000", "10000", {EXTENDED: 4}), capacity_node("node2", "6000", "10000", {EXTENDED: 10})],
        [],
        EXTENDED_SET,
        [50, 40],
    ),
    (
        "if the node doesn't have a resource",
        pod(cores("3000", "4000")),
        [capacity_node("node1", "6000", "10000"), capacity_node("node2", "6000", "10000", {EXTENDED: 4})],
        [],
        [(EXTENDED, 2), ("cpu", 1), ("memory", 1)],
        [45, 45],
    ),
]


@pytest.mark.parametrize(
    ("incoming", "nodes", "existing", "resources", "want"), [c[1:] for c in LEAST], ids=[c[0] for c in LEAST]
)
def test_least_allocated(
    incoming: Pod, nodes: list[Node], existing: list[Pod], resources: list[tuple[str, int]], want: list[int]
) -> None:
    snap = make_snapshot(nodes, existing)
    plugin = fit.new(strategy_args(LEAST_ALLOCATED, resources), FakeHandle(snap))
    assert scores_both_ways(plugin, incoming, snap) == want


@pytest.mark.parametrize(("incoming", "nodes", "existing", "resources", "want"), [c[1:] for c in MOST], ids=[c[0] for c in MOST])
def test_most_allocated(
    incoming: Pod, nodes: list[Node], existing: list[Pod], resources: list[tuple[str, int]], want: list[int]
) -> None:
    snap = make_snapshot(nodes, existing)
    plugin = fit.new(strategy_args(MOST_ALLOCATED, resources), FakeHandle(snap))
    assert scores_both_ways(plugin, incoming, snap) == want


@pytest.mark.parametrize("kind", [LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO])
def test_resources_not_set_is_an_error(kind: str) -> None:
    # "Resources not set, pods scheduled with error" (least/most_allocated_test.go).
    snap = make_snapshot([capacity_node("node1", "4000", "10000")])
    plugin = fit.new(strategy_args(kind, [], [(0, 10), (100, 0)]), FakeHandle(snap))
    state = CycleState()
    plugin.pre_score(state, two_container_pod(), snap.node_infos)
    value, status = plugin.score(state, two_container_pod(), snap.node_infos[0])
    assert (value, status.code, status.message) == (0, Code.ERROR, "resources not found")
    with pytest.raises(RuntimeError, match="resources not found"):
        plugin.score_batch(state, two_container_pod(), snap, np.arange(1, dtype=np.int64))


def test_score_without_prescore_recomputes_requests() -> None:
    snap = make_snapshot([capacity_node("node1", "4000", "10000"), capacity_node("node2", "6000", "10000")])
    plugin = fit.new(None, FakeHandle(snap))
    assert scores_both_ways(plugin, two_container_pod(), snap, pre_score=False) == [37, 50]


def test_conformance_least_allocated_two_containers() -> None:
    # /work/shared/conformance/cases/least-allocated-two-containers.yaml
    snap = make_snapshot([make_node("node1", cpu="4", memory="10000"), make_node("node2", cpu="6", memory="10000")])
    incoming = make_pod(
        "p",
        containers=[
            {"name": "a", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": {"cpu": "1", "memory": "2000"}}},
            {"name": "b", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": {"cpu": "2", "memory": "3000"}}},
        ],
    )
    assert scores_both_ways(fit.new(None, FakeHandle(snap)), incoming, snap) == [37, 50]


# pkg/scheduler/framework/plugins/noderesources/requested_to_capacity_ratio_test.go
LEAST_SHAPE = [(0, 10), (100, 0)]
RTCR = [
    (
        "nothing scheduled, nothing requested (least requested nodes have priority)",
        pod(),
        [capacity_node("node1", "4000", "10000"), capacity_node("node2", "4000", "10000")],
        [pod(node="node1"), pod(node="node1")],
        [100, 100],
    ),
    (
        "nothing scheduled, resources requested, differently sized nodes",
        two_container_pod(),
        [capacity_node("node1", "4000", "10000"), capacity_node("node2", "6000", "10000")],
        [pod(node="node1"), pod(node="node1")],
        [38, 50],
    ),
    (
        "no resources requested, pods scheduled with resources",
        pod(),
        [capacity_node("node1", "4000", "10000"), capacity_node("node2", "6000", "10000")],
        [pod(cores("3000", "5000"), node="node1"), pod(cores("3000", "5000"), node="node2")],
        [38, 50],
    ),
]


@pytest.mark.parametrize(("incoming", "nodes", "existing", "want"), [c[1:] for c in RTCR], ids=[c[0] for c in RTCR])
def test_requested_to_capacity_ratio(incoming: Pod, nodes: list[Node], existing: list[Pod], want: list[int]) -> None:
    snap = make_snapshot(nodes, existing)
    plugin = fit.new(strategy_args(REQUESTED_TO_CAPACITY_RATIO, DEFAULT, LEAST_SHAPE), FakeHandle(snap))
    assert scores_both_ways(plugin, incoming, snap) == want


def bin_node(name: str, extended: dict[str, str | int]) -> Node:
    """makeNode(name, 4000, 10000*1024*1024, extended) of test_util.go."""
    return node(name, "4", str(10000 * 1024 * 1024), pods=110, extra=extended)


# TestResourceBinPackingSingleExtended (requested_to_capacity_ratio_test.go)
SINGLE = [
    ("nothing scheduled, nothing requested", pod(), [], [0, 0]),
    ("resources requested, pods scheduled with less resources", pod({"intel.com/foo": "2"}), [pod()], [2, 5]),
    (
        "resources requested, on node with existing pod running",
        pod({"intel.com/foo": "2"}),
        [pod({"intel.com/foo": "2"}, node="node2")],
        [2, 10],
    ),
    ("resources requested, pods scheduled with more resources", pod({"intel.com/foo": "4"}), [pod()], [5, 10]),
]


@pytest.mark.parametrize(("incoming", "existing", "want"), [c[1:] for c in SINGLE], ids=[c[0] for c in SINGLE])
def test_bin_packing_single_extended(incoming: Pod, existing: list[Pod], want: list[int]) -> None:
    snap = make_snapshot([bin_node("node1", {"intel.com/foo": 8}), bin_node("node2", {"intel.com/foo": 4})], existing)
    plugin = fit.new(strategy_args(REQUESTED_TO_CAPACITY_RATIO, [("intel.com/foo", 1)], [(0, 0), (100, 1)]), FakeHandle(snap))
    assert scores_both_ways(plugin, incoming, snap) == want


# TestResourceBinPackingMultipleExtended (requested_to_capacity_ratio_test.go)
MULTIPLE = [
    ("nothing scheduled, nothing requested", pod(), [pod()], [0, 0]),
    (
        "resources requested, pods scheduled with less resources",
        pod({"intel.com/foo": "2", "intel.com/bar": "2"}),
        [pod()],
        [4, 3],
    ),
    (
        "resources requested, on node with existing pod running",
        pod({"intel.com/foo": "2", "intel.com/bar": "2"}),
        [pod({"intel.com/foo": "4", "intel.com/bar": "2"}, node="node2")],
        [4, 7],
    ),
    (
        "resources requested, pods scheduled with more resources",
        pod({"intel.com/foo": "4", "intel.com/bar": "2"}),
        [pod()],
        [5, 5],
    ),
]


@pytest.mark.parametrize(("incoming", "existing", "want"), [c[1:] for c in MULTIPLE], ids=[c[0] for c in MULTIPLE])
def test_bin_packing_multiple_extended(incoming: Pod, existing: list[Pod], want: list[int]) -> None:
    nodes = [
        bin_node("node1", {"intel.com/foo": 8, "intel.com/bar": 4}),
        bin_node("node2", {"intel.com/foo": 4, "intel.com/bar": 8}),
    ]
    snap = make_snapshot(nodes, existing)
    resources = [("intel.com/foo", 3), ("intel.com/bar", 5)]
    plugin = fit.new(strategy_args(REQUESTED_TO_CAPACITY_RATIO, resources, [(0, 0), (100, 1)]), FakeHandle(snap))
    assert scores_both_ways(plugin, incoming, snap) == want


def test_non_zero_requests_count_for_fit_scoring() -> None:
    # Containers without cpu/memory requests count 100m / 200Mi in NodeResourcesFit's score.
    snap = make_snapshot([make_node("n", cpu="1", memory=str(1000 * 1024 * 1024))], [bare_container_pod("n")])
    incoming = make_pod("x", containers=[container({"memory": str(100 * 1024 * 1024)})])
    # cpu: (1000 - 200) * 100 / 1000 = 80; memory: (1000Mi - 300Mi) * 100 / 1000Mi = 70.
    assert scores_both_ways(fit.new(None, FakeHandle(snap)), incoming, snap) == [75]


GI = 1024**3
MI = 1024**2


@pytest.mark.parametrize(
    ("incoming", "want_fit", "want_balanced"),
    [
        # A bare container (conformance case pod-level-requests-fit-score): the container asks
        # nothing, spec.resources asks 2 CPU / 4Gi. Fit counts 100m / 200Mi: node-a cpu 97, memory
        # 97; node-b (3 CPU / 1Gi used) cpu (8000-3100)/80 = 61, memory (8Gi-1224Mi)*100/8Gi = 85.
        # BalancedAllocation counts 2 CPU / 4Gi: 0.5/0.5 and 0.625/0.625, both 100.
        (pod({}, pod_level={"cpu": "2", "memory": "4Gi"}), [97, 73], [100, 100]),
        # Containers with requests: Fit counts their 1 CPU / 1Gi, not the pod-level 2 CPU / 4Gi:
        # node-a cpu 75, memory 87 -> 81; node-b cpu 50, memory 75 -> 62.
        (
            pod({"cpu": "500m", "memory": "512Mi"}, {"cpu": "500m", "memory": "512Mi"}, pod_level={"cpu": "2", "memory": "4Gi"}),
            [81, 62],
            [100, 100],
        ),
        # With overhead, which counts on both sides: Fit node-a cpu (4000-350)/40 = 91, memory 97 -> 94;
        # node-b cpu 58, memory 85 -> 71. Balanced: 2250m/4000m vs 0.5 -> 96; 5250m/8000m vs 0.625 -> 98.
        (pod({}, overhead={"cpu": "250m"}, pod_level={"cpu": "2", "memory": "4Gi"}), [94, 71], [96, 98]),
    ],
    ids=["bare-container", "container-requests", "with-overhead"],
)
def test_pod_level_requests_stay_out_of_the_fit_score(incoming: Pod, want_fit: list[int], want_balanced: list[int]) -> None:
    # kubernetes/kubernetes pkg/scheduler/framework/plugins/noderesources/fit.go NewFit (v1.35 to v1.37):
    # enablePodLevelResources is set on Fit, not on its embedded resourceAllocationScorer, so
    # calculatePodResourceRequest scores with SkipPodLevelResources; NewBalancedAllocation sets it.
    from scheduler.plugins.noderesources import balanced_allocation

    snap = make_snapshot(
        [node("node-a", "4", str(8 * GI)), node("node-b", "8", str(8 * GI))],
        [pod({"cpu": "3", "memory": str(GI)}, node="node-b")],
    )
    assert scores_both_ways(fit.new(None, FakeHandle(snap)), incoming, snap) == want_fit
    balanced = balanced_allocation.new(None, FakeHandle(snap))
    state = CycleState()
    assert balanced.pre_score(state, incoming, snap.node_infos).success
    assert [balanced.score(state, incoming, info)[0] for info in snap.node_infos] == want_balanced


@settings(max_examples=examples(150), deadline=None)
@given(cluster=random_cluster(), incoming=random_pod(), specs=resource_specs(), data=st.data())
def test_score_batch_matches_per_node(
    cluster: Snapshot, incoming: Pod, specs: list[tuple[str, int]], data: st.DataObject
) -> None:
    kind = data.draw(st.sampled_from([LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO]))
    utilizations = sorted(data.draw(st.lists(st.integers(0, 100), min_size=1, max_size=4, unique=True)))
    shape = [(u, data.draw(st.integers(0, 10))) for u in utilizations]
    plugin = fit.new(strategy_args(kind, specs, shape), FakeHandle(cluster))
    state = CycleState()
    if data.draw(st.booleans()):
        plugin.pre_score(state, incoming, cluster.node_infos)
    positions = np.asarray(data.draw(st.permutations(range(cluster.num_nodes))), dtype=np.int64)
    batch = plugin.score_batch(state, incoming, cluster, positions)
    per_node = [plugin.score(state, incoming, cluster.node_infos[p])[0] for p in positions]
    assert batch.tolist() == per_node
    assert all(0 <= s <= 100 for s in per_node)
    assert plugin.score_extensions() is None


def test_args_decoded_from_a_config_file() -> None:
    decoded = NodeResourcesFitArgs.from_dict(
        {
            "scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "resources": [{"name": "intel.com/foo", "weight": 3}, {"name": "intel.com/bar", "weight": 5}],
                "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 1}]},
            }
        },
        "profiles[0].pluginConfig[0].args",
    )
    nodes = [
        bin_node("node1", {"intel.com/foo": 8, "intel.com/bar": 4}),
        bin_node("node2", {"intel.com/foo": 4, "intel.com/bar": 8}),
    ]
    snap = make_snapshot(nodes, [pod()])
    incoming = pod({"intel.com/foo": "2", "intel.com/bar": "2"})
    assert scores_both_ways(fit.new(decoded, FakeHandle(snap)), incoming, snap) == [4, 3]
