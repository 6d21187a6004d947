"""The PreemptionAsync and PreemptionHeavy bench workloads, at a small size, with the gate on and off."""

from __future__ import annotations

import argparse
import io
import json

import pytest

from scheduler.bench.run import WORKLOADS, add_arguments, run_bench
from scheduler.bench.workloads import preemption_async


def bench(*argv: str) -> dict[str, object]:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    out = io.StringIO()
    assert run_bench(parser.parse_args(list(argv)), out, io.StringIO()) == 0
    return json.loads(out.getvalue().splitlines()[-1])  # type: ignore[no-any-return]


def test_workloads_are_registered_with_scheduler_perf_sizes() -> None:
    assert WORKLOADS["PreemptionAsync"][1] == (5000, 20000, 5000)
    assert WORKLOADS["PreemptionHeavy"][1][:2] == (5000, 20000)


def test_preemption_async_shape() -> None:
    work = preemption_async(10, 40, 300)
    assert work.arrival_every == 114, "one preemptor per 200 ms at 570 pods/s"
    assert {p.requests["cpu"] for p in work.init_pods} == {900}
    assert {p.requests["cpu"] for p in work.arrivals} == {3000}
    assert all(p.effective_priority > q.effective_priority for p in work.arrivals for q in work.init_pods)


@pytest.mark.parametrize("gate", ["true", "false"])
def test_preemption_async_schedules_everything(gate: str) -> None:
    result = bench(
        "--workload",
        "PreemptionAsync",
        "--nodes",
        "120",
        "--init-pods",
        "480",
        "--pods",
        "240",
        "--feature-gates",
        f"SchedulerAsyncPreemption={gate}",
    )
    # 240 measured pods; the 2 preemptors that arrived after 114 and 228 of them are churn.
    assert (result["pods"], result["scheduled"], result["churn_scheduled"]) == (240, 240, 2)


@pytest.mark.parametrize("gate", ["true", "false"])
def test_preemption_heavy_every_pod_preempts(gate: str) -> None:
    result = bench(
        "--workload",
        "PreemptionHeavy",
        "--nodes",
        "30",
        "--init-pods",
        "120",
        "--pods",
        "20",
        "--feature-gates",
        f"SchedulerAsyncPreemption={gate}",
    )
    assert result["scheduled"] == 20
