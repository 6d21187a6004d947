"""Jobs: a background import and a benchmark report progress and end with their result."""

from __future__ import annotations

import json

import yaml
from django.test import Client

from schedconsole.cluster.jobs import bench_params
from schedconsole.cluster.models import Job
from tests.console.conftest import node, pod
from tests.support.waits import wait_for


def _finished(api, job_id: int, timeout: float = 60.0) -> dict:
    return wait_for(lambda: (j := api.get(f"/api/jobs/{job_id}/").json())["state"] in ("done", "failed") and j, timeout=timeout)


def test_a_background_import_counts_documents_and_creates_all(engine, api) -> None:
    text = yaml.safe_dump_all([node("node-x"), *[pod(f"bulk-{i}") for i in range(30)]])
    started = api.post("/api/import/?background=true", text, content_type="application/yaml")
    assert started.status_code == 202 and started["Location"] == f"/api/jobs/{started.json()['id']}/"
    job = _finished(api, started.json()["id"])
    assert job["state"] == "done" and job["phase"] == "applied" and (job["done"], job["total"], job["percent"]) == (31, 31, 100.0)
    assert job["result"]["created"] == {"Node": 1, "Pod": 30}
    assert api.get("/api/pods/default/bulk-29/").status_code == 200


def test_a_background_import_that_fails_says_why_and_creates_nothing(engine, api) -> None:
    text = yaml.safe_dump_all(
        [pod("fine"), {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bad"}, "spec": {"containers": "no"}}]
    )
    job = _finished(api, api.post("/api/import/?background=true", text, content_type="application/yaml").json()["id"])
    assert job["state"] == "failed" and "containers" in job["error"]
    assert api.get("/api/pods/default/fine/").status_code == 404


def test_bench_params_name_the_field() -> None:
    assert bench_params({"workload": "SchedulingBasic", "nodes": "100", "pods": 50}) == {
        "workload": "SchedulingBasic",
        "nodes": 100,
        "pods": 50,
    }
    assert bench_params({"workload": "cluster-copy", "nodes": 3}) == {"workload": "cluster-copy"}
    for body, message in (
        ({"workload": "Nope"}, "workload: unknown workload 'Nope'"),
        ({"nodes": 0}, "nodes: invalid value 0"),
        ({"pods": "x"}, "pods: invalid value 'x'"),
        (
            {"workload": "SchedulingBasic", "nodes": 10, "pods": 1000},
            "pods: 10 nodes of 4 CPU hold at most 400 pods of 100m; 1000 initial + 1000 measured asked: use at least 50 nodes",
        ),
        (
            {"workload": "PreemptionAsync", "nodes": 10},
            "initPods: 10 nodes hold at most 40 of its 900m CPU initial pods; 20000 asked",
        ),
    ):
        try:
            bench_params(body)
        except ValueError as exc:
            assert str(exc).startswith(message), exc
        else:
            raise AssertionError(body)


def test_a_benchmark_runs_on_a_generated_cluster_with_progress_and_figures(engine, api, operator) -> None:
    bad = api.post("/api/bench/", {"workload": "SchedulingBasic", "nodes": 999999}, format="json")
    assert bad.status_code == 400 and "nodes" in bad.json()
    started = api.post("/api/bench/", {"workload": "SchedulingBasic", "nodes": 50, "initPods": 10, "pods": 200}, format="json")
    assert started.status_code == 202
    job = _finished(api, started.json()["id"], timeout=120)
    assert job["state"] == "done", job["error"]
    assert (
        job["result"]["scheduled"] == 200 and job["result"]["pods_per_second"] > 0 and (job["done"], job["total"]) == (200, 200)
    )
    before = api.get("/api/pods/").json()["count"]
    client = Client()
    client.force_login(operator)
    html = client.get(f"/jobs/{job['id']}/").content.decode()
    assert "pods per second" in html and str(job["result"]["pods_per_second"]) in html
    assert "SchedulingBasic" in client.get("/jobs/").content.decode()
    assert api.get("/api/pods/").json()["count"] == before  # the live cluster was not touched


def test_a_benchmark_on_a_scratch_copy_schedules_the_copy_not_the_cluster(engine, api, operator) -> None:
    api.post("/api/pods/", pod("waits-here", cpu="64"), format="json")
    api.post("/api/pods/", pod("theirs", schedulerName="volcano"), format="json")
    job = _finished(api, api.post("/api/bench/", {"workload": "cluster-copy"}, format="json").json()["id"], timeout=120)
    assert job["state"] == "done", job["error"]
    assert job["result"]["workload"] == "cluster" and job["result"]["nodes"] == 3
    # The volcano pod is no profile's: left out, not counted as a pod the run failed to bind.
    assert job["result"]["other_schedulers"] == 1 and job["result"]["pods"] == 1
    assert api.get("/api/pods/default/waits-here/").json()["node"] is None
    assert Job.objects.get(pk=job["id"]).params == {"workload": "cluster-copy"}
    json.dumps(job)
    # It read "done · all measured pods taken · 1 of 1" beside "measured pods bound 0".
    assert job["result"]["stop"] == "no-progress" and job["complete"] is False
    assert (job["done"], job["total"], job["phase"]) == (0, 1, "ended no-progress: 1 measured pod not bound")
    client = Client()
    client.force_login(operator)
    html = client.get(f"/jobs/{job['id']}/").content.decode()
    assert "Not every measured pod was bound" in html and 'class="fill short"' in html
    assert "Parameters: workload cluster-copy." in html and "{&#x27;" not in html


def test_a_gang_benchmark_is_complete_when_only_the_gangs_meant_not_to_bind_are_left() -> None:
    from schedconsole.cluster.jobs import bench_left, bench_phase

    gang = {"pods": 200, "scheduled": 152, "meant_pending": 48, "stop": "no-progress"}
    assert bench_left(gang) == 0
    assert bench_phase(gang) == "all measured pods bound but the 48 the workload means never to bind"
    short = {**gang, "scheduled": 150}
    assert bench_left(short) == 2 and bench_phase(short) == "ended no-progress: 2 measured pods not bound"
    assert bench_phase({"pods": 10, "scheduled": 10, "stop": "finished"}) == "all measured pods bound"


def test_embedded_jobs_run_at_most_the_concurrency_at_once_in_order(monkeypatch, settings) -> None:
    # A thread per job let a burst of requests (the schema fuzzer's, here) start dozens of
    # benchmark processes at once.
    import threading

    from schedconsole.cluster import jobs

    settings.EMBEDDED, settings.JOBS_CONCURRENCY = True, 2
    running, most, order = [0], [0], []
    lock = threading.Lock()
    two_at_once = threading.Event()

    def run(job_id: int, text: str = "") -> None:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
            order.append(job_id)
            if running[0] == 2:
                two_at_once.set()
        two_at_once.wait(5)  # the first two jobs meet: two run at once (or, alone, time out)
        with lock:
            running[0] -= 1

    monkeypatch.setattr(jobs, "run", run)
    runners = jobs._Runners()
    for job_id in range(1, 9):
        runners.submit(job_id, "")
    wait_for(lambda: len(order) == 8 and running[0] == 0, timeout=10)
    assert most[0] == 2
    assert sorted(order[:2]) == [1, 2] and sorted(order) == list(range(1, 9))
    assert len(runners.threads) <= 2
