"""InterPodAffinity PreFilter/Filter, ported from upstream's tables.

Upstream namespace "" is "default" here (our parser defaults it). Each run also checks that
`filter_batch` agrees with `filter` node by node (see `_helpers.run_filter`).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from scheduler.api.objects import Node, Pod
from scheduler.framework.nodeinfo import PodInfo
from scheduler.framework.snapshot import Snapshot
from scheduler.framework.types import Code, CycleState
from scheduler.plugins.interpodaffinity import InterPodAffinity, filtering
from scheduler.plugins.interpodaffinity.filtering import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH as AFFINITY,
)
from scheduler.plugins.interpodaffinity.filtering import (
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH as ANTI,
)
from scheduler.plugins.interpodaffinity.filtering import (
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH as EXISTING,
)
from tests.plugins.interpodaffinity._helpers import (
    TEAM_NAMESPACES,
    affinity,
    multi_term,
    node,
    pod,
    run_filter,
    setup,
    team_selector,
    term,
)

OK = (Code.SUCCESS, ())
NO_AFFINITY = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (AFFINITY,))
NO_ANTI = (Code.UNSCHEDULABLE, (ANTI,))
NO_EXISTING = (Code.UNSCHEDULABLE, (EXISTING,))
SKIP = "skip"

POD_LABEL = {"service": "securityscan"}
POD_LABEL2 = {"security": "S1"}
NODE1 = node("node1", {"region": "r1", "zone": "z11"})


def _existing() -> Pod:
    return pod(POD_LABEL, node="node1")


# pkg/scheduler/framework/plugins/interpodaffinity/filtering_test.go: TestRequiredAffinitySingleNode
SINGLE_NODE = [
    ("no required pod affinity, no existing pods", pod(), [], SKIP),
    (
        "PodAffinity In operator matches the existing pod",
        pod(POD_LABEL2, aff=affinity([term("service", "In", ["securityscan", "value2"])])),
        [_existing()],
        OK,
    ),
    (
        "PodAffinity NotIn operator matches the existing pod",
        pod(POD_LABEL2, aff=affinity([term("service", "NotIn", ["securityscan3", "value3"])])),
        [_existing()],
        OK,
    ),
    (
        # Upstream leaves topologyKey empty; ours must be set, and the outcome is the same.
        "PodAffinity does not match because of a different namespace",
        pod(POD_LABEL2, aff=affinity([term("service", "In", ["securityscan", "value2"], namespaces=["DiffNameSpace"])])),
        [pod(POD_LABEL, node="node1", namespace="ns")],
        NO_AFFINITY,
    ),
    (
        "PodAffinity labelSelector does not match the existing pod",
        pod(POD_LABEL, aff=affinity([term("service", "In", ["antivirusscan", "value2"])])),
        [_existing()],
        NO_AFFINITY,
    ),
    (
        "different label operators in multiple required terms",
        pod(
            POD_LABEL2,
            aff=affinity(
                [
                    multi_term(
                        [{"key": "service", "operator": "Exists"}, {"key": "wrongkey", "operator": "DoesNotExist"}],
                        "region",
                    ),
                    multi_term(
                        [
                            {"key": "service", "operator": "In", "values": ["securityscan"]},
                            {"key": "service", "operator": "NotIn", "values": ["WrongValue"]},
                        ],
                        "region",
                    ),
                ]
            ),
        ),
        [_existing()],
        OK,
    ),
    (
        "matchExpressions are ANDed: one item does not match",
        pod(
            POD_LABEL2,
            aff=affinity(
                [
                    multi_term(
                        [{"key": "service", "operator": "Exists"}, {"key": "wrongkey", "operator": "DoesNotExist"}],
                        "region",
                    ),
                    multi_term(
                        [
                            {"key": "service", "operator": "In", "values": ["securityscan2"]},
                            {"key": "service", "operator": "NotIn", "values": ["WrongValue"]},
                        ],
                        "region",
                    ),
                ]
            ),
        ),
        [_existing()],
        NO_AFFINITY,
    ),
    (
        "satisfies PodAffinity and PodAntiAffinity with the existing pod",
        pod(
            POD_LABEL2,
            aff=affinity(
                [term("service", "In", ["securityscan", "value2"])],
                anti_required=[term("service", "In", ["antivirusscan", "value2"], topology="node")],
            ),
        ),
        [_existing()],
        OK,
    ),
    (
        "satisfies PodAffinity, PodAntiAffinity and the existing pod's anti-affinity",
        pod(
            POD_LABEL2,
            aff=affinity(
                [term("service", "In", ["securityscan", "value2"])],
                anti_required=[term("service", "In", ["antivirusscan", "value2"], topology="node")],
            ),
        ),
        [
            pod(
                POD_LABEL,
                node="node1",
                aff=affinity(anti_required=[term("service", "In", ["antivirusscan", "value2"], topology="node")]),
            )
        ],
        OK,
    ),
    (
        "satisfies PodAffinity but not PodAntiAffinity",
        pod(
            POD_LABEL2,
            aff=affinity(
                [term("service", "In", ["securityscan", "value2"])],
                anti_required=[term("service", "In", ["securityscan", "value2"], topology="zone")],
            ),
        ),
        [_existing()],
        NO_ANTI,
    ),
    (
        "satisfies PodAffinity and PodAntiAffinity but not the existing pod's anti-affinity",
        pod(
            POD_LABEL,
            aff=affinity(
                [term("service", "In", ["securityscan", "value2"])],
                anti_required=[term("service", "In", ["antivirusscan", "value2"], topology="node")],
            ),
        ),
        [
            pod(
                POD_LABEL,
                node="node1",
                aff=affinity(anti_required=[term("service", "In", ["securityscan", "value2"], topology="zone")]),
            )
        ],
        NO_EXISTING,
    ),
    (
        "pod matches neither its own NotIn term nor an existing pod (the pod's node is unknown)",
        pod(POD_LABEL, aff=affinity([term("service", "NotIn", ["securityscan", "value2"])])),
        [pod({"service": "securityscan"}, node="node2")],
        NO_AFFINITY,
    ),
    (
        "existing pod's anti-affinity is respected when the pod has none: violated",
        pod(POD_LABEL),
        [
            pod(
                POD_LABEL,
                node="node1",
                aff=affinity(anti_required=[term("service", "In", ["securityscan", "value2"], topology="zone")]),
            )
        ],
        NO_EXISTING,
    ),
    (
        "existing pod's anti-affinity is respected when the pod has none: satisfied (Skip)",
        pod(POD_LABEL),
        [
            pod(
                POD_LABEL,
                node="node1",
                aff=affinity(anti_required=[term("service", "NotIn", ["securityscan", "value2"], topology="zone")]),
            )
        ],
        SKIP,
    ),
    (
        "satisfies the existing pod's anti-affinity but not its own anti-affinity",
        pod(POD_LABEL, aff=affinity(anti_required=[term("service", "Exists"), term("security", "Exists")])),
        [pod(POD_LABEL2, node="node1", aff=affinity(anti_required=[term("security", "Exists", topology="zone")]))],
        NO_ANTI,
    ),
    (
        "anti-affinity symmetry a1: partial match on terms",
        pod(
            POD_LABEL,
            aff=affinity(anti_required=[term("service", "Exists", topology="zone"), term("security", "Exists", topology="zone")]),
        ),
        [pod(POD_LABEL2, node="node1", aff=affinity(anti_required=[term("security", "Exists", topology="zone")]))],
        NO_ANTI,
    ),
    (
        "anti-affinity symmetry a2: partial match on terms",
        pod(POD_LABEL2, aff=affinity(anti_required=[term("security", "Exists", topology="zone")])),
        [
            pod(
                POD_LABEL,
                node="node1",
                aff=affinity(
                    anti_required=[
                        term("service", "Exists", topology="zone"),
                        term("security", "Exists", topology="zone"),
                    ]
                ),
            )
        ],
        NO_EXISTING,
    ),
    (
        "anti-affinity symmetry b1: partial match on terms",
        pod(
            {"abc": "", "xyz": ""},
            aff=affinity(anti_required=[term("abc", "Exists", topology="zone"), term("def", "Exists", topology="zone")]),
        ),
        [
            pod(
                {"def": "", "xyz": ""},
                node="node1",
                aff=affinity(anti_required=[term("abc", "Exists", topology="zone"), term("def", "Exists", topology="zone")]),
            )
        ],
        NO_ANTI,
    ),
    (
        "anti-affinity symmetry b2: partial match on terms",
        pod(
            {"def": "", "xyz": ""},
            aff=affinity(anti_required=[term("abc", "Exists", topology="zone"), term("def", "Exists", topology="zone")]),
        ),
        [
            pod(
                {"abc": "", "xyz": ""},
                node="node1",
                aff=affinity(anti_required=[term("abc", "Exists", topology="zone"), term("def", "Exists", topology="zone")]),
            )
        ],
        NO_ANTI,
    ),
    (
        "affinity with NamespaceSelector",
        pod(
            POD_LABEL2,
            aff=affinity([term("service", "In", ["securityscan", "value2"], namespace_selector=team_selector("team1"))]),
        ),
        [pod(POD_LABEL, node="node1", namespace="subteam1.team1")],
        OK,
    ),
    (
        "affinity with non-matching NamespaceSelector",
        pod(
            POD_LABEL2,
            aff=affinity([term("service", "In", ["securityscan", "value2"], namespace_selector=team_selector("team1"))]),
        ),
        [pod(POD_LABEL, node="node1", namespace="subteam1.team2")],
        NO_AFFINITY,
    ),
    (
        "anti-affinity with matching NamespaceSelector",
        pod(
            POD_LABEL2,
            namespace="subteam1.team1",
            aff=affinity(
                anti_required=[
                    term(
                        "service",
                        "In",
                        ["securityscan", "value2"],
                        topology="zone",
                        namespace_selector=team_selector("team1"),
                    )
                ]
            ),
        ),
        [pod(POD_LABEL, node="node1", namespace="subteam2.team1")],
        NO_ANTI,
    ),
    (
        "anti-affinity with matching all NamespaceSelector",
        pod(
            POD_LABEL2,
            namespace="subteam1.team1",
            aff=affinity(
                anti_required=[term("service", "In", ["securityscan", "value2"], topology="zone", namespace_selector={})]
            ),
        ),
        [pod(POD_LABEL, node="node1", namespace="subteam2.team1")],
        NO_ANTI,
    ),
    (
        "anti-affinity with non-matching NamespaceSelector",
        pod(
            POD_LABEL2,
            namespace="subteam1.team1",
            aff=affinity(
                anti_required=[
                    term(
                        "service",
                        "In",
                        ["securityscan", "value2"],
                        topology="zone",
                        namespace_selector=team_selector("team1"),
                    )
                ]
            ),
        ),
        [pod(POD_LABEL, node="node1", namespace="subteam1.team2")],
        OK,
    ),
]


@pytest.mark.parametrize(("incoming", "pods", "want"), [c[1:] for c in SINGLE_NODE], ids=[c[0] for c in SINGLE_NODE])
def test_required_affinity_single_node(incoming: Pod, pods: list[Pod], want: object) -> None:
    plugin, snap = setup([NODE1], pods, TEAM_NAMESPACES)
    pre, verdicts = run_filter(plugin, snap, incoming)
    if want == SKIP:
        assert pre.code == Code.SKIP
        return
    assert pre.success
    assert verdicts == [want]


CHINA = {"region": "China"}
CHINA_AZ1 = {"region": "China", "az": "az1"}
INDIA = {"region": "India"}
R1Z1 = {"region": "r1", "zone": "z1"}
R1Z2 = {"region": "r1", "zone": "z2"}


def _three(labels_a: dict[str, str], labels_b: dict[str, str], labels_c: dict[str, str]) -> list[Node]:
    return [node("nodeA", labels_a), node("nodeB", labels_b), node("nodeC", labels_c)]


def _two(labels_a: dict[str, str], labels_b: dict[str, str]) -> list[Node]:
    return [node("nodeA", labels_a), node("nodeB", labels_b)]


# pkg/scheduler/framework/plugins/interpodaffinity/filtering_test.go: TestRequiredAffinityMultipleNodes
MULTIPLE_NODES = [
    (
        "all nodes sharing the topology value of a node with a matching pod fit",
        pod(aff=affinity([term("foo", "In", ["bar"])])),
        [pod({"foo": "bar"}, node="nodeA")],
        _three(CHINA, CHINA_AZ1, INDIA),
        [OK, OK, NO_AFFINITY],
    ),
    (
        "first pod of a collection with affinity to itself is not blocked",
        pod(
            {"foo": "bar", "service": "securityscan"},
            aff=affinity([term("foo", "In", ["bar"], topology="zone"), term("service", "In", ["securityscan"], topology="zone")]),
        ),
        [pod({"foo": "bar"}, node="nodeA")],
        _two({"zone": "az1", "hostname": "h1"}, {"zone": "az2", "hostname": "h2"}),
        [OK, OK],
    ),
    (
        "first pod of a collection only fits nodes carrying the topology keys",
        pod(
            {"foo": "bar", "service": "securityscan"},
            aff=affinity([term("foo", "In", ["bar"], topology="zone"), term("service", "In", ["securityscan"], topology="zone")]),
        ),
        [pod({"foo": "bar"}, node="nodeA")],
        _two({"zoneLabel": "az1", "hostname": "h1"}, {"zoneLabel": "az2", "hostname": "h2"}),
        [NO_AFFINITY, NO_AFFINITY],
    ),
    (
        "anti-affinity: nodes sharing the region of a matching pod are excluded",
        pod(aff=affinity(anti_required=[term("foo", "In", ["abc"])])),
        [pod({"foo": "abc"}, node="nodeA")],
        _two({"region": "r1", "hostname": "nodeA"}, {"region": "r1", "hostname": "nodeB"}),
        [NO_ANTI, NO_ANTI],
    ),
    (
        "anti-affinity matches when any term matches",
        pod(aff=affinity(anti_required=[term("foo", "In", ["abc"]), term("service", "In", ["securityscan"], topology="zone")])),
        [pod({"foo": "abc", "service": "securityscan"}, node="nodeA")],
        _two(R1Z1, R1Z2),
        [NO_ANTI, NO_ANTI],
    ),
    (
        "anti-affinity: the other region still fits",
        pod(aff=affinity(anti_required=[term("foo", "In", ["abc"])])),
        [pod({"foo": "abc"}, node="nodeA")],
        _three(CHINA, CHINA_AZ1, INDIA),
        [NO_ANTI, NO_ANTI, OK],
    ),
    (
        "anti-affinity: a pod in another namespace does not count",
        pod({"foo": "123"}, namespace="NS1", aff=affinity(anti_required=[term("foo", "In", ["bar"])])),
        [
            pod({"foo": "bar"}, node="nodeA", namespace="NS1"),
            pod(node="nodeC", namespace="NS2", aff=affinity(anti_required=[term("foo", "In", ["123"])])),
        ],
        _three(CHINA, CHINA_AZ1, INDIA),
        [NO_ANTI, NO_ANTI, OK],
    ),
    (
        "existing pod's anti-affinity term with a topology key no node has (Skip)",
        pod({"foo": ""}),
        [pod(node="nodeA", aff=affinity(anti_required=[term("foo", "Exists", topology="invalid-node-label")]))],
        _two(R1Z1, R1Z1),
        SKIP,
    ),
    (
        "incoming pod's anti-affinity: the topology key is still checked",
        pod(node="nodeA", aff=affinity(anti_required=[term("foo", "Exists", topology="invalid-node-label")])),
        [pod({"foo": ""}, node="nodeA")],
        _two(R1Z1, R1Z1),
        [OK, OK],
    ),
    (
        "existing pods' anti-affinity: violated on all nodes",
        pod({"foo": "", "bar": ""}),
        [
            pod(node="nodeA", aff=affinity(anti_required=[term("foo", "Exists", topology="zone")])),
            pod(node="nodeA", aff=affinity(anti_required=[term("bar", "Exists", topology="region")])),
        ],
        _two(R1Z1, R1Z2),
        [NO_EXISTING, NO_EXISTING],
    ),
    (
        "incoming pod's anti-affinity: violates at least one term everywhere",
        pod(aff=affinity(anti_required=[term("foo", "Exists", topology="zone"), term("bar", "Exists", topology="region")])),
        [pod({"foo": ""}, node="nodeA"), pod({"bar": ""}, node="nodeB")],
        _two(R1Z1, R1Z2),
        [NO_ANTI, NO_ANTI],
    ),
    (
        "existing pod's anti-affinity: one term has an invalid topology key",
        pod({"foo": "", "bar": ""}),
        [
            pod(
                node="nodeA",
                aff=affinity(
                    anti_required=[
                        term("foo", "Exists", topology="invalid-node-label"),
                        term("bar", "Exists", topology="zone"),
                    ]
                ),
            )
        ],
        _two(R1Z1, R1Z2),
        [NO_EXISTING, OK],
    ),
    (
        "incoming pod's anti-affinity: one term has an invalid topology key",
        pod(
            aff=affinity(
                anti_required=[
                    term("foo", "Exists", topology="invalid-node-label"),
                    term("bar", "Exists", topology="zone"),
                ]
            )
        ),
        [pod({"foo": "", "bar": ""}, node="nodeA")],
        _two(R1Z1, R1Z2),
        [NO_ANTI, OK],
    ),
    (
        "existing pod's anti-affinity: all terms have valid topology keys",
        pod({"foo": "", "bar": ""}),
        [
            pod(
                node="nodeA",
                aff=affinity(anti_required=[term("foo", "Exists"), term("bar", "Exists", topology="zone")]),
            )
        ],
        _two(R1Z1, R1Z2),
        [NO_EXISTING, NO_EXISTING],
    ),
    (
        "incoming pod's anti-affinity: all terms have valid topology keys",
        pod(aff=affinity(anti_required=[term("foo", "Exists"), term("bar", "Exists", topology="zone")])),
        [pod({"foo": "", "bar": ""}, node="nodeA")],
        _two(R1Z1, R1Z2),
        [NO_ANTI, NO_ANTI],
    ),
    (
        "existing pods' anti-affinity: only nodeC is left",
        pod({"foo": "", "bar": ""}),
        [
            pod(
                node="nodeA",
                aff=affinity(anti_required=[term("foo", "Exists", topology="zone"), term("labelA", "Exists", topology="zone")]),
            ),
            pod(
                node="nodeB",
                aff=affinity(anti_required=[term("bar", "Exists", topology="zone"), term("labelB", "Exists", topology="zone")]),
            ),
        ],
        _three(R1Z1, R1Z2, {"region": "r1", "zone": "z3"}),
        [NO_EXISTING, NO_EXISTING, OK],
    ),
    (
        "incoming pod's affinity: all terms matched by one pod, topology keys checked after",
        pod(aff=affinity([term("foo", "Exists"), term("bar", "Exists", topology="zone")])),
        [pod({"foo": "", "bar": ""}, node="nodeA")],
        _two(R1Z1, R1Z1),
        [OK, OK],
    ),
    (
        "incoming pod's affinity: all terms must be matched by the same pod",
        pod(aff=affinity([term("foo", "Exists"), term("bar", "Exists", topology="zone")])),
        [pod({"foo": ""}, node="nodeA"), pod({"bar": ""}, node="nodeB")],
        _two(R1Z1, R1Z2),
        [NO_AFFINITY, NO_AFFINITY],
    ),
]


@pytest.mark.parametrize(
    ("incoming", "pods", "nodes", "want"), [c[1:] for c in MULTIPLE_NODES], ids=[c[0] for c in MULTIPLE_NODES]
)
def test_required_affinity_multiple_nodes(incoming: Pod, pods: list[Pod], nodes: list[Node], want: object) -> None:
    plugin, snap = setup(nodes, pods, {"NS1": {}})
    pre, verdicts = run_filter(plugin, snap, incoming)
    if want == SKIP:
        assert pre.code == Code.SKIP
        return
    assert pre.success
    assert verdicts == want


# filtering_test.go: TestPreFilterDisabled
def test_filter_without_pre_filter_state_is_an_error() -> None:
    plugin, snap = setup([NODE1], [])
    status = plugin.filter(CycleState(), pod(), snap.node_infos[0])
    assert status.code == Code.ERROR
    assert status.message == 'error reading "PreFilterInterPodAffinity" from cycleState: not found'
    batch = plugin.filter_batch(CycleState(), pod(), snap, snap.order)
    assert batch.codes.tolist() == [int(Code.ERROR)]
    assert batch.reasons(0) == (status.message,)


def test_terminating_pods_still_count() -> None:
    # Upstream keeps terminating pods in affinity accounting (kubernetes#112098 was not merged).
    victim = pod({"foo": "bar"}, node="nodeA")
    victim = victim.with_changes(meta=replace(victim.meta, deletion_timestamp=1.0))
    plugin, snap = setup(_two(R1Z1, R1Z2), [victim])
    _, verdicts = run_filter(plugin, snap, pod(aff=affinity(anti_required=[term("foo", "In", ["bar"], topology="zone")])))
    assert verdicts == [NO_ANTI, OK]


LABEL1 = {"region": "r1", "zone": "z11"}
LABEL2 = {"region": "r1", "zone": "z12"}
LABEL3 = {"region": "r2", "zone": "z21"}
FOO_BAR = {"foo": "bar"}
ANTI_FOO_BAR = [term("foo", "In", ["bar"])]
COMPLEX = [term("foo", "In", ["bar", "buzz"]), term("service", "NotIn", ["bar", "security", "test"], topology="zone")]


def _counts(state: filtering.PreFilterState) -> tuple[dict[tuple[str, str], int], ...]:
    return (state.existing_anti_affinity_counts, state.affinity_counts, state.anti_affinity_counts)


# filtering_test.go: TestPreFilterStateAddRemovePod
ADD_REMOVE = [
    (
        "anti-affinity counts after adding and removing a pod",
        pod(FOO_BAR, name="pending", aff=affinity(anti_required=ANTI_FOO_BAR)),
        [pod(FOO_BAR, node="nodeA"), pod(node="nodeC", aff=affinity(anti_required=ANTI_FOO_BAR))],
        pod(FOO_BAR, node="nodeB", name="added", aff=affinity(anti_required=ANTI_FOO_BAR)),
        {("region", "r1"): 2},
        {},
    ),
    (
        "complex anti-affinity counts after adding and removing a pod",
        pod(FOO_BAR, name="pending", aff=affinity(anti_required=COMPLEX)),
        [pod(FOO_BAR, node="nodeA"), pod(node="nodeC", aff=affinity(anti_required=ANTI_FOO_BAR))],
        pod(FOO_BAR, node="nodeA", name="added", aff=affinity(anti_required=COMPLEX)),
        {("region", "r1"): 2, ("zone", "z11"): 2, ("zone", "z21"): 1},
        {},
    ),
    (
        "affinity and anti-affinity counts after adding and removing a pod",
        pod(FOO_BAR, name="pending", aff=affinity(COMPLEX)),
        [pod(FOO_BAR, node="nodeA"), pod(node="nodeC", aff=affinity(COMPLEX, anti_required=ANTI_FOO_BAR))],
        pod(FOO_BAR, node="nodeA", name="added", aff=affinity(anti_required=COMPLEX)),
        {},
        {("region", "r1"): 2, ("zone", "z11"): 2},
    ),
]


@pytest.mark.parametrize(
    ("pending", "existing", "added", "want_anti", "want_affinity"),
    [c[1:] for c in ADD_REMOVE],
    ids=[c[0] for c in ADD_REMOVE],
)
def test_pre_filter_state_add_remove_pod(
    pending: Pod,
    existing: list[Pod],
    added: Pod,
    want_anti: dict[tuple[str, str], int],
    want_affinity: dict[tuple[str, str], int],
) -> None:
    nodes = [node("nodeA", LABEL1), node("nodeB", LABEL2), node("nodeC", LABEL3)]

    def state_of(pods: list[Pod]) -> tuple[CycleState, filtering.PreFilterState, InterPodAffinity, Snapshot]:
        plugin, snap = setup(nodes, pods)
        cycle = CycleState()
        _, status = plugin.pre_filter(cycle, pending, snap.node_infos)
        assert status.success
        return cycle, cycle.read(filtering.PRE_FILTER_STATE_KEY), plugin, snap

    _, all_pods_state, _, _ = state_of([*existing, added])
    cycle, state, plugin, snap = state_of(existing)
    original = state.clone()
    node_info = snap.get(added.node_name)
    assert node_info is not None
    assert plugin.add_pod(cycle, pending, PodInfo.of(added), node_info).success
    assert state.anti_affinity_counts == want_anti
    assert state.affinity_counts == want_affinity
    assert _counts(state) == _counts(all_pods_state)
    assert plugin.remove_pod(cycle, pending, PodInfo.of(added), node_info).success
    assert _counts(state) == _counts(original)


# filtering_test.go: TestPreFilterStateClone
def test_pre_filter_state_clone_is_independent() -> None:
    source = filtering.PreFilterState(
        PodInfo.of(pod()),
        {},
        {("name", "node1"): 1, ("name", "node2"): 1},
        {("name", "nodeA"): 1, ("name", "nodeC"): 2},
        {("name", "nodeN"): 3, ("name", "nodeM"): 1},
    )
    clone = source.clone()
    assert clone is not source
    assert _counts(clone) == _counts(source)
    clone.affinity_counts[("name", "nodeA")] = 5
    assert source.affinity_counts[("name", "nodeA")] == 1


def _host_pod(*keys: str) -> Pod:
    return pod(dict.fromkeys(keys, ""), node="nodeA")


HOST_A = [node("nodeA", {"hostname": "nodeA"})]


# filtering_test.go: TestGetTPMapMatchingIncomingAffinityAntiAffinity
INCOMING_COUNTS = [
    ("nil test", [], pod(), {}, {}),
    ("incoming pod without affinity/anti-affinity causes a no-op", [_host_pod("aaa")], pod(), {}, {}),
    (
        "no pod has label that violates incoming pod's affinity and anti-affinity",
        [_host_pod("bbb")],
        pod(
            aff=affinity([term("aaa", "Exists", topology="hostname")], anti_required=[term("aaa", "Exists", topology="hostname")])
        ),
        {},
        {},
    ),
    (
        "existing pod matches incoming pod's affinity and anti-affinity - single term case",
        [_host_pod("aaa")],
        pod(
            aff=affinity([term("aaa", "Exists", topology="hostname")], anti_required=[term("aaa", "Exists", topology="hostname")])
        ),
        {("hostname", "nodeA"): 1},
        {("hostname", "nodeA"): 1},
    ),
    (
        "existing pod matches incoming pod's affinity and anti-affinity - multiple terms case",
        [_host_pod("aaa", "bbb")],
        pod(
            aff=affinity(
                [term("aaa", "Exists", topology="hostname"), term("bbb", "Exists", topology="hostname")],
                anti_required=[term("aaa", "Exists", topology="hostname")],
            )
        ),
        {("hostname", "nodeA"): 2},
        {("hostname", "nodeA"): 1},
    ),
    (
        "existing pod not match incoming pod's affinity but matches anti-affinity",
        [_host_pod("aaa")],
        pod(
            aff=affinity(
                [term("aaa", "Exists", topology="hostname"), term("bbb", "Exists", topology="hostname")],
                anti_required=[term("aaa", "Exists", topology="hostname"), term("bbb", "Exists", topology="hostname")],
            )
        ),
        {},
        {("hostname", "nodeA"): 1},
    ),
    (
        "incoming pod's anti-affinity has more than one term - existing pod violates partial term - case 1",
        [_host_pod("aaa", "bbb")],
        pod(
            aff=affinity(
                [term("aaa", "Exists", topology="hostname"), term("ccc", "Exists", topology="hostname")],
                anti_required=[term("aaa", "Exists", topology="hostname"), term("ccc", "Exists", topology="hostname")],
            )
        ),
        {},
        {("hostname", "nodeA"): 1},
    ),
]


@pytest.mark.parametrize(
    ("existing", "incoming", "want_affinity", "want_anti"),
    [c[1:] for c in INCOMING_COUNTS],
    ids=[c[0] for c in INCOMING_COUNTS],
)
def test_incoming_affinity_counts(
    existing: list[Pod], incoming: Pod, want_affinity: dict[tuple[str, str], int], want_anti: dict[tuple[str, str], int]
) -> None:
    _, snap = setup(HOST_A, existing)
    info = filtering.incoming_pod_info(incoming, snap.namespaces)
    assert filtering.incoming_affinity_counts(info, snap.node_infos) == (want_affinity, want_anti)


def test_namespace_selector_is_merged_into_namespaces() -> None:
    incoming = pod(aff=affinity([term("a", "Exists", namespaces=["x"], namespace_selector=team_selector("team1"))]))
    info = filtering.incoming_pod_info(incoming, TEAM_NAMESPACES)
    merged = info.required_affinity_terms[0]
    assert merged.namespaces == frozenset({"x", "subteam1.team1", "subteam2.team1"})
    assert merged.namespace_selector is None
    everything = pod(aff=affinity([term("a", "Exists", namespace_selector={})]))
    kept = filtering.incoming_pod_info(everything, TEAM_NAMESPACES).required_affinity_terms[0]
    assert kept.namespace_selector is not None and kept.namespace_selector.empty


def test_existing_anti_affinity_reads_incoming_namespace_labels() -> None:
    # The existing pod's namespaceSelector is matched against the incoming pod's namespace labels;
    # an unknown namespace has no labels, so only selectors satisfied by no labels match it.
    existing = pod(
        {"x": "y"},
        node="nodeA",
        aff=affinity(
            anti_required=[
                term(
                    "app",
                    "Exists",
                    topology="zone",
                    namespace_selector={"matchExpressions": [{"key": "team", "operator": "DoesNotExist"}]},
                )
            ]
        ),
    )
    plugin, snap = setup(_two(R1Z1, R1Z2), [existing], TEAM_NAMESPACES)
    _, verdicts = run_filter(plugin, snap, pod({"app": "1"}, namespace="unknown-ns"))
    assert verdicts == [NO_EXISTING, OK]
    pre, _ = run_filter(plugin, snap, pod({"app": "1"}, namespace="subteam1.team1"))
    assert pre.code == Code.SKIP


def test_batch_filter_on_a_subset_of_positions() -> None:
    plugin, snap = setup(_three(CHINA, CHINA_AZ1, INDIA), [pod({"foo": "abc"}, node="nodeA")])
    incoming = pod(aff=affinity(anti_required=[term("foo", "In", ["abc"])]))
    cycle = CycleState()
    plugin.pre_filter(cycle, incoming, snap.node_infos)
    batch = plugin.filter_batch(cycle, incoming, snap, np.array([2, 0], dtype=np.int64))
    assert batch.codes.tolist() == [int(Code.SUCCESS), int(Code.UNSCHEDULABLE)]
    assert batch.reasons(1) == (ANTI,)
