"""DefaultPreemption: PostFilter, dry runs, candidate selection, custom hooks and eligibility.

Tables are ported from kubernetes/kubernetes
`pkg/scheduler/framework/plugins/defaultpreemption/default_preemption_test.go`
(TestPostFilter, TestDryRunPreemption, TestSelectBestCandidate, TestCustomSelection,
TestCustomOrdering, TestPodEligibleToPreemptOthers, TestPreempt).
"""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.framework.types import Code, CycleState, Status
from scheduler.preemption.evaluator import NOMINATING_KEY, VICTIMS_KEY
from tests.preemption.helpers import (
    HIGH,
    LARGE,
    LOW,
    MEDIUM,
    MID,
    NEG,
    SMALL,
    VERY_HIGH,
    VERY_LARGE,
    Env,
    ErrorOnLabel,
    FakeFilter,
    FalseFilter,
    MatchFilter,
    TrueFilter,
    mk_node,
    mk_pdb,
    mk_pod,
    offsets,
    spread,
    statuses_of,
    topo_node,
)

U, UU = Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE
NODE_RES = ("200m", "400")
VIOLATING = {"test.kubernetes.io/is-violating-pdb": "violating"}
NON_VIOLATING = {"test.kubernetes.io/is-violating-pdb": "non-violating"}


def one_pod_node(name: str) -> Any:
    return mk_node(name, pods=1)


# ----- TestPostFilter ----------------------------------------------------------------------------------
# (name, preemptor, pods, pdbs, nodes, statuses, want node ("" clears, None keeps), want code, want message)
POST_FILTER_CASES: list[tuple[Any, ...]] = [
    (
        "pod with higher priority can be made schedulable",
        mk_pod("p", priority=HIGH),
        [mk_pod("p1", node="node1")],
        [],
        [one_pod_node("node1")],
        {"node1": U},
        "node1",
        Code.SUCCESS,
        "",
    ),
    (
        "pod with tied priority is still unschedulable",
        mk_pod("p"),
        [mk_pod("p1", node="node1")],
        [],
        [one_pod_node("node1")],
        {"node1": U},
        "",
        U,
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
    ),
    (
        "preemption should respect filteredNodesStatuses",
        mk_pod("p", priority=HIGH),
        [mk_pod("p1", node="node1")],
        [],
        [one_pod_node("node1")],
        {"node1": UU},
        "",
        U,
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
    ),
    (
        "preemption should respect absent NodeToStatusReader entry meaning UnschedulableAndUnresolvable",
        mk_pod("p", priority=HIGH),
        [mk_pod("p1", node="node1")],
        [],
        [one_pod_node("node1")],
        {},
        "",
        U,
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
    ),
    (
        "pod can be made schedulable on one node",
        mk_pod("p", priority=MID),
        [mk_pod("p1", node="node1", priority=HIGH), mk_pod("p2", node="node2", priority=LOW)],
        [],
        [one_pod_node("node1"), one_pod_node("node2")],
        {"node1": U, "node2": U},
        "node2",
        Code.SUCCESS,
        "",
    ),
    (
        "pod can be made schedulable on minHighestPriority node",
        mk_pod("p", priority=VERY_HIGH),
        [
            mk_pod("p1", node="node1", priority=HIGH, labels=NON_VIOLATING),
            mk_pod("p2", node="node1", priority=LOW, labels=VIOLATING),
            mk_pod("p3", node="node2", priority=MID, labels=VIOLATING),
        ],
        [mk_pdb("violating-pdb", VIOLATING, allowed=0), mk_pdb("non-violating-pdb", NON_VIOLATING, allowed=2**31 - 1)],
        [one_pod_node("node1"), one_pod_node("node2")],
        {"node1": U, "node2": U},
        "node2",
        Code.SUCCESS,
        "",
    ),
    (
        "no candidate nodes found, no enough resource after removing low priority pods",
        mk_pod("p", priority=HIGH, req=LARGE),
        [mk_pod("p1", node="node1"), mk_pod("p2", node="node2")],
        [],
        [mk_node("node1", *NODE_RES), mk_node("node2", *NODE_RES)],
        {"node1": U, "node2": U},
        "",
        U,
        "preemption: 0/2 nodes are available: 2 Insufficient cpu.",
    ),
    (
        "no candidate nodes found with mixed reasons, no lower priority pod and no enough CPU resource",
        mk_pod("p", priority=HIGH, req=LARGE),
        [mk_pod("p1", node="node1", priority=HIGH), mk_pod("p2", node="node2"), mk_pod("p3", node="node3", priority=HIGH)],
        [],
        [one_pod_node("node1"), mk_node("node2", *NODE_RES), one_pod_node("node3")],
        {"node1": U, "node2": U, "node3": U},
        "",
        U,
        "preemption: 0/3 nodes are available: 1 Insufficient cpu, 2 No preemption victims found for incoming pod.",
    ),
    (
        "no candidate nodes found with mixed reason, 2 UnschedulableAndUnresolvable nodes and 2 nodes don't have enough CPU resource",
        mk_pod("p", priority=HIGH, req=LARGE),
        [mk_pod("p1", node="node1"), mk_pod("p2", node="node2")],
        [],
        [mk_node(f"node{i}", *NODE_RES) for i in range(1, 5)],
        {"node1": U, "node2": U, "node4": UU},
        "",
        U,
        "preemption: 0/4 nodes are available: 2 Insufficient cpu, 2 Preemption is not helpful for scheduling.",
    ),
    (
        "only one node but failed with TestPlugin",
        mk_pod("p", priority=HIGH, req=LARGE),
        [mk_pod("p1", node="node1")],
        [],
        [mk_node("node1", *LARGE, labels={"error": "true"})],
        {"node1": U},
        None,
        Code.ERROR,
        'preemption: running RemovePod on PreFilter plugin "test-plugin": failed to remove pod: p',
    ),
    (
        "one failed with TestPlugin and the other pass",
        mk_pod("p", priority=HIGH, req=LARGE),
        [mk_pod("p1", node="node1"), mk_pod("p2", node="node2", req=MEDIUM)],
        [],
        [mk_node("node1", *LARGE, labels={"error": "true"}), mk_node("node2", *LARGE)],
        {"node1": U, "node2": U},
        "node2",
        Code.SUCCESS,
        "",
    ),
]


@pytest.mark.parametrize("async_preemption", [True, False], ids=["async", "sync"])
@pytest.mark.parametrize(
    "name,preemptor,pods,pdbs,nodes,statuses,want_node,want_code,want_msg",
    POST_FILTER_CASES,
    ids=[c[0] for c in POST_FILTER_CASES],
)
def test_post_filter(
    async_preemption: bool,
    name: str,
    preemptor: Any,
    pods: Any,
    pdbs: Any,
    nodes: Any,
    statuses: Any,
    want_node: str | None,
    want_code: Code,
    want_msg: str,
) -> None:
    env = Env(nodes, [preemptor, *pods], pdbs, fakes={"test-plugin": ErrorOnLabel()}, async_preemption=async_preemption)
    state = env.prefilter(preemptor)
    node, status = env.plugin.post_filter(state, preemptor, statuses_of(statuses))
    env.sched._run_tasks()
    assert status.code == want_code
    assert status.message == want_msg
    if want_node:
        assert node == want_node
    else:
        assert node is None
        assert state.get(NOMINATING_KEY) == ("" if want_node == "" else None)
    assert env.sched.metrics.preemption_attempts._value.get() == 1


# ----- TestDryRunPreemption ----------------------------------------------------------------------------
def _dry_run_case(
    name: str,
    filters: dict[str, Any],
    node_names: list[str],
    test_pods: list[Any],
    init_pods: list[Any],
    expected: list[dict[str, tuple[list[str], int]]],
    calls: list[int],
    fake_code: Code = Code.SUCCESS,
    pdbs: tuple[Any, ...] = (),
    args: dict[str, int] | None = None,
    plugins: tuple[str, ...] = (),
) -> tuple[Any, ...]:
    return (name, filters, node_names, test_pods, init_pods, expected, calls, fake_code, list(pdbs), args, plugins)


FIT = ("NodeResourcesFit",)
FOO = {"app": "foo"}
DRY_RUN_CASES = [
    _dry_run_case(
        "a pod that does not fit on any node",
        {"FalseFilter": FalseFilter()},
        ["node1", "node2"],
        [mk_pod("p", priority=HIGH)],
        [mk_pod("p1", node="node1", priority=MID), mk_pod("p2", node="node2", priority=MID)],
        [{}],
        [2],
    ),
    _dry_run_case(
        "a pod that fits with no preemption",
        {"TrueFilter": TrueFilter()},
        ["node1", "node2"],
        [mk_pod("p", priority=HIGH)],
        [mk_pod("p1", node="node1", priority=MID), mk_pod("p2", node="node2", priority=MID)],
        [{}],
        [2],
        fake_code=Code.UNSCHEDULABLE,
    ),
    _dry_run_case(
        "a pod that fits on one node with no preemption",
        {"MatchFilter": MatchFilter()},
        ["node1", "node2"],
        [mk_pod("node1", priority=HIGH)],
        [mk_pod("p1", node="node1", priority=MID), mk_pod("p2", node="node2", priority=MID)],
        [{}],
        [2],
        fake_code=Code.UNSCHEDULABLE,
    ),
    _dry_run_case(
        "a pod that fits on both nodes when lower priority pods are preempted",
        {},
        ["node1", "node2"],
        [mk_pod("p", priority=HIGH, req=LARGE)],
        [mk_pod("p1", node="node1", priority=MID, req=LARGE), mk_pod("p2", node="node2", priority=MID, req=LARGE)],
        [{"node1": (["p1"], 0), "node2": (["p2"], 0)}],
        [4],
        plugins=FIT,
    ),
    _dry_run_case(
        "a pod that would fit on the nodes, but other pods running are higher priority, no preemption would happen",
        {},
        ["node1", "node2"],
        [mk_pod("p", priority=LOW, req=LARGE)],
        [mk_pod("p1", node="node1", priority=MID, req=LARGE), mk_pod("p2", node="node2", priority=MID, req=LARGE)],
        [{}],
        [0],
        plugins=FIT,
    ),
    _dry_run_case(
        "medium priority pod is preempted, but lower priority one stays as it is small",
        {},
        ["node1", "node2"],
        [mk_pod("p", priority=HIGH, req=LARGE)],
        [
            mk_pod("p1.1", node="node1", priority=LOW, req=SMALL),
            mk_pod("p1.2", node="node1", priority=MID, req=LARGE),
            mk_pod("p2", node="node2", priority=MID, req=LARGE),
        ],
        [{"node1": (["p1.2"], 0), "node2": (["p2"], 0)}],
        [5],
        plugins=FIT,
    ),
    _dry_run_case(
        "mixed priority pods are preempted",
        {},
        ["node1", "node2"],
        [mk_pod("p", priority=HIGH, req=LARGE)],
        [
            mk_pod("p1.1", node="node1", priority=MID, req=SMALL),
            mk_pod("p1.2", node="node1", priority=LOW, req=SMALL),
            mk_pod("p1.3", node="node1", priority=MID, req=MEDIUM),
            mk_pod("p1.4", node="node1", priority=HIGH, req=SMALL),
            mk_pod("p2", node="node2", priority=HIGH, req=LARGE),
        ],
        [{"node1": (["p1.2", "p1.3"], 0)}],
        [4],
        plugins=FIT,
    ),
    _dry_run_case(
        "mixed priority pods are preempted, pick later StartTime one when priorities are equal",
        {},
        ["node1", "node2"],
        [mk_pod("p", priority=HIGH, req=LARGE)],
        [
            mk_pod("p1.1", node="node1", priority=LOW, req=SMALL, start=5),
            mk_pod("p1.2", node="node1", priority=LOW, req=SMALL, start=4),
            mk_pod("p1.3", node="node1", priority=MID, req=MEDIUM, start=3),
            mk_pod("p1.4", node="node1", priority=HIGH, req=SMALL, start=2),
            mk_pod("p2", node="node2", priority=HIGH, req=LARGE, start=1),
        ],
        [{"node1": (["p1.1", "p1.3"], 0)}],
        [4],
        plugins=FIT,
    ),
    _dry_run_case(
        "pod with anti-affinity is preempted",
        {},
        ["node1", "node2"],
        [mk_pod("p", priority=HIGH, req=SMALL, labels={"foo": ""})],
        [
            mk_pod(
                "p1.1",
                node="node1",
                priority=LOW,
                req=SMALL,
                labels={"foo": ""},
                spec={
                    "affinity": {
                        "podAntiAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": [
                                {
                                    "labelSelector": {"matchExpressions": [{"key": "foo", "operator": "Exists"}]},
                                    "topologyKey": "hostname",
                                }
                            ]
                        }
                    }
                },
            ),
            mk_pod("p1.2", node="node1", priority=MID, req=SMALL),
            mk_pod("p1.3", node="node1", priority=HIGH, req=SMALL),
            mk_pod("p2", node="node2", priority=HIGH, req=SMALL),
        ],
        [{"node1": (["p1.1"], 0)}],
        [3],
        plugins=("NodeResourcesFit", "InterPodAffinity"),
    ),
    _dry_run_case(
        "preemption to resolve pod topology spread filter failure",
        {},
        ["node-a/zone1", "node-b/zone1", "node-x/zone2"],
        [
            mk_pod(
                "p", priority=HIGH, labels={"foo": ""}, spec={"topologySpreadConstraints": [spread("zone"), spread("hostname")]}
            )
        ],
        [
            mk_pod("pod-a1", node="node-a", priority=MID, labels={"foo": ""}),
            mk_pod("pod-a2", node="node-a", priority=LOW, labels={"foo": ""}),
            mk_pod("pod-b1", node="node-b", priority=LOW, labels={"foo": ""}),
            mk_pod("pod-x1", node="node-x", priority=HIGH, labels={"foo": ""}),
            mk_pod("pod-x2", node="node-x", priority=HIGH, labels={"foo": ""}),
        ],
        [{"node-a": (["pod-a2"], 0), "node-b": (["pod-b1"], 0)}],
        [5],
        plugins=("PodTopologySpread",),
    ),
    _dry_run_case(
        "get Unschedulable in the preemption phase when the filter plugins filtering the nodes",
        {},
        ["node1", "node2"],
        [mk_pod("p", priority=HIGH, req=LARGE)],
        [mk_pod("p1", node="node1", priority=MID, req=LARGE), mk_pod("p2", node="node2", priority=MID, req=LARGE)],
        [{}],
        [2],
        fake_code=Code.UNSCHEDULABLE,
        plugins=FIT,
    ),
    _dry_run_case(
        "preemption with violation of same pdb",
        {},
        ["node1"],
        [mk_pod("p", priority=HIGH, req=VERY_LARGE)],
        [
            mk_pod("p1.1", node="node1", priority=MID, req=MEDIUM, labels=FOO),
            mk_pod("p1.2", node="node1", priority=MID, req=MEDIUM, labels=FOO),
        ],
        [{"node1": (["p1.1", "p1.2"], 1)}],
        [3],
        pdbs=(mk_pdb("pdb", FOO, allowed=1),),
        plugins=FIT,
    ),
    _dry_run_case(
        "preemption with violation of the pdb with pod whose eviction was processed, the victim doesn't belong to DisruptedPods",
        {},
        ["node1"],
        [mk_pod("p", priority=HIGH, req=VERY_LARGE)],
        [
            mk_pod("p1.1", node="node1", priority=MID, req=MEDIUM, labels=FOO),
            mk_pod("p1.2", node="node1", priority=MID, req=MEDIUM, labels=FOO),
        ],
        [{"node1": (["p1.1", "p1.2"], 1)}],
        [3],
        pdbs=(mk_pdb("pdb", FOO, allowed=1, disrupted=("p2",)),),
        plugins=FIT,
    ),
    _dry_run_case(
        "preemption with violation of the pdb with pod whose eviction was processed, the victim belongs to DisruptedPods",
        {},
        ["node1"],
        [mk_pod("p", priority=HIGH, req=VERY_LARGE)],
        [
            mk_pod("p1.1", node="node1", priority=MID, req=MEDIUM, labels=FOO),
            mk_pod("p1.2", node="node1", priority=MID, req=MEDIUM, labels=FOO),
        ],
        [{"node1": (["p1.1", "p1.2"], 0)}],
        [3],
        pdbs=(mk_pdb("pdb", FOO, allowed=1, disrupted=("p1.2",)),),
        plugins=FIT,
    ),
    _dry_run_case(
        "preemption with violation of the pdb with pod whose eviction was processed, the victim which belongs to DisruptedPods is treated as 'nonViolating'",
        {},
        ["node1"],
        [mk_pod("p", priority=HIGH, req=VERY_LARGE)],
        [
            mk_pod("p1.1", node="node1", priority=MID, req=MEDIUM, labels=FOO),
            mk_pod("p1.2", node="node1", priority=MID, req=MEDIUM, labels=FOO),
            mk_pod("p1.3", node="node1", priority=MID, req=MEDIUM, labels=FOO),
        ],
        [{"node1": (["p1.1", "p1.2", "p1.3"], 1)}],
        [4],
        pdbs=(mk_pdb("pdb", FOO, allowed=1, disrupted=("p1.3",)),),
        plugins=FIT,
    ),
    _dry_run_case(
        "all nodes are possible candidates, but DefaultPreemptionArgs limits to 2",
        {},
        [f"node{i}" for i in range(1, 6)],
        [mk_pod("p", priority=HIGH, req=LARGE)],
        [mk_pod(f"p{i}", node=f"node{i}", priority=MID, req=LARGE) for i in range(1, 6)],
        [{"node1": (["p1"], 0), "node5": (["p5"], 0)}],
        [4],
        args={"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1},
        plugins=FIT,
    ),
    _dry_run_case(
        "some nodes are not possible candidates, DefaultPreemptionArgs limits to 2",
        {},
        [f"node{i}" for i in range(1, 6)],
        [mk_pod("p", priority=HIGH, req=LARGE)],
        [mk_pod(f"p{i}", node=f"node{i}", priority=VERY_HIGH if i in (2, 5) else MID, req=LARGE) for i in range(1, 6)],
        [{"node1": (["p1"], 0), "node3": (["p3"], 0)}],
        [4],
        args={"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1},
        plugins=FIT,
    ),
    _dry_run_case(
        "preemption offset across multiple scheduling cycles and wrap around",
        {},
        [f"node{i}" for i in range(1, 6)],
        [mk_pod(f"tp{i}", priority=HIGH, req=LARGE) for i in range(1, 4)],
        [mk_pod(f"p{i}", node=f"node{i}", priority=MID, req=LARGE) for i in range(1, 6)],
        [
            {"node1": (["p1"], 0), "node5": (["p5"], 0)},
            {"node2": (["p2"], 0), "node3": (["p3"], 0)},
            {"node4": (["p4"], 0), "node5": (["p5"], 0)},
        ],
        [4, 4, 4],
        args={"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1},
        plugins=FIT,
    ),
    _dry_run_case(
        "preemption looks past numCandidates until a non-PDB violating node is found",
        {},
        [f"node{i}" for i in range(1, 6)],
        [mk_pod("p", priority=HIGH, req=LARGE)],
        [mk_pod(f"p{i}", node=f"node{i}", priority=MID, req=LARGE, labels=FOO if i in (1, 2, 5) else None) for i in range(1, 6)],
        [{"node1": (["p1"], 1), "node3": (["p3"], 0), "node5": (["p5"], 1)}],
        [8],
        pdbs=(mk_pdb("pdb", FOO, allowed=0),),
        args={"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 2},
        plugins=FIT,
    ),
]


@pytest.mark.parametrize(
    "name,filters,node_names,test_pods,init_pods,expected,calls,fake_code,pdbs,args,plugins",
    DRY_RUN_CASES,
    ids=[c[0] for c in DRY_RUN_CASES],
)
def test_dry_run_preemption(
    name: str,
    filters: dict[str, Any],
    node_names: list[str],
    test_pods: list[Any],
    init_pods: list[Any],
    expected: list[dict[str, tuple[list[str], int]]],
    calls: list[int],
    fake_code: Code,
    pdbs: list[Any],
    args: dict[str, int] | None,
    plugins: tuple[str, ...],
) -> None:
    fake = FakeFilter(fake_code)
    nodes = [topo_node(n) for n in node_names]
    env = Env(nodes, [*test_pods, *init_pods], pdbs, plugins=plugins, args=args, fakes={"FakeFilter": fake, **filters})
    plugin = env.plugin
    # Upstream seeds math/rand with 4: Int31n(5) then yields 4, 1, 3.
    plugin.offset_rand = offsets(4, 1, 3)
    infos = env.node_infos()
    before = 0
    for cycle, pod in enumerate(test_pods):
        state = env.prefilter(pod)
        offset, count = plugin.get_offset_and_num_candidates(len(infos))
        got, _, _ = plugin.evaluator.dry_run_preemption(state, pod, infos, pdbs, offset, count)
        summary = {c.name: (sorted(p.name for p in c.victims.pods), c.victims.num_pdb_violations) for c in got}
        assert summary == expected[cycle], f"cycle {cycle}"
        assert fake.calls - before == calls[cycle], f"cycle {cycle}"
        before = fake.calls


# ----- TestSelectBestCandidate: each tie-break rule of the candidate ordering --------------------------------
SELECT_CASES: list[tuple[str, list[str], Any, list[Any], set[str]]] = [
    (
        "a pod that fits on both nodes when lower priority pods are preempted",
        ["node1", "node2"],
        mk_pod("p", priority=HIGH, req=LARGE),
        [
            mk_pod("p1", node="node1", priority=MID, req=LARGE, start=0),
            mk_pod("p2", node="node2", priority=MID, req=LARGE, start=0),
        ],
        {"node1", "node2"},
    ),
    (
        "node with min highest priority pod is picked",
        ["node1", "node2", "node3"],
        mk_pod("p", priority=HIGH, req=VERY_LARGE),
        [
            mk_pod("p1.1", node="node1", priority=MID, req=MEDIUM, start=0),
            mk_pod("p1.2", node="node1", priority=MID, req=LARGE, start=0),
            mk_pod("p2.1", node="node2", priority=MID, req=MEDIUM, start=0),
            mk_pod("p2.2", node="node2", priority=LOW, req=MEDIUM, start=0),
            mk_pod("p3.1", node="node3", priority=LOW, req=MEDIUM, start=0),
            mk_pod("p3.2", node="node3", priority=LOW, req=MEDIUM, start=0),
        ],
        {"node3"},
    ),
    (
        "when highest priorities are the same, minimum sum of priorities is picked",
        ["node1", "node2", "node3"],
        mk_pod("p", priority=HIGH, req=VERY_LARGE),
        [
            mk_pod("p1.1", node="node1", priority=MID, req=MEDIUM, start=0),
            mk_pod("p1.2", node="node1", priority=MID, req=LARGE, start=0),
            mk_pod("p2.1", node="node2", priority=MID, req=LARGE, start=0),
            mk_pod("p2.2", node="node2", priority=LOW, req=MEDIUM, start=0),
            mk_pod("p3.1", node="node3", priority=MID, req=MEDIUM, start=0),
            mk_pod("p3.2", node="node3", priority=MID, req=MEDIUM, start=0),
        ],
        {"node2"},
    ),
    (
        "when highest priority and sum are the same, minimum number of pods is picked",
        ["node1", "node2", "node3"],
        mk_pod("p", priority=HIGH, req=VERY_LARGE),
        [
            mk_pod("p1.1", node="node1", priority=MID, req=SMALL, start=0),
            mk_pod("p1.2", node="node1", priority=NEG, req=SMALL, start=0),
            mk_pod("p1.3", node="node1", priority=MID, req=SMALL, start=0),
            mk_pod("p1.4", node="node1", priority=NEG, req=SMALL, start=0),
            mk_pod("p2.1", node="node2", priority=MID, req=LARGE, start=0),
            mk_pod("p2.2", node="node2", priority=NEG, req=MEDIUM, start=0),
            mk_pod("p3.1", node="node3", priority=MID, req=MEDIUM, start=0),
            mk_pod("p3.2", node="node3", priority=NEG, req=SMALL, start=0),
            mk_pod("p3.3", node="node3", priority=LOW, req=SMALL, start=0),
        ],
        {"node2"},
    ),
    (
        "sum of adjusted priorities is considered",
        ["node1", "node2", "node3"],
        mk_pod("p", priority=HIGH, req=VERY_LARGE),
        [
            mk_pod("p1.1", node="node1", priority=MID, req=SMALL, start=0),
            mk_pod("p1.2", node="node1", priority=NEG, req=SMALL, start=0),
            mk_pod("p1.3", node="node1", priority=NEG, req=SMALL, start=0),
            mk_pod("p2.1", node="node2", priority=MID, req=LARGE, start=0),
            mk_pod("p2.2", node="node2", priority=NEG, req=MEDIUM, start=0),
            mk_pod("p3.1", node="node3", priority=MID, req=MEDIUM, start=0),
            mk_pod("p3.2", node="node3", priority=NEG, req=SMALL, start=0),
            mk_pod("p3.3", node="node3", priority=LOW, req=SMALL, start=0),
        ],
        {"node2"},
    ),
    (
        "non-overlapping lowest high priority, sum priorities, and number of pods",
        ["node1", "node2", "node3", "node4"],
        mk_pod("p", priority=VERY_HIGH, req=VERY_LARGE),
        [
            mk_pod("p1.1", node="node1", priority=MID, req=SMALL, start=0),
            mk_pod("p1.2", node="node1", priority=LOW, req=SMALL, start=0),
            mk_pod("p1.3", node="node1", priority=LOW, req=SMALL, start=0),
            mk_pod("p2.1", node="node2", priority=HIGH, req=LARGE, start=0),
            mk_pod("p3.1", node="node3", priority=MID, req=MEDIUM, start=0),
            mk_pod("p3.2", node="node3", priority=LOW, req=SMALL, start=0),
            mk_pod("p3.3", node="node3", priority=LOW, req=SMALL, start=0),
            mk_pod("p3.4", node="node3", priority=LOW, req=MEDIUM, start=0),
            mk_pod("p4.1", node="node4", priority=MID, req=MEDIUM, start=0),
            mk_pod("p4.2", node="node4", priority=MID, req=SMALL, start=0),
            mk_pod("p4.3", node="node4", priority=MID, req=SMALL, start=0),
            mk_pod("p4.4", node="node4", priority=NEG, req=SMALL, start=0),
        ],
        {"node1"},
    ),
    (
        "same priority, same number of victims, different start time for each node's pod",
        ["node1", "node2", "node3"],
        mk_pod("p", priority=HIGH, req=VERY_LARGE),
        [
            mk_pod("p1.1", node="node1", priority=MID, req=MEDIUM, start=2),
            mk_pod("p1.2", node="node1", priority=MID, req=MEDIUM, start=2),
            mk_pod("p2.1", node="node2", priority=MID, req=MEDIUM, start=3),
            mk_pod("p2.2", node="node2", priority=MID, req=MEDIUM, start=3),
            mk_pod("p3.1", node="node3", priority=MID, req=MEDIUM, start=1),
            mk_pod("p3.2", node="node3", priority=MID, req=MEDIUM, start=1),
        ],
        {"node2"},
    ),
    (
        "same priority, same number of victims, different start time for all pods",
        ["node1", "node2", "node3"],
        mk_pod("p", priority=HIGH, req=VERY_LARGE),
        [
            mk_pod("p1.1", node="node1", priority=MID, req=MEDIUM, start=4),
            mk_pod("p1.2", node="node1", priority=MID, req=MEDIUM, start=2),
            mk_pod("p2.1", node="node2", priority=MID, req=MEDIUM, start=5),
            mk_pod("p2.2", node="node2", priority=MID, req=MEDIUM, start=1),
            mk_pod("p3.1", node="node3", priority=MID, req=MEDIUM, start=3),
            mk_pod("p3.2", node="node3", priority=MID, req=MEDIUM, start=6),
        ],
        {"node3"},
    ),
    (
        "different priority, same number of victims, different start time for all pods",
        ["node1", "node2", "node3"],
        mk_pod("p", priority=HIGH, req=VERY_LARGE),
        [
            mk_pod("p1.1", node="node1", priority=LOW, req=MEDIUM, start=4),
            mk_pod("p1.2", node="node1", priority=MID, req=MEDIUM, start=2),
            mk_pod("p2.1", node="node2", priority=MID, req=MEDIUM, start=6),
            mk_pod("p2.2", node="node2", priority=LOW, req=MEDIUM, start=1),
            mk_pod("p3.1", node="node3", priority=LOW, req=MEDIUM, start=3),
            mk_pod("p3.2", node="node3", priority=MID, req=MEDIUM, start=5),
        ],
        {"node2"},
    ),
]


@pytest.mark.parametrize("name,node_names,pod,pods,expected", SELECT_CASES, ids=[c[0] for c in SELECT_CASES])
def test_select_best_candidate(name: str, node_names: list[str], pod: Any, pods: list[Any], expected: set[str]) -> None:
    env = Env([mk_node(n, *VERY_LARGE) for n in node_names], [pod, *pods])
    env.plugin.offset_rand = offsets(0)
    infos = env.node_infos()
    state = env.prefilter(pod)
    offset, count = env.plugin.get_offset_and_num_candidates(len(infos))
    candidates, _, _ = env.plugin.evaluator.dry_run_preemption(state, pod, infos, [], offset, count)
    best = env.plugin.evaluator.select_candidate(candidates)
    assert best is not None and best.name in expected


# ----- TestCustomSelection / TestCustomOrdering: the IsEligiblePod and MoreImportantPod hooks ------------------
def label_is(key: str, value: str) -> Any:
    return lambda node_info, victim, preemptor: victim.pod.labels.get(key) == value


def on_node(name: str) -> Any:
    return lambda node_info, victim, preemptor: node_info.name == name


def preemptor_at_least(prio: int) -> Any:
    return lambda node_info, victim, preemptor: preemptor.effective_priority >= prio


def victim_at_most(prio: int) -> Any:
    return lambda node_info, victim, preemptor: victim.pod.effective_priority <= prio


def _labelled_victims() -> list[Any]:
    return [
        mk_pod("v1", node="node1", priority=MID, req=LARGE, labels={"preemptible": "no"}, start=0),
        mk_pod("v2", node="node2", priority=MID, req=LARGE, labels={"preemptible": "yes"}, start=0),
        mk_pod("v3", node="node3", priority=LOW, req=LARGE, labels={"preemptible": "yes"}, start=0),
        mk_pod("v4", node="node4", priority=LOW, req=LARGE, start=0),
    ]


def _node1_victims(v1_req: tuple[str, str]) -> list[Any]:
    return [
        mk_pod("v1", node="node1", priority=HIGH, req=v1_req, start=0),
        mk_pod("v2", node="node1", priority=MID, req=SMALL, start=0),
        mk_pod("v3", node="node1", priority=LOW, req=SMALL, start=0),
        mk_pod("v4", node="node2", priority=MID, req=LARGE, start=0),
        mk_pod("v5", node="node3", priority=LOW, req=LARGE, start=0),
    ]


def _one_each() -> list[Any]:
    return [mk_pod(f"v{i}", node=f"node{i}", priority=p, req=LARGE, start=0) for i, p in ((1, HIGH), (2, MID), (3, LOW))]


CUSTOM_SELECTION_CASES: list[tuple[str, Any, int, Any, int, dict[str, list[str]]]] = [
    (
        "filter for matching pod label: high priority",
        label_is("preemptible", "yes"),
        4,
        _labelled_victims(),
        HIGH,
        {"node2": ["v2"], "node3": ["v3"]},
    ),
    (
        "filter for matching pod label: mid priority",
        label_is("preemptible", "yes"),
        4,
        _labelled_victims(),
        MID,
        {"node3": ["v3"]},
    ),
    ("filter for matching pod label: low priority", label_is("preemptible", "yes"), 4, _labelled_victims(), LOW, {}),
    (
        "filter for matching victim node: high priority",
        on_node("node1"),
        3,
        _node1_victims(MEDIUM),
        HIGH,
        {"node1": ["v2", "v3"]},
    ),
    ("filter for matching victim node: mid priority", on_node("node1"), 3, _node1_victims(SMALL), MID, {"node1": ["v3"]}),
    ("filter for matching victim node: low priority", on_node("node1"), 3, _node1_victims(SMALL), LOW, {}),
    (
        "only pods at or above specified priority can preempted: high priority",
        preemptor_at_least(HIGH),
        3,
        _one_each(),
        HIGH,
        {"node2": ["v2"], "node3": ["v3"]},
    ),
    ("only pods at or above specified priority can preempted: mid priority", preemptor_at_least(HIGH), 3, _one_each(), MID, {}),
    (
        "only pods at or below specified priority can be preempted: high priority",
        victim_at_most(MID),
        3,
        _one_each(),
        HIGH,
        {"node2": ["v2"], "node3": ["v3"]},
    ),
]


@pytest.mark.parametrize(
    "name,eligible,num_nodes,pods,priority,expected", CUSTOM_SELECTION_CASES, ids=[c[0] for c in CUSTOM_SELECTION_CASES]
)
def test_custom_selection(
    name: str, eligible: Any, num_nodes: int, pods: list[Any], priority: int, expected: dict[str, list[str]]
) -> None:
    preemptor = mk_pod("preemptor", priority=priority, req=LARGE)
    env = Env([mk_node(f"node{i}", *VERY_LARGE) for i in range(1, num_nodes + 1)], [preemptor, *pods])
    env.plugin.is_eligible_pod = eligible
    infos = env.node_infos()
    state = env.prefilter(preemptor)
    offset, count = env.plugin.get_offset_and_num_candidates(len(infos))
    candidates, _, _ = env.plugin.evaluator.dry_run_preemption(state, preemptor, infos, [], offset, count)
    assert len(candidates) == len(expected)
    while candidates:
        selected = env.plugin.evaluator.select_candidate(candidates)
        assert [p.name for p in selected.victims.pods] == expected[selected.name]
        candidates = [c for c in candidates if c.name != selected.name]


CUSTOM_ORDERING_CASES = [
    (
        "select newest pods",
        lambda a, b: (a.start_time or 0) < (b.start_time or 0),
        [
            mk_pod("v1", node="node1", priority=LOW, req=MEDIUM, start=2),
            mk_pod("v2", node="node1", priority=LOW, req=MEDIUM, start=0),
            mk_pod("v3", node="node1", priority=MID, req=MEDIUM, start=1),
        ],
        ["v3", "v1"],
    ),
    (
        "select alphabetically-last pods",
        lambda a, b: a.name < b.name,
        [
            mk_pod("foo", uid="v1", node="node1", priority=LOW, req=MEDIUM, start=0),
            mk_pod("bar", uid="v2", node="node1", priority=LOW, req=MEDIUM, start=0),
            mk_pod("baz", uid="v3", node="node1", priority=MID, req=MEDIUM, start=0),
        ],
        ["baz", "foo"],
    ),
]


@pytest.mark.parametrize("name,order,pods,expected", CUSTOM_ORDERING_CASES, ids=[c[0] for c in CUSTOM_ORDERING_CASES])
def test_custom_ordering(name: str, order: Any, pods: list[Any], expected: list[str]) -> None:
    preemptor = mk_pod("p2", priority=HIGH, req=LARGE)
    env = Env([mk_node("node1", *VERY_LARGE)], [preemptor, *pods])
    env.plugin.more_important_pod = order
    state = env.prefilter(preemptor)
    candidates, _, _ = env.plugin.evaluator.dry_run_preemption(state, preemptor, env.node_infos(), [], 0, 1)
    assert len(candidates) == 1
    assert [p.name for p in candidates[0].victims.pods] == expected


# ----- TestPodEligibleToPreemptOthers ------------------------------------------------------------------------
PREEMPTED_CONDITION = {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}
ELIGIBLE_CASES: list[tuple[str, Any, list[Any], list[str], Status | None, bool, str]] = [
    (
        "Pod with nominated node",
        mk_pod("p_with_nominated_node", uid="p", priority=HIGH, nominated="node1"),
        [mk_pod("p1", node="node1", priority=LOW, terminating=True)],
        ["node1"],
        Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) had untolerated taint(s)",)),
        True,
        "",
    ),
    ("Pod without nominated node", mk_pod("p_without_nominated_node", uid="p", priority=HIGH), [], [], None, True, ""),
    (
        "Pod with 'PreemptNever' preemption policy",
        mk_pod("p_with_preempt_never_policy", uid="p", priority=HIGH, policy="Never"),
        [],
        [],
        None,
        False,
        "not eligible due to preemptionPolicy=Never.",
    ),
    (
        "preemption victim pod terminating, as indicated by the dedicated DisruptionTarget condition",
        mk_pod("p_with_nominated_node", uid="p", priority=HIGH, nominated="node1"),
        [mk_pod("p1", node="node1", priority=LOW, terminating=True, conditions=[PREEMPTED_CONDITION])],
        ["node1"],
        None,
        False,
        "not eligible due to a terminating pod on the nominated node.",
    ),
    (
        "non-victim Pods terminating",
        mk_pod("p_with_nominated_node", uid="p", priority=HIGH, nominated="node1"),
        [mk_pod("p1", node="node1", priority=LOW, terminating=True)],
        ["node1"],
        None,
        True,
        "",
    ),
]


@pytest.mark.parametrize("name,pod,pods,nodes,status,expected,message", ELIGIBLE_CASES, ids=[c[0] for c in ELIGIBLE_CASES])
def test_pod_eligible_to_preempt_others(
    name: str, pod: Any, pods: list[Any], nodes: list[str], status: Status | None, expected: bool, message: str
) -> None:
    env = Env([mk_node(n) for n in nodes], list(pods))
    assert env.plugin.pod_eligible_to_preempt_others(pod, status) == (expected, message)


def test_preemption_policy_never_post_filter_message() -> None:
    pod = mk_pod("p", priority=HIGH, req=VERY_LARGE, policy="Never")
    env = Env([mk_node("node1", *VERY_LARGE)], [pod, mk_pod("p1", node="node1", priority=LOW, req=SMALL)])
    node, status = env.plugin.post_filter(env.prefilter(pod), pod, statuses_of({"node1": U}))
    assert node is None
    assert (status.code, status.message) == (U, "preemption: not eligible due to preemptionPolicy=Never.")


# ----- TestPreempt: the whole evaluation, with the gate on (tasks) and off (inside PostFilter) -----------------------
PREEMPT_CASES: list[tuple[str, Any, list[Any], list[str], tuple[str, ...], str | None, list[str]]] = [
    (
        "basic preemption logic",
        mk_pod("p", priority=HIGH, req=VERY_LARGE, policy="PreemptLowerPriority"),
        [
            mk_pod("p1.1", node="node1", priority=LOW, req=SMALL),
            mk_pod("p1.2", node="node1", priority=LOW, req=SMALL),
            mk_pod("p2.1", node="node2", priority=HIGH, req=LARGE),
            mk_pod("p3.1", node="node3", priority=MID, req=MEDIUM),
        ],
        ["node1", "node2", "node3"],
        FIT,
        "node1",
        ["p1.1", "p1.2"],
    ),
    (
        "preemption for topology spread constraints",
        mk_pod("p", priority=HIGH, labels={"foo": ""}, spec={"topologySpreadConstraints": [spread("zone"), spread("hostname")]}),
        [
            mk_pod("p-a1", node="node-a", priority=HIGH, labels={"foo": ""}),
            mk_pod("p-a2", node="node-a", priority=HIGH, labels={"foo": ""}),
            mk_pod("p-b1", node="node-b", priority=LOW, labels={"foo": ""}),
            mk_pod("p-x1", node="node-x", priority=HIGH, labels={"foo": ""}),
            mk_pod("p-x2", node="node-x", priority=HIGH, labels={"foo": ""}),
        ],
        ["node-a/zone1", "node-b/zone1", "node-x/zone2"],
        ("PodTopologySpread",),
        "node-b",
        ["p-b1"],
    ),
    (
        "no preempting in pod",
        mk_pod("p", priority=HIGH, req=VERY_LARGE, policy="Never"),
        [
            mk_pod("p1.1", node="node1", priority=LOW, req=SMALL),
            mk_pod("p1.2", node="node1", priority=LOW, req=SMALL),
            mk_pod("p2.1", node="node2", priority=HIGH, req=LARGE),
            mk_pod("p3.1", node="node3", priority=MID, req=MEDIUM),
        ],
        ["node1", "node2", "node3"],
        FIT,
        None,
        [],
    ),
    (
        "PreemptionPolicy is nil",
        mk_pod("p", priority=HIGH, req=VERY_LARGE),
        [
            mk_pod("p1.1", node="node1", priority=LOW, req=SMALL),
            mk_pod("p1.2", node="node1", priority=LOW, req=SMALL),
            mk_pod("p2.1", node="node2", priority=HIGH, req=LARGE),
            mk_pod("p3.1", node="node3", priority=MID, req=MEDIUM),
        ],
        ["node1", "node2", "node3"],
        FIT,
        "node1",
        ["p1.1", "p1.2"],
    ),
]


@pytest.mark.parametrize("async_preemption", [True, False], ids=["async", "sync"])
@pytest.mark.parametrize("name,pod,pods,node_names,plugins,want,victims", PREEMPT_CASES, ids=[c[0] for c in PREEMPT_CASES])
def test_preempt(
    async_preemption: bool,
    name: str,
    pod: Any,
    pods: list[Any],
    node_names: list[str],
    plugins: tuple[str, ...],
    want: str | None,
    victims: list[str],
) -> None:
    env = Env([topo_node(n) for n in node_names], [pod, *pods], plugins=plugins, async_preemption=async_preemption)
    state = env.prefilter(pod)
    node, status = env.plugin.evaluator.preempt(state, pod, statuses_of({n.name: U for n in env.nodes}))
    assert status.success or status.rejected, status
    assert node == want
    if want:
        assert sorted(p.name for p in state.get(VICTIMS_KEY)) == victims
    if async_preemption:
        # Nothing is deleted inside the cycle; the task does it.
        assert not env.cluster.deleted
        env.sched._run_tasks()
    deleted = sorted(p.name for p in env.cluster.deleted.values())
    assert deleted == victims
    patched = sorted(
        p.name for p in env.cluster.deleted.values() if any(c.get("type") == "DisruptionTarget" for c in p.conditions)
    )
    assert patched == deleted
    preempted = sorted(e.object.split("/")[1] for e in env.cluster.events if e.reason == "Preempted")
    assert preempted == victims


def test_state_is_not_touched_by_dry_run() -> None:
    pod = mk_pod("p", priority=HIGH, req=LARGE)
    env = Env([mk_node("node1", *VERY_LARGE)], [pod, mk_pod("p1", node="node1", priority=LOW, req=LARGE)])
    state: CycleState = env.prefilter(pod)
    info = env.sched.snapshot.get("node1")
    assert info is not None
    before = [p.pod.name for p in info.pods]
    env.plugin.evaluator.dry_run_preemption(state, pod, env.node_infos(), [], 0, 1)
    assert [p.pod.name for p in info.pods] == before
    assert info.requested.milli_cpu == 300


# ----- construction and small contracts ------------------------------------------------------------------------------
def test_new_defaults_and_validates_args() -> None:
    from scheduler.config.args import DefaultPreemptionArgs
    from scheduler.plugins import defaultpreemption

    env = Env([mk_node("node1")])
    plugin = defaultpreemption.new(None, env.sched.profiles["default-scheduler"].handle)
    assert (plugin.args.min_candidate_nodes_percentage, plugin.args.min_candidate_nodes_absolute) == (10, 100)
    assert plugin.enable_async
    with pytest.raises(ValueError, match="cannot be zero at the same time"):
        defaultpreemption.new(DefaultPreemptionArgs(0, 0), env.fwk.handle)
    with pytest.raises(TypeError, match="want \\*DefaultPreemptionArgs"):
        defaultpreemption.new({"minCandidateNodesPercentage": 10}, env.fwk.handle)


def test_events_to_register_only_with_async_preemption() -> None:
    from scheduler.framework.types import ActionType, ClusterEvent

    assert Env([mk_node("node1")]).plugin.events_to_register() == [ClusterEvent("Pod", ActionType.DELETE, "AssignedPodDelete")]
    assert Env([mk_node("node1")], async_preemption=False).plugin.events_to_register() == []


def test_preemptor_gone_from_the_api_is_an_error() -> None:
    pod = mk_pod("p", priority=HIGH, req=VERY_LARGE)
    env = Env([mk_node("node1", *VERY_LARGE)], [mk_pod("p1", node="node1", priority=LOW, req=SMALL)])
    node, status = env.plugin.post_filter(env.prefilter(pod), pod, statuses_of({"node1": U}))
    assert node is None
    assert (status.code, status.message) == (Code.ERROR, 'preemption: pod "p" not found')
