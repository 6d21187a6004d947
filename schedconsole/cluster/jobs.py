"""Long tasks started from the console, with progress a page can poll: imports and benchmarks.

A `Job` row holds the state, the phase and `done` of `total`; the work runs on a task worker
(`schedconsole.cluster.job` task) or, embedded, in a thread of this process, and updates the row at
most every `PROGRESS_EVERY` seconds. A benchmark never touches the live cluster: it runs
`python -m scheduler bench` in a child process, on a generated workload or on a scratch copy of the
simulated cluster's objects written to a temporary file.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from django.conf import settings

from schedconsole.cluster.children import popen_tied
from schedconsole.cluster.models import Job

PROGRESS_EVERY = 0.25
BENCH_WORKLOADS = ("SchedulingBasic", "PreemptionAsync", "TopologySpreading", "Gang", "LoadAware", "cluster-copy")
BENCH_LIMITS = {"nodes": (1, 5000), "initPods": (0, 20000), "pods": (1, 20000)}
ROOT = Path(__file__).resolve().parents[2]


class Progress:
    """Updates a job's row, at most every PROGRESS_EVERY seconds unless forced."""

    def __init__(self, job_id: int) -> None:
        self.job_id = job_id
        self.last = 0.0

    def __call__(self, phase: str, done: int, total: int, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self.last < PROGRESS_EVERY:
            return
        self.last = now
        Job.objects.filter(pk=self.job_id).update(state="running", phase=phase, done=done, total=total)


def job_json(job: Job) -> dict[str, Any]:
    """A job as the API and the pages show it."""
    percent = round(100 * job.done / job.total, 1) if job.total else (100.0 if job.state == "done" else 0.0)
    result = job.result or {}
    complete = job.state == "done" and not (job.kind == "bench" and bench_left(result) > 0)
    return {
        "id": job.pk,
        "kind": job.kind,
        "state": job.state,
        "complete": complete,
        "phase": job.phase,
        "done": job.done,
        "total": job.total,
        "percent": min(100.0, percent),
        "params": job.params,
        "result": job.result,
        "error": job.error,
        "user": job.user,
        "created": job.created.isoformat().replace("+00:00", "Z"),
        "updated": job.updated.isoformat().replace("+00:00", "Z"),
    }


def bench_left(result: dict[str, Any]) -> int:
    """Measured pods a benchmark left pending beyond those its workload means never to bind
    (Gang's too-big gangs and a last gang cut short: `meant_pending`)."""
    meant = int(result.get("meant_pending", 0))
    return max(0, int(result.get("pods", 0)) - meant - int(result.get("scheduled", 0)))


def bench_phase(result: dict[str, Any]) -> str:
    """A finished benchmark's last phase: all bound, or how many were not and how the run ended."""
    left, meant = bench_left(result), int(result.get("meant_pending", 0))
    if left:
        return f"ended {result.get('stop', '')}: {left} measured pod{'s' if left != 1 else ''} not bound"
    if meant:
        return f"all measured pods bound but the {meant} the workload means never to bind"
    return "all measured pods bound"


class _Runners:
    """Embedded: at most `settings.JOBS_CONCURRENCY` jobs run at once, the rest wait `queued` in
    order (a thread per job let a burst of requests start a benchmark process each, all at once).
    Daemon threads: stopping the console does not wait for a benchmark to end."""

    def __init__(self) -> None:
        self.waiting: queue.Queue[tuple[int, str]] = queue.Queue()
        self.threads: list[threading.Thread] = []
        self.lock = threading.Lock()

    def submit(self, job_id: int, text: str) -> None:
        self.waiting.put((job_id, text))
        with self.lock:
            self.threads = [t for t in self.threads if t.is_alive()]
            if len(self.threads) < settings.JOBS_CONCURRENCY:
                thread = threading.Thread(target=self._work, name="schedconsole-jobs", daemon=True)
                thread.start()
                self.threads.append(thread)

    def _work(self) -> None:
        while True:
            try:
                job_id, text = self.waiting.get(timeout=5.0)
            except queue.Empty:
                with self.lock:  # idle: leave (a later submit starts a runner again)
                    if self.waiting.empty():
                        self.threads.remove(threading.current_thread())
                        return
                continue
            run(job_id, text)


_runners = _Runners()


def start(kind: str, params: dict[str, Any], user: str, text: str = "") -> Job:
    """Create the job and hand it to a task worker (or, embedded, a runner thread of this process)."""
    job = Job.objects.create(kind=kind, params=params, user=user)
    if settings.EMBEDDED:
        _runners.submit(job.pk, text)
    else:
        from schedconsole.cluster.tasks import run_job

        run_job.apply_async(args=(job.pk, text))
    return job


def run(job_id: int, text: str = "") -> None:
    """Do the job, recording its end (its result, or the error that stopped it)."""
    from django.db import close_old_connections

    try:
        job = Job.objects.get(pk=job_id)
        Job.objects.filter(pk=job_id).update(state="running")
        if job.kind == "import":
            answer = _import(job, text)
        else:
            answer = _bench(job)
        if "error" in answer:
            Job.objects.filter(pk=job_id).update(state="failed", error=answer["error"]["message"], result=answer["error"])
        elif job.kind == "bench":
            # The bar ends at what was bound, not at what was taken from the queue: a run that
            # stopped with pods left says so.
            result = answer["ok"]
            bound, measured = int(result.get("scheduled", 0)), int(result.get("pods", 0))
            meant = int(result.get("meant_pending", 0))
            Job.objects.filter(pk=job_id).update(
                state="done", result=result, phase=bench_phase(result), done=bound, total=measured - meant
            )
        else:
            Job.objects.filter(pk=job_id).update(state="done", result=answer["ok"], done=job_total(job_id))
    except Exception as exc:  # the page must show why, not spin forever
        Job.objects.filter(pk=job_id).update(state="failed", error=f"{type(exc).__name__}: {exc}")
    finally:
        close_old_connections()


def job_total(job_id: int) -> int:
    """The total the job last reported (done = total when it ends well)."""
    return int(Job.objects.filter(pk=job_id).values_list("total", flat=True).first() or 0)


def _import(job: Job, text: str) -> dict[str, Any]:
    from schedconsole.cluster.imports import import_text

    return import_text(text, str(job.params.get("source", "upload")), Progress(job.pk))


def bench_params(data: Any) -> dict[str, Any]:
    """A benchmark's parameters from a request body; ValueError names the field and the value."""
    if not isinstance(data, dict):
        raise ValueError("body: expected an object")
    workload = data.get("workload", "SchedulingBasic")
    if workload not in BENCH_WORKLOADS:
        raise ValueError(f"workload: unknown workload {workload!r}; known: {', '.join(BENCH_WORKLOADS)}")
    params: dict[str, Any] = {"workload": workload}
    if workload == "cluster-copy":
        return params
    for key, (low, high) in BENCH_LIMITS.items():
        value = data.get(key)
        if value is None or value == "":
            continue
        try:
            number = int(value)
        except (TypeError, ValueError):
            raise ValueError(f"{key}: invalid value {value!r}; expected a whole number from {low} to {high}") from None
        if not low <= number <= high:
            raise ValueError(f"{key}: invalid value {number}; expected a whole number from {low} to {high}")
        params[key] = number
    from schedconsole.engine.bridge import bench_shape_error

    error = bench_shape_error(workload, params.get("nodes"), params.get("initPods"), params.get("pods"))
    if error:
        raise ValueError(error)
    return params


def _bench(job: Job) -> dict[str, Any]:
    params = job.params
    progress = Progress(job.pk)
    command = [sys.executable, "-m", "scheduler", "bench", "--progress", str(PROGRESS_EVERY), "--cpu-time"]
    scratches: list[Path] = []
    if params["workload"] == "cluster-copy":
        # A scratch copy: the simulated cluster's stored objects, every pending pod scheduled on the copy.
        from schedconsole.engine.store import load_documents
        from schedconsole.profiles.models import ProfileVersion

        progress("copying the cluster", 0, 0, force=True)
        scratch = tempfile.NamedTemporaryFile("w", suffix=".json", prefix="bench-copy-", delete=False)
        with scratch:
            json.dump({"apiVersion": "v1", "kind": "List", "items": load_documents()}, scratch)
        command += ["--cluster", scratch.name]
        scratches.append(Path(scratch.name))
        active = ProfileVersion.objects.filter(active=True).first()
        if active is not None:  # the console's profiles, not the default one alone
            config = tempfile.NamedTemporaryFile("w", suffix=".json", prefix="bench-config-", delete=False)
            with config:
                json.dump(active.document, config)
            command += ["--config", config.name]
            scratches.append(Path(config.name))
    else:
        command += ["--workload", params["workload"]]
        for key, flag in (("nodes", "--nodes"), ("initPods", "--init-pods"), ("pods", "--pods")):
            if key in params:
                command += [flag, str(params[key])]
    progress("starting", 0, 0, force=True)
    try:
        return _follow(command, progress)
    finally:
        for path in scratches:
            path.unlink(missing_ok=True)


def _follow(command: list[str], progress: Progress) -> dict[str, Any]:
    """Run the benchmark, turning its progress lines into the job's progress; its last stdout line is the result."""
    # Tied to this process: a console stopped mid-run (or killed) does not leave the benchmark running.
    proc = popen_tied(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stderr is not None and proc.stdout is not None
    other: list[str] = []
    for line in proc.stderr:
        if line.startswith("progress "):
            step = json.loads(line[len("progress ") :])
            # `scheduled` counts measured pods bound, not pods taken from the queue.
            phase = {"initial": "initial pods", "measured": "measured pods bound", "done": "run ended"}.get(
                step["phase"], step["phase"]
            )
            progress(phase, int(step["scheduled"]), int(step["of"]), force=step["phase"] != "measured")
        else:
            other.append(line.rstrip())
    output = proc.stdout.read().strip().splitlines()
    if proc.wait() != 0 or not output:
        return {"error": {"status": 500, "message": "\n".join(other[-20:]) or f"the benchmark exited with {proc.returncode}"}}
    result: dict[str, Any] = json.loads(output[-1])
    if other:
        result["notes"] = other[-5:]
    return {"ok": result}
