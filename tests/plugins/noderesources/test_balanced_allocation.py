"""NodeResourcesBalancedAllocation: PreScore skip, Score per node and batch."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.api.objects import Node, Pod
from scheduler.config.args import NodeResourcesBalancedAllocationArgs, ResourceSpec
from scheduler.framework.snapshot import Snapshot
from scheduler.framework.types import Code, CycleState
from scheduler.plugins.noderesources import balanced_allocation
from scheduler.plugins.noderesources.balanced_allocation import (
    BalancedStrategy,
    NodeResourcesBalancedAllocation,
    balanced_resource_score,
)
from tests.plugins.noderesources.helpers import (
    node,
    pod,
    random_cluster,
    random_pod,
    resource_specs,
)
from tests.support.builders import make_node, make_pod, make_snapshot
from tests.support.examples import examples
from tests.support.fakes import FakeHandle

GPU = "nvidia.com/gpu"
DEFAULT = [("cpu", 1), ("memory", 1)]
WITH_GPU = [("cpu", 1), ("memory", 1), (GPU, 1)]


def ba_args(resources: list[tuple[str, int]]) -> NodeResourcesBalancedAllocationArgs:
    """NodeResourcesBalancedAllocationArgs over these resources."""
    return NodeResourcesBalancedAllocationArgs(tuple(ResourceSpec(n, w) for n, w in resources))


def milli_node(name: str, milli_cpu: int, memory: int, gpu: int | None = None) -> Node:
    """makeNode(name, milliCPU, memory, extended) of test_util.go."""
    return node(name, f"{milli_cpu}m", str(memory), pods=110, extra=None if gpu is None else {GPU: gpu})


def cpu_and_memory(cpu: str, memory: str) -> dict[str, str]:
    return {"cpu": cpu, "memory": memory}


def cpu_only(cpu: str) -> dict[str, str]:
    return {"cpu": cpu}


def scores_both_ways(plugin: NodeResourcesBalancedAllocation, incoming: Pod, snap: Snapshot, pre_score: bool = True) -> list[int]:
    state = CycleState()
    if pre_score:
        assert plugin.pre_score(state, incoming, snap.node_infos).code == Code.SUCCESS
    per_node = []
    for info in snap.node_infos:
        value, status = plugin.score(state, incoming, info)
        assert status.success
        per_node.append(value)
    assert plugin.score_batch(state, incoming, snap, np.arange(snap.num_nodes, dtype=np.int64)).tolist() == per_node
    return per_node


REQUESTED = pod(cpu_and_memory("1000m", "2000"), cpu_and_memory("2000m", "3000"))

# Cases of pkg/scheduler/framework/plugins/noderesources/balanced_allocation_test.go. The values
# are (1 - std) * 100 over the fractions with the pod added, the formula this engine follows
# (see the module docstring); upstream's test comments list the same "with pod" figures.
CASES = [
    (
        "nothing scheduled, resources requested, differently sized nodes",
        REQUESTED,
        [milli_node("node1", 4000, 10000), milli_node("node2", 6000, 10000)],
        [],
        DEFAULT,
        [87, 100],
    ),
    (
        "resources requested, pods scheduled with resources",
        REQUESTED,
        [milli_node("node1", 10000, 20000), milli_node("node2", 10000, 20000)],
        [
            pod(cpu_only("1000m"), cpu_only("2000m"), node="node1"),
            pod(cpu_and_memory("1000m", "2000"), cpu_and_memory("2000m", "3000"), node="node2"),
        ],
        DEFAULT,
        [82, 95],
    ),
    (
        "resources requested, pods scheduled with resources, differently sized nodes",
        REQUESTED,
        [milli_node("node1", 10000, 20000), milli_node("node2", 10000, 50000)],
        [
            pod(cpu_only("1000m"), cpu_only("2000m"), node="node1"),
            pod(cpu_and_memory("1000m", "2000"), cpu_and_memory("2000m", "3000"), node="node2"),
        ],
        DEFAULT,
        [82, 80],
    ),
    (
        "nodes to reach min/max score",
        pod({"memory": "2000"}, {"memory": "3000"}),
        [milli_node("node1", 3000, 5000), milli_node("node2", 3000, 5000)],
        [pod(cpu_only("1000m"), cpu_only("2000m"), node="node1")],
        DEFAULT,
        [100, 50],
    ),
    (
        "requested resources at node capacity",
        pod(cpu_only("1000m"), cpu_only("2000m")),
        [milli_node("node1", 6000, 10000), milli_node("node2", 6000, 10000)],
        [
            pod(cpu_only("1000m"), cpu_only("2000m"), node="node1"),
            pod(cpu_and_memory("1000m", "2000"), cpu_and_memory("2000m", "3000"), node="node2"),
        ],
        DEFAULT,
        [50, 75],
    ),
    (
        "requested resources exceed node capacity (fractions capped at 1)",
        pod(cpu_only("1000m"), cpu_only("2000m")),
        [milli_node("node1", 4000, 10000), milli_node("node2", 4000, 10000)],
        [
            pod(cpu_only("1000m"), cpu_only("2000m"), node="node1"),
            pod(cpu_and_memory("1000m", "2000"), cpu_and_memory("2000m", "3000"), node="node2"),
        ],
        DEFAULT,
        [50, 75],
    ),
    (
        "zero node resources",
        REQUESTED,
        [milli_node("node1", 0, 0), milli_node("node2", 0, 0)],
        [],
        DEFAULT,
        [100, 100],
    ),
    (
        "scalar resource is included if the pod requests it",
        pod({"cpu": "0", "memory": "0", GPU: "1"}),
        [milli_node("node1", 3500, 40000, gpu=8), milli_node("node2", 3500, 40000, gpu=8)],
        [
            pod(cpu_and_memory("1000m", "2000"), {"cpu": "2000m", "memory": "3000", GPU: "3"}, node="node1"),
            pod(cpu_and_memory("1000m", "2000"), cpu_and_memory("2000m", "3000"), node="node2"),
        ],
        WITH_GPU,
        [70, 65],
    ),
    (
        "scalar resource is not included if the pod doesn't request it",
        REQUESTED,
        [milli_node("node1", 3500, 40000, gpu=8), milli_node("node2", 3500, 40000)],
        [],
        WITH_GPU,
        [63, 63],
    ),
]


@pytest.mark.parametrize(
    ("incoming", "nodes", "existing", "resources", "want"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_balanced_allocation(
    incoming: Pod, nodes: list[Node], existing: list[Pod], resources: list[tuple[str, int]], want: list[int]
) -> None:
    snap = make_snapshot(nodes, existing)
    plugin = balanced_allocation.new(ba_args(resources), FakeHandle(snap))
    assert scores_both_ways(plugin, incoming, snap) == want


def test_score_without_prescore_gives_the_same() -> None:
    # "resources requested, pods scheduled with resources if PreScore not called".
    snap = make_snapshot(
        [milli_node("node1", 10000, 20000), milli_node("node2", 10000, 20000)],
        [
            pod(cpu_only("1000m"), cpu_only("2000m"), node="node1"),
            pod(cpu_and_memory("1000m", "2000"), cpu_and_memory("2000m", "3000"), node="node2"),
        ],
    )
    assert scores_both_ways(balanced_allocation.new(None, FakeHandle(snap)), REQUESTED, snap, pre_score=False) == [82, 95]


@pytest.mark.parametrize(
    "incoming",
    [pod(), pod({}), pod({"cpu": "0", "memory": "0"}), pod({"example.com/foo": "1"})],
    ids=["no containers", "no requests", "zero requests", "only an unscored resource"],
)
def test_best_effort_pods_skip_at_prescore(incoming: Pod) -> None:
    # "nothing scheduled, nothing requested, skip in PreScore": plain requests, not non-zero ones.
    snap = make_snapshot([milli_node("node1", 4000, 10000)])
    plugin = balanced_allocation.new(None, FakeHandle(snap))
    state = CycleState()
    assert plugin.pre_score(state, incoming, snap.node_infos).code == Code.SKIP
    # Score without PreScore (state empty) gives 0 for such a pod, both ways.
    assert plugin.score(state, incoming, snap.node_infos[0])[0] == 0
    assert plugin.score_batch(state, incoming, snap, np.arange(1, dtype=np.int64)).tolist() == [0]


def test_conformance_balanced_allocation_two_resources() -> None:
    # /work/shared/conformance/cases/balanced-allocation-two-resources.yaml
    snap = make_snapshot([make_node("node1", cpu="4", memory="10000"), make_node("node2", cpu="6", memory="10000")])
    incoming = make_pod(
        "p",
        containers=[
            {"name": "a", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": {"cpu": "1", "memory": "2000"}}},
            {"name": "b", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": {"cpu": "2", "memory": "3000"}}},
        ],
    )
    assert scores_both_ways(balanced_allocation.new(None, FakeHandle(snap)), incoming, snap) == [87, 100]


STD = [
    ("two fractions use |a - b| / 2", [3, 1], [4, 2], 87),
    ("one fraction has no deviation", [3, 0], [4, 0], 100),
    ("three fractions use the population std", [1, 2, 3], [4, 4, 4], 79),
    ("fractions are capped at 1", [8, 1], [4, 2], 75),
    ("no scored resources", [0, 0], [0, 0], 100),
    ("float truncation: 0.825 * 100 is 82.49999", [6000, 5000], [10000, 20000], 82),
]


@pytest.mark.parametrize(("requested", "allocatable", "want"), [c[1:] for c in STD], ids=[c[0] for c in STD])
def test_balanced_resource_score(requested: list[int], allocatable: list[int], want: int) -> None:
    assert balanced_resource_score(requested, allocatable) == want
    batch = BalancedStrategy().score_batch(np.asarray([[r] for r in requested]), np.asarray([[a] for a in allocatable]))
    assert batch.tolist() == [want]


def test_no_normalize_and_no_events() -> None:
    plugin = balanced_allocation.new(None, None)
    assert plugin.score_extensions() is None
    assert plugin.name == "NodeResourcesBalancedAllocation"
    assert not hasattr(plugin, "events_to_register")


@settings(max_examples=examples(150), deadline=None)
@given(cluster=random_cluster(), incoming=random_pod(), specs=resource_specs(), data=st.data())
def test_score_batch_matches_per_node(
    cluster: Snapshot, incoming: Pod, specs: list[tuple[str, int]], data: st.DataObject
) -> None:
    plugin = balanced_allocation.new(ba_args(specs), FakeHandle(cluster))
    state = CycleState()
    if data.draw(st.booleans()):
        plugin.pre_score(state, incoming, cluster.node_infos)
    positions = np.asarray(data.draw(st.permutations(range(cluster.num_nodes))), dtype=np.int64)
    batch = plugin.score_batch(state, incoming, cluster, positions)
    per_node = [plugin.score(state, incoming, cluster.node_infos[p])[0] for p in positions]
    assert batch.tolist() == per_node
    assert all(0 <= s <= 100 for s in per_node)


@settings(max_examples=examples(300), deadline=None)
@given(
    rows=st.lists(
        st.lists(st.tuples(st.integers(0, 10**12), st.integers(0, 10**12)), min_size=5, max_size=5),
        min_size=1,
        max_size=6,
    )
)
def test_strategy_batch_floats_match_bit_for_bit(rows: list[list[tuple[int, int]]]) -> None:
    requested = np.asarray([[r for r, _ in row] for row in rows], dtype=np.int64)
    allocatable = np.asarray([[a for _, a in row] for row in rows], dtype=np.int64)
    batch = BalancedStrategy().score_batch(requested, allocatable)
    assert batch.tolist() == [balanced_resource_score(requested[:, j].tolist(), allocatable[:, j].tolist()) for j in range(5)]


@settings(max_examples=examples(300), deadline=None)
@given(
    rows=st.lists(
        st.lists(st.tuples(st.integers(0, 10**12), st.integers(1, 10**12)), min_size=5, max_size=5),
        min_size=1,
        max_size=4,
    )
)
def test_strategy_batch_with_every_resource_positive_matches_bit_for_bit(rows: list[list[tuple[int, int]]]) -> None:
    """`positive=True` (the two-resource form without masks) gives the reference's integers."""
    requested = np.asarray([[r for r, _ in row] for row in rows], dtype=np.int64)
    allocatable = np.asarray([[a for _, a in row] for row in rows], dtype=np.int64)
    batch = BalancedStrategy().score_batch(requested, allocatable, positive=True)
    assert batch.tolist() == [balanced_resource_score(requested[:, j].tolist(), allocatable[:, j].tolist()) for j in range(5)]
    assert batch.tolist() == BalancedStrategy().score_batch(requested, allocatable).tolist()
