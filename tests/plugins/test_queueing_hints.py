"""Queueing hints per plugin: (event objects) -> Queue / QueueSkip, as upstream's
`isSchedulableAfter...` functions answer them (their unit-test tables)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from scheduler.api.objects import Node, Pod
from scheduler.api.selectors import parse_node_selector
from scheduler.framework.types import ActionType, ClusterEvent, QueueingHint
from scheduler.plugins import interpodaffinity, nodename, nodeports, nodeunschedulable, schedulinggates, tainttoleration
from scheduler.plugins.nodeaffinity import NodeAffinity, compile_selector
from scheduler.plugins.noderesources import fit
from tests.support.builders import make_node, make_pod

Q = QueueingHint.QUEUE
SKIP = QueueingHint.QUEUE_SKIP


def _hint(events: list[ClusterEvent], resource: str, action: ActionType) -> Any:
    found = [e.hint for e in events if e.resource == resource and e.action & action]
    assert len(found) == 1 and found[0] is not None
    return found[0]


def ported(name: str, port: int, ip: str = "", node_name: str = "", nominated: str = "") -> Pod:
    port_spec: dict[str, Any] = {"containerPort": 80, "hostPort": port, **({"hostIP": ip} if ip else {})}
    pod = make_pod(name, node_name=node_name, containers=[{"name": "c", "image": "i", "ports": [port_spec]}])
    return make_pod_with_status(pod, nominated) if nominated else pod


def make_pod_with_status(pod: Pod, nominated: str) -> Pod:
    return replace(pod, nominated_node_name=nominated)


# ----- NodeResourcesFit ---------------------------------------------------------------------------
FIT_EVENTS = fit.new(None, None).events_to_register()
FIT_POD = _hint(FIT_EVENTS, "Pod", ActionType.DELETE)
FIT_NODE = _hint(FIT_EVENTS, "Node", ActionType.ADD)


def test_fit_registers_as_upstream_with_hints() -> None:
    assert FIT_EVENTS == [
        ClusterEvent("Pod", ActionType.DELETE | ActionType.UPDATE_POD_SCALE_DOWN),
        ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE),
    ]


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        # An assigned pod deleted frees room.
        (make_pod("other", cpu="1", node_name="n1"), None, Q),
        # An unassigned, unnominated pod deleted frees nothing.
        (make_pod("other", cpu="1"), None, SKIP),
        # A nominated pod deleted frees its nomination.
        (make_pod_with_status(make_pod("other", cpu="1"), "n1"), None, Q),
        # The waiting pod itself scaled down.
        (make_pod("pod", cpu="2"), make_pod("pod", cpu="1"), Q),
        # An assigned pod shrinking cpu, which the pod asks for.
        (make_pod("other", cpu="2", node_name="n1"), make_pod("other", cpu="1", node_name="n1"), Q),
        # An assigned pod shrinking memory only: the pod asks for no memory.
        (make_pod("other", memory="2Gi", node_name="n1"), make_pod("other", memory="1Gi", node_name="n1"), SKIP),
        # An unassigned pod scaled down frees nothing.
        (make_pod("other", cpu="2"), make_pod("other", cpu="1"), SKIP),
    ],
)
def test_fit_pod_event_hint(old: Pod, new: Pod | None, want: QueueingHint) -> None:
    assert FIT_POD(make_pod("pod", cpu="1"), old, new) == want


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        # A node added with room for the pod.
        (None, make_node("n1", cpu="4"), Q),
        # A node added too small for the pod even when empty.
        (None, make_node("n1", cpu="1"), SKIP),
        # Allocatable cpu raised: more room for the pod's cpu.
        (make_node("n1", cpu="4"), make_node("n1", cpu="8"), Q),
        # Raised, but still too small.
        (make_node("n1", cpu="1"), make_node("n1", cpu="1500m"), SKIP),
        # Memory raised: the pod asks for no memory.
        (make_node("n1", memory="1Gi"), make_node("n1", memory="2Gi"), SKIP),
        # More pods allowed.
        (make_node("n1", pods=10), make_node("n1", pods=20), Q),
        # Nothing the pod asks for changed (labels only).
        (make_node("n1"), make_node("n1", labels={"a": "b"}), SKIP),
    ],
)
def test_fit_node_change_hint(old: Node | None, new: Node, want: QueueingHint) -> None:
    assert FIT_NODE(make_pod("pod", cpu="2"), old, new) == want


def test_fit_node_hint_reads_extended_resources() -> None:
    gpu_pod = make_pod("pod", containers=[{"name": "c", "image": "i", "resources": {"requests": {"nvidia.com/gpu": "2"}}}])
    assert FIT_NODE(gpu_pod, None, make_node("n1", extra={"nvidia.com/gpu": 1})) == SKIP
    assert FIT_NODE(gpu_pod, None, make_node("n1", extra={"nvidia.com/gpu": 4})) == Q
    assert FIT_NODE(gpu_pod, make_node("n1", extra={"nvidia.com/gpu": 2}), make_node("n1", extra={"nvidia.com/gpu": 4})) == Q


# ----- NodePorts ----------------------------------------------------------------------------------
PORTS_POD = _hint(nodeports.NodePorts().events_to_register(), "Pod", ActionType.DELETE)


@pytest.mark.parametrize(
    ("deleted", "want"),
    [
        (ported("other", 8080, node_name="n1"), Q),  # same port freed
        (ported("other", 8080), SKIP),  # never assigned
        (ported("other", 8080, nominated="n1"), Q),  # nominated, holding the port in the plan
        (ported("other", 9090, node_name="n1"), SKIP),  # another port
        (make_pod("other", cpu="1", node_name="n1"), SKIP),  # no host port at all
        (ported("other", 8080, ip="10.0.0.1", node_name="n1"), Q),  # 0.0.0.0 clashes with any IP
    ],
)
def test_nodeports_pod_deleted_hint(deleted: Pod, want: QueueingHint) -> None:
    assert PORTS_POD(ported("pod", 8080), deleted, None) == want


def test_nodeports_ip_specific_ports_clash_only_on_the_same_ip() -> None:
    assert PORTS_POD(ported("pod", 8080, ip="10.0.0.2"), ported("other", 8080, ip="10.0.0.1", node_name="n1"), None) == SKIP
    assert PORTS_POD(ported("pod", 8080, ip="10.0.0.1"), ported("other", 8080, ip="10.0.0.1", node_name="n1"), None) == Q


# ----- NodeName, NodeUnschedulable, TaintToleration, SchedulingGates, NodeAffinity ---------------
def test_nodename_hint() -> None:
    hint = _hint(nodename.NodeName().events_to_register(), "Node", ActionType.ADD)
    assert hint(make_pod("p", node_name="n1"), None, make_node("n1")) == Q
    assert hint(make_pod("p", node_name="n1"), None, make_node("n2")) == SKIP
    assert hint(make_pod("p"), None, make_node("n2")) == Q


def test_nodeunschedulable_hints() -> None:
    events = nodeunschedulable.NodeUnschedulable().events_to_register()
    node_hint = _hint(events, "Node", ActionType.ADD)
    pod = make_pod("p")
    assert node_hint(pod, None, make_node("n1")) == Q
    assert node_hint(pod, None, make_node("n1", unschedulable=True)) == SKIP
    assert node_hint(pod, make_node("n1", unschedulable=True), make_node("n1")) == Q
    assert node_hint(pod, make_node("n1"), make_node("n1", unschedulable=True)) == SKIP
    assert node_hint(pod, make_node("n1"), make_node("n1")) == SKIP
    pod_hint = _hint(events, "Pod", ActionType.UPDATE_POD_TOLERATION)
    tolerant = make_pod(
        "p", spec={"tolerations": [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}]}
    )
    assert pod_hint(pod, pod, tolerant) == Q
    assert pod_hint(pod, tolerant, tolerant) == SKIP
    assert pod_hint(make_pod("q"), pod, tolerant) == SKIP


def test_tainttoleration_hints() -> None:
    events = tainttoleration.TaintToleration().events_to_register()
    node_hint = _hint(events, "Node", ActionType.UPDATE_NODE_TAINT)
    pod = make_pod("p")
    taint = [{"key": "k", "value": "v", "effect": "NoSchedule"}]
    soft = [{"key": "k", "value": "v", "effect": "PreferNoSchedule"}]
    assert node_hint(pod, None, make_node("n1")) == Q
    assert node_hint(pod, None, make_node("n1", taints=taint)) == SKIP
    assert node_hint(pod, make_node("n1", taints=taint), make_node("n1")) == Q
    assert node_hint(pod, make_node("n1", taints=taint), make_node("n1", taints=soft)) == Q
    assert node_hint(pod, make_node("n1"), make_node("n1", taints=soft)) == SKIP
    tolerant = make_pod("p", spec={"tolerations": [{"key": "k", "operator": "Exists"}]})
    assert node_hint(tolerant, make_node("n1"), make_node("n1", taints=taint)) == SKIP
    pod_hint = _hint(events, "Pod", ActionType.UPDATE_POD_TOLERATION)
    assert pod_hint(pod, pod, tolerant) == Q
    assert pod_hint(make_pod("q"), pod, tolerant) == SKIP


def test_schedulinggates_hint() -> None:
    hint = _hint(schedulinggates.SchedulingGates().events_to_register(), "Pod", ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)
    assert hint(make_pod("p"), make_pod("p"), make_pod("p")) == Q
    assert hint(make_pod("p"), make_pod("q"), make_pod("q")) == SKIP


def test_nodeaffinity_hint() -> None:
    hint = _hint(NodeAffinity().events_to_register(), "Node", ActionType.ADD)
    pod = make_pod("p", spec={"nodeSelector": {"zone": "a"}})
    assert hint(pod, None, make_node("n1", labels={"zone": "a"})) == Q
    assert hint(pod, None, make_node("n1", labels={"zone": "b"})) == SKIP
    assert hint(pod, make_node("n1", labels={"zone": "b"}), make_node("n1", labels={"zone": "a"})) == Q
    # Already matching before: a relabel cannot be what the pod waited for.
    assert hint(pod, make_node("n1", labels={"zone": "a"}), make_node("n1", labels={"zone": "a", "x": "y"})) == SKIP
    assert hint(make_pod("free"), None, make_node("n1")) == Q


def test_nodeaffinity_hint_reads_the_added_affinity() -> None:
    raw = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "pool", "operator": "In", "values": ["gpu"]}]}]}
    added = compile_selector(parse_node_selector(raw, "args.addedAffinity"))
    hint = _hint(NodeAffinity(added_required=added).events_to_register(), "Node", ActionType.ADD)
    assert hint(make_pod("p"), None, make_node("n1", labels={"pool": "cpu"})) == SKIP
    assert hint(make_pod("p"), None, make_node("n1", labels={"pool": "gpu"})) == Q


# ----- InterPodAffinity ---------------------------------------------------------------------------
def _affine(name: str, kind: str, key: str = "zone") -> Pod:
    term = {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": key}
    return make_pod(name, spec={"affinity": {kind: {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}})


def test_interpodaffinity_pod_change_hint() -> None:
    events = interpodaffinity.new(None, None).events_to_register()
    hint = _hint(events, "Pod", ActionType.ADD)
    wants_db, avoids_db = _affine("p", "podAffinity"), _affine("p", "podAntiAffinity")
    db = make_pod("db", labels={"app": "db"}, node_name="n1")
    web = make_pod("web", labels={"app": "web"}, node_name="n1")
    # Added: only an assigned pod matching the affinity.
    assert hint(wants_db, None, db) == Q
    assert hint(wants_db, None, web) == SKIP
    assert hint(wants_db, None, make_pod("db2", labels={"app": "db"})) == SKIP  # unassigned
    # Deleted: only a pod matching the anti-affinity.
    assert hint(avoids_db, db, None) == Q
    assert hint(avoids_db, web, None) == SKIP
    assert hint(wants_db, db, None) == SKIP
    # Relabelled: comes to match the affinity, or stops matching the anti-affinity.
    assert hint(wants_db, web, make_pod("web", labels={"app": "db"}, node_name="n1")) == Q
    assert hint(avoids_db, db, make_pod("db", labels={"app": "web"}, node_name="n1")) == Q
    assert hint(wants_db, db, make_pod("db", labels={"app": "db", "v": "2"}, node_name="n1")) == SKIP


def test_interpodaffinity_node_change_hint() -> None:
    hint = _hint(interpodaffinity.new(None, None).events_to_register(), "Node", ActionType.ADD)
    assert hint(_affine("p", "podAffinity"), None, make_node("n1", labels={"zone": "a"})) == Q
    assert hint(_affine("p", "podAntiAffinity"), None, make_node("n1", labels={"zone": "a"})) == Q
    assert hint(_affine("p", "podAffinity"), None, make_node("n1")) == SKIP
    assert hint(make_pod("plain"), None, make_node("n1", labels={"zone": "a"})) == SKIP
