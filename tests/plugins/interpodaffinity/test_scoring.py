"""InterPodAffinity PreScore/Score/NormalizeScore, ported from upstream's tables.

Upstream namespace "" is "default" here. Each run also checks that `score_batch` agrees with
`score` node by node (see `_helpers.run_score`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from scheduler.api.objects import Node, Pod
from scheduler.config.args import InterPodAffinityArgs
from scheduler.framework.nodeinfo import PodInfo
from scheduler.framework.types import Code, CycleState
from scheduler.plugins.interpodaffinity import scoring
from tests.plugins.interpodaffinity._helpers import (
    TEAM_NAMESPACES,
    affinity,
    multi_term,
    node,
    pod,
    run_score,
    setup,
    team_selector,
    term,
)

SKIP = "skip"
CHINA = {"region": "China"}
INDIA = {"region": "India"}
AZ1 = {"az": "az1"}
AZ2 = {"az": "az2"}
CHINA_AZ1 = {"region": "China", "az": "az1"}
S1 = {"security": "S1"}
S2 = {"security": "S2"}

STAY_WITH_S1_IN_REGION = affinity(preferred=[(5, term("security", "In", ["S1"]))])
STAY_WITH_S2_IN_REGION = affinity(preferred=[(6, term("security", "In", ["S2"]))])
AFFINITY3 = affinity(
    preferred=[
        (
            8,
            multi_term(
                [
                    {"key": "security", "operator": "NotIn", "values": ["S1"]},
                    {"key": "security", "operator": "In", "values": ["S2"]},
                ],
                "region",
            ),
        ),
        (
            2,
            multi_term([{"key": "security", "operator": "Exists"}, {"key": "wrongkey", "operator": "DoesNotExist"}], "region"),
        ),
    ]
)
HARD_AFFINITY = affinity(
    [
        term("security", "In", ["S1", "value2"]),
        multi_term([{"key": "security", "operator": "Exists"}, {"key": "wrongkey", "operator": "DoesNotExist"}], "region"),
    ]
)
AWAY_FROM_S1_IN_AZ = affinity(anti_preferred=[(5, term("security", "In", ["S1"], topology="az"))])
AWAY_FROM_S2_IN_AZ = affinity(anti_preferred=[(5, term("security", "In", ["S2"], topology="az"))])
STAY_WITH_S1_AWAY_FROM_S2 = affinity(
    preferred=[(8, term("security", "In", ["S1"]))],
    anti_preferred=[(5, term("security", "In", ["S2"], topology="az"))],
)
_NS_TERM = term("security", "In", ["S1"], namespaces=["subteam2.team2"], namespace_selector=team_selector("team1"))
AFFINITY_NS_SELECTOR = affinity(preferred=[(5, _NS_TERM)])
ANTI_AFFINITY_NS_SELECTOR = affinity(anti_preferred=[(5, _NS_TERM)])


def _nodes(*labels: dict[str, str]) -> list[Node]:
    return [node(f"node{i + 1}", lbl) for i, lbl in enumerate(labels)]


def _on(node_name: str, labels: dict[str, str] | None = None, aff: dict[str, Any] | None = None, ns: str = "default") -> Pod:
    return pod(labels, node=node_name, aff=aff, namespace=ns)


# pkg/scheduler/framework/plugins/interpodaffinity/scoring_test.go: TestPreferredAffinity
PREFERRED = [
    ("all nodes are same priority as Affinity is nil", pod(S1), [], _nodes(CHINA, INDIA, AZ1), False, SKIP),
    (
        "Affinity: matching topology key and pods score high",
        pod(S1, aff=STAY_WITH_S1_IN_REGION),
        [_on("node1", S1), _on("node2", S2), _on("node3", S1)],
        _nodes(CHINA, INDIA, AZ1),
        False,
        [100, 0, 0],
    ),
    (
        "All the nodes sharing the topology value of a matching pod have the same score",
        pod(aff=STAY_WITH_S1_IN_REGION),
        [_on("node1", S1)],
        _nodes(CHINA, CHINA_AZ1, INDIA),
        False,
        [100, 100, 0],
    ),
    (
        "Affinity: the region with more matching pods scores high",
        pod(S1, aff=STAY_WITH_S2_IN_REGION),
        [_on("node1", S2), _on("node1", S2), _on("node2", S2), _on("node3", S2), _on("node4", S2), _on("node5", S2)],
        _nodes(CHINA, INDIA, CHINA, CHINA, INDIA),
        False,
        [100, 0, 100, 100, 0],
    ),
    (
        "Affinity: different label operators and values, some match failures",
        pod(S1, aff=AFFINITY3),
        [_on("node1", S1), _on("node2", S2), _on("node3", S1)],
        _nodes(CHINA, INDIA, AZ1),
        False,
        [20, 100, 0],
    ),
    (
        "Affinity symmetry: existing pods' preferred affinity",
        pod(S2),
        [_on("node1", S1, STAY_WITH_S1_IN_REGION), _on("node2", S2, STAY_WITH_S2_IN_REGION)],
        _nodes(CHINA, INDIA, AZ1),
        False,
        [0, 100, 0],
    ),
    (
        "Affinity symmetry with namespace selector",
        pod(S1, namespace="subteam1.team1"),
        [_on("node1", S1, AFFINITY_NS_SELECTOR), _on("node2", S2, STAY_WITH_S2_IN_REGION)],
        _nodes(CHINA, INDIA, AZ1),
        False,
        [100, 0, 0],
    ),
    (
        "AntiAffinity symmetry with namespace selector",
        pod(S1, namespace="subteam1.team1"),
        [_on("node1", S1, ANTI_AFFINITY_NS_SELECTOR), _on("node2", S2, STAY_WITH_S2_IN_REGION)],
        _nodes(CHINA, INDIA, AZ1),
        False,
        [0, 100, 100],
    ),
    (
        "Affinity symmetry: existing pods' required affinity with hardPodAffinityWeight",
        pod(S1),
        [_on("node1", S1, HARD_AFFINITY), _on("node2", S2, HARD_AFFINITY)],
        _nodes(CHINA, INDIA, AZ1),
        False,
        [100, 100, 0],
    ),
    (
        "Anti Affinity: pod that does not match existing pods in node will get high score",
        pod(S1, aff=AWAY_FROM_S1_IN_AZ),
        [_on("node1", S1), _on("node2", S2)],
        _nodes(AZ1, CHINA),
        False,
        [0, 100],
    ),
    (
        "Anti Affinity: node without the topology key scores higher",
        pod(S1, aff=AWAY_FROM_S1_IN_AZ),
        [_on("node1", S1), _on("node2", S1)],
        _nodes(AZ1, CHINA),
        False,
        [0, 100],
    ),
    (
        "Anti Affinity: the node with more matching pods scores lower",
        pod(S1, aff=AWAY_FROM_S1_IN_AZ),
        [_on("node1", S1), _on("node1", S1), _on("node2", S2)],
        _nodes(AZ1, INDIA),
        False,
        [0, 100],
    ),
    (
        "Anti Affinity symmetry: existing pods' preferred anti-affinity",
        pod(S2),
        [_on("node1", S1, AWAY_FROM_S2_IN_AZ), _on("node2", S2, AWAY_FROM_S1_IN_AZ)],
        _nodes(AZ1, AZ2),
        False,
        [0, 100],
    ),
    (
        "Affinity and Anti Affinity: preferred terms of both",
        pod(S1, aff=STAY_WITH_S1_AWAY_FROM_S2),
        [_on("node1", S1), _on("node2", S1)],
        _nodes(CHINA, AZ1),
        False,
        [100, 0],
    ),
    (
        "Affinity and Anti Affinity: pod and existing pods share labels",
        pod(S1, aff=STAY_WITH_S1_AWAY_FROM_S2),
        [
            _on("node1", S1),
            _on("node1", S1),
            _on("node2", S1),
            _on("node3", S1),
            _on("node3", S1),
            _on("node4", S1),
            _on("node5", S1),
        ],
        _nodes(CHINA_AZ1, INDIA, CHINA, CHINA, INDIA),
        False,
        [100, 0, 100, 100, 0],
    ),
    (
        "Affinity, Anti Affinity and symmetry together",
        pod(S1, aff=STAY_WITH_S1_AWAY_FROM_S2),
        [
            _on("node1", S1),
            _on("node2", S2),
            _on("node3", None, STAY_WITH_S1_AWAY_FROM_S2),
            _on("node4", None, AWAY_FROM_S1_IN_AZ),
        ],
        _nodes(CHINA, AZ1, INDIA, AZ2),
        False,
        [100, 0, 100, 0],
    ),
    (
        "Avoid panic when partial nodes in a topology don't have pods with affinity",
        pod(S1),
        [_on("node1", S1), _on("node2", None, STAY_WITH_S1_AWAY_FROM_S2)],
        _nodes(CHINA, CHINA),
        False,
        [0, 0],
    ),
    (
        "Affinity with pods matching NamespaceSelector",
        pod(S1, namespace="subteam1.team1", aff=AFFINITY_NS_SELECTOR),
        [
            _on("node1", S1, ns="subteam1.team1"),
            _on("node1", S1, ns="subteam1.team1"),
            _on("node1", S1, ns="subteam1.team2"),
            _on("node2", S1, ns="subteam2.team1"),
        ],
        _nodes(CHINA, INDIA),
        False,
        [100, 0],
    ),
    (
        "Affinity with pods matching both NamespaceSelector and Namespaces fields",
        pod(S1, namespace="subteam1.team1", aff=AFFINITY_NS_SELECTOR),
        [
            _on("node1", S1, ns="subteam1.team1"),
            _on("node1", S1, ns="subteam1.team1"),
            _on("node1", S1, ns="subteam2.team2"),
            _on("node2", S1, ns="subteam2.team1"),
        ],
        _nodes(CHINA, INDIA),
        False,
        [100, 0],
    ),
    (
        "Anti-affinity with pods matching NamespaceSelector",
        pod(S1, namespace="subteam1.team1", aff=ANTI_AFFINITY_NS_SELECTOR),
        [
            _on("node1", S1, ns="subteam1.team1"),
            _on("node1", S1, ns="subteam1.team1"),
            _on("node1", S1, ns="subteam1.team2"),
            _on("node2", S1, ns="subteam2.team1"),
        ],
        _nodes(CHINA, INDIA),
        False,
        [0, 100],
    ),
    (
        "Anti-affinity with pods matching both NamespaceSelector and Namespaces fields",
        pod(S1, namespace="subteam1.team1", aff=ANTI_AFFINITY_NS_SELECTOR),
        [
            _on("node1", S1, ns="subteam1.team1"),
            _on("node1", S1, ns="subteam1.team1"),
            _on("node1", S1, ns="subteam2.team2"),
            _on("node2", S1, ns="subteam2.team1"),
        ],
        _nodes(CHINA, INDIA),
        False,
        [0, 100],
    ),
    (
        "Ignore preferred terms of existing pods",
        pod(S2),
        [_on("node1", S1, STAY_WITH_S1_AWAY_FROM_S2), _on("node2", S2, STAY_WITH_S2_IN_REGION)],
        _nodes(CHINA, INDIA),
        True,
        SKIP,
    ),
    (
        "Do not ignore preferred terms of existing pods",
        pod(S2),
        [_on("node1", S1, STAY_WITH_S1_AWAY_FROM_S2), _on("node2", S2, STAY_WITH_S2_IN_REGION)],
        _nodes(CHINA, INDIA),
        False,
        [0, 100],
    ),
    ("No nodes to score", pod(S2), [], [], False, SKIP),
]


@pytest.mark.parametrize(
    ("incoming", "pods", "nodes", "ignore", "want"), [c[1:] for c in PREFERRED], ids=[c[0] for c in PREFERRED]
)
def test_preferred_affinity(incoming: Pod, pods: list[Pod], nodes: list[Node], ignore: bool, want: object) -> None:
    args = InterPodAffinityArgs(hard_pod_affinity_weight=1, ignore_preferred_terms_of_existing_pods=ignore)
    plugin, snap = setup(nodes, pods, TEAM_NAMESPACES, args)
    pre, scores = run_score(plugin, snap, incoming)
    if want == SKIP:
        assert pre.code == Code.SKIP
        return
    assert pre.success
    assert scores == want


HARD_POD_AFFINITY = affinity(
    [term("service", "In", ["S1"], namespaces=["default", "subteam2.team2"], namespace_selector=team_selector("team1"))]
)
SERVICE_S1 = {"service": "S1"}


# scoring_test.go: TestPreferredAffinityWithHardPodAffinitySymmetricWeight
HARD_WEIGHT = [
    ("with default weight", pod(SERVICE_S1), 1, [100, 100, 0]),
    ("with zero weight", pod(SERVICE_S1), 0, SKIP),
    ("with no matching namespace", pod(SERVICE_S1, namespace="subteam1.team2"), 1, SKIP),
    ("with matching NamespaceSelector", pod(SERVICE_S1, namespace="subteam1.team1"), 1, [100, 100, 0]),
    ("with matching Namespaces", pod(SERVICE_S1, namespace="subteam2.team2"), 1, [100, 100, 0]),
]


@pytest.mark.parametrize(("incoming", "weight", "want"), [c[1:] for c in HARD_WEIGHT], ids=[c[0] for c in HARD_WEIGHT])
def test_hard_pod_affinity_weight(incoming: Pod, weight: int, want: object) -> None:
    pods = [_on("node1", None, HARD_POD_AFFINITY), _on("node2", None, HARD_POD_AFFINITY)]
    args = InterPodAffinityArgs(hard_pod_affinity_weight=weight, ignore_preferred_terms_of_existing_pods=False)
    plugin, snap = setup(_nodes(CHINA, INDIA, AZ1), pods, TEAM_NAMESPACES, args)
    pre, scores = run_score(plugin, snap, incoming)
    if want == SKIP:
        assert pre.code == Code.SKIP
        return
    assert scores == want


def test_hard_pod_affinity_weight_scales_raw_scores() -> None:
    pods = [_on("node1", None, HARD_POD_AFFINITY), _on("node1", None, HARD_POD_AFFINITY)]
    args = InterPodAffinityArgs(hard_pod_affinity_weight=7, ignore_preferred_terms_of_existing_pods=False)
    plugin, snap = setup(_nodes(CHINA, INDIA), pods, TEAM_NAMESPACES, args)
    cycle = CycleState()
    assert plugin.pre_score(cycle, pod(SERVICE_S1), snap.node_infos).success
    assert [plugin.score(cycle, pod(SERVICE_S1), info)[0] for info in snap.node_infos] == [14, 0]


# NormalizeScore: float64 min-max scaling truncated by int64(), as scoring.go converts.
NORMALIZE = [
    ("negative and positive raw scores", [-5, 0, 3], [0, 62, 100]),
    ("float64 truncation, not rounding (100*0.29 = 28.999...)", [0, 29, 100], [0, 28, 100]),
    ("thirds truncate down", [0, 1, 2, 3], [0, 33, 66, 100]),
    ("all equal scores become 0", [7, 7, 7], [0, 0, 0]),
    ("all negative", [-10, -4, -1], [0, 66, 100]),
]


@pytest.mark.parametrize(("raw", "want"), [c[1:] for c in NORMALIZE], ids=[c[0] for c in NORMALIZE])
def test_normalize(raw: list[int], want: list[int]) -> None:
    state = scoring.PreScoreState(PodInfo.of(pod()), {}, {"region": {"x": 1}})
    scores = np.array(raw, dtype=np.int64)
    scoring.normalize(state, scores)
    assert scores.tolist() == want


def test_normalize_leaves_scores_when_no_topology_score() -> None:
    state = scoring.PreScoreState(PodInfo.of(pod()), {})
    scores = np.array([3, 5], dtype=np.int64)
    scoring.normalize(state, scores)
    assert scores.tolist() == [3, 5]


def test_score_without_pre_score_is_an_error() -> None:
    plugin, snap = setup(_nodes(CHINA), [])
    score, status = plugin.score(CycleState(), pod(), snap.node_infos[0])
    assert (score, status.code) == (0, Code.ERROR)
    assert status.message == 'failed to read "PreScoreInterPodAffinity" from cycleState: not found'
    assert plugin.normalize_score(CycleState(), pod(), np.zeros(1, dtype=np.int64)).code == Code.ERROR
    with pytest.raises(LookupError, match="PreScoreInterPodAffinity"):
        plugin.score_batch(CycleState(), pod(), snap, snap.order)
