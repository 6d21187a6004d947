"""PreFilter and Filter of PodTopologySpread, ported from upstream's table tests."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.api.objects import Node, Pod
from scheduler.framework.types import Code, CycleState
from scheduler.plugins.podtopologyspread.common import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
)
from tests.plugins.podtopologyspread.helpers import (
    BAR,
    FOO,
    TAINTS,
    filter_all,
    node,
    node_affinity,
    pod,
    setup,
    spread,
)

OK = Code.SUCCESS
NO = Code.UNSCHEDULABLE
NEVER = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
DNS = "DoNotSchedule"


def zone_nodes(**extra: dict[str, str]) -> list[Node]:
    """node-a/node-b in zone1, node-x/node-y in zone2, each with a `node` label."""
    out = []
    for name, zone in (("node-a", "zone1"), ("node-b", "zone1"), ("node-x", "zone2"), ("node-y", "zone2")):
        out.append(node(name, {"zone": zone, "node": name, **extra.get(name, {})}))
    return out


def foo_pods(*placements: str, **kwargs: Any) -> list[Pod]:
    """Pods labelled foo, named p-<node letter><n>, on the given nodes."""
    seen: dict[str, int] = {}
    out = []
    for where in placements:
        seen[where] = seen.get(where, 0) + 1
        out.append(pod(f"p-{where[-1]}{seen[where]}", {"foo": ""}, on=where, **kwargs))
    return out


SPREAD_2103 = foo_pods("node-a", "node-a", "node-b", "node-y", "node-y", "node-y")
ABC = [node("node-a", {"node": "node-a"}), node("node-b", {"node": "node-b"}), node("node-c", {"node": "node-c"})]
FOO_NODES = [
    node("node-a", {"node": "node-a", "foo": ""}),
    node("node-b", {"node": "node-b", "foo": ""}),
    node("node-x", {"node": "node-x", "foo": ""}),
    node("node-y", {"node": "node-y"}),
]
TAINTED_Y = [
    node("node-a", {"node": "node-a", "foo": ""}),
    node("node-b", {"node": "node-b", "foo": ""}),
    node("node-x", {"node": "node-x", "foo": ""}),
    node("node-y", {"node": "node-y"}, taints=TAINTS),
]
ONE_EACH_ABY = [
    pod("p-b1", {"foo": ""}, on="node-a"),
    pod("p-b2", {"foo": ""}, on="node-b"),
    pod("p-y1", {"foo": ""}, on="node-y"),
]


def incoming(*constraints: dict[str, Any], labels: dict[str, str] | None = None, **kwargs: Any) -> Pod:
    """The pod to schedule."""
    return pod("p", {"foo": ""} if labels is None else labels, constraints=list(constraints), **kwargs)


# Ported from kubernetes/kubernetes pkg/scheduler/framework/plugins/podtopologyspread/filtering_test.go
# (TestSingleConstraint).
SINGLE = [
    (
        "no existing pods",
        incoming(spread(1, "zone", DNS, FOO)),
        zone_nodes(),
        [],
        {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK},
    ),
    (
        "no existing pods, incoming pod doesn't match itself",
        incoming(spread(1, "zone", DNS, BAR)),
        zone_nodes(),
        [],
        {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK},
    ),
    (
        "existing pods in a different namespace do not count",
        incoming(spread(1, "zone", DNS, FOO)),
        zone_nodes(),
        [
            pod("p-a1", {"foo": ""}, on="node-a", namespace="ns1"),
            pod("p-b1", {"foo": ""}, on="node-a", namespace="ns2"),
            pod("p-x1", {"foo": ""}, on="node-x"),
            pod("p-y1", {"foo": ""}, on="node-y"),
        ],
        {"node-a": OK, "node-b": OK, "node-x": NO, "node-y": NO},
    ),
    (
        "existing pods do not match null selector",
        incoming(spread(1, "zone", DNS, None)),
        zone_nodes(),
        foo_pods("node-x", "node-y"),
        {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK},
    ),
    (
        "pods spread across zones as 3/3, all nodes fit",
        incoming(spread(1, "zone", DNS, FOO)),
        zone_nodes(),
        SPREAD_2103,
        {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK},
    ),
    (
        "pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
        incoming(spread(1, "zone", DNS, FOO)),
        [
            node("node-a", {"zone": "zone1", "node": "node-a"}),
            node("node-b", {"zon": "zone1", "node": "node-b"}),
            node("node-x", {"zone": "zone2", "node": "node-x"}),
            node("node-y", {"zone": "zone2", "node": "node-y"}),
        ],
        foo_pods("node-a", "node-b", "node-x", "node-y"),
        {"node-a": OK, "node-b": NEVER, "node-x": NO, "node-y": NO},
    ),
    (
        "pod cannot be scheduled as all nodes don't have label 'rack'",
        incoming(spread(1, "rack", DNS, FOO)),
        [node("node-a", {"zone": "zone1", "node": "node-a"}), node("node-x", {"zone": "zone2", "node": "node-x"})],
        [],
        {"node-a": NEVER, "node-x": NEVER},
    ),
    (
        "pods spread across nodes as 2/1/0/3, only node-x fits",
        incoming(spread(1, "node", DNS, FOO)),
        zone_nodes(),
        SPREAD_2103,
        {"node-a": NO, "node-b": NO, "node-x": OK, "node-y": NO},
    ),
    (
        "pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
        incoming(spread(2, "node", DNS, FOO)),
        zone_nodes(),
        SPREAD_2103,
        {"node-a": NO, "node-b": OK, "node-x": OK, "node-y": NO},
    ),
    (
        "pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
        incoming(spread(1, "node", DNS, FOO), labels={"bar": ""}),
        zone_nodes(),
        SPREAD_2103,
        {"node-a": NO, "node-b": OK, "node-x": OK, "node-y": NO},
    ),
    (
        "incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits",
        incoming(spread(1, "node", DNS, FOO), affinity=node_affinity("node", "In", ["node-a", "node-y"])),
        zone_nodes(),
        SPREAD_2103,
        {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": NO},
    ),
    (
        "terminating Pods should be excluded",
        incoming(spread(1, "node", DNS, FOO)),
        [node("node-a", {"node": "node-a"}), node("node-b", {"node": "node-b"})],
        [pod("p-a", {"foo": ""}, on="node-a", terminating=True), pod("p-b", {"foo": ""}, on="node-b")],
        {"node-a": OK, "node-b": NO},
    ),
    (
        "incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits",
        incoming(spread(1, "zone", DNS, FOO), affinity=node_affinity("node", "NotIn", ["node-b"])),
        zone_nodes(),
        foo_pods("node-b", "node-b", "node-y"),
        {"node-a": OK, "node-b": OK, "node-x": NO, "node-y": NO},
    ),
    (
        "pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < minDomains, then the third node fits",
        incoming(spread(2, "node", DNS, FOO, min_domains=4)),
        ABC,
        foo_pods("node-a", "node-a", "node-b", "node-b", "node-c"),
        {"node-a": NO, "node-b": NO, "node-c": OK},
    ),
    (
        "pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > minDomains, then the all nodes fit",
        incoming(spread(2, "node", DNS, FOO, min_domains=2)),
        ABC,
        foo_pods("node-a", "node-a", "node-b", "node-b", "node-c"),
        {"node-a": OK, "node-b": OK, "node-c": OK},
    ),
    (
        "pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains, then the third and fourth nodes fit",
        incoming(spread(2, "zone", DNS, FOO, min_domains=3)),
        zone_nodes(),
        foo_pods("node-a", "node-b", "node-y"),
        {"node-a": NO, "node-b": NO, "node-x": OK, "node-y": OK},
    ),
    (
        "pods spread across zone as 2/1, maxSkew is 2 and the number of domains > minDomains, then the all nodes fit",
        incoming(spread(2, "zone", DNS, FOO, min_domains=1)),
        zone_nodes(),
        foo_pods("node-a", "node-b", "node-y"),
        {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK},
    ),
    (
        "NodeAffinityPolicy honored with labelSelectors",
        incoming(spread(1, "node", DNS, FOO), node_selector={"foo": ""}),
        FOO_NODES,
        ONE_EACH_ABY,
        {"node-a": NO, "node-b": NO, "node-x": OK, "node-y": OK},
    ),
    (
        "NodeAffinityPolicy ignored with labelSelectors",
        incoming(spread(1, "node", DNS, FOO, affinity_policy="Ignore"), node_selector={"foo": ""}),
        FOO_NODES,
        ONE_EACH_ABY,
        {"node-a": NO, "node-b": NO, "node-x": OK, "node-y": NO},
    ),
    (
        "NodeAffinityPolicy honored with nodeAffinity",
        incoming(spread(1, "node", DNS, FOO), affinity=node_affinity("foo", "In", [""])),
        FOO_NODES,
        ONE_EACH_ABY,
        {"node-a": NO, "node-b": NO, "node-x": OK, "node-y": OK},
    ),
    (
        "NodeAffinityPolicy ignored with nodeAffinity",
        incoming(spread(1, "node", DNS, FOO, affinity_policy="Ignore"), affinity=node_affinity("foo", "In", [""])),
        FOO_NODES,
        ONE_EACH_ABY,
        {"node-a": NO, "node-b": NO, "node-x": OK, "node-y": NO},
    ),
    (
        "NodeTaintsPolicy honored",
        incoming(spread(1, "node", DNS, FOO, taints_policy="Honor")),
        TAINTED_Y,
        ONE_EACH_ABY,
        {"node-a": NO, "node-b": NO, "node-x": OK, "node-y": OK},
    ),
    (
        "NodeTaintsPolicy ignored",
        incoming(spread(1, "node", DNS, FOO)),
        TAINTED_Y,
        ONE_EACH_ABY,
        {"node-a": NO, "node-b": NO, "node-x": OK, "node-y": NO},
    ),
    (
        "NodeTaintsPolicy honored, but the pod tolerates the taint",
        incoming(
            spread(1, "node", DNS, FOO, taints_policy="Honor"),
            tolerations=[{"key": "node.kubernetes.io/unschedulable", "operator": "Exists"}],
        ),
        TAINTED_Y,
        ONE_EACH_ABY,
        {"node-a": NO, "node-b": NO, "node-x": OK, "node-y": NO},
    ),
    (
        # Not upstream: matchLabelKeys narrows the selector to pods sharing the incoming pod's value.
        "matchLabelKeys ANDed with the selector",
        incoming(spread(1, "node", DNS, FOO, match_label_keys=["rev"]), labels={"foo": "", "rev": "1"}),
        ABC,
        [
            pod("p-a1", {"foo": "", "rev": "1"}, on="node-a"),
            pod("p-b1", {"foo": "", "rev": "2"}, on="node-b"),
            pod("p-b2", {"foo": "", "rev": "2"}, on="node-b"),
        ],
        {"node-a": NO, "node-b": OK, "node-c": OK},
    ),
    (
        # Not upstream: an empty (non-nil) selector counts every pod of the namespace (#141340).
        "empty selector counts all pods of the namespace",
        incoming(spread(1, "node", DNS, {})),
        ABC,
        [pod("p-a1", {}, on="node-a"), pod("p-a2", {}, on="node-a"), pod("p-b1", {}, on="node-b")],
        {"node-a": NO, "node-b": NO, "node-c": OK},
    ),
]

# Ported from kubernetes/kubernetes pkg/scheduler/framework/plugins/podtopologyspread/filtering_test.go
# (TestMultipleConstraints).
MULTIPLE = [
    (
        "two Constraints on zone and node, spreads = [3/3, 2/1/0/3]",
        incoming(spread(1, "zone", DNS, FOO), spread(1, "node", DNS, FOO)),
        zone_nodes(),
        SPREAD_2103,
        {"node-a": NO, "node-b": NO, "node-x": OK, "node-y": NO},
    ),
    (
        "two Constraints on zone and node, spreads = [3/4, 2/1/0/4]",
        incoming(spread(1, "zone", DNS, FOO), spread(1, "node", DNS, FOO)),
        zone_nodes(),
        foo_pods("node-a", "node-a", "node-b", "node-y", "node-y", "node-y", "node-y"),
        {"node-a": NO, "node-b": NO, "node-x": NO, "node-y": NO},
    ),
    (
        "Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]",
        incoming(spread(1, "zone", DNS, FOO), spread(1, "node", DNS, BAR), labels={"foo": "", "bar": ""}),
        zone_nodes(),
        [pod("p-a1", {"foo": ""}, on="node-a"), pod("p-y1", {"bar": ""}, on="node-y")],
        {"node-a": NO, "node-b": NO, "node-x": OK, "node-y": NO},
    ),
    (
        "Constraints hold different labelSelectors, spreads = [1/0, 0/0/1/1]",
        incoming(spread(1, "zone", DNS, FOO), spread(1, "node", DNS, BAR), labels={"foo": "", "bar": ""}),
        zone_nodes(),
        [
            pod("p-a1", {"foo": ""}, on="node-a"),
            pod("p-x1", {"bar": ""}, on="node-x"),
            pod("p-y1", {"bar": ""}, on="node-y"),
        ],
        {"node-a": NO, "node-b": NO, "node-x": NO, "node-y": NO},
    ),
    (
        "Constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]",
        incoming(spread(1, "zone", DNS, FOO), spread(1, "node", DNS, BAR), labels={"foo": "", "bar": ""}),
        zone_nodes(),
        [
            pod("p-a1", {"foo": ""}, on="node-a"),
            pod("p-a2", {"foo": "", "bar": ""}, on="node-a"),
            pod("p-y1", {"foo": ""}, on="node-y"),
            pod("p-y2", {"foo": "", "bar": ""}, on="node-y"),
            pod("p-y3", {"foo": ""}, on="node-y"),
        ],
        {"node-a": NO, "node-b": OK, "node-x": NO, "node-y": NO},
    ),
    (
        "Constraints hold different labelSelectors but pod doesn't match itself on 'zone' constraint",
        incoming(spread(1, "zone", DNS, FOO), spread(1, "node", DNS, BAR), labels={"bar": ""}),
        zone_nodes(),
        [
            pod("p-a1", {"foo": ""}, on="node-a"),
            pod("p-x1", {"bar": ""}, on="node-x"),
            pod("p-y1", {"bar": ""}, on="node-y"),
        ],
        {"node-a": OK, "node-b": OK, "node-x": NO, "node-y": NO},
    ),
    (
        "two Constraints on zone and node, absence of label 'node' on node-x, spreads = [1/1, 1/0/0/1]",
        incoming(spread(1, "zone", DNS, FOO), spread(1, "node", DNS, FOO)),
        [
            node("node-a", {"zone": "zone1", "node": "node-a"}),
            node("node-b", {"zone": "zone1", "node": "node-b"}),
            node("node-x", {"zone": "zone2"}),
            node("node-y", {"zone": "zone2", "node": "node-y"}),
        ],
        [pod("p-a1", {"foo": ""}, on="node-a"), pod("p-y3", {"foo": ""}, on="node-y")],
        {"node-a": NO, "node-b": OK, "node-x": NEVER, "node-y": NO},
    ),
    (
        "two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
        incoming(
            spread(1, "zone", DNS, FOO),
            spread(1, "node", DNS, FOO, affinity_policy="Ignore"),
            node_selector={"foo": ""},
        ),
        zone_nodes(**{"node-a": {"foo": ""}, "node-b": {"foo": ""}, "node-x": {"foo": ""}}),
        foo_pods("node-a", "node-b", "node-y"),
        {"node-a": NO, "node-b": NO, "node-x": OK, "node-y": NO},
    ),
    (
        "two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
        incoming(spread(1, "zone", DNS, FOO, taints_policy="Honor"), spread(1, "node", DNS, FOO)),
        [
            node("node-a", {"zone": "zone1", "node": "node-a", "foo": ""}),
            node("node-b", {"zone": "zone1", "node": "node-b", "foo": ""}),
            node("node-x", {"zone": "zone2", "node": "node-x", "foo": ""}),
            node("node-y", {"zone": "zone2", "node": "node-y"}, taints=TAINTS),
        ],
        foo_pods("node-a", "node-b", "node-y"),
        {"node-a": NO, "node-b": NO, "node-x": OK, "node-y": NO},
    ),
    (
        "two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
        incoming(spread(1, "zone", DNS, FOO), spread(1, "node", DNS, FOO), node_selector={"foo": ""}),
        [
            node("node-a", {"zone": "zone1", "node": "node-a", "foo": ""}),
            node("node-b", {"zone": "zone1", "node": "node-b"}),
            node("node-x", {"zone": "zone2", "node": "node-x", "foo": ""}),
            node("node-y", {"zone": "zone2", "node": "node-y", "foo": ""}, taints=TAINTS),
        ],
        foo_pods("node-a", "node-b", "node-y"),
        {"node-a": NO, "node-b": OK, "node-x": OK, "node-y": NO},
    ),
    (
        "two node inclusion Constraints, zone: honor/honor, node: ignore/ignore",
        incoming(
            spread(1, "zone", DNS, FOO, taints_policy="Honor"),
            spread(1, "node", DNS, FOO, affinity_policy="Ignore"),
            node_selector={"foo": ""},
        ),
        [
            node("node-a", {"zone": "zone1", "node": "node-a", "foo": ""}),
            node("node-b", {"zone": "zone1", "node": "node-b"}),
            node("node-x", {"zone": "zone2", "node": "node-x", "foo": ""}),
            node("node-y", {"zone": "zone2", "node": "node-y", "foo": ""}, taints=TAINTS),
        ],
        foo_pods("node-a", "node-b", "node-y"),
        {"node-a": NO, "node-b": NO, "node-x": OK, "node-y": NO},
    ),
]

_REASON = {NO: (ERR_REASON_CONSTRAINTS_NOT_MATCH,), NEVER: (ERR_REASON_NODE_LABEL_NOT_MATCH,), OK: ()}


@pytest.mark.parametrize(
    ("name", "incoming_pod", "nodes", "existing", "want"), SINGLE + MULTIPLE, ids=[c[0] for c in SINGLE + MULTIPLE]
)
def test_filter(name: str, incoming_pod: Pod, nodes: list[Node], existing: list[Pod], want: dict[str, Code]) -> None:
    pl, snap = setup(nodes, existing)
    state = CycleState()
    _, status = pl.pre_filter(state, incoming_pod, snap.node_infos)
    assert status.success, status
    got = filter_all(pl, snap, incoming_pod, state)
    assert {n: s.code for n, s in got.items()} == want
    assert {n: s.reasons for n, s in got.items()} == {n: _REASON[c] for n, c in want.items()}


def test_filter_without_pre_filter_is_an_error() -> None:
    pl, snap = setup([node("node-a", {"zone": "z"})], [])
    status = pl.filter(CycleState(), incoming(spread(1, "zone", DNS, FOO)), snap.node_infos[0])
    assert status.code == Code.ERROR
    assert status.message == 'reading "PreFilterPodTopologySpread" from cycleState: not found'


@pytest.mark.parametrize(
    ("name", "incoming_pod"),
    [
        ("no constraints, list defaulting", pod("p", {"foo": ""})),
        ("only ScheduleAnyway constraints", incoming(spread(1, "zone", "ScheduleAnyway", FOO))),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_pre_filter_skips_without_hard_constraints(name: str, incoming_pod: Pod) -> None:
    pl, snap = setup(zone_nodes(), [])
    state = CycleState()
    _, status = pl.pre_filter(state, incoming_pod, snap.node_infos)
    assert status.code == Code.SKIP
    assert state.get("PreFilterPodTopologySpread") is None
