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


# coscheduling_test.go TestPostFilter, core.go AfterPostFilter: Strict rejects the group's waiting
# pods with the group's failure message; NonStrict does not. AfterPostFilter's own status ("Gang
# ... gets rejected due to pod is unschedulable") is dropped by the framework extender
# (framework_extender.go RunPostFilterPlugins), so it is not in the FailedScheduling message.
POST_FILTER = [
    ("strict", "Strict", ["Rejected"]),
    ("non-strict", "NonStrict", ["Waiting"]),
]


@pytest.mark.parametrize(("mode", "waiting_outcome"), [c[1:] for c in POST_FILTER], ids=[c[0] for c in POST_FILTER])
def test_post_filter(tmp_path: pathlib.Path, mode: str, waiting_outcome: list[str]) -> None:
    # g-0 fits on the 2-cpu node and waits; g-1 (3 cpu) fits nowhere.
    docs = [node("n1", cpu="2"), gang_pod("g-0", "g", 2, cpu="2", mode=mode), gang_pod("g-1", "g", 2, cpu="3", mode=mode)]
    sched = engine(tmp_path, docs, CFG)
    sched.run(max_attempts=2)
    sched._run_tasks()
    first, second = sched.records[0], sched.records[1]
    assert second.outcome == "Unschedulable"
    assert "gets rejected" not in second.message
    assert [first.outcome] == waiting_outcome
    if mode == "Strict":
        assert first.message == (
            'GangGroup "default/g" gets rejected due to member Pod "default/g-1" is unschedulable with reason '
            '"0/1 nodes are available: 1 Insufficient cpu.", alreadyWaitForBound: 1'
        )


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


def test_non_strict_waiting_member_is_rejected_once_every_member_was_attempted(tmp_path: pathlib.Path) -> None:
    """core.go NextPod: when every pending member of the group was attempted in the context, the
    waiting members are rejected ("all pending pods is already been attempted") at once; the
    NonStrict g-0 does not wait for its 40s timeout."""
    docs = [node("n1", cpu="2")] + [gang_pod(f"g-{i}", "g", 2, cpu="2", mode="NonStrict", waiting_time="40s") for i in range(2)]
    sched = engine(tmp_path, docs, CFG)
    start = sched.clock.now()
    sched.run()
    assert [node_of(sched, "g-0"), node_of(sched, "g-1")] == [None, None]
    rejected = [r for r in sched.records if r.outcome == "Rejected"]
    assert [(r.pod, r.message) for r in rejected[:1]] == [("default/g-0", "all pending pods is already been attempted")]
    assert sched.clock.now() - start < 40


# core.go PreEnqueue (RecordIfNoRepresentatives): one representative per gang group enters the
# active queue; the other members are gated until the group's scheduling context pulls them.
def test_pre_enqueue_lets_one_representative_per_group_in(tmp_path: pathlib.Path) -> None:
    sched = engine(tmp_path, [node("n1"), gang_pod("a1", "a", 2), gang_pod("a2", "a", 2)], CFG)
    cs = plugin(sched)
    first, second = cs.pre_enqueue(live(sched, "a1")), cs.pre_enqueue(live(sched, "a2"))
    assert first.code == Code.SUCCESS
    assert (second.code, second.message) == (
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "representative pod default/a1 of gangGroupID default/a already exists",
    )
    assert sched.queue.where("uid-default-a2") == "gated"


# core.go BeforePreFilter + NextPod (framework_extender_factory.go InitScheduler): the first
# member starts the group's context; NextPod hands out the others before any other pod.
def test_next_pod_pulls_the_group_before_other_pods(tmp_path: pathlib.Path) -> None:
    docs = [node("n1", cpu="4"), gang_pod("g-0", "g", 3), pod("solo"), gang_pod("g-1", "g", 3), gang_pod("g-2", "g", 3)]
    sched = engine(tmp_path, docs, CFG)
    sched.run()
    assert [r.pod for r in sched.records] == ["default/g-0", "default/g-1", "default/g-2", "default/solo"]
    assert plugin(sched).context is None  # SucceedGangScheduling cleared it


# core.go BeforePreFilter/AfterPostFilter/NextPod: after the first failure of a context, the
# members pulled next are turned away with the group's message; once all were attempted, the
# context ends and the waiting members are rejected.
def test_failed_context_turns_later_members_away(tmp_path: pathlib.Path) -> None:
    docs = [
        node("n1", cpu="2"),
        gang_pod("g-0", "g", 3, cpu="2"),
        gang_pod("g-1", "g", 3, cpu="2"),
        gang_pod("g-2", "g", 3, cpu="2"),
    ]
    sched = engine(tmp_path, docs, CFG)
    sched.run(max_attempts=3)
    sched._run_tasks()
    g0, g1, g2 = sched.records[:3]
    group_failure = (
        'GangGroup "default/g" gets rejected due to member Pod "default/g-1" is unschedulable '
        'with reason "0/1 nodes are available: 1 Insufficient cpu.", alreadyWaitForBound: 1'
    )
    assert [(r.pod, r.outcome) for r in (g0, g1, g2)] == [
        ("default/g-0", "Rejected"),
        ("default/g-1", "Unschedulable"),
        ("default/g-2", "Unschedulable"),
    ]
    assert g0.message == group_failure
    assert g2.message.startswith(f"0/1 nodes are available: {group_failure}.")


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
        # gang_summary.go embeds the *GangGroupInfo (Go field names; the test upstream only
        # checks it is there).
        "gangGroupInfo": {
            "Initialized": True,
            "GangGroupId": "ganga_ns/ganga",
            "GangGroup": ["ganga_ns/ganga"],
            "OnceResourceSatisfied": False,
            "WaitingGangIDs": {},
            "RepresentativePodKey": "",
            "BindingMemberPods": None,
        },
        "gangFrom": "GangFromPodAnnotation",
        "hasGangInit": True,
    }
    one = sched.extender.dispatch("GET", "/apis/v1/plugins/Coscheduling/gang/ganga_ns/ganga")
    assert (one.status, one.body) == (200, expected)
    every = sched.extender.dispatch("GET", "/apis/v1/plugins/Coscheduling/gangs")
    assert every.body == {"ganga_ns/ganga": expected}
    missing = sched.extender.dispatch("GET", "/apis/v1/plugins/Coscheduling/gang/ganga_ns/nope")
    assert (missing.status, missing.body) == (404, {"message": "cannot find gang ganga_ns/nope"})


def test_gang_not_initialised_was_created_when_the_cache_made_it(tmp_path: pathlib.Path) -> None:
    """gang.go NewGang: CreateTime is when the gang object is made (the scheduler's clock), until a
    pod with min-available or a PodGroup sets it; never Go's zero time."""
    docs = [node("n1"), pod("p", annotations={"gang.scheduling.koordinator.sh/name": "g"})]
    sched = engine(tmp_path, docs, CFG)
    body = sched.extender.dispatch("GET", "/apis/v1/plugins/Coscheduling/gang/default/g").body
    assert (body["hasGangInit"], body["createTime"]) == (False, "2026-01-01T00:00:00Z")
    assert body["gangGroupInfo"]["GangGroupId"] == "default/g"


def test_pre_bind_writes_the_binding_group(tmp_path: pathlib.Path) -> None:
    """coscheduling.go PreBind / core.go GetGangBindingInfo: the members allowed together carry the
    group id and member count (internal and deprecated keys); a lone pod gets none."""
    docs = [node("n1", cpu="4"), gang_pod("a1", "a", 2), gang_pod("a2", "a", 2), pod("solo")]
    sched = engine(tmp_path, docs, CFG)
    sched.run()
    for name in ("a1", "a2"):
        annotations = live(sched, name).annotations
        assert {k: v for k, v in annotations.items() if "bind-gang" in k} == {
            "internal.scheduling.koordinator.sh/bind-gang-group-id": "default/a",
            "internal.scheduling.koordinator.sh/bind-gang-member-count": "2",
            "scheduling.koordinator.sh/bind-gang-group-id": "default/a",
            "scheduling.koordinator.sh/bind-gang-member-count": "2",
        }
    assert not [k for k in live(sched, "solo").annotations if "bind-gang" in k]
    # Once every member is bound the group no longer waits: the binding members are cleared.
    info = plugin(sched).cache.get("default/a").group_info
    assert info is not None and (info.waiting_gangs, info.binding_members) == (set(), set())


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
    return parse_pod(
        {
            "metadata": {"name": name, "namespace": "default", "uid": f"u-{name}", "labels": labels},
            "spec": {"containers": [{"name": "c"}], "priority": priority},
        }
    )


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


def test_a_refused_pod_group_write_is_counted_and_retried(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from scheduler.cluster.errors import APIError
    from scheduler.cluster.simulated import SimulatedCluster

    members = [pod(f"w-{i}", labels={"pod-group.scheduling.sigs.k8s.io": "job"}) for i in range(2)]
    sched = engine(tmp_path, [node("n1"), pod_group("job", 2), *members], CFG)
    refusals = [APIError("the object has been modified"), APIError("connection refused")]
    original = SimulatedCluster.update_object

    def flaky(self: SimulatedCluster, kind: str, doc: dict[str, Any]) -> None:
        if kind == "PodGroup" and refusals:
            raise refusals.pop(0)
        original(self, kind, doc)

    monkeypatch.setattr(SimulatedCluster, "update_object", flaky)
    sched.run()
    assert all(node_of(sched, f"w-{i}") == "n1" for i in range(2))
    doc = next(d for d in sched.cluster.extensions["PodGroup"] if d["metadata"]["name"] == "job")
    assert doc["status"]["phase"] == "Running"  # written once the API took it again
    counted = sched.metrics.as_json()["schedconsole_background_errors_total"]
    assert counted == [{"labels": {"source": "controller/PodGroupController"}, "value": 2.0}]
    assert "connection refused" in sched.metrics.last_background_error["controller/PodGroupController"]


def test_what_if_starts_no_gang_scheduling_context(tmp_path: pathlib.Path) -> None:
    """A what-if (`Scheduler.evaluate`) runs BeforePreFilter as a dry run: no context is started,
    so NextPod does not begin pulling the group's members."""
    docs = [node("n1", cpu="4"), gang_pod("a1", "a", 2), gang_pod("a2", "a", 2)]
    sched = engine(tmp_path, docs, CFG)
    record = sched.evaluate(live(sched, "a1"))
    assert record.outcome == "Scheduled"
    assert plugin(sched).context is None
