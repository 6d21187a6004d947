"""API calls that take wall-clock time: the binding cycle and asynchronous preemption run on the
scheduler's pool, the loop waits for them, and a host's bind sink still decides when a binding
becomes visible."""

from __future__ import annotations

import argparse
import io
import json
import threading
from collections.abc import Callable

import pytest

from scheduler.api.objects import Pod
from scheduler.bench.run import add_arguments, run_bench
from scheduler.clock import VirtualClock
from scheduler.cluster.simulated import SimulatedCluster
from scheduler.config.loader import default_config
from scheduler.options import UsageError
from scheduler.plugins.registry import new_registry
from scheduler.scheduler import Scheduler
from tests.support.builders import make_node, make_pod

START = 1767225600.0


def bench(*argv: str) -> dict[str, object]:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    out = io.StringIO()
    assert run_bench(parser.parse_args(list(argv)), out, io.StringIO()) == 0
    return json.loads(out.getvalue().splitlines()[-1])  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    "argv",
    [
        ("--workload", "SchedulingBasic", "--nodes", "40", "--init-pods", "10", "--pods", "60"),
        ("--workload", "PreemptionAsync", "--nodes", "120", "--init-pods", "480", "--pods", "240"),
        (
            "--workload",
            "PreemptionAsync",
            "--nodes",
            "120",
            "--init-pods",
            "480",
            "--pods",
            "240",
            "--feature-gates",
            "SchedulerAsyncPreemption=false",
        ),
    ],
    ids=["basic", "preemption-async", "preemption-sync"],
)
def test_every_measured_pod_is_scheduled_with_latency(argv: tuple[str, ...]) -> None:
    result = bench(*argv, "--api-latency", "1ms")
    assert result["scheduled"] == result["pods"]


@pytest.mark.parametrize("value", ["fast", "-2ms", "2"], ids=["word", "negative", "no-unit"])
def test_bad_latency_is_a_usage_error(value: str) -> None:
    with pytest.raises(UsageError, match="--api-latency: invalid value"):
        bench("--workload", "SchedulingBasic", "--nodes", "5", "--pods", "1", f"--api-latency={value}")


def test_binding_waits_off_the_scheduling_thread_and_the_sink_still_applies() -> None:
    clock = VirtualClock(START)
    cluster = SimulatedCluster(clock=clock)
    for i in range(3):
        cluster.nodes[f"n{i}"] = make_node(f"n{i}")
    cluster.api_latency = 0.001
    held: list[tuple[Pod, str, Callable[[], None]]] = []
    bind_threads: set[str] = set()

    def sink(pod: Pod, node: str, apply: Callable[[], None]) -> None:
        bind_threads.add(threading.current_thread().name)
        held.append((pod, node, apply))

    cluster.bind_sink = sink
    sched = Scheduler(default_config(), cluster, clock, new_registry(), seed=1)
    sched.start()
    for i in range(5):
        cluster.add_pod(make_pod(f"p{i}", cpu="100m"))
    sched.run()
    # Every pod is assumed and handed to the sink, none is visible as bound yet.
    assert len(held) == 5 and all(not p.node_name for p in cluster.pods.values())
    assert bind_threads and all(name.startswith("api") for name in bind_threads)
    for _, _, apply in held:
        apply()
    assert all(p.node_name for p in cluster.pods.values())
    sched.shutdown()


@pytest.mark.parametrize("gate", ["false", "true"])
def test_victims_are_preempted_in_parallel(gate: str) -> None:
    # Three victims, each a DisruptionTarget patch then a delete: upstream runs the victims on
    # the parallelizer, so the calls cost the longest chain (two calls), not six. With the gate
    # off the scheduling thread waits for it; with it on, a pool thread does (all but the last
    # victim in parallel, then the last).
    from scheduler.config.features import parse_feature_gates

    clock = VirtualClock(START)
    cluster = SimulatedCluster(clock=clock)
    cluster.nodes["n0"] = make_node("n0", cpu="3")
    for i in range(3):
        low = make_pod(f"low{i}", cpu="1", node_name="n0", priority=0)
        cluster.pods[low.uid] = low
    cluster.api_latency = 0.002
    sched = Scheduler(
        default_config(),
        cluster,
        clock,
        new_registry(),
        seed=1,
        feature_gates=parse_feature_gates(f"SchedulerAsyncPreemption={gate}"),
    )
    waits: list[tuple[bool, float]] = []
    real = cluster.api_wait
    assert real is not None

    def recording(seconds: float) -> None:
        waits.append((threading.current_thread() is threading.main_thread(), seconds))
        real(seconds)

    cluster.api_wait = recording
    sched.start()
    cluster.add_pod(make_pod("high", cpu="3", priority=100))
    sched.run()
    sched.shutdown()
    assert cluster.pods["uid-default-high"].node_name == "n0"
    seen = sorted((main, round(s, 4)) for main, s in waits)
    if gate == "false":
        # Scheduling thread: the victims (one wait of two calls) and the nominated-node patch;
        # the pool: the preemptor's binding.
        assert seen == [(False, 0.002), (True, 0.002), (True, 0.004)]
    else:
        # Scheduling thread: the nominated-node patch only. Pool: two victims in parallel, then
        # the last one's patch and delete, then the binding.
        assert seen == [(False, 0.002), (False, 0.002), (False, 0.002), (False, 0.004), (True, 0.002)]
