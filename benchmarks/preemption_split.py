"""Where a PreemptionAsync run's scheduling thread spends its time: preemptors' PostFilter
compute, API waits on the scheduling thread, and everything else.

KEP-4832 can only win back the API waits the scheduling thread makes for preemptors; this
prints them next to the compute, so the gain the gate can give at this shape is arithmetic:

    PYTHONPATH=. python benchmarks/preemption_split.py --pods 2000 --api-latency 2ms
    PYTHONPATH=. python benchmarks/preemption_split.py --pods 2000 --api-latency 2ms \\
        --feature-gates SchedulerAsyncPreemption=false

It wraps two functions of this tree for the run (timing only, no decision changes) and runs
`bench` as `python -m scheduler bench --workload PreemptionAsync` would.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import threading
import time
from typing import Any

from scheduler.bench import run as bench
from scheduler.preemption.evaluator import Evaluator
from scheduler.scheduler import Scheduler


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=2000)
    parser.add_argument("--api-latency", default="2ms")
    parser.add_argument("--feature-gates", default="")
    opts = parser.parse_args(argv)

    main_thread = threading.main_thread()
    tally: dict[str, float] = {"preempt_calls": 0, "preempt_seconds": 0.0, "waits_in_preempt": 0.0, "waits": 0.0, "wait_calls": 0}
    inside = [False]
    real_wait = Scheduler._api_wait
    real_preempt = Evaluator.preempt

    def timed_wait(self: Scheduler, seconds: float) -> None:
        started = time.perf_counter()
        real_wait(self, seconds)
        if threading.current_thread() is main_thread:
            spent = time.perf_counter() - started
            tally["waits"] += spent
            tally["wait_calls"] += 1
            if inside[0]:
                tally["waits_in_preempt"] += spent

    def timed_preempt(self: Evaluator, *args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        inside[0] = True
        try:
            return real_preempt(self, *args, **kwargs)
        finally:
            inside[0] = False
            tally["preempt_calls"] += 1
            tally["preempt_seconds"] += time.perf_counter() - started

    Scheduler._api_wait = timed_wait  # type: ignore[method-assign]
    Evaluator.preempt = timed_preempt  # type: ignore[method-assign]
    bench_parser = argparse.ArgumentParser()
    bench.add_arguments(bench_parser)
    args = bench_parser.parse_args(
        ["--workload", "PreemptionAsync", "--pods", str(opts.pods), "--api-latency", opts.api_latency, "--cpu-time"]
        + (["--feature-gates", opts.feature_gates] if opts.feature_gates else [])
    )
    out = io.StringIO()
    bench.run_bench(args, out, sys.stderr)
    result = json.loads(out.getvalue())
    calls = max(1, int(tally["preempt_calls"]))
    seconds = float(result["seconds"])
    preempt_waits = tally["waits_in_preempt"]
    result["split"] = {
        "preemptors": int(tally["preempt_calls"]),
        "ms_per_preemptor_postfilter": round(1000 * tally["preempt_seconds"] / calls, 2),
        "ms_per_preemptor_api_wait_in_postfilter": round(1000 * preempt_waits / calls, 2),
        "ms_per_preemptor_compute": round(1000 * (tally["preempt_seconds"] - preempt_waits) / calls, 2),
        "scheduling_thread_api_waits_s": round(tally["waits"], 4),
        "scheduling_thread_api_calls": int(tally["wait_calls"]),
        "share_of_run_in_postfilter_waits": round(preempt_waits / seconds, 4) if seconds else 0.0,
    }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
