"""The `simulate` and `bench` commands: output shape and bad input (exit 2 naming file and field)."""

from __future__ import annotations

import io
import json
import pathlib

import pytest

from scheduler.cli import main

NODES = """
apiVersion: v1
kind: Node
metadata: {name: a, labels: {kubernetes.io/hostname: a}}
status: {allocatable: {cpu: '2', memory: 4Gi, pods: '10'}}
---
apiVersion: v1
kind: Node
metadata: {name: b, labels: {kubernetes.io/hostname: b}}
spec: {taints: [{key: k, value: v, effect: NoSchedule}]}
status: {allocatable: {cpu: '4', memory: 4Gi, pods: '10'}}
"""
POD = """
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec: {containers: [{name: c, image: i, resources: {requests: {cpu: CPU, memory: 1Gi}}}]}
"""


def run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(args), out, err)
    return code, out.getvalue(), err.getvalue()


def write(tmp_path: pathlib.Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_simulate_json_shape_and_failed_scheduling_message(tmp_path: pathlib.Path) -> None:
    cluster = write(tmp_path, "c.yaml", NODES + POD.replace("CPU", "3"))
    code, out, _ = run("simulate", "--cluster", cluster, "--now", "2026-01-01T00:00:00Z", "--seed", "1")
    assert code == 0
    doc = json.loads(out)
    assert set(doc) == {"results", "weights", "pods", "reservations", "metrics", "stats"}
    first = doc["results"][0]
    assert first["outcome"] == "Unschedulable"
    assert first["message"].startswith("0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s).")
    assert first["filter"]["a"] == {
        "plugin": "NodeResourcesFit",
        "code": "UnschedulableAndUnresolvable",
        "reasons": ["Insufficient cpu"],
    }
    assert doc["pods"]["default/p"] == {"node": None, "phase": "Pending", "nominatedNode": None, "annotations": {}}
    attempts = doc["metrics"]["scheduler_schedule_attempts_total"]
    assert {"labels": {"result": "unschedulable", "profile": "default-scheduler"}, "value": 1.0} in attempts


def test_simulate_scores_top_and_none(tmp_path: pathlib.Path) -> None:
    cluster = write(
        tmp_path,
        "c.yaml",
        NODES.replace("spec: {taints: [{key: k, value: v, effect: NoSchedule}]}", "") + POD.replace("CPU", "1"),
    )
    _, out, _ = run("simulate", "--cluster", cluster, "--scores", "top:1", "--seed", "1")
    result = json.loads(out)["results"][0]
    assert len(result["scores"]) == 1 and list(result["totals"]) == [result["node"]]
    _, out, _ = run("simulate", "--cluster", cluster, "--scores", "none", "--seed", "1")
    assert json.loads(out)["results"][0]["scores"] == {}


def test_simulate_table_output(tmp_path: pathlib.Path) -> None:
    cluster = write(tmp_path, "c.yaml", NODES + POD.replace("CPU", "3"))
    code, out, _ = run("simulate", "--cluster", cluster, "--output", "table")
    assert code == 0
    assert "default/p  attempt 1  [default-scheduler]  Unschedulable" in out
    assert "a: NodeResourcesFit UnschedulableAndUnresolvable: Insufficient cpu" in out


@pytest.mark.parametrize(
    ("cluster", "config", "parts"),
    [
        ("kind: Node\nmetadata: {name: [x\n", None, ["c.yaml", "invalid YAML"]),
        (
            NODES + POD.replace("CPU", "lots"),
            None,
            ["c.yaml", "document 3", "Pod default/p", "spec.containers[0].resources.requests.cpu", "'lots'"],
        ),
        (
            NODES,
            "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: x\n  plugins: {score: {foo: 1}}\n",
            ["k.yaml", 'unknown field "profiles[0].plugins.score.foo"'],
        ),
        (
            NODES,
            "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: x\n- schedulerName: x\n",
            ["k.yaml", "profiles[1].schedulerName", "Duplicate value"],
        ),
        (
            NODES,
            "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: x\n  plugins: {filter: {enabled: [{name: Nope}]}}\n",
            ['FilterPlugin "Nope" does not exist'],
        ),
        (
            NODES,
            "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\npercentageOfNodesToScore: 120\n",
            ["k.yaml", "percentageOfNodesToScore", "120"],
        ),
    ],
    ids=["unparsable-yaml", "bad-quantity", "unknown-config-field", "duplicate-profile", "unknown-plugin", "bad-percentage"],
)
def test_bad_input_exits_2_naming_file_and_field(
    tmp_path: pathlib.Path, cluster: str, config: str | None, parts: list[str]
) -> None:
    args = ["simulate", "--cluster", write(tmp_path, "c.yaml", cluster)]
    if config is not None:
        args += ["--config", write(tmp_path, "k.yaml", config)]
    code, out, err = run(*args)
    assert code == 2
    assert out == ""
    for part in parts:
        assert part in err


@pytest.mark.parametrize(
    "args",
    [["--scores", "top:0"], ["--scores", "some"], ["--now", "yesterday"], ["--feature-gates", "NoSuchGate=true"]],
    ids=["top-zero", "bad-scores", "bad-now", "unknown-gate"],
)
def test_bad_flags_exit_2(tmp_path: pathlib.Path, args: list[str]) -> None:
    code, _, err = run("simulate", "--cluster", write(tmp_path, "c.yaml", NODES), *args)
    assert code == 2 and err.startswith("error: ")


def test_bench_prints_one_json_line() -> None:
    code, out, _ = run("bench", "--workload", "SchedulingBasic", "--nodes", "50", "--init-pods", "10", "--pods", "100")
    assert code == 0
    result = json.loads(out.strip().splitlines()[-1])
    assert set(result) == {
        "workload",
        "nodes",
        "pods",
        "scheduled",
        "seconds",
        "pods_per_second",
        "peak_rss_mb",
        "stop",
        "churn_scheduled",
    }
    assert result["stop"] == "finished"
    assert result["scheduled"] == 100 and result["nodes"] == 50


def test_bench_cpu_time_reports_pods_per_cpu_second() -> None:
    code, out, _ = run(
        "bench", "--workload", "SchedulingBasic", "--nodes", "50", "--init-pods", "10", "--pods", "100", "--cpu-time"
    )
    assert code == 0
    result = json.loads(out.strip().splitlines()[-1])
    assert result["cpu_seconds"] > 0
    assert result["pods_per_cpu_second"] == pytest.approx(100 / result["cpu_seconds"], rel=0.01)


@pytest.mark.parametrize(
    ("args", "field"),
    [(["--workload", "openb"], "--data: required"), (["--workload", "openb", "--data", "/nonexistent"], "--data: /nonexistent/")],
    ids=["openb-without-data", "openb-missing-folder"],
)
def test_bench_openb_bad_data_exits_2(args: list[str], field: str) -> None:
    code, _, err = run("bench", *args)
    assert code == 2 and field in err


def test_table_names_preemption_victims(tmp_path: pathlib.Path) -> None:
    small = NODES.replace("cpu: '4'", "cpu: '2'").replace("spec: {taints: [{key: k, value: v, effect: NoSchedule}]}", "")
    low = POD.replace("name: p,", "name: low,").replace("CPU", "2").replace("spec: {", "spec: {nodeName: a, priority: 0, ")
    low2 = POD.replace("name: p,", "name: low2,").replace("CPU", "2").replace("spec: {", "spec: {nodeName: b, priority: 5, ")
    high = POD.replace("CPU", "2").replace("spec: {", "spec: {priority: 100, ")
    code, out, _ = run(
        "simulate", "--cluster", write(tmp_path, "c.yaml", small + low + low2 + high), "--output", "table", "--seed", "1"
    )
    assert code == 0
    assert "default/p  attempt 1  [default-scheduler]  Nominated  a" in out
    assert "  victims: default/low" in out
    assert "default/p  attempt 2  [default-scheduler]  Scheduled  a" in out


def test_the_demo_cluster_of_run_sh_schedules() -> None:
    # ./run.sh (the README's first command) runs exactly this.
    demo = pathlib.Path(__file__).resolve().parents[1] / "examples" / "demo"
    code, out, err = run("simulate", "--cluster", str(demo), "--output", "table", "--debug-scores", "3")
    assert code == 0, err
    assert "shop/huge-0  attempt 1  [default-scheduler]  Unschedulable" in out
    assert "| # | Pod | Node | Score |" in out
    assert out.count("Scheduled") >= 6
