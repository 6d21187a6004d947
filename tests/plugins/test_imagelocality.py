"""ImageLocality: per-node and batch scores, image name normalisation."""

from __future__ import annotations

import hashlib
import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.api.objects import Node, Pod
from scheduler.framework.snapshot import Snapshot
from scheduler.framework.types import CycleState
from scheduler.plugins import imagelocality
from scheduler.plugins.imagelocality import (
    MB,
    build_image_index,
    calculate_priority,
    normalized_image_name,
)
from tests.support.builders import make_node, make_pod, make_snapshot
from tests.support.examples import examples
from tests.support.fakes import FakeHandle

_pods = itertools.count()


def image_pod(*images: str, init: tuple[str, ...] = (), node_name: str = "") -> Pod:
    """A pod running these images (init containers first, as sumImageScores reads them)."""
    spec = {"initContainers": [{"name": f"i{i}", "image": image} for i, image in enumerate(init)]} if init else None
    containers = [{"name": f"c{i}", "image": image} for i, image in enumerate(images)]
    return make_pod(f"p{next(_pods)}", containers=containers, spec=spec, node_name=node_name)


def image_node(name: str, images: list[tuple[list[str], int]]) -> Node:
    return make_node(name, images=images)


# Node statuses of pkg/scheduler/framework/plugins/imagelocality/image_locality_test.go
NODE_40_300_2000 = [
    (["gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"], 40 * MB),
    (["gcr.io/300:latest", "gcr.io/300:v1"], 300 * MB),
    (["gcr.io/2000:latest"], 2000 * MB),
]
NODE_250_10 = [(["gcr.io/250:latest"], 250 * MB), (["gcr.io/10:latest", "gcr.io/10:v1"], 10 * MB)]
NODE_600_40_900 = [(["gcr.io/600:latest"], 600 * MB), (["gcr.io/40:latest"], 40 * MB), (["gcr.io/900:latest"], 900 * MB)]
NODE_300_600_900 = [(["gcr.io/300:latest"], 300 * MB), (["gcr.io/600:latest"], 600 * MB), (["gcr.io/900:latest"], 900 * MB)]
NODE_4000_30 = [(["gcr.io/4000:latest"], 4000 * MB), (["gcr.io/30:latest"], 30 * MB)]
NODE_20_30_40 = [(["gcr.io/20:latest"], 20 * MB), (["gcr.io/30:latest"], 30 * MB), (["gcr.io/40:latest"], 40 * MB)]


def scores_both_ways(incoming: Pod, snap: Snapshot) -> list[int]:
    plugin = imagelocality.new(None, FakeHandle(snap))
    state = CycleState()
    per_node = []
    for info in snap.node_infos:
        value, status = plugin.score(state, incoming, info)
        assert status.success
        per_node.append(value)
    assert plugin.score_batch(state, incoming, snap, np.arange(snap.num_nodes, dtype=np.int64)).tolist() == per_node
    return per_node


# TestImageLocalityPriority (image_locality_test.go)
CASES = [
    # node2: 100 * (250M/2 - 23M) / (1000M * 2 - 23M) = 5
    (
        "two images spread on two nodes, prefer the larger image one",
        image_pod("gcr.io/40", "gcr.io/250"),
        [NODE_40_300_2000, NODE_250_10],
        [0, 5],
    ),
    # node1: 100 * ((40M + 300M)/2 - 23M) / (1000M * 2 - 23M) = 7
    ("two images on one node, prefer this node", image_pod("gcr.io/40", "gcr.io/300"), [NODE_40_300_2000, NODE_250_10], [7, 0]),
    ("if exceed limit, use limit", image_pod("gcr.io/10", "gcr.io/4000"), [NODE_4000_30, NODE_250_10], [100, 0]),
    # node1: 100 * (4000M/3 - 23M) / (1000M * 2 - 23M) = 66
    (
        "if exceed limit, use limit (with node which has no images present)",
        image_pod("gcr.io/10", "gcr.io/4000"),
        [NODE_4000_30, NODE_250_10, []],
        [66, 0, 0],
    ),
    # node1: 100 * (600M * 2/3 + 900M * 2/3 - 23M) / (1000M * 3 - 23M) = 32; node2 adds 300M/3: 36
    (
        "pod with multiple large images, node2 is preferred",
        image_pod("gcr.io/300", "gcr.io/600", "gcr.io/900"),
        [NODE_600_40_900, NODE_300_600_900, []],
        [32, 36, 0],
    ),
    # node1: 100 * (30M + 40M/2 - 23M) / (1000M * 2 - 23M) = 1
    ("pod with multiple small images", image_pod("gcr.io/30", "gcr.io/40"), [NODE_20_30_40, NODE_4000_30], [1, 0]),
    # node1: 100 * (300M/2 - 23M) / (1000M * 2 - 23M) = 6
    (
        "include InitContainers: two images spread on two nodes",
        image_pod("gcr.io/30", init=("gcr.io/300",)),
        [NODE_40_300_2000, NODE_20_30_40],
        [6, 0],
    ),
    ("no images anywhere", image_pod("gcr.io/30"), [[], []], [0, 0]),
    # node1: 100 * (300M/2 - 23M) / (1000M * 2 - 23M) = 6; "gcr.io/300:v2" is not on any node
    ("tagged image matches only its own tag", image_pod("gcr.io/300:v1", "gcr.io/300:v2"), [NODE_40_300_2000, []], [6, 0]),
]


@pytest.mark.parametrize(("incoming", "images", "want"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_image_locality(incoming: Pod, images: list[list[tuple[list[str], int]]], want: list[int]) -> None:
    snap = make_snapshot([image_node(f"node{i + 1}", imgs) for i, imgs in enumerate(images)])
    assert scores_both_ways(incoming, snap) == want


def fake_digest(content: str) -> str:
    return "sha256:" + hashlib.sha256(content.encode()).hexdigest()


# TestNormalizedImageName (image_locality_test.go)
@pytest.mark.parametrize(
    ("name", "want"),
    [
        ("root", "root:latest"),
        ("gcr.io:5000/root", "gcr.io:5000/root:latest"),
        ("root:tag", "root:tag"),
        ("root@" + fake_digest("root"), "root@" + fake_digest("root")),
    ],
    ids=["add :latest postfix 1", "add :latest postfix 2", "keep it as is 1", "keep it as is 2"],
)
def test_normalized_image_name(name: str, want: str) -> None:
    assert normalized_image_name(name) == want


@pytest.mark.parametrize(
    ("total", "containers", "want"),
    [(0, 1, 0), (23 * MB, 1, 0), (1000 * MB, 1, 100), (5000 * MB, 2, 100), (511 * MB, 1, 49), (0, 0, 0)],
    ids=["below min", "at min", "at max", "above max", "truncates", "no containers"],
)
def test_calculate_priority(total: int, containers: int, want: int) -> None:
    assert calculate_priority(total, containers) == want


def test_image_size_comes_from_the_first_node_reporting_the_name() -> None:
    # The scheduler cache keeps one ImageStateSummary per name: the first node's size wins.
    snap = make_snapshot([image_node("a", [(["img:1"], 100 * MB)]), image_node("b", [(["img:1"], 900 * MB)])])
    index = build_image_index(snap)
    assert (index.summaries["img:1"].size, index.summaries["img:1"].num_nodes) == (100 * MB, 2)


def test_index_is_rebuilt_when_nodes_change() -> None:
    snap = make_snapshot([image_node("a", [(["gcr.io/4000:latest"], 4000 * MB)]), image_node("b", [])])
    incoming = image_pod("gcr.io/4000")
    assert scores_both_ways(incoming, snap) == [100, 0]
    snap.add_node(image_node("c", []))
    snap.add_node(image_node("d", []))
    # 4000M / 4 nodes = 1000M: 100 * (1000M - 23M) / (1000M - 23M) = 100; one more node halves it.
    assert scores_both_ways(incoming, snap) == [100, 0, 0, 0]
    snap.add_node(image_node("e", []))
    assert scores_both_ways(incoming, snap) == [79, 0, 0, 0, 0]


def test_no_normalize_score() -> None:
    plugin = imagelocality.new(None, FakeHandle(make_snapshot([])))
    assert plugin.score_extensions() is None
    assert plugin.name == "ImageLocality"


IMAGES = ["gcr.io/a", "gcr.io/a:v1", "gcr.io/b:latest", "gcr.io/c@" + fake_digest("c"), "d"]


@st.composite
def image_cluster(draw: st.DrawFn) -> Snapshot:
    nodes = []
    for i in range(draw(st.integers(1, 6))):
        images = []
        for name in draw(st.lists(st.sampled_from(IMAGES), max_size=4)):
            images.append(
                (
                    [normalized_image_name(name)] + ([name] if draw(st.booleans()) else []),
                    draw(st.integers(0, 3000)) * MB + draw(st.integers(0, MB)),
                )
            )
        nodes.append(image_node(f"n{i}", images))
    return make_snapshot(nodes)


@settings(max_examples=examples(150), deadline=None)
@given(cluster=image_cluster(), data=st.data())
def test_score_batch_matches_per_node(cluster: Snapshot, data: st.DataObject) -> None:
    images = data.draw(st.lists(st.sampled_from(IMAGES), max_size=4))
    inits = tuple(data.draw(st.lists(st.sampled_from(IMAGES), max_size=2)))
    incoming = image_pod(*images, init=inits)
    plugin = imagelocality.new(None, FakeHandle(cluster))
    positions = np.asarray(data.draw(st.permutations(range(cluster.num_nodes))), dtype=np.int64)
    state = CycleState()
    batch = plugin.score_batch(state, incoming, cluster, positions)
    assert batch.tolist() == [plugin.score(state, incoming, cluster.node_infos[p])[0] for p in positions]
