"""PreScore, Score and NormalizeScore of PodTopologySpread, ported from upstream's table tests."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

from scheduler.api.objects import Node, Pod
from scheduler.framework.types import Code, CycleState
from scheduler.plugins.podtopologyspread.common import (
    round_half_away,
    round_half_away_array,
    topology_normalizing_weight,
)
from tests.plugins.podtopologyspread.helpers import (
    BAR,
    FOO,
    HOSTNAME,
    SYSTEM_ARGS,
    TAINTS,
    FakeCluster,
    node,
    node_affinity,
    pod,
    service,
    setup,
    spread,
)

SA = "ScheduleAnyway"


def hosts(*names: str) -> list[Node]:
    """Nodes labelled only with their hostname."""
    return [node(n, {HOSTNAME: n}) for n in names]


def foo_pods(*placements: str, namespace: str = "default") -> list[Pod]:
    """Pods labelled foo on the given nodes."""
    return [pod(f"p{i}-{where}", {"foo": ""}, on=where, namespace=namespace) for i, where in enumerate(placements)]


def incoming(*constraints: dict[str, Any], labels: dict[str, str] | None = None, **kwargs: Any) -> Pod:
    """The pod to schedule."""
    return pod("p", {"foo": ""} if labels is None else labels, constraints=list(constraints), **kwargs)


def with_min_domains(made: Pod, min_domains: int) -> Pod:
    """The pod with minDomains forced onto its constraints (the API server would refuse it with ScheduleAnyway)."""
    changed = tuple(dataclasses.replace(c, min_domains=min_domains) for c in made.spread_constraints)
    return made.with_changes(spread_constraints=changed)


def zoned(*names_zones: tuple[str, str]) -> list[Node]:
    """Nodes with a zone and a hostname label."""
    return [node(n, {"zone": z, HOSTNAME: n}) for n, z in names_zones]


P_4321 = foo_pods(*(["node-a"] * 4 + ["node-b"] * 3 + ["node-c"] * 2 + ["node-d"]))
P_2103 = foo_pods("node-a", "node-a", "node-b", "node-d", "node-d", "node-d")
P_4213 = foo_pods(*(["node-a"] * 4 + ["node-b"] * 2 + ["node-x"] + ["node-y"] * 3))
P_MIXED = [
    pod("p-a1", {"foo": ""}, on="node-a"),
    pod("p-b1", {"foo": "", "bar": ""}, on="node-b"),
    pod("p-y1", {"foo": ""}, on="node-y"),
    pod("p-y2", {"bar": ""}, on="node-y"),
]
ABC_FOO = [
    node("node-a", {"node": "node-a", "foo": ""}),
    node("node-b", {"node": "node-b", "foo": ""}),
    node("node-c", {"node": "node-c"}),
]
P_211 = foo_pods("node-a", "node-a", "node-b", "node-c")
ZONES_4 = zoned(("node-a", "zone1"), ("node-b", "zone1"), ("node-c", "zone2"), ("node-d", "zone2"))
P_MLK = [
    pod("p-a1", {"foo": ""}, on="node-a"),
    pod("p-b1", {"foo": "", "bar": ""}, on="node-b"),
    pod("p-y1", {"foo": ""}, on="node-c"),
    pod("p-y2", {"bar": ""}, on="node-c"),
]

# Ported from kubernetes/kubernetes pkg/scheduler/framework/plugins/podtopologyspread/scoring_test.go
# (TestPodTopologySpreadScore); the plugin runs with System defaulting there.
# (name, pod, existing pods, candidate nodes, failed nodes, cluster, want scores in candidate order)
CASES: list[tuple[str, Pod, list[Pod], list[Node], list[Node], Any, list[int]]] = [
    (
        "one constraint on node, no existing pods",
        incoming(spread(1, HOSTNAME, SA, FOO)),
        [],
        hosts("node-a", "node-b"),
        [],
        None,
        [100, 100],
    ),
    (
        "one constraint on node, only one node is candidate",
        incoming(spread(1, HOSTNAME, SA, FOO)),
        foo_pods("node-a", "node-a", "node-b"),
        hosts("node-a"),
        hosts("node-b"),
        None,
        [100],
    ),
    (
        "one constraint on node, all nodes have the same number of matching pods",
        incoming(spread(1, HOSTNAME, SA, FOO)),
        foo_pods("node-a", "node-b"),
        hosts("node-a", "node-b"),
        [],
        None,
        [100, 100],
    ),
    (
        "one constraint on node, all 4 nodes are candidates",
        incoming(spread(1, HOSTNAME, SA, FOO)),
        P_2103,
        hosts("node-a", "node-b", "node-c", "node-d"),
        [],
        None,
        [20, 60, 100, 0],
    ),
    (
        "one constraint on node, null selector",
        incoming(spread(1, HOSTNAME, SA, None)),
        P_2103,
        hosts("node-a", "node-b", "node-c", "node-d"),
        [],
        None,
        [100, 100, 100, 100],
    ),
    (
        "one constraint on node, all 4 nodes are candidates, maxSkew=2",
        incoming(spread(2, HOSTNAME, SA, FOO)),
        P_2103,
        hosts("node-a", "node-b", "node-c", "node-d"),
        [],
        None,
        [33, 66, 100, 16],
    ),
    (
        "one constraint on node, all 4 nodes are candidates, maxSkew=3",
        incoming(spread(3, HOSTNAME, SA, FOO)),
        P_4321,
        hosts("node-a", "node-b", "node-c", "node-d"),
        [],
        None,
        [44, 66, 77, 100],
    ),
    (
        "system defaulting, nodes don't have zone, pods match service",
        pod("p", {"foo": ""}),
        P_4321,
        hosts("node-a", "node-b", "node-c", "node-d"),
        [],
        FakeCluster(services=[service({"foo": ""})]),
        [44, 66, 77, 100],
    ),
    (
        "one constraint on node, 3 out of 4 nodes are candidates",
        incoming(spread(1, HOSTNAME, SA, FOO)),
        P_4213,
        hosts("node-a", "node-b", "node-x"),
        hosts("node-y"),
        None,
        [33, 83, 100],
    ),
    (
        "one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology key",
        incoming(spread(1, HOSTNAME, SA, FOO)),
        P_4213,
        [node("node-a", {HOSTNAME: "node-a"}), node("node-b", {"n": "node-b"}), node("node-x", {HOSTNAME: "node-x"})],
        hosts("node-y"),
        None,
        [16, 0, 100],
    ),
    (
        "one constraint on zone, 3 out of 4 nodes are candidates",
        incoming(spread(1, "zone", SA, FOO)),
        P_4213,
        zoned(("node-a", "zone1"), ("node-b", "zone1"), ("node-x", "zone2")),
        zoned(("node-y", "zone2")),
        None,
        [75, 75, 100],
    ),
    (
        "two Constraints on zone and node, 2 out of 4 nodes are candidates",
        incoming(spread(1, "zone", SA, FOO), spread(1, HOSTNAME, SA, FOO)),
        foo_pods("node-a", "node-a", "node-b", "node-x", "node-x", "node-y", "node-y", "node-y", "node-y"),
        zoned(("node-a", "zone1"), ("node-x", "zone2")),
        zoned(("node-b", "zone1"), ("node-y", "zone2")),
        None,
        [100, 63],
    ),
    (
        "two Constraints on zone and node, with different labelSelectors",
        incoming(spread(1, "zone", SA, FOO), spread(1, HOSTNAME, SA, BAR), labels={"foo": "", "bar": ""}),
        P_MIXED,
        zoned(("node-a", "zone1"), ("node-b", "zone1"), ("node-x", "zone2"), ("node-y", "zone2")),
        [],
        None,
        [60, 20, 100, 60],
    ),
    (
        "two Constraints on zone and node, with different labelSelectors, some nodes have 0 pods",
        incoming(spread(1, "zone", SA, FOO), spread(1, HOSTNAME, SA, BAR), labels={"foo": "", "bar": ""}),
        [
            pod("p-b1", {"bar": ""}, on="node-b"),
            pod("p-x1", {"foo": ""}, on="node-x"),
            pod("p-y1", {"foo": "", "bar": ""}, on="node-y"),
        ],
        zoned(("node-a", "zone1"), ("node-b", "zone1"), ("node-x", "zone2"), ("node-y", "zone2")),
        [],
        None,
        [100, 60, 40, 0],
    ),
    (
        "two Constraints on zone and node, with different labelSelectors, 3 out of 4 nodes are candidates",
        incoming(spread(1, "zone", SA, FOO), spread(1, HOSTNAME, SA, BAR), labels={"foo": "", "bar": ""}),
        P_MIXED,
        zoned(("node-a", "zone1"), ("node-b", "zone1"), ("node-x", "zone2")),
        zoned(("node-y", "zone2")),
        None,
        [50, 25, 100],
    ),
    (
        "existing pods in a different namespace do not count",
        incoming(spread(1, HOSTNAME, SA, FOO)),
        foo_pods("node-a", namespace="ns1") + foo_pods("node-a", "node-b", "node-b"),
        hosts("node-a", "node-b"),
        [],
        None,
        [100, 33],
    ),
    (
        "terminating Pods should be excluded",
        incoming(spread(1, HOSTNAME, SA, FOO)),
        [pod("p-a", {"foo": ""}, on="node-a", terminating=True), pod("p-b", {"foo": ""}, on="node-b")],
        hosts("node-a", "node-b"),
        [],
        None,
        [100, 0],
    ),
    (
        "minDomains has no effect when ScheduleAnyway",
        with_min_domains(incoming(spread(2, "node", SA, FOO)), 10),
        foo_pods("node-a", "node-a", "node-b", "node-b", "node-c"),
        [node("node-a", {"node": "node-a"}), node("node-b", {"node": "node-b"}), node("node-c", {"node": "node-c"})],
        [],
        None,
        [75, 75, 100],
    ),
    (
        "NodeAffinityPolicy honoed with labelSelectors",
        incoming(spread(1, "node", SA, FOO), node_selector={"foo": ""}),
        P_211,
        ABC_FOO,
        [],
        None,
        [0, 33, 100],
    ),
    (
        "NodeAffinityPolicy ignored with labelSelectors",
        incoming(spread(1, "node", SA, FOO, affinity_policy="Ignore"), node_selector={"foo": ""}),
        P_211,
        ABC_FOO,
        [],
        None,
        [66, 100, 100],
    ),
    (
        "NodeAffinityPolicy honoed with nodeAffinity",
        incoming(spread(1, "node", SA, FOO), affinity=node_affinity("foo", "In", [""])),
        P_211,
        ABC_FOO,
        [],
        None,
        [0, 33, 100],
    ),
    (
        "NodeAffinityPolicy ignored with nodeAffinity",
        incoming(spread(1, "node", SA, FOO, affinity_policy="Ignore"), affinity=node_affinity("foo", "In", [""])),
        P_211,
        ABC_FOO,
        [],
        None,
        [66, 100, 100],
    ),
    (
        "NodeTaintsPolicy honored",
        incoming(spread(1, "node", SA, FOO, taints_policy="Honor")),
        P_211,
        [node("node-a", {"node": "node-a"}), node("node-b", {"node": "node-b"}), node("node-c", {"node": "node-c"}, TAINTS)],
        [],
        None,
        [0, 33, 100],
    ),
    (
        "NodeTaintsPolicy ignored",
        incoming(spread(1, "node", SA, FOO)),
        P_211,
        [node("node-a", {"node": "node-a"}), node("node-b", {"node": "node-b"}), node("node-c", {"node": "node-c"}, TAINTS)],
        [],
        None,
        [66, 100, 100],
    ),
    (
        "matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
        incoming(
            spread(1, "zone", SA, {}, match_label_keys=["foo"]),
            spread(1, HOSTNAME, SA, {}, match_label_keys=["bar"]),
            labels={"foo": "", "bar": ""},
        ),
        P_MLK,
        ZONES_4,
        [],
        None,
        [60, 20, 60, 100],
    ),
    (
        "matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
        incoming(
            spread(1, "zone", SA, FOO),
            spread(1, HOSTNAME, SA, BAR, match_label_keys=["baz"]),
            labels={"foo": "", "bar": "", "baz": ""},
        ),
        [
            pod("p-a1", {"foo": ""}, on="node-a"),
            pod("p-b1", {"foo": "", "bar": "", "baz": ""}, on="node-b"),
            pod("p-c1", {"foo": ""}, on="node-c"),
            pod("p-c2", {"bar": ""}, on="node-c"),
            pod("p-d3", {"bar": "", "baz": ""}, on="node-c"),
        ],
        ZONES_4,
        [],
        None,
        [60, 20, 60, 100],
    ),
]


def run_scores(
    incoming_pod: Pod, existing: list[Pod], nodes: list[Node], failed: list[Node], cluster: Any, args: Any = SYSTEM_ARGS
) -> list[int]:
    """PreScore over the candidates, then per-node Score and NormalizeScore, checked against the batch form."""
    pl, snap = setup(nodes + failed, existing, args=args, cluster=cluster)
    candidates = [snap.get(n.name) for n in nodes]
    assert all(c is not None for c in candidates)
    infos = [c for c in candidates if c is not None]
    state = CycleState()
    status = pl.pre_score(state, incoming_pod, infos)
    assert status.success, status
    raw = []
    for info in infos:
        value, status = pl.score(state, incoming_pod, info)
        assert status.success, status
        raw.append(value)
    positions = np.asarray([info.position for info in infos], dtype=np.int64)
    batch = pl.score_batch(state, incoming_pod, snap, positions)
    assert batch.tolist() == raw
    scores = np.asarray(raw, dtype=np.int64)
    assert pl.normalize_score(state, incoming_pod, scores).success
    return [int(s) for s in scores]


@pytest.mark.parametrize(
    ("name", "incoming_pod", "existing", "nodes", "failed", "cluster", "want"), CASES, ids=[c[0] for c in CASES]
)
def test_score(
    name: str, incoming_pod: Pod, existing: list[Pod], nodes: list[Node], failed: list[Node], cluster: Any, want: list[int]
) -> None:
    assert run_scores(incoming_pod, existing, nodes, failed, cluster) == want


# Not upstream tables: the hand-worked raw scores behind the cases above, with Go's float math.
@pytest.mark.parametrize(
    ("size", "count", "max_skew", "want"),
    [
        (4, 2, 1, 4),  # log(6)=1.79 * 2 = 3.58 -> 4
        (4, 1, 2, 3),  # 1.79 + 1 = 2.79 -> 3
        (2, 4, 1, 6),  # log(4)=1.386 * 4 = 5.545 -> 6
        (0, 1, 1, 1),  # log(2)=0.693 -> 1
        (1, 0, 3, 2),  # 0 + 2
    ],
    ids=["2-pods-of-4-domains", "maxSkew-2", "4-pods-of-2-domains", "no-domains", "no-pods-maxSkew-3"],
)
def test_raw_score_arithmetic(size: int, count: int, max_skew: int, want: int) -> None:
    weight = topology_normalizing_weight(size)
    assert round_half_away(count * weight + (max_skew - 1)) == want


@pytest.mark.parametrize(
    ("value", "want"),
    [(0.5, 1), (1.5, 2), (2.5, 3), (-0.5, -1), (-2.5, -3), (0.49999999999999994, 0), (2.4999999, 2), (0.0, 0)],
    ids=["0.5", "1.5", "2.5", "-0.5", "-2.5", "just-below-half", "2.4999999", "zero"],
)
def test_round_half_away_from_zero(value: float, want: int) -> None:
    assert round_half_away(value) == want
    assert round_half_away_array(np.asarray([value])).tolist() == [want]


def test_pre_score_skips_without_soft_constraints() -> None:
    pl, snap = setup(hosts("node-a"), [], args=SYSTEM_ARGS)
    state = CycleState()
    only_hard = incoming(spread(1, HOSTNAME, "DoNotSchedule", FOO))
    assert pl.pre_score(state, only_hard, snap.node_infos).code == Code.SKIP
    # System defaults need a selector from Services/controllers: none without a cluster backend.
    assert pl.pre_score(state, pod("p", {"foo": ""}), snap.node_infos).code == Code.SKIP


def test_pre_score_skips_without_nodes() -> None:
    pl, _snap = setup([], [], args=SYSTEM_ARGS)
    assert pl.pre_score(CycleState(), incoming(spread(1, HOSTNAME, SA, FOO)), []).code == Code.SKIP


def test_system_defaults_keep_hostname_spreading_on_nodes_without_zone() -> None:
    # Nodes lacking the zone label are not ignored under system defaulting; node-c has one.
    nodes = [
        node("node-a", {HOSTNAME: "node-a"}),
        node("node-b", {HOSTNAME: "node-b"}),
        node("node-c", {HOSTNAME: "node-c", ZONE: "z1"}),
    ]
    cluster = FakeCluster(services=[service({"foo": ""})])
    got = run_scores(pod("p", {"foo": ""}), foo_pods("node-a", "node-a", "node-c"), nodes, [], cluster)
    # hostname weight log(5), zone domains {"", "z1"} weight log(4); zone "" counts pods of label-less nodes.
    raw_a = round_half_away(2 * topology_normalizing_weight(3) + 2)
    raw_b = round_half_away(0 * topology_normalizing_weight(3) + 2)
    raw_c = round_half_away(1 * topology_normalizing_weight(3) + 2 + 1 * topology_normalizing_weight(2) + 4)
    top, low = max(raw_a, raw_b, raw_c), min(raw_a, raw_b, raw_c)
    assert got == [100 * (top + low - r) // top for r in (raw_a, raw_b, raw_c)]


ZONE = "topology.kubernetes.io/zone"


def test_normalize_score_needs_the_pre_score_node_count() -> None:
    pl, snap = setup(hosts("node-a", "node-b"), [], args=SYSTEM_ARGS)
    state = CycleState()
    assert pl.pre_score(state, incoming(spread(1, HOSTNAME, SA, FOO)), snap.node_infos).success
    assert pl.normalize_score(state, pod("p"), np.zeros(3, dtype=np.int64)).code == Code.ERROR


def test_score_without_pre_score_is_an_error() -> None:
    pl, snap = setup(hosts("node-a"), [], args=SYSTEM_ARGS)
    _, status = pl.score(CycleState(), incoming(spread(1, HOSTNAME, SA, FOO)), snap.node_infos[0])
    assert status.code == Code.ERROR
    assert status.message == 'reading "PreScorePodTopologySpread" from cycleState: not found'
