"""A shape the bench check accepts binds every pod it counts; one pod more is refused, naming
what the nodes hold. Each workload's count is checked against a real run at its boundary."""

from __future__ import annotations

import argparse
import io
import json

import pytest

from scheduler.bench.run import add_arguments, run_bench, shape_error
from scheduler.bench.shapes import gang_members, load_aware_capacity, spreading_capacity


def bench(workload: str, nodes: int, init_pods: int, pods: int) -> dict[str, object]:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    argv = ["--workload", workload, "--nodes", str(nodes), "--init-pods", str(init_pods), "--pods", str(pods)]
    out = io.StringIO()
    assert run_bench(parser.parse_args(argv), out, io.StringIO()) == 0
    return json.loads(out.getvalue().splitlines()[-1])  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("workload", "nodes", "init_pods", "held"),
    [
        ("SchedulingBasic", 10, 50, 400),
        # Before: accepted at 400 pods by CPU requests; the run bound 197 and ended no-progress.
        ("LoadAware", 10, 0, 197),
        ("LoadAware", 13, 40, 281),
        # Before: accepted at 100 + 300 pods; the run bound 265 and ended no-progress.
        ("TopologySpreading", 10, 100, 365),
        ("TopologySpreading", 8, 0, 250),
    ],
)
def test_the_count_is_what_a_run_binds(workload: str, nodes: int, init_pods: int, held: int) -> None:
    fits = held - init_pods
    assert shape_error(workload, nodes, init_pods, fits) is None
    result = bench(workload, nodes, init_pods, fits + 20)
    assert (result["scheduled"], result["stop"]) == (fits, "no-progress")
    assert bench(workload, nodes, init_pods, fits)["stop"] == "finished"
    error = shape_error(workload, nodes, init_pods, fits + 1)
    assert error is not None and error.startswith(f"pods: {nodes} nodes") and f"at most {held} pods" in error
    least = int(error.split("use at least ")[1].split()[0])
    assert shape_error(workload, least, init_pods, fits + 1) is None
    assert shape_error(workload, least - 1, init_pods, fits + 1) is not None


def test_capacities() -> None:
    assert load_aware_capacity(10) == 197 and load_aware_capacity(140) == 2 * load_aware_capacity(70)
    assert spreading_capacity(10, 100) == 120 + 120 + 125
    assert spreading_capacity(1, 0) == 40 and spreading_capacity(2, 0) == 80


def test_gang_counts_only_the_gangs_meant_to_bind() -> None:
    # Gangs of 8, 64, 8, 64, ...: 200 pods are 4 whole gangs (144) and 56 cut short to 48.
    assert gang_members(200) == (152, 0, 48)
    assert gang_members(360) == (296, 64, 0)  # the 10th gang asks for 5 CPU: never binds
    result = bench("Gang", 20, 0, 200)
    assert (result["scheduled"], result["meant_pending"], result["stop"]) == (152, 48, "no-progress")
    assert shape_error("Gang", 4, 0, 200) is None and shape_error("Gang", 3, 0, 200) is not None
    assert shape_error("Gang", None, None, None) is None  # the workload's default shape
