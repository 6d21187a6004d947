"""NodePorts: host-port conflicts, PreFilter skip, restartable init containers, batch agreement."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.framework.nodeinfo import ProtocolPort
from scheduler.framework.types import ActionType, ClusterEvent, Code, CycleState
from scheduler.plugins import nodeports
from scheduler.plugins.nodeports import REASON, NodePorts, host_ports
from tests.support.batch import assert_batch_filter_agrees
from tests.support.builders import make_node, make_pod, make_snapshot
from tests.support.examples import examples
from tests.support.fakes import FakeHandle


def ports(*infos: str) -> list[dict[str, Any]]:
    """`PROTOCOL/hostIP/port` strings, as upstream's newPod helper takes them."""
    out = []
    for info in infos:
        protocol, ip, port = info.split("/")
        entry: dict[str, Any] = {"containerPort": int(port), "hostPort": int(port), "protocol": protocol}
        if ip:
            entry["hostIP"] = ip
        out.append(entry)
    return out


def pod_with_ports(name: str, *infos: str, node: str = "") -> Any:
    return make_pod(name, node_name=node, containers=[{"name": "c", "image": "i", "ports": ports(*infos)}])


def setup(existing: list[str], wanted: list[str]) -> tuple[NodePorts, Any, Any]:
    used = [pod_with_ports("old", *existing, node="m1")] if existing else []
    snap = make_snapshot([make_node("m1")], used)
    return nodeports.new(None, FakeHandle(snap)), snap, pod_with_ports("new", *wanted)


# kubernetes/kubernetes pkg/scheduler/framework/plugins/nodeports/node_ports_test.go TestNodePorts
CASES: list[tuple[str, list[str], list[str], bool]] = [
    ("other port", ["UDP/127.0.0.1/9090"], ["UDP/127.0.0.1/8080"], True),
    ("same udp port", ["UDP/127.0.0.1/8080"], ["UDP/127.0.0.1/8080"], False),
    ("same tcp port", ["TCP/127.0.0.1/8080"], ["TCP/127.0.0.1/8080"], False),
    ("different host ip", ["TCP/127.0.0.2/8080"], ["TCP/127.0.0.1/8080"], True),
    ("different protocol", ["TCP/127.0.0.1/8080"], ["UDP/127.0.0.1/8080"], True),
    ("second udp port conflict", ["UDP/127.0.0.1/8080"], ["UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"], False),
    (
        "first tcp port conflict",
        ["TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"],
        ["TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"],
        False,
    ),
    ("first tcp port conflict due to 0.0.0.0 hostIP", ["TCP/127.0.0.1/8001"], ["TCP/0.0.0.0/8001"], False),
    ("TCP hostPort conflict due to 0.0.0.0 hostIP", ["TCP/127.0.0.1/8001"], ["TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"], False),
    ("second tcp port conflict to 0.0.0.0 hostIP", ["TCP/0.0.0.0/8001"], ["TCP/127.0.0.1/8001"], False),
    ("second different protocol", ["TCP/0.0.0.0/8001"], ["UDP/127.0.0.1/8001"], True),
    ("UDP hostPort conflict due to 0.0.0.0 hostIP", ["TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"], ["UDP/127.0.0.1/8001"], False),
    # Not in the upstream table: an empty hostIP means 0.0.0.0 on either side.
    ("empty wanted hostIP is 0.0.0.0", ["TCP/10.0.0.1/80"], ["TCP//80"], False),
    ("empty used hostIP is 0.0.0.0", ["TCP//80"], ["TCP/10.0.0.1/80"], False),
    ("no used ports", [], ["TCP//80"], True),
]


@pytest.mark.parametrize(("existing", "wanted", "fits"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_filter(existing: list[str], wanted: list[str], fits: bool) -> None:
    plugin, snap, pod = setup(existing, wanted)
    state = CycleState()
    result, status = plugin.pre_filter(state, pod, snap.node_infos)
    assert result is None and status.code == Code.SUCCESS
    status = plugin.filter(state, pod, snap.node_infos[0])
    if fits:
        assert status.code == Code.SUCCESS
    else:
        # Unschedulable, not Unresolvable: preemption can free a port.
        assert (status.code, status.reasons) == (Code.UNSCHEDULABLE, (REASON,))
    assert_batch_filter_agrees(plugin, state, pod, snap, np.zeros(1, dtype=np.int64))


def test_pre_filter_skips_a_pod_without_host_ports() -> None:
    plugin, snap, _ = setup([], [])
    result, status = plugin.pre_filter(CycleState(), make_pod("p"), snap.node_infos)
    assert result is None and status.code == Code.SKIP


def test_filter_without_pre_filter_is_an_error() -> None:
    # node_ports_test.go TestPreFilterDisabled
    plugin, snap, pod = setup([], ["TCP//80"])
    status = plugin.filter(CycleState(), pod, snap.node_infos[0])
    assert status.code == Code.ERROR
    assert status.message == 'reading "PreFilterNodePorts" from cycleState: not found'


def test_host_ports_take_restartable_init_containers_only() -> None:
    # schedutil.GetHostPorts: sidecars (restartPolicy Always) run all along; other init containers end.
    pod = make_pod(
        "p",
        containers=[{"name": "c", "image": "i", "ports": ports("TCP//80")}],
        spec={
            "initContainers": [
                {"name": "init", "image": "i", "ports": ports("TCP//81")},
                {"name": "sidecar", "image": "i", "restartPolicy": "Always", "ports": ports("UDP/10.0.0.1/82")},
            ]
        },
    )
    assert host_ports(pod) == (ProtocolPort("10.0.0.1", "UDP", 82), ProtocolPort("0.0.0.0", "TCP", 80))


def test_events_to_register() -> None:
    assert NodePorts().events_to_register() == [ClusterEvent("Pod", ActionType.DELETE), ClusterEvent("Node", ActionType.ADD)]


# ----- property: batch == per node ---------------------------------------------------------
port_st = st.builds(
    lambda proto, ip, port: f"{proto}/{ip}/{port}",
    st.sampled_from(["TCP", "UDP"]),
    st.sampled_from(["", "0.0.0.0", "127.0.0.1", "10.0.0.1"]),
    st.sampled_from([80, 443, 8080]),
)


@settings(max_examples=examples(150), deadline=None)
@given(
    used=st.lists(st.lists(st.lists(port_st, max_size=2), max_size=2), min_size=1, max_size=6),
    wanted=st.lists(port_st, min_size=1, max_size=3),
    data=st.data(),
)
def test_batch_agrees_with_per_node(used: list[list[list[str]]], wanted: list[str], data: st.DataObject) -> None:
    nodes = [make_node(f"n{i}") for i in range(len(used))]
    existing = [
        pod_with_ports(f"old-{i}-{j}", *infos, node=f"n{i}")
        for i, per_node in enumerate(used)
        for j, infos in enumerate(per_node)
    ]
    snap = make_snapshot(nodes, existing)
    plugin = nodeports.new(None, FakeHandle(snap))
    pod = pod_with_ports("new", *wanted)
    state = CycleState()
    assert plugin.pre_filter(state, pod, snap.node_infos)[1].success
    order = data.draw(st.permutations(range(len(used))))
    positions = np.asarray(order[: data.draw(st.integers(0, len(order)))], dtype=np.int64)
    assert_batch_filter_agrees(plugin, state, pod, snap, positions)
