"""NodeResourcesFit: PreFilter, Filter (per node and batch), events and factory."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.api.objects import Node, Pod
from scheduler.config.args import NodeResourcesFitArgs, ScoringStrategy
from scheduler.framework.snapshot import Snapshot
from scheduler.framework.types import ActionType, ClusterEvent, Code, CycleState
from scheduler.plugins.noderesources import fit
from tests.plugins.noderesources.helpers import (
    EXTENDED_A,
    EXTENDED_B,
    HUGEPAGES_A,
    KUBERNETES_IO_A,
    KUBERNETES_IO_B,
    SCALARS,
    node,
    pod,
    random_cluster,
    random_pod,
)
from tests.support.builders import make_snapshot
from tests.support.examples import examples
from tests.support.fakes import FakeHandle

OK = Code.SUCCESS
NO = Code.UNSCHEDULABLE
NEVER = Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def cpu_mem(cpu: int, memory: int, **scalars: int) -> dict[str, str]:
    """Requests as newResourcePod builds them: millicores, bytes, and scalars by name."""
    out = {"cpu": f"{cpu}m", "memory": str(memory)}
    out.update({name: str(qty) for name, qty in scalars.items()})
    return out


def scalar(name: str, qty: int, cpu: int = 1, memory: int = 1) -> dict[str, str]:
    """cpu/memory plus one scalar resource."""
    return {**cpu_mem(cpu, memory), name: str(qty)}


def args(ignored: tuple[str, ...] = (), groups: tuple[str, ...] = ()) -> NodeResourcesFitArgs:
    """NodeResourcesFitArgs with the default scoring strategy."""
    return NodeResourcesFitArgs(ignored_resources=ignored, ignored_resource_groups=groups)


def run_filter(
    incoming: Pod, nodes: list[Node], existing: list[Pod], plugin_args: object = None
) -> list[tuple[Code, tuple[str, ...]]]:
    """Filter every node both ways, assert the two agree, return (code, reasons) per node."""
    snap = make_snapshot(nodes, existing)
    plugin = fit.new(plugin_args, FakeHandle(snap))
    state = CycleState()
    result, status = plugin.pre_filter(state, incoming, snap.node_infos)
    assert result is None and status.success
    per_node = []
    for info in snap.node_infos:
        got = plugin.filter(state, incoming, info)
        per_node.append((got.code, got.reasons))
    batch = plugin.filter_batch(state, incoming, snap, np.arange(snap.num_nodes, dtype=np.int64))
    batched = [(Code(int(c)), batch.reasons(i) if c != OK else ()) for i, c in enumerate(batch.codes)]
    assert batched == per_node
    return per_node


# Node of TestEnoughRequests: makeAllocatableResources(10, 20, 32, 5, 20, 5).
def enough_node() -> Node:
    return node("n", "10m", "20", pods=32, extra={EXTENDED_A: 5, "ephemeral-storage": 20, HUGEPAGES_A: 5})


# Cases from pkg/scheduler/framework/plugins/noderesources/fit_test.go (TestEnoughRequests),
# with current upstream's rule: a request larger than the node's whole allocatable is
# UnschedulableAndUnresolvable (InsufficientResource.Unresolvable).
ENOUGH = [
    ("no resources requested always fits", pod(), cpu_mem(10, 20), args(), OK, ()),
    ("too many resources fails", pod(cpu_mem(1, 1)), cpu_mem(10, 20), args(), NO, ("Insufficient cpu", "Insufficient memory")),
    ("init container cpu", pod(cpu_mem(1, 1), init=(cpu_mem(3, 1),)), cpu_mem(8, 19), args(), NO, ("Insufficient cpu",)),
    (
        "highest init container cpu",
        pod(cpu_mem(1, 1), init=(cpu_mem(3, 1), cpu_mem(2, 1))),
        cpu_mem(8, 19),
        args(),
        NO,
        ("Insufficient cpu",),
    ),
    ("init container memory", pod(cpu_mem(1, 1), init=(cpu_mem(1, 3),)), cpu_mem(9, 19), args(), NO, ("Insufficient memory",)),
    (
        "highest init container memory",
        pod(cpu_mem(1, 1), init=(cpu_mem(1, 3), cpu_mem(1, 2))),
        cpu_mem(9, 19),
        args(),
        NO,
        ("Insufficient memory",),
    ),
    ("init container is max not sum", pod(cpu_mem(1, 1), init=(cpu_mem(1, 1),)), cpu_mem(9, 19), args(), OK, ()),
    (
        "multiple init containers are max not sum",
        pod(cpu_mem(1, 1), init=(cpu_mem(1, 1), cpu_mem(1, 1))),
        cpu_mem(9, 19),
        args(),
        OK,
        (),
    ),
    ("both resources fit", pod(cpu_mem(1, 1)), cpu_mem(5, 5), args(), OK, ()),
    ("one resource memory fits", pod(cpu_mem(2, 1)), cpu_mem(9, 5), args(), NO, ("Insufficient cpu",)),
    ("one resource cpu fits", pod(cpu_mem(1, 2)), cpu_mem(5, 19), args(), NO, ("Insufficient memory",)),
    ("equal edge case", pod(cpu_mem(5, 1)), cpu_mem(5, 19), args(), OK, ()),
    ("equal edge case for init container", pod(cpu_mem(4, 1), init=(cpu_mem(5, 1),)), cpu_mem(5, 19), args(), OK, ()),
    ("extended resource fits", pod(cpu_mem(0, 0, **{EXTENDED_A: 1})), cpu_mem(0, 0), args(), OK, ()),
    (
        "extended resource fits for init container",
        pod(cpu_mem(0, 0), init=(cpu_mem(0, 0, **{EXTENDED_A: 1}),)),
        cpu_mem(0, 0),
        args(),
        OK,
        (),
    ),
    (
        "extended resource capacity enforced",
        pod(scalar(EXTENDED_A, 10)),
        scalar(EXTENDED_A, 0, 0, 0),
        args(),
        NEVER,
        (f"Insufficient {EXTENDED_A}",),
    ),
    (
        "extended resource capacity enforced for init container",
        pod(cpu_mem(0, 0), init=(scalar(EXTENDED_A, 10),)),
        scalar(EXTENDED_A, 0, 0, 0),
        args(),
        NEVER,
        (f"Insufficient {EXTENDED_A}",),
    ),
    (
        "extended resource allocatable enforced",
        pod(scalar(EXTENDED_A, 1)),
        scalar(EXTENDED_A, 5, 0, 0),
        args(),
        NO,
        (f"Insufficient {EXTENDED_A}",),
    ),
    (
        "extended resource allocatable enforced for init container",
        pod(cpu_mem(0, 0), init=(scalar(EXTENDED_A, 1),)),
        scalar(EXTENDED_A, 5, 0, 0),
        args(),
        NO,
        (f"Insufficient {EXTENDED_A}",),
    ),
    (
        "extended resource enforced for multiple containers",
        pod(scalar(EXTENDED_A, 3), scalar(EXTENDED_A, 3)),
        scalar(EXTENDED_A, 2, 0, 0),
        args(),
        NEVER,
        (f"Insufficient {EXTENDED_A}",),
    ),
    (
        "extended resource admits multiple init containers",
        pod(cpu_mem(0, 0), init=(scalar(EXTENDED_A, 3), scalar(EXTENDED_A, 3))),
        scalar(EXTENDED_A, 2, 0, 0),
        args(),
        OK,
        (),
    ),
    (
        "extended resource enforced for multiple init containers",
        pod(cpu_mem(0, 0), init=(scalar(EXTENDED_A, 6), scalar(EXTENDED_A, 3))),
        scalar(EXTENDED_A, 2, 0, 0),
        args(),
        NEVER,
        (f"Insufficient {EXTENDED_A}",),
    ),
    (
        "extended resource enforced for unknown resource",
        pod(scalar(EXTENDED_B, 1)),
        cpu_mem(0, 0),
        args(),
        NEVER,
        (f"Insufficient {EXTENDED_B}",),
    ),
    (
        "unknown resource for init container",
        pod(cpu_mem(0, 0), init=(scalar(EXTENDED_B, 1),)),
        cpu_mem(0, 0),
        args(),
        NEVER,
        (f"Insufficient {EXTENDED_B}",),
    ),
    (
        "kubernetes.io resource capacity enforced",
        pod(scalar(KUBERNETES_IO_A, 10)),
        cpu_mem(0, 0),
        args(),
        NEVER,
        (f"Insufficient {KUBERNETES_IO_A}",),
    ),
    (
        "kubernetes.io resource for init container",
        pod(cpu_mem(0, 0), init=(scalar(KUBERNETES_IO_B, 10),)),
        cpu_mem(0, 0),
        args(),
        NEVER,
        (f"Insufficient {KUBERNETES_IO_B}",),
    ),
    (
        "hugepages resource capacity enforced",
        pod(scalar(HUGEPAGES_A, 10)),
        scalar(HUGEPAGES_A, 0, 0, 0),
        args(),
        NEVER,
        (f"Insufficient {HUGEPAGES_A}",),
    ),
    (
        "hugepages capacity enforced for init container",
        pod(cpu_mem(0, 0), init=(scalar(HUGEPAGES_A, 10),)),
        scalar(HUGEPAGES_A, 0, 0, 0),
        args(),
        NEVER,
        (f"Insufficient {HUGEPAGES_A}",),
    ),
    (
        "hugepages enforced for multiple containers",
        pod(scalar(HUGEPAGES_A, 3), scalar(HUGEPAGES_A, 3)),
        scalar(HUGEPAGES_A, 2, 0, 0),
        args(),
        NEVER,
        (f"Insufficient {HUGEPAGES_A}",),
    ),
    (
        "hugepages used up but request fits the node",
        pod(scalar(HUGEPAGES_A, 3)),
        scalar(HUGEPAGES_A, 3, 0, 0),
        args(),
        NO,
        (f"Insufficient {HUGEPAGES_A}",),
    ),
    ("skip checking ignored extended resource", pod(scalar(EXTENDED_B, 1)), cpu_mem(0, 0), args(ignored=(EXTENDED_B,)), OK, ()),
    ("resources + pod overhead fits", pod(cpu_mem(1, 1), overhead={"cpu": "3m", "memory": "13"}), cpu_mem(5, 5), args(), OK, ()),
    (
        "requests + overhead does not fit for memory",
        pod(cpu_mem(1, 1), overhead={"cpu": "1m", "memory": "15"}),
        cpu_mem(5, 5),
        args(),
        NO,
        ("Insufficient memory",),
    ),
    (
        "ignored resource groups skip extended but not kubernetes.io",
        pod({**cpu_mem(1, 1), EXTENDED_B: "1", KUBERNETES_IO_A: "1"}),
        cpu_mem(0, 0),
        args(groups=("example.com",)),
        NEVER,
        (f"Insufficient {KUBERNETES_IO_A}",),
    ),
    (
        "ignored resources do not apply to kubernetes.io names",
        pod(scalar(KUBERNETES_IO_A, 1)),
        cpu_mem(0, 0),
        args(ignored=(KUBERNETES_IO_A,), groups=("kubernetes.io",)),
        NEVER,
        (f"Insufficient {KUBERNETES_IO_A}",),
    ),
    (
        "extended resource request of zero is skipped",
        pod(cpu_mem(1, 1, **{EXTENDED_A: 0})),
        scalar(EXTENDED_A, 6, 0, 0),
        args(),
        OK,
        (),
    ),
    (
        "pod-level and container-level resources fit",
        pod(cpu_mem(1, 1), pod_level={"cpu": "1m", "memory": "2"}),
        cpu_mem(5, 5),
        args(),
        OK,
        (),
    ),
    (
        "pod-level cpu does not fit",
        pod(cpu_mem(1, 1), pod_level={"cpu": "7m", "memory": "2"}),
        cpu_mem(5, 5),
        args(),
        NO,
        ("Insufficient cpu",),
    ),
    (
        "pod-level memory does not fit",
        pod(cpu_mem(1, 1), pod_level={"cpu": "3m", "memory": "2"}),
        cpu_mem(5, 19),
        args(),
        NO,
        ("Insufficient memory",),
    ),
    (
        "pod-level with init containers",
        pod(cpu_mem(1, 1), init=(cpu_mem(1, 1),), pod_level={"cpu": "3m", "memory": "2"}),
        cpu_mem(5, 19),
        args(),
        NO,
        ("Insufficient memory",),
    ),
    (
        "cpu request larger than the node is unresolvable",
        pod(cpu_mem(11, 1)),
        cpu_mem(0, 0),
        args(),
        NEVER,
        ("Insufficient cpu",),
    ),
    (
        "memory over the node and cpu short: unresolvable wins",
        pod(cpu_mem(2, 21)),
        cpu_mem(9, 0),
        args(),
        NEVER,
        ("Insufficient cpu", "Insufficient memory"),
    ),
]


@pytest.mark.parametrize(
    ("incoming", "used", "plugin_args", "code", "reasons"), [c[1:] for c in ENOUGH], ids=[c[0] for c in ENOUGH]
)
def test_enough_requests(incoming: Pod, used: dict[str, str], plugin_args: object, code: Code, reasons: tuple[str, ...]) -> None:
    existing = pod(used, node="n")
    assert run_filter(incoming, [enough_node()], [existing], plugin_args) == [(code, reasons)]


# TestNotEnoughRequests (fit_test.go): the node allows one pod and already runs one.
NOT_ENOUGH = [
    ("even without specified resources, no space for another pod", pod(), cpu_mem(10, 20)),
    ("even if both resources fit, no space for another pod", pod(cpu_mem(1, 1)), cpu_mem(5, 5)),
    ("even for equal edge case, no space for another pod", pod(cpu_mem(5, 1)), cpu_mem(5, 19)),
    ("even for equal edge case with init container", pod(cpu_mem(5, 1), init=(cpu_mem(5, 1),)), cpu_mem(5, 19)),
]


@pytest.mark.parametrize(("incoming", "used"), [c[1:] for c in NOT_ENOUGH], ids=[c[0] for c in NOT_ENOUGH])
def test_not_enough_pods(incoming: Pod, used: dict[str, str]) -> None:
    only = node("n", "10m", "20", pods=1)
    assert run_filter(incoming, [only], [pod(used, node="n")]) == [(NO, ("Too many pods",))]


def test_too_many_pods_is_listed_first_and_stays_resolvable() -> None:
    only = node("n", "10m", "20", pods=1)
    got = run_filter(pod(cpu_mem(6, 1)), [only], [pod(cpu_mem(5, 5), node="n")])
    assert got == [(NO, ("Too many pods", "Insufficient cpu"))]


# TestStorageRequests (fit_test.go): ephemeral-storage on the TestEnoughRequests node (20).
STORAGE = [
    ("empty storage requested, and pod fits", pod(cpu_mem(1, 1)), cpu_mem(2, 10), OK, ()),
    (
        "storage ephemeral local storage request exceeds allocatable",
        pod({"ephemeral-storage": "25"}),
        cpu_mem(2, 2),
        NEVER,
        ("Insufficient ephemeral-storage",),
    ),
    ("ephemeral local storage is sufficient", pod({"ephemeral-storage": "10"}), cpu_mem(2, 2), OK, ()),
    (
        "ephemeral local storage used up",
        pod({"ephemeral-storage": "10"}),
        {**cpu_mem(2, 2), "ephemeral-storage": "15"},
        NO,
        ("Insufficient ephemeral-storage",),
    ),
    (
        "pod does not fit for cpu even though storage fits",
        pod({**cpu_mem(2, 1), "ephemeral-storage": "10"}),
        cpu_mem(9, 2),
        NO,
        ("Insufficient cpu",),
    ),
]


@pytest.mark.parametrize(("incoming", "used", "code", "reasons"), [c[1:] for c in STORAGE], ids=[c[0] for c in STORAGE])
def test_storage_requests(incoming: Pod, used: dict[str, str], code: Code, reasons: tuple[str, ...]) -> None:
    assert run_filter(incoming, [enough_node()], [pod(used, node="n")]) == [(code, reasons)]


def test_filter_without_prefilter_is_an_error() -> None:
    # TestPreFilterDisabled (fit_test.go).
    snap = make_snapshot([enough_node()])
    plugin = fit.new(None, FakeHandle(snap))
    status = plugin.filter(CycleState(), pod(), snap.node_infos[0])
    assert status.code == Code.ERROR
    assert status.message == 'error reading "PreFilterNodeResourcesFit" from cycleState: not found'
    batch = plugin.filter_batch(CycleState(), pod(), snap, np.arange(1, dtype=np.int64))
    assert list(batch.codes) == [Code.ERROR]
    assert batch.reasons(0) == (status.message,)


def test_prefilter_never_skips_even_for_best_effort_pods() -> None:
    snap = make_snapshot([enough_node()])
    _, status = fit.new(None, FakeHandle(snap)).pre_filter(CycleState(), pod(), snap.node_infos)
    assert status.code == Code.SUCCESS


def test_no_prefilter_extensions_and_no_normalize() -> None:
    plugin = fit.new(None, None)
    assert plugin.pre_filter_extensions() is None
    assert plugin.score_extensions() is None
    assert plugin.name == "NodeResourcesFit"


def test_events_to_register() -> None:
    # EventsToRegister (fit.go) with queueing hints (GA), InPlacePodVerticalScaling on.
    assert fit.new(None, None).events_to_register() == [
        ClusterEvent("Pod", ActionType.DELETE | ActionType.UPDATE_POD_SCALE_DOWN),
        ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE),
    ]


def test_unknown_strategy_is_refused() -> None:
    bad = NodeResourcesFitArgs(scoring_strategy=ScoringStrategy(type="Nope"))
    with pytest.raises(ValueError, match="scoring strategy Nope is not supported"):
        fit.new(bad, None)


def test_wrong_args_type_is_refused() -> None:
    with pytest.raises(TypeError, match="want args to be of type NodeResourcesFitArgs, got dict"):
        fit.new({}, None)


@pytest.mark.parametrize(
    ("name", "extended"),
    [
        ("example.com/gpu", True),
        ("nvidia.com/gpu", True),
        ("cpu", False),
        ("kubernetes.io/x", False),
        ("hugepages-2Mi", False),
        ("requests.example.com/x", False),
    ],
    ids=["domain", "nvidia", "native", "kubernetes.io prefix", "hugepages", "requests prefix"],
)
def test_only_extended_resources_can_be_ignored(name: str, extended: bool) -> None:
    assert fit.is_ignored(name, {name}, ()) is extended


def test_fits_reports_amounts() -> None:
    # Fits(...) as the kubelet's admission uses it: requested, used and capacity per shortage.
    snap = make_snapshot([enough_node()], [pod(cpu_mem(10, 20), node="n")])
    got = fit.fits(pod(cpu_mem(1, 1)), snap.node_infos[0])
    assert got == [
        fit.InsufficientResource("cpu", "Insufficient cpu", 1, 10, 10, False),
        fit.InsufficientResource("memory", "Insufficient memory", 1, 20, 20, False),
    ]


@settings(max_examples=examples(150), deadline=None)
@given(cluster=random_cluster(), incoming=random_pod(), data=st.data())
def test_filter_batch_matches_per_node(cluster: Snapshot, incoming: Pod, data: st.DataObject) -> None:
    ignored = tuple(data.draw(st.lists(st.sampled_from(SCALARS), max_size=2)))
    groups = tuple(data.draw(st.lists(st.sampled_from(("example.com", "kubernetes.io")), max_size=1)))
    plugin = fit.new(args(ignored, groups), FakeHandle(cluster))
    state = CycleState()
    plugin.pre_filter(state, incoming, cluster.node_infos)
    positions = np.asarray(data.draw(st.permutations(range(cluster.num_nodes))), dtype=np.int64)
    batch = plugin.filter_batch(state, incoming, cluster, positions)
    by_key: dict[int, tuple[str, ...]] = {}
    for i, pos in enumerate(positions):
        want = plugin.filter(state, incoming, cluster.node_infos[pos])
        assert Code(int(batch.codes[i])) == want.code
        if want.code != Code.SUCCESS:
            assert batch.reasons(i) == want.reasons
            # Equal keys promise equal reasons (the failure counts group by them).
            assert batch.keys is not None
            assert by_key.setdefault(int(batch.keys[i]), want.reasons) == want.reasons


def test_batch_reasons_come_from_the_arrays_at_call_time() -> None:
    snap = make_snapshot([enough_node()], [pod(cpu_mem(9, 0), node="n")])
    plugin = fit.new(None, FakeHandle(snap))
    state = CycleState()
    incoming = pod(cpu_mem(2, 1))
    plugin.pre_filter(state, incoming, snap.node_infos)
    batch = plugin.filter_batch(state, incoming, snap, np.arange(1, dtype=np.int64))
    snap.add_pod(pod(cpu_mem(0, 20)), "n")
    assert batch.reasons(0) == ("Insufficient cpu",)
