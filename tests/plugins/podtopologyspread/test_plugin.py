"""PodTopologySpread's factory, default constraints, PreFilter extensions and events."""

from __future__ import annotations

import pytest

from scheduler.api.objects import Pod
from scheduler.api.selectors import LabelSelector, Requirement
from scheduler.framework.nodeinfo import NodeInfo, PodInfo
from scheduler.framework.snapshot import Snapshot
from scheduler.framework.types import ActionType, ClusterEvent, Code, CycleState
from scheduler.plugins.podtopologyspread import NAME, PodTopologySpread, new
from scheduler.plugins.podtopologyspread.common import (
    SYSTEM_DEFAULT_CONSTRAINTS,
    default_selector,
)
from tests.plugins.podtopologyspread.helpers import (
    FOO,
    LIST_ARGS,
    FakeCluster,
    Selecting,
    filter_all,
    list_args,
    node,
    pod,
    service,
    setup,
    spread,
)
from tests.support.builders import make_snapshot
from tests.support.fakes import FakeHandle

OK, NO = Code.SUCCESS, Code.UNSCHEDULABLE


def test_factory_defaults_to_system_constraints() -> None:
    pl = new(None, FakeHandle(make_snapshot([])))
    assert isinstance(pl, PodTopologySpread)
    assert pl.name == NAME == "PodTopologySpread"
    assert pl.system_defaulted
    assert pl.default_constraints == SYSTEM_DEFAULT_CONSTRAINTS
    assert [(c.topology_key, c.max_skew, c.when_unsatisfiable) for c in SYSTEM_DEFAULT_CONSTRAINTS] == [
        ("kubernetes.io/hostname", 3, "ScheduleAnyway"),
        ("topology.kubernetes.io/zone", 5, "ScheduleAnyway"),
    ]


def test_factory_list_defaulting_uses_the_args_constraints() -> None:
    pl = new(list_args(spread(1, "node", "DoNotSchedule")), FakeHandle(make_snapshot([])))
    assert not pl.system_defaulted
    assert [(c.topology_key, c.max_skew) for c in pl.default_constraints] == [("node", 1)]


def test_factory_refuses_other_args() -> None:
    with pytest.raises(TypeError, match="want args to be of type PodTopologySpreadArgs, got dict"):
        new({}, FakeHandle(make_snapshot([])))


def test_events_to_register() -> None:
    pl = new(LIST_ARGS, FakeHandle(make_snapshot([])))
    assert pl.events_to_register() == [
        ClusterEvent("Pod", ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.UPDATE_POD_TOLERATION | ActionType.DELETE),
        ClusterEvent("Node", ActionType.ADD | ActionType.DELETE | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT),
    ]


REQ_FOO = Requirement("foo", "In", ("",))
REQ_APP = Requirement("app", "In", ("web",))
REQ_TIER = Requirement("tier", "Exists", ())


@pytest.mark.parametrize(
    ("name", "cluster", "owners", "want"),
    [
        ("no cluster backend", None, [], ()),
        ("cluster without listers", object(), [], ()),
        ("service selecting the pod", FakeCluster(services=[service({"foo": ""})]), [], (REQ_FOO,)),
        ("service not selecting the pod", FakeCluster(services=[service({"foo": "x"})]), [], ()),
        ("service with a nil selector selects nothing", FakeCluster(services=[Selecting(None)]), [], ()),
        (
            "owning replica set adds its selector",
            FakeCluster(services=[service({"foo": ""})], replica_sets=[Selecting(LabelSelector((REQ_APP, REQ_TIER)), "rs")]),
            [("ReplicaSet", "rs")],
            (REQ_FOO, REQ_APP, REQ_TIER),
        ),
        (
            "replica set of another name is not the owner",
            FakeCluster(replica_sets=[Selecting(LabelSelector((REQ_APP,)), "other")]),
            [("ReplicaSet", "rs")],
            (),
        ),
        (
            "stateful set owner",
            FakeCluster(stateful_sets=[Selecting(LabelSelector((REQ_APP,)), "ss")]),
            [("StatefulSet", "ss")],
            (REQ_APP,),
        ),
        (
            "replication controller owner",
            FakeCluster(replication_controllers=[Selecting(LabelSelector((REQ_APP,)), "rc")]),
            [("ReplicationController", "rc")],
            (REQ_APP,),
        ),
        (
            "owner of another kind",
            FakeCluster(stateful_sets=[Selecting(LabelSelector((REQ_APP,)), "ss")]),
            [("Job", "ss")],
            (),
        ),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_default_selector(name: str, cluster: object, owners: list[tuple[str, str]], want: tuple[Requirement, ...]) -> None:
    subject = pod("p", {"foo": "", "app": "web", "tier": "1"}, owners=owners)
    assert default_selector(subject, cluster).requirements == want


LIST_HARD = list_args(spread(1, "node", "DoNotSchedule"))
AB = [node("node-a", {"node": "node-a"}), node("node-b", {"node": "node-b"})]


def test_default_constraints_use_the_controllers_selector() -> None:
    cluster = FakeCluster(replica_sets=[Selecting(LabelSelector((REQ_FOO,)), "rs")])
    existing = [pod("p-a1", {"foo": ""}, on="node-a"), pod("p-b1", {"bar": ""}, on="node-b")]
    pl, snap = setup(AB, existing, args=LIST_HARD, cluster=cluster)
    incoming = pod("p", {"foo": ""}, owners=[("ReplicaSet", "rs")])
    state = CycleState()
    assert pl.pre_filter(state, incoming, snap.node_infos)[1].success
    assert {n: s.code for n, s in filter_all(pl, snap, incoming, state).items()} == {"node-a": NO, "node-b": OK}


def test_default_constraints_do_not_apply_without_a_selector() -> None:
    pl, snap = setup(AB, [pod("p-a1", {"foo": ""}, on="node-a")], args=LIST_HARD)
    _, status = pl.pre_filter(CycleState(), pod("p", {"foo": ""}, owners=[("ReplicaSet", "rs")]), snap.node_infos)
    assert status.code == Code.SKIP


def test_own_constraints_replace_the_defaults() -> None:
    cluster = FakeCluster(services=[service({"foo": ""})])
    pl, snap = setup(AB, [pod("p-a1", {"foo": ""}, on="node-a")], args=LIST_HARD, cluster=cluster)
    soft_only = pod("p", {"foo": ""}, constraints=[spread(1, "node", "ScheduleAnyway", FOO)])
    _, status = pl.pre_filter(CycleState(), soft_only, snap.node_infos)
    assert status.code == Code.SKIP


# Not an upstream table: AddPod / RemovePod as preemption's dry runs use them.
INCOMING = pod("p", {"foo": ""}, constraints=[spread(1, "node", "DoNotSchedule", FOO)])


def _prepared(existing: list[Pod]) -> tuple[PodTopologySpread, CycleState, Snapshot]:
    nodes = [*AB, node("node-z", {"zone": "z"})]
    pl, snap = setup(nodes, existing)
    state = CycleState()
    assert pl.pre_filter(state, INCOMING, snap.node_infos)[1].success
    return pl, state, snap


def _codes(pl: PodTopologySpread, state: CycleState, snap: Snapshot) -> dict[str, Code]:
    return {n: s.code for n, s in filter_all(pl, snap, INCOMING, state).items()}


def _info(snap: Snapshot, name: str) -> NodeInfo:
    found = snap.get(name)
    assert found is not None
    return found


NEVER = Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def test_remove_then_add_pod_update_counts_and_minimum() -> None:
    victim = pod("p-a1", {"foo": ""}, on="node-a")
    pl, state, snap = _prepared([victim])
    assert _codes(pl, state, snap) == {"node-a": NO, "node-b": OK, "node-z": NEVER}
    ext = pl.pre_filter_extensions()
    node_a, node_b = _info(snap, "node-a"), _info(snap, "node-b")
    assert ext.remove_pod(state, INCOMING, PodInfo.of(victim), node_a).success
    assert _codes(pl, state, snap) == {"node-a": OK, "node-b": OK, "node-z": NEVER}
    newcomer = pod("p-b1", {"foo": ""})
    assert ext.add_pod(state, INCOMING, PodInfo.of(newcomer), node_b).success
    assert _codes(pl, state, snap) == {"node-a": OK, "node-b": NO, "node-z": NEVER}


@pytest.mark.parametrize(
    ("name", "added", "target"),
    [
        ("pod of another namespace", pod("x", {"foo": ""}, namespace="other"), "node-b"),
        ("pod not matching the selector", pod("x", {"bar": ""}), "node-b"),
        ("node lacking the topology key", pod("x", {"foo": ""}), "node-z"),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_add_pod_ignored(name: str, added: Pod, target: str) -> None:
    pl, state, snap = _prepared([])
    ext = pl.pre_filter_extensions()
    assert ext.add_pod(state, INCOMING, PodInfo.of(added), _info(snap, target)).success
    assert _codes(pl, state, snap) == {"node-a": OK, "node-b": OK, "node-z": NEVER}


def test_clone_keeps_the_original_counts() -> None:
    pl, state, snap = _prepared([])
    twin = state.clone()
    ext = pl.pre_filter_extensions()
    assert ext.add_pod(twin, INCOMING, PodInfo.of(pod("x", {"foo": ""})), _info(snap, "node-a")).success
    assert _codes(pl, twin, snap)["node-a"] == NO
    assert _codes(pl, state, snap)["node-a"] == OK


def test_add_pod_without_pre_filter_is_an_error() -> None:
    pl, _state, snap = _prepared([])
    status = pl.add_pod(CycleState(), INCOMING, PodInfo.of(pod("x", {"foo": ""})), _info(snap, "node-a"))
    assert status.code == Code.ERROR
