"""NodeNUMAResource's NUMA admission, NUMA allocations and the cpu amplification ratio.

Cases follow koordinator-sh/koordinator `pkg/scheduler/plugins/nodenumaresource/`:
topology_hint.go (`FilterByNUMANode`: no NUMA resources), plugin.go (`filterAmplifiedCPUs`,
`Reserve`, `PreBind` writing `numaNodeResources`), pod_eventhandler.go (bound pods' NUMA
resources counted), resource_manager.go (`tryBestToDistributeEvenly`, `splitQuantity`) and
service.go (`remainingNUMANodeResources` / `allocatedNUMANodeResources`).
"""

from __future__ import annotations

import json
from typing import Any

from scheduler.api.objects import Node, parse_node
from scheduler.framework.types import Code, CycleState
from scheduler.frameworkext.services import ServiceTable
from scheduler.frameworkext.topologymanager import NUMATopologyHint, mask_of
from scheduler.plugins.nodenumaresource.numa import ResourceOptions, distribute_evenly
from tests.plugins.nodenumaresource.helpers import nrt
from tests.plugins.nodenumaresource.test_plugin import NODE, lsr, setup

ZONES = [
    {
        "name": f"node-{i}",
        "type": "Node",
        "resources": [{"name": "cpu", "allocatable": "8"}, {"name": "memory", "allocatable": "16Gi"}],
    }
    for i in range(2)
]


def _node(labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None) -> Node:
    meta: dict[str, Any] = {"name": NODE, "labels": labels or {}, "annotations": annotations or {}}
    amounts = {"cpu": "16", "memory": "32Gi", "pods": "110"}
    return parse_node(
        {"apiVersion": "v1", "kind": "Node", "metadata": meta, "status": {"allocatable": amounts, "capacity": amounts}}
    )


def _topology(zones: bool = True) -> dict[str, Any]:
    doc = nrt(NODE, 2, 1, 4, 2)
    doc["zones"] = ZONES if zones else []
    return doc


SINGLE = {"node.koordinator.sh/numa-topology-policy": "SingleNUMANode"}


def test_filter_refuses_a_node_without_numa_resources() -> None:
    plugin, handle = setup([_topology(zones=False)], [_node(SINGLE)])
    pod = lsr("p", "4")
    state = CycleState()
    plugin.pre_filter(state, pod, [])
    status = plugin.filter(state, pod, handle.snapshot.get(NODE))
    assert (status.code, status.message) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) missing NUMA resources")


def test_single_numa_node_reserve_prebind_and_the_nodes_route() -> None:
    plugin, handle = setup([_topology()], [_node(SINGLE)])
    pod = lsr("p", "4")
    state = CycleState()
    plugin.pre_filter(state, pod, [])
    assert plugin.filter(state, pod, handle.snapshot.get(NODE)).success
    assert plugin.reserve(state, pod, NODE).success
    assert plugin.pre_bind(state, pod, NODE).success
    status = json.loads(handle.api.patches[0][1]["scheduling.koordinator.sh/resource-status"] or "")
    assert status == {"cpuset": "0-3", "numaNodeResources": [{"node": 0, "resources": {"cpu": "4", "memory": "1Gi"}}]}
    table = ServiceTable()
    table.register_plugin_service(plugin, "default-scheduler")
    body = table.dispatch("GET", f"/apis/v1/plugins/NodeNUMAResource/nodes/{NODE}").body
    assert body["remainingNUMANodeResources"] == [
        {"node": 0, "resources": {"cpu": "4", "memory": "15Gi"}},
        {"node": 1, "resources": {"cpu": "8", "memory": "16Gi"}},
    ]
    assert body["allocatedNUMANodeResources"] == [{"node": 0, "resources": {"cpu": "4", "memory": "1Gi"}}]
    assert body["allocatedPods"][0]["numaNodeResources"] == [{"node": 0, "resources": {"cpu": "4", "memory": "1Gi"}}]
    plugin.unreserve(state, pod, NODE)
    body = table.dispatch("GET", f"/apis/v1/plugins/NodeNUMAResource/nodes/{NODE}").body
    assert body["remainingNUMANodeResources"][0] == {"node": 0, "resources": {"cpu": "8", "memory": "16Gi"}}


def test_bound_pods_numa_resources_are_counted() -> None:
    """pod_eventhandler.go: a bound pod's resource-status numaNodeResources are taken on its NUMA node,
    so a pod of 6 CPUs fits no NUMA node alone (2 and 4 left), only both, and SingleNUMANode refuses it."""
    held = '{"numaNodeResources":[{"node":0,"resources":{"cpu":"6","memory":"2Gi"}},{"node":1,"resources":{"cpu":"4"}}]}'
    bound = lsr("bound", "10", qos="LS", node_name=NODE, annotations={"scheduling.koordinator.sh/resource-status": held})
    plugin, handle = setup([_topology()], [_node(SINGLE)], bound=[bound])
    pod = lsr("p", "6", qos="LS")
    state = CycleState()
    plugin.pre_filter(state, pod, [])
    status = plugin.filter(state, pod, handle.snapshot.get(NODE))
    assert status.code == Code.UNSCHEDULABLE
    assert status.message == "Unaligned NUMA Hint cause cpu prefer [11] among [11],memory prefer [11] among [11]"


def test_amplified_cpu_filter() -> None:
    """plugin.go filterAmplifiedCPUs: cpuset CPUs count amplified; a bad ratio annotation is unresolvable."""
    bound = lsr("bound", "4", node_name=NODE, annotations={"scheduling.koordinator.sh/resource-status": '{"cpuset":"0-3"}'})
    for annotation, code, message in (
        ('{"cpu":2}', Code.UNSCHEDULABLE, "Insufficient amplified cpu"),
        ("{cpu", Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) invalid CPU amplification ratio"),
    ):
        node = _node(annotations={"node.koordinator.sh/resource-amplification-ratio": annotation})
        plugin, handle = setup([_topology(zones=False)], [node], bound=[bound])
        pod = lsr("p", "5")
        state = CycleState()
        plugin.pre_filter(state, pod, [])
        status = plugin.filter(state, pod, handle.snapshot.get(NODE))
        assert (status.code, status.message) == (code, message)


def test_distribute_evenly_least_available_first() -> None:
    """tryBestToDistributeEvenly / splitQuantity: NUMA node 1 has less cpu left, so it is served
    first with half, node 0 the rest; a cpuset pod's cpu is split in whole CPUs."""
    options = ResourceOptions(
        requests={"cpu": 5000},
        original_requests={"cpu": 5000},
        num_cpus_needed=5,
        request_cpu_bind=True,
        required_bind=False,
        bind_policy="FullPCPUs",
        exclusive_policy="",
        numa=(),
        ratios=None,
        hint=NUMATopologyHint(mask_of([0, 1])),
    )
    available = {0: {"cpu": 8000}, 1: {"cpu": 3000}}
    assert distribute_evenly({"cpu": 5000}, available, options) == ([(0, {"cpu": 3000}), (1, {"cpu": 2000})], [])
    assert distribute_evenly({"cpu": 12000}, available, options)[1] == ["Insufficient NUMA cpu"]
