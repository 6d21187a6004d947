"""Coscheduling: cases ported from koordinator-sh/koordinator
`pkg/scheduler/plugins/coscheduling/core/core_test.go`, `coscheduling_test.go` and
`plugin_service_test.go`, run through the engine (loader, Scheduler, extension points)."""

from __future__ import annotations

import pathlib
from typing import Any

import pytest

from scheduler.config.args import CoschedulingArgs
from scheduler.framework.types import Code, CycleState
from scheduler.plugins.coscheduling.controller import next_status
from scheduler.plugins.coscheduling.plugin import Coscheduling
from scheduler.scheduler import Scheduler
from tests.plugins.koord import config, engine, gang_pod, node, node_of, pod

CFG = config("Coscheduling")


def plugin(sched: Scheduler) -> Coscheduling:
    cs = sched.profiles["default-scheduler"].plugins["Coscheduling"]
    assert isinstance(cs, Coscheduling)
    return cs


def live(sched: Scheduler, name: str) -> Any:
    return next(p for p in sched.cluster.list_pods() if p.name == name)


# core_test.go TestPlugin_PreFilter / PreEnqueue: the basic gang checks and their wording.
PRE_ENQUEUE = [
    ("pod without a gang passes", [pod("p")], "p", Code.SUCCESS, ""),
    (
        "gang without min-available has not init",
        [pod("p", annotations={"gang.scheduling.koordinator.sh/name": "g"})],
        "p",
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "gang has not init, gangName: default/g, podName: default/p",
    ),
    (
        "children not collected enough",
        [gang_pod("p1", "g", 2)],
        "p1",
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "gangGroup [default/g] basic check: memberGangs [default/g] child pod not collect enough, current gang: default/g, podName: default/p1",
    ),
    ("enough children pass", [gang_pod("p1", "g", 2), gang_pod("p2", "g", 2)], "p1", Code.SUCCESS, ""),
    (
        "a member gang of the group does not exist",
        [gang_pod("p1", "g1", 1, groups='["default/g1","default/g2"]')],
        "p1",
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "gangGroup [default/g1 default/g2] basic check: memberGangs [default/g2] doesn't exists, current gang: default/g1, podName: default/p1",
    ),
    (
        "once satisfied gang passes with one child",
        [gang_pod("p1", "g", 3), {**gang_pod("p0", "g", 3), "spec": {**gang_pod("p0", "g", 3)["spec"], "nodeName": "n1"}}],
        "p1",
        Code.SUCCESS,
        "",
    ),
]


@pytest.mark.parametrize(("docs", "target", "code", "message"), [c[1:] for c in PRE_ENQUEUE], ids=[c[0] for c in PRE_ENQUEUE])
def test_pre_enqueue(tmp_path: pathlib.Path, docs: list[dict[str, Any]], target: str, code: Code, message: str) -> None:
    sched = engine(tmp_path, [node("n1"), *docs], CFG)
    status = plugin(sched).pre_enqueue(live(sched, target))
    assert status.code == code
    assert status.message == message


# core_test.go TestPermit: Wait until the group is satisfied, then everyone is allowed.
PERMIT = [
    ("lone member of a gang of two waits", [gang_pod("a1", "a", 2), gang_pod("a2", "a", 2)], ["a1"], [Code.WAIT]),
    (
        "second member completes the gang",
        [gang_pod("a1", "a", 2), gang_pod("a2", "a", 2)],
        ["a1", "a2"],
        [Code.WAIT, Code.SUCCESS],
    ),
    (
        "group waits for its other gang",
        [
            gang_pod("a1", "a", 1, groups='["default/a","default/b"]'),
            gang_pod("b1", "b", 1, groups='["default/a","default/b"]'),
        ],
        ["a1", "b1"],
        [Code.WAIT, Code.SUCCESS],
    ),
    ("pod without a gang succeeds", [pod("p")], ["p"], [Code.SUCCESS]),
]


@pytest.mark.parametrize(("docs", "order", "codes"), [c[1:] for c in PERMIT], ids=[c[0] for c in PERMIT])
def test_permit(tmp_path: pathlib.Path, docs: list[dict[str, Any]], order: list[str], codes: list[Code]) -> None:
    sched = engine(tmp_path, [node("n1"), *docs], CFG)
    cs = plugin(sched)
    got = [cs.permit(CycleState(), live(sched, name).with_changes(node_name="n1"), "n1")[0].code for name in order]
    assert got == codes


def test_permit_waits_the_gang_waiting_time(tmp_path: pathlib.Path) -> None:
    sched = engine(tmp_path, [node("n1"), gang_pod("a1", "a", 2, waiting_time="30s"), gang_pod("a2", "a", 2)], CFG)
    status, timeout = plugin(sched).permit(CycleState(), live(sched, "a1"), "n1")
    assert (status.code, timeout) == (Code.WAIT, 30.0)


# coscheduling_test.go TestPostFilter: Strict rejects the group's waiting pods, NonStrict does not.
POST_FILTER = [
    ("strict", "Strict", 'Gang "default/g" gets rejected due to pod is unschedulable', ["Rejected"]),
    ("non-strict", "NonStrict", "", ["Waiting"]),
]


@pytest.mark.parametrize(("mode", "message", "waiting_outcome"), [c[1:] for c in POST_FILTER], ids=[c[0] for c in POST_FILTER])
def test_post_filter(tmp_path: pathlib.Path, mode: str, message: str, waiting_outcome: list[str]) -> None:
    # g-0 fits on the 2-cpu node and waits; g-1 (3 cpu) fits nowhere.
    docs = [node("n1", cpu="2"), gang_pod("g-0", "g", 2, cpu="2", mode=mode), gang_pod("g-1", "g", 2, cpu="3", mode=mode)]
    sched = engine(tmp_path, docs, CFG)
    sched.run(max_attempts=2)
    sched._run_tasks()
    first, second = sched.records[0], sched.records[1]
    assert second.outcome == "Unschedulable"
    if message:
        assert second.message.endswith(f" {message}")
    else:
        assert "gets rejected" not in second.message
    assert [first.outcome] == waiting_outcome


def test_strict_gang_never_binds_partially_and_frees_what_it_held(tmp_path: pathlib.Path) -> None:
    docs = (
        [node("n1", cpu="4"), node("n2", cpu="2")] + [gang_pod(f"g-{i}", "train", 4, cpu="2") for i in range(4)] + [pod("solo")]
    )
    sched = engine(tmp_path, docs, CFG)
    sched.run()
    assert [node_of(sched, f"g-{i}") for i in range(4)] == [None] * 4
    assert node_of(sched, "solo") in ("n1", "n2")
    assert not sched.waiting
    assert sched.snapshot.requested[:, 0].sum() == 1000  # only solo's cpu is held


def test_gang_that_fits_binds_together(tmp_path: pathlib.Path) -> None:
    docs = [node("n1", cpu="4"), node("n2", cpu="4")] + [gang_pod(f"g-{i}", "train", 4, cpu="2") for i in range(4)]
    sched = engine(tmp_path, docs, CFG)
    sched.run()
    assert all(node_of(sched, f"g-{i}") for i in range(4))
    outcomes = [r.outcome for r in sched.records]
    assert outcomes == ["Scheduled"] * 4


def test_non_strict_waiting_member_times_out_on_the_virtual_clock(tmp_path: pathlib.Path) -> None:
    docs = [node("n1", cpu="2")] + [gang_pod(f"g-{i}", "g", 2, cpu="2", mode="NonStrict", waiting_time="40s") for i in range(2)]
    sched = engine(tmp_path, docs, CFG)
    start = sched.clock.now()
    sched.run()
    assert [node_of(sched, "g-0"), node_of(sched, "g-1")] == [None, None]
    rejected = [r for r in sched.records if r.outcome == "Rejected"]
    assert rejected and "rejected due to timeout after waiting 40s at plugin Coscheduling" in rejected[0].message
    assert sched.clock.now() - start >= 40


# plugin_service_test.go TestEndpointsQueryGangInfo: the GangSummary JSON.
def test_gang_summary_json(tmp_path: pathlib.Path) -> None:
    docs = [
        node("n1"),
        {**gang_pod("pod1", "ganga", 2), "metadata": {**gang_pod("pod1", "ganga", 2)["metadata"], "namespace": "ganga_ns"}},
    ]
    sched = engine(tmp_path, docs, CFG)
    expected = {
        "name": "ganga_ns/ganga",
        "waitTime": 600_000_000_000,
        "createTime": "2026-01-01T00:00:00Z",
        "mode": "Strict",
        "gangMatchPolicy": "once-satisfied",
        "minRequiredNumber": 2,
        "totalChildrenNum": 2,
        "gangGroup": ["ganga_ns/ganga"],
        "children": {"ganga_ns/pod1": {}},
        "pendingChildren": {"ganga_ns/pod1": {}},
        "waitingForBindChildren": {},
        "boundChildren": {},
        "onceResourceSatisfied": False,
        "gangFrom": "GangFromPodAnnotation",
        "hasGangInit": True,
    }
    one = sched.extender.dispatch("GET", "/apis/v1/plugins/Coscheduling/gang/ganga_ns/ganga")
    assert (one.status, one.body) == (200, expected)
    every = sched.extender.dispatch("GET", "/apis/v1/plugins/Coscheduling/gangs")
    assert every.body == {"ganga_ns/ganga": expected}
    missing = sched.extender.dispatch("GET", "/apis/v1/plugins/Coscheduling/gang/ganga_ns/nope")
    assert (missing.status, missing.body) == (404, {"message": "cannot find gang ganga_ns/nope"})


def pod_group(name: str, min_member: int, timeout: int | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"minMember": min_member}
    if timeout is not None:
        spec["scheduleTimeoutSeconds"] = timeout
    return {
        "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default", "creationTimestamp": "2025-12-31T00:00:00Z"},
        "spec": spec,
    }


def test_pod_group_gang_and_status_controller(tmp_path: pathlib.Path) -> None:
    members = [pod(f"w-{i}", labels={"pod-group.scheduling.sigs.k8s.io": "job"}) for i in range(3)]
    sched = engine(tmp_path, [node("n1"), pod_group("job", 3, timeout=30), *members], CFG)
    gang = plugin(sched).cache.get("default/job")
    assert gang is not None and (gang.gang_from, gang.min_required, gang.wait_time) == ("GangFromPodGroupCrd", 3, 30.0)
    sched.run()
    assert all(node_of(sched, f"w-{i}") == "n1" for i in range(3))
    doc = next(d for d in sched.cluster.extensions["PodGroup"] if d["metadata"]["name"] == "job")
    assert doc["status"]["phase"] == "Running"
    assert (doc["status"]["scheduled"], doc["status"]["running"]) == (3, 3)


# podgroup.go syncHandler: the phase machine.
STATUS = [
    ("new group is Pending", {}, 2, [], 0, "Pending"),
    ("pending with enough pods pre-schedules", {"phase": "Pending"}, 2, ["Pending", "Pending"], 0, "PreScheduling"),
    ("too few bound is Scheduling", {"phase": "PreScheduling"}, 2, ["Running", "Pending"], 1, "Scheduling"),
    ("all running is Running", {"phase": "Scheduling"}, 2, ["Running", "Running"], 2, "Running"),
    ("a failure at size is Failed", {"phase": "Running"}, 2, ["Running", "Failed"], 2, "Failed"),
    ("all succeeded is Finished", {"phase": "Running"}, 2, ["Succeeded", "Succeeded"], 2, "Finished"),
]


@pytest.mark.parametrize(("status", "min_member", "phases", "bound", "want"), [c[1:] for c in STATUS], ids=[c[0] for c in STATUS])
def test_pod_group_status(status: dict[str, Any], min_member: int, phases: list[str], bound: int, want: str) -> None:
    from scheduler.api.objects import parse_pod

    pods = [
        parse_pod({**pod(f"p{i}", node_name="n1" if p != "Pending" else ""), "status": {"phase": p}})
        for i, p in enumerate(phases)
    ]
    assert next_status(status, min_member, pods, bound, 0.0)["phase"] == want


ARGS = [
    ("defaults", {}, CoschedulingArgs(), []),
    ("timeout", {"defaultTimeout": "30s"}, CoschedulingArgs(default_timeout_seconds=30.0), []),
    ("negative timeout", {"defaultTimeout": "-1s"}, None, ["coeSchedulingArgs DefaultTimeoutSeconds invalid"]),
    ("zero workers", {"controllerWorkers": 0}, None, ["coeSchedulingArgs ControllerWorkers invalid"]),
    ("bad policy", {"defaultMatchPolicy": "sometimes"}, None, ['Unsupported value: "sometimes"']),
]


@pytest.mark.parametrize(("data", "want", "issues"), [c[1:] for c in ARGS], ids=[c[0] for c in ARGS])
def test_args(data: dict[str, Any], want: CoschedulingArgs | None, issues: list[str]) -> None:
    args = CoschedulingArgs.from_dict(data, "args")
    if want is not None:
        assert args == want
    got = [str(i) for i in args.validate("args")]
    assert len(got) == len(issues)
    for text, fragment in zip(got, issues, strict=True):
        assert fragment in text


# core/preemption.go: estimatePreemptionCost and sortVictims (job-level preemption).
def _victim(name: str, priority: int, job: str = "") -> Any:
    from scheduler.api.objects import parse_pod

    labels = {"scheduling.koordinator.sh/questioned-object-key": job} if job else {}
    return parse_pod({"metadata": {"name": name, "namespace": "default", "uid": f"u-{name}", "labels": labels},
                      "spec": {"containers": [{"name": "c"}], "priority": priority}})


COSTS = [
    ("one priority: rank 0 everywhere", {"n1": [("a", 1)], "n2": [("b", 1)]}, {"n1": 0, "n2": 0}),
    ("higher priority victims cost more", {"n1": [("a", 1)], "n2": [("b", 5)]}, {"n1": 0, "n2": 1}),
    (
        "each job counted once",
        {"n1": [("a", 5, "j"), ("b", 5, "j")], "n2": [("c", 5, "j"), ("d", 5, "k")], "n3": [("e", 1)]},
        {"n1": 1, "n2": 2, "n3": 0},
    ),
]


@pytest.mark.parametrize(("victims", "want"), [c[1:] for c in COSTS], ids=[c[0] for c in COSTS])
def test_preemption_costs(victims: dict[str, list[tuple[Any, ...]]], want: dict[str, int]) -> None:
    from scheduler.plugins.coscheduling.preemption import preemption_costs

    assert preemption_costs({n: [_victim(*v) for v in vs] for n, vs in victims.items()}) == want


def test_victims_are_reprieved_highest_priority_first_then_job_then_name() -> None:
    from scheduler.plugins.coscheduling.preemption import victim_order

    pods = [_victim("b", 1), _victim("a", 1), _victim("z", 9), _victim("c", 1, "j")]
    assert [p.name for p in victim_order(pods)] == ["z", "a", "b", "c"]


def test_default_preemption_leaves_gang_members_to_coscheduling(tmp_path: pathlib.Path) -> None:
    """With enablePreemption, a gang member's failure never reaches DefaultPreemption's evaluator;
    a pod outside any gang still preempts as before."""
    from scheduler.plugins.defaultpreemption import DefaultPreemption

    cfg = config("Coscheduling", args={"Coscheduling": {"enablePreemption": True}})
    sched = engine(tmp_path, [node("n1"), gang_pod("g1", "g", 1), pod("solo")], cfg)
    dp = sched.profiles["default-scheduler"].plugins["DefaultPreemption"]
    assert isinstance(dp, DefaultPreemption)
    assert dp._claimed_by_another_plugin(live(sched, "g1"))
    assert not dp._claimed_by_another_plugin(live(sched, "solo"))
    assert plugin(sched).claims_preemption(live(sched, "g1"))
