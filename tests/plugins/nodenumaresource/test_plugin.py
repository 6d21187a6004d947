"""NodeNUMAResource PreFilter, Filter, Reserve, PreBind and services.

Service cases from koordinator-sh/koordinator `pkg/scheduler/plugins/nodenumaresource/plugin_service_test.go`
(commit 55ca4fc1, the `/availableCPUs` and `/cpuTopologyOptions` routes); the filter and reserve
cases follow `plugin_test.go` (TestPlugin_PreFilter, TestPlugin_Filter, TestPlugin_Reserve).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from scheduler.api.objects import Pod
from scheduler.framework.types import Code, CycleState
from scheduler.frameworkext.services import ServiceTable
from scheduler.plugins.nodenumaresource.plugin import NodeNUMAResource, new
from scheduler.plugins.nodenumaresource.topology import PodAllocation
from tests.plugins.loadaware.helpers import Informers, KoordHandle
from tests.plugins.nodenumaresource.helpers import nrt
from tests.support.builders import make_node, make_pod, make_snapshot

NODE = "test-node-1"


class PatchingCluster:
    """Records annotation patches as the simulated cluster applies them."""

    def __init__(self) -> None:
        self.patches: list[tuple[str, dict[str, str | None]]] = []

    def patch_annotations(self, pod: Pod, annotations: dict[str, str | None]) -> Pod:
        self.patches.append((pod.key, annotations))
        return pod


class Handle(KoordHandle):
    def __init__(self, snapshot: Any, informers: Informers) -> None:
        super().__init__(snapshot, informers)
        self.api = PatchingCluster()

    def cluster(self) -> Any:
        return self.api


def setup(
    topologies: list[dict[str, Any]],
    nodes: list[Any] | None = None,
    bound: list[Pod] = (),
    args: dict[str, Any] | None = None,  # type: ignore[assignment]
) -> tuple[NodeNUMAResource, Handle]:
    nodes = nodes or [make_node(NODE, cpu="16", memory="64Gi")]
    snapshot = make_snapshot(nodes, list(bound))
    handle = Handle(snapshot, Informers(list(bound), {"NodeResourceTopology": topologies}))
    return new(args, handle), handle


def lsr(
    name: str,
    cpu: str,
    spec: dict[str, str] | None = None,
    qos: str = "LSR",
    node_name: str = "",
    annotations: dict[str, str] | None = None,
) -> Pod:
    ann = dict(annotations or {})
    if spec is not None:
        ann["scheduling.koordinator.sh/resource-spec"] = json.dumps(spec)
    return make_pod(
        name, cpu=cpu, memory="1Gi", labels={"koordinator.sh/qosClass": qos}, priority=9000, node_name=node_name, annotations=ann
    )


def test_available_cpus_service() -> None:
    plugin, _ = setup([nrt(NODE, 2, 1, 4, 2, reserved="0-1")])
    plugin.update(NODE, PodAllocation("uid-1", "default", "p", frozenset({0, 2, 4, 6}), "None"))
    table = ServiceTable()
    table.register_plugin_service(plugin, "default-scheduler")
    reply = table.dispatch("GET", f"/apis/v1/plugins/NodeNUMAResource/availableCPUs/{NODE}")
    assert reply.status == 200
    assert reply.body["availableCPUs"] == "3,5,7-15"
    assert sorted(reply.body["allocated"]) == ["0", "2", "4", "6"]
    assert reply.body["allocated"]["2"] == {
        "cpuID": 2,
        "coreID": 1,
        "nodeID": 0,
        "socketID": 0,
        "refCount": 1,
        "exclusivePolicy": "None",
    }


def test_cpu_topology_options_service() -> None:
    plugin, _ = setup([nrt(NODE, 2, 1, 4, 2, reserved="0-1")])
    table = ServiceTable()
    table.register_plugin_service(plugin, "default-scheduler")
    body = table.dispatch("GET", f"/apis/v1/plugins/NodeNUMAResource/cpuTopologyOptions/{NODE}").body
    assert body["reservedCPUs"] == "0-1"
    assert body["maxRefCount"] == 1
    assert body["policy"] == {"policy": "static", "reservedCPUs": "0-1"}
    topo = body["cpuTopology"]
    assert (topo["numCPUs"], topo["numCores"], topo["numNodes"], topo["numSockets"]) == (16, 8, 2, 2)
    assert topo["cpuDetails"]["9"] == {
        "cpuID": 9,
        "coreID": (1 << 16) | 4,
        "nodeID": 1,
        "socketID": 1,
        "refCount": 0,
        "exclusivePolicy": "",
    }


@pytest.mark.parametrize(
    ("topologies", "node", "status", "fragment"),
    [
        ([nrt(NODE, 2, 1, 4, 2)], NODE, 200, None),
        ([], NODE, 500, "invalid topology, please check the NodeResourceTopology object"),
        ([nrt(NODE, 2, 1, 4, 2)], "missing", 500, 'node "missing" not found'),
    ],
    ids=["node with topology", "no NodeResourceTopology", "unknown node"],
)
def test_nodes_service(topologies: list[dict[str, Any]], node: str, status: int, fragment: str | None) -> None:
    plugin, _ = setup(
        topologies,
        bound=[lsr("bound", "4", node_name=NODE, annotations={"scheduling.koordinator.sh/resource-status": '{"cpuset":"0-3"}'})],
    )
    table = ServiceTable()
    table.register_plugin_service(plugin, "default-scheduler")
    reply = table.dispatch("GET", f"/apis/v1/plugins/NodeNUMAResource/nodes/{node}")
    assert reply.status == status
    if fragment:
        assert reply.body == {"message": fragment}
    else:
        assert reply.body["name"] == NODE
        assert reply.body["availableCPUs"] == "4-15"
        assert [p["cpuset"] for p in reply.body["allocatedPods"]] == ["0-3"]


PRE_FILTER = [
    ("pod requesting nothing is skipped", make_pod("p"), Code.SKIP, "", False),
    ("LS pod needs no cpuset", lsr("p", "4", qos="LS"), Code.SUCCESS, "", False),
    ("LSR pod binds with the default FullPCPUs", lsr("p", "4"), Code.SUCCESS, "", True),
    (
        "LSR pod with fractional CPUs",
        lsr("p", "1500m"),
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "the requested CPUs must be integer",
        False,
    ),
    ("LSE pod with SpreadByPCPUs", lsr("p", "2", {"preferredCPUBindPolicy": "SpreadByPCPUs"}, qos="LSE"), Code.SUCCESS, "", True),
]


@pytest.mark.parametrize(("pod", "code", "message", "bind"), [c[1:] for c in PRE_FILTER], ids=[c[0] for c in PRE_FILTER])
def test_pre_filter(pod: Pod, code: Code, message: str, bind: bool) -> None:
    plugin, _ = setup([nrt(NODE, 2, 1, 4, 2)])
    state = CycleState()
    _, status = plugin.pre_filter(state, pod, [])
    assert status.code == code
    assert status.message == message
    if status.success:
        assert plugin._state(state).request_cpu_bind == bind


def _node(labels: dict[str, str] | None = None) -> Any:
    return make_node(NODE, cpu="16", memory="64Gi", labels=labels)


FILTER = [
    ("no topology", [], _node(), lsr("p", "4"), Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) invalid CPU Topology"),
    ("preferred FullPCPUs fits", [nrt(NODE, 2, 1, 4, 2)], _node(), lsr("p", "4"), Code.SUCCESS, ""),
    (
        "node FullPCPUsOnly and odd CPUs",
        [nrt(NODE, 2, 1, 4, 2)],
        _node({"node.koordinator.sh/cpu-bind-policy": "FullPCPUsOnly"}),
        lsr("p", "3"),
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "node(s) requested cpus not multiple cpus per core",
    ),
    (
        "required SpreadByPCPUs on a FullPCPUsOnly node",
        [nrt(NODE, 2, 1, 4, 2)],
        _node({"node.koordinator.sh/cpu-bind-policy": "FullPCPUsOnly"}),
        lsr("p", "4", {"requiredCPUBindPolicy": "SpreadByPCPUs"}),
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "node(s) cpu bind policy conflicts with pod's required cpu bind policy",
    ),
    (
        "required FullPCPUs beyond the free cores",
        [nrt(NODE, 2, 1, 4, 2, reserved="0-10")],
        _node(),
        lsr("p", "6", {"requiredCPUBindPolicy": "FullPCPUs"}),
        Code.UNSCHEDULABLE,
        "not enough cpus available to satisfy request",
    ),
    (
        "kubelet full-pcpus-only imposes binding on a fractional LS pod",
        [
            nrt(
                NODE,
                2,
                1,
                4,
                2,
                extra={
                    "kubelet.koordinator.sh/cpu-manager-policy": json.dumps(
                        {"policy": "static", "options": {"full-pcpus-only": "true"}}
                    )
                },
            )
        ],
        _node(),
        lsr("p", "1500m", qos="LS"),
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "the requested CPUs must be integer",
    ),
    (
        "NUMA topology policy mismatch",
        [nrt(NODE, 2, 1, 4, 2)],
        _node({"node.koordinator.sh/numa-topology-policy": "SingleNUMANode"}),
        lsr("p", "4", annotations={"scheduling.koordinator.sh/numa-topology-spec": '{"numaTopologyPolicy":"Restricted"}'}),
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "node(s) NUMA Topology policy not match",
    ),
]


@pytest.mark.parametrize(("topologies", "node", "pod", "code", "message"), [c[1:] for c in FILTER], ids=[c[0] for c in FILTER])
def test_filter(topologies: list[dict[str, Any]], node: Any, pod: Pod, code: Code, message: str) -> None:
    plugin, handle = setup(topologies, [node])
    state = CycleState()
    _, status = plugin.pre_filter(state, pod, [])
    assert status.success
    status = plugin.filter(state, pod, handle.snapshot.get(NODE))
    assert (status.code, status.message) == (code, message)


def test_reserve_prebind_unreserve() -> None:
    bound = lsr("bound", "4", node_name=NODE, annotations={"scheduling.koordinator.sh/resource-status": '{"cpuset":"8-11"}'})
    plugin, handle = setup([nrt(NODE, 2, 1, 4, 2, reserved="0-1")], bound=[bound])
    pod = lsr("p", "4")
    state = CycleState()
    plugin.pre_filter(state, pod, [])
    assert plugin.reserve(state, pod, NODE).success
    # CPUs 0-1 are reserved and 8-11 taken: NUMA node 0 has 6 free CPUs, node 1 has 4, and the
    # default LeastAllocated strategy packs into the freer one.
    assert plugin._state(state).allocation.cpuset == frozenset({2, 3, 4, 5})
    assert plugin.available_cpus(NODE)[0] == frozenset({6, 7, 12, 13, 14, 15})
    assert plugin.pre_bind(state, pod, NODE).success
    assert handle.api.patches == [
        # The pod named no bind policy: the one used is written back as preferred.
        (
            "default/p",
            {
                "scheduling.koordinator.sh/resource-spec": '{"preferredCPUBindPolicy":"FullPCPUs"}',
                "scheduling.koordinator.sh/resource-status": '{"cpuset":"2-5"}',
            },
        ),
    ]
    plugin.unreserve(state, pod, NODE)
    assert plugin.available_cpus(NODE)[0] == frozenset(range(2, 8)) | {12, 13, 14, 15}


def test_most_allocated_label_packs_the_busier_numa_node() -> None:
    bound = lsr("bound", "4", node_name=NODE, annotations={"scheduling.koordinator.sh/resource-status": '{"cpuset":"8-11"}'})
    node = _node({"node.koordinator.sh/numa-allocate-strategy": "MostAllocated"})
    plugin, _ = setup([nrt(NODE, 2, 1, 4, 2, reserved="0-1")], [node], bound=[bound])
    pod = lsr("p", "4")
    state = CycleState()
    plugin.pre_filter(state, pod, [])
    assert plugin.reserve(state, pod, NODE).success
    assert plugin._state(state).allocation.cpuset == frozenset({12, 13, 14, 15})


def test_prebind_writes_the_bind_policy_when_the_pod_named_none() -> None:
    plugin, handle = setup([nrt(NODE, 2, 1, 4, 2)], [_node({"node.koordinator.sh/cpu-bind-policy": "FullPCPUsOnly"})])
    pod = lsr("p", "2", qos="LS")
    state = CycleState()
    plugin.pre_filter(state, pod, [])
    assert plugin.filter(state, pod, handle.snapshot.get(NODE)).success
    assert plugin.reserve(state, pod, NODE).success
    assert plugin.pre_bind(state, pod, NODE).success
    assert handle.api.patches == [
        (
            "default/p",
            {
                "scheduling.koordinator.sh/resource-spec": '{"requiredCPUBindPolicy":"FullPCPUs"}',
                "scheduling.koordinator.sh/resource-status": '{"cpuset":"0-1"}',
            },
        )
    ]


def test_args_validation() -> None:
    from scheduler.config.koordargs import NodeNUMAResourceArgs

    args = NodeNUMAResourceArgs.from_dict(
        {"defaultCPUBindPolicy": "Packed", "scoringStrategy": {"type": "Balanced", "resources": [{"name": "cpu", "weight": 0}]}},
        "args",
    )
    assert [str(i) for i in args.validate("args")] == [
        'args.defaultCPUBindPolicy: Invalid value: "Packed": must specified CPU bind policy FullPCPUs or SpreadByPCPUs',
        'args.scoringStrategy.type: Unsupported value: "Balanced": supported values: "LeastAllocated", "MostAllocated"',
        "args.scoringStrategy.resources[0].weight: Invalid value: 0: resource weight of cpu not in valid range (0, 100]",
    ]


def test_nodes_service_reads_the_zones() -> None:
    """topology_options.go extractNUMANodeResources: zones of type Node named node-<id> give each
    NUMA node's allocatable (others are passed over), sorted by id; service.go NodeResponse lists
    them as numaNodeResources and, with nothing admitted to a NUMA node, as remaining."""
    topology = nrt(NODE, 2, 1, 4, 2)
    topology["zones"] = [
        {
            "name": "node-1",
            "type": "Node",
            "resources": [{"name": "cpu", "allocatable": "8"}, {"name": "memory", "allocatable": "16Gi"}],
        },
        {"name": "socket-0", "type": "Socket", "resources": [{"name": "cpu", "allocatable": "16"}]},
        {
            "name": "node-0",
            "type": "Node",
            "resources": [{"name": "cpu", "allocatable": "8"}, {"name": "memory", "allocatable": "16Gi"}],
        },
        {"name": "node-x", "type": "Node", "resources": [{"name": "cpu", "allocatable": "1"}]},
    ]
    plugin, _ = setup([topology])
    table = ServiceTable()
    table.register_plugin_service(plugin, "default-scheduler")
    body = table.dispatch("GET", f"/apis/v1/plugins/NodeNUMAResource/nodes/{NODE}").body
    want = [{"node": 0, "resources": {"cpu": "8", "memory": "16Gi"}}, {"node": 1, "resources": {"cpu": "8", "memory": "16Gi"}}]
    assert body["numaNodeResources"] == want
    assert body["remainingNUMANodeResources"] == want
    assert body["allocatedNUMANodeResources"] is None
