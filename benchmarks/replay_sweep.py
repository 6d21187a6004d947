"""A 4-candidate replay sweep on two workers against one, interleaved (docs/replay.md, "Figures").

The candidates are a grid over the default profile (NodeResourcesFit LeastAllocated / MostAllocated
x NodeResourcesBalancedAllocation weight 1 / 5), each replaying the same openb slice. Two ways:

- `--mode pool` (the embedded path): a fresh local process pool of 1 or 2 processes per run, so a
  run includes starting the processes and loading the trace, as a cold sweep does;
- `--mode warm-pool`: pools of 1 and 2 processes started and loaded once, as the console keeps its
  pool between replays;
- `--mode celery` (the production path): a stack of its own (PostgreSQL and Redis on 127.0.0.1,
  uvicorn, two `celery worker -Q replay -P solo` processes; tests/support/stack.py), the sweep
  started with POST /api/replays/ and timed until its job is done; for the one-worker runs the
  second worker stops consuming the queue (Celery's cancel_consumer) and resumes after. The workers
  keep their trace between runs (a warm-up sweep runs first).

Runs alternate 1, 2, 2, 1, 1, 2, ... so drift on a shared machine falls on both; medians and their
ratio are printed, then one JSON line. Run it alone: `flock -x /work/cpu.lock .venv/bin/python
benchmarks/replay_sweep.py`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scheduler.replay import digest, expand_grid, merge  # noqa: E402
from scheduler.replay.outcome import RunOutcome  # noqa: E402
from scheduler.replay.spec import run_spec  # noqa: E402

GRID = {
    "NodeResourcesFit.scoringStrategy.type": ["LeastAllocated", "MostAllocated"],
    "NodeResourcesBalancedAllocation.weight": [1, 5],
}
BASE = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
DATA = ROOT.parent / "shared" / "data" / "openb"


def _specs(args: argparse.Namespace) -> list[dict[str, Any]]:
    keys = {"source": "openb", "data": str(args.data), "nodes": args.nodes, "pods": args.pods, "samples": args.samples}
    return [{**keys, "document": doc, "label": label} for label, doc in expand_grid(BASE, GRID)]


def pool_sweep(workers: int, args: argparse.Namespace) -> tuple[float, list[str]]:
    """One sweep on a fresh pool of `workers` processes: seconds, and each candidate's digest."""
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
        answers = list(pool.map(run_spec, _specs(args)))
    seconds = time.perf_counter() - started
    return seconds, [digest(merge([RunOutcome.from_json(a["outcome"])])) for a in answers]


class WarmPools:
    """A pool of one process and a pool of two, started and loaded once (the embedded console keeps
    its pool between replays), then timed sweep by sweep."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.pools = {w: ProcessPoolExecutor(max_workers=w, mp_context=get_context("spawn")) for w in (1, 2)}
        warm = {**_specs(args)[0], "samples": 2}
        for pool in self.pools.values():  # each process reads the trace once
            list(pool.map(run_spec, [warm] * 2))

    def sweep(self, workers: int) -> tuple[float, list[str]]:
        started = time.perf_counter()
        answers = list(self.pools[workers].map(run_spec, _specs(self.args)))
        seconds = time.perf_counter() - started
        return seconds, [digest(merge([RunOutcome.from_json(a["outcome"])])) for a in answers]

    def close(self) -> None:
        for pool in self.pools.values():
            pool.shutdown()


class CelerySweeps:
    """A stack with two replay workers; sweeps through the API."""

    def __init__(self, args: argparse.Namespace) -> None:
        from tests.support.stack import Stack

        self.args = args
        self.tmp = tempfile.TemporaryDirectory(prefix="replay-bench-")
        self.stack = Stack(Path(self.tmp.name))
        self.stack.env["SCHEDCONSOLE_REPLAY_OPENB_DATA"] = str(args.data)
        self.stack.start("web")
        self.stack.start("replay-1")
        self.stack.start("replay-2")

    def sweep(self, workers: int) -> tuple[float, list[str]]:
        control = self.stack.celery().control
        if workers == 1:
            control.cancel_consumer("replay", destination=["replay-2@localhost"], reply=True)
        try:
            body = {
                "source": "openb",
                "nodes": self.args.nodes,
                "pods": self.args.pods,
                "grid": {"values": GRID},
                "samples": self.args.samples,
            }
            started = time.perf_counter()
            status, replay = self.stack.http("POST", "/api/replays/", body)
            assert status == 202, replay
            # The job is cheap to read; the replay's body compares every candidate's placements.
            while self.stack.http("GET", f"/api/jobs/{replay['job']}/")[1]["state"] not in ("done", "failed", "cancelled"):
                time.sleep(0.2)
            seconds = time.perf_counter() - started
            answer = self.stack.http("GET", replay["url"])[1]
            assert answer["state"] == "done", answer
            return seconds, [c["digest"] for c in answer["candidates"]]
        finally:
            if workers == 1:
                control.add_consumer("replay", destination=["replay-2@localhost"], reply=True)

    def close(self) -> None:
        self.stack.close()
        self.tmp.cleanup()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", choices=("pool", "warm-pool", "celery"), default="pool")
    parser.add_argument("--data", type=Path, default=DATA, help="the openb trace's folder")
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--pods", type=int, default=2000)
    parser.add_argument("--samples", type=int, default=24)
    parser.add_argument("--rounds", type=int, default=3, help="runs per worker count")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "schedconsole.settings")
    celery: CelerySweeps | WarmPools | None = None
    if args.mode == "celery":
        celery = CelerySweeps(args)
    elif args.mode == "warm-pool":
        celery = WarmPools(args)
    run = celery.sweep if celery is not None else (lambda w: pool_sweep(w, args))
    times: dict[int, list[float]] = {1: [], 2: []}
    digests: set[tuple[str, ...]] = set()
    try:
        if isinstance(celery, CelerySweeps):
            run(2)  # warm-up: each worker loads the trace once
        order = [1, 2, 2, 1] * ((args.rounds + 1) // 2)
        for workers in order[: 2 * args.rounds]:
            load = os.getloadavg()[0]
            seconds, found = run(workers)
            digests.add(tuple(found))
            times[workers].append(seconds)
            print(f"{workers} worker{'s' if workers > 1 else ''}: {seconds:.2f} s (load {load:.1f})", flush=True)
    finally:
        if celery is not None:
            celery.close()
    one, two = statistics.median(times[1]), statistics.median(times[2])
    print(
        f"median: 1 worker {one:.2f} s, 2 workers {two:.2f} s, speed-up {one / two:.2f}x; digests equal across runs: {len(digests) == 1}"
    )
    result = {
        "mode": args.mode,
        "candidates": 4,
        "nodes": args.nodes,
        "pods": args.pods,
        "one_worker_seconds": [round(t, 3) for t in times[1]],
        "two_workers_seconds": [round(t, 3) for t in times[2]],
        "speedup": round(one / two, 3),
        "digests_equal": len(digests) == 1,
        "cpus": os.cpu_count(),
    }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
