"""Every run ends, and says why; timed events that change things still run.

Before the fix, a cluster with pods and no nodes, or a pod whose every binding fails, was
retried for ever on the virtual clock; `bench --nodes 0` and `--nodes -1` hung.
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys
from dataclasses import dataclass

import pytest

from scheduler.api.objects import Pod
from scheduler.clock import VirtualClock
from scheduler.cluster.simulated import SimulatedCluster
from scheduler.config.types import Profile, SchedulerConfiguration
from scheduler.framework.nodeinfo import NodeInfo
from scheduler.framework.types import Code, CycleState, Status
from scheduler.schedule_one import ERR_NO_NODES_AVAILABLE
from scheduler.scheduler import Scheduler
from tests.support.builders import make_node, make_pod
from tests.support.fakes import Binder, Permit, profile, registry

ROOT = pathlib.Path(__file__).resolve().parents[2]
START = 1767225600.0
TAINTS = str(ROOT / "examples" / "taints" / "cluster.yaml")
PODS_ONLY = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec: {containers: [{name: c, image: i}]}\n"


def start(profiles: list[Profile], plugins: list[object], nodes: int = 3, pods: list[Pod] | None = None) -> Scheduler:
    clock = VirtualClock(START)
    cluster = SimulatedCluster(clock=clock)
    for i in range(nodes):
        cluster.nodes[f"n{i}"] = make_node(f"n{i}")
    for pod in pods or []:
        cluster.pods[pod.uid] = pod
    config = SchedulerConfiguration(tuple(profiles), None, 1, 10, 16, "test")
    sched = Scheduler(config, cluster, clock, registry(*plugins), seed=1)
    sched.start()
    return sched


def test_pods_and_no_nodes_end_with_kube_schedulers_error() -> None:
    sched = start([profile()], [], nodes=0, pods=[make_pod("p")])
    end = sched.run()
    assert end.reason == "no-progress" and end.pending == 1 and end.stuck == ("default/p",)
    assert [(r.outcome, r.message) for r in sched.records] == [("Error", ERR_NO_NODES_AVAILABLE)] * 2
    # Once a node arrives the same scheduler goes on (a host keeps it alive).
    sched.cluster.add_node(make_node("n0"))
    assert sched.run().reason == "finished"
    assert sched.cluster.pods["uid-default-p"].node_name == "n0"


def test_a_pod_whose_every_binding_fails_ends_the_run() -> None:
    sched = start([profile()], [Binder(fail=True)], pods=[make_pod("p")])
    end = sched.run()
    assert end.reason == "no-progress" and end.stuck == ("default/p",)
    assert [r.outcome for r in sched.records] == ["Error", "Error"]


def test_permit_timeouts_still_run() -> None:
    sched = start([profile(permits=["Permit"])], [Permit(timeout=30)], pods=[make_pod("p")])
    end = sched.run()
    assert sched.clock.now() >= START + 30
    assert sched.records[0].outcome == "Rejected"
    assert end.reason == "no-progress" and end.pending == 1


@dataclass
class UntilFilter:
    """Rejects every node until a moment (a node metric still fresh, a reservation not expired)."""

    clock: VirtualClock
    moment: float
    name: str = "Until"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        if self.clock.now() < self.moment:
            return Status(Code.UNSCHEDULABLE, ("not yet",))
        return Status()


@pytest.mark.parametrize("registered", [False, True], ids=["no-timed-event", "wake-at"])
def test_timed_moments_that_change_answers_are_processed(registered: bool) -> None:
    clock = VirtualClock(START)
    cluster = SimulatedCluster(clock=clock)
    cluster.nodes["n0"] = make_node("n0")
    pod = make_pod("p")
    cluster.pods[pod.uid] = pod
    config = SchedulerConfiguration((profile(filters=["Until"]),), None, 1, 10, 16, "test")
    sched = Scheduler(config, cluster, clock, registry(UntilFilter(clock, START + 120)), seed=1)
    sched.start()
    if registered:
        sched.profiles["default-scheduler"].handle.wake_at(START + 120)  # type: ignore[attr-defined]
    end = sched.run()
    if registered:
        assert end.reason == "finished" and clock.now() == START + 120
        assert [r.outcome for r in sched.records] == ["Unschedulable", "Scheduled"]
    else:
        assert end.reason == "no-progress" and clock.now() == START
        assert [r.outcome for r in sched.records] == ["Unschedulable"]


def test_run_limits_say_which() -> None:
    sched = start([profile()], [Binder(fail=True)], pods=[make_pod("p")])
    assert sched.run(max_attempts=1).reason == "max-attempts"
    assert sched.run(until=START + 0.5).reason == "until"


def test_step_is_not_bound_by_the_stop_rule() -> None:
    # The console hosts the engine with step()/next_wakeup() on the wall clock: it keeps retrying.
    sched = start([profile()], [], nodes=0, pods=[make_pod("p")])
    for _ in range(3):
        while sched.step():
            pass
        wake = sched.next_wakeup()
        assert wake is not None
        sched.clock.advance_to(wake)  # type: ignore[attr-defined]
        sched.flush_queues()
    assert len(sched.records) == 3


# ----- the commands -----------------------------------------------------------------------------
def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "scheduler", *args], cwd=ROOT, capture_output=True, text=True, timeout=120)


def faults_file(tmp_path: pathlib.Path, rule: str) -> str:
    path = tmp_path / "faults.yaml"
    path.write_text(f"faults:\n- {rule}\n")
    return str(path)


SIMULATE_CASES = [
    (
        "pods-no-nodes",
        None,
        [],
        "no-progress",
        "stopped: no further progress possible, 1 pod(s) left pending; retrying default/p",
    ),
    (
        "bind-always-fails",
        "{verb: bind, pod: '*', error: InternalError}",
        [],
        "no-progress",
        "retrying default/p could change nothing",
    ),
    ("bind-fails-three-times", "{verb: bind, pod: '*', error: InternalError, count: 3}", [], "finished", "finished"),
    (
        "max-attempts",
        "{verb: bind, pod: '*', error: InternalError}",
        ["--max-attempts", "1"],
        "max-attempts",
        "stopped at the --max-attempts limit",
    ),
    (
        "until",
        "{verb: bind, pod: '*', error: InternalError}",
        ["--until", "500ms"],
        "until",
        "stopped at the --until limit, 1 pod(s) left pending",
    ),
]


@pytest.mark.parametrize(("rule", "extra", "stop", "said"), [c[1:] for c in SIMULATE_CASES], ids=[c[0] for c in SIMULATE_CASES])
def test_simulate_ends_and_says_why(tmp_path: pathlib.Path, rule: str | None, extra: list[str], stop: str, said: str) -> None:
    args = ["simulate", "--now", "2026-01-01T00:00:00Z", "--seed", "1", *extra]
    if rule is None:
        cluster = tmp_path / "pods.yaml"
        cluster.write_text(PODS_ONLY)
        args += ["--cluster", str(cluster)]
    else:
        args += ["--cluster", TAINTS, "--faults", faults_file(tmp_path, rule)]
    proc = run_cli(*args)
    assert proc.returncode == 0, proc.stderr
    assert said in proc.stderr
    out = json.loads(proc.stdout)
    assert out["stats"]["stop"] == stop
    if rule is None:
        assert {r["message"] for r in out["results"]} == {ERR_NO_NODES_AVAILABLE}
    if stop == "finished":
        assert [r["outcome"] for r in out["results"]] == ["Error", "Error", "Error", "Scheduled"]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--nodes", "0"], "--nodes: invalid value 0; must be 1 or more"),
        (["--nodes", "-1"], "--nodes: invalid value -1; must be 1 or more"),
        (["--pods", "-5"], "--pods: invalid value -5; must be 0 or more"),
        (["--init-pods", "-1"], "--init-pods: invalid value -1; must be 0 or more"),
    ],
    ids=["nodes-0", "nodes-negative", "pods-negative", "init-pods-negative"],
)
def test_bench_refuses_impossible_sizes(flags: list[str], message: str) -> None:
    proc = run_cli("bench", *flags)
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"error: {message}"


def test_bench_on_a_pods_only_cluster_ends(tmp_path: pathlib.Path) -> None:
    cluster = tmp_path / "pods.yaml"
    cluster.write_text(PODS_ONLY)
    proc = run_cli("bench", "--cluster", str(cluster))
    assert proc.returncode == 0, proc.stderr
    line = json.loads(proc.stdout.strip().splitlines()[-1])
    assert line["stop"] == "no-progress" and line["scheduled"] == 0 and line["seconds"] == 0.0
    assert "bench: stopped: no further progress possible" in proc.stderr


def test_pending_pods_metric_is_current_in_the_output() -> None:
    proc = run_cli("simulate", "--cluster", TAINTS, "--now", "2026-01-01T00:00:00Z", "--seed", "1")
    out = json.loads(proc.stdout)
    assert out["pods"]["default/p"]["node"] == "nodeA"
    pending = {s["labels"]["queue"]: s["value"] for s in out["metrics"]["scheduler_pending_pods"]}
    assert pending == {"active": 0.0, "backoff": 0.0, "unschedulable": 0.0, "gated": 0.0}
