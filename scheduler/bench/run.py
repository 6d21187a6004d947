"""`python -m scheduler bench`: scheduler_perf-shaped workloads run in memory (or, with `--backend
kubernetes`, against an API server in another process).

Timing runs from the first measured pod taken from the queue to the last one bound, as
scheduler_perf measures; building the cluster and scheduling the initial pods are excluded.
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from scheduler.api.loader import ClusterObjects, load_cluster
from scheduler.bench import shapes
from scheduler.bench.koord import load_aware, numa, reservation
from scheduler.bench.openb import TraceError
from scheduler.bench.remote import run_remote
from scheduler.bench.workloads import (
    START,
    Workload,
    check_gangs,
    gang,
    openb,
    pod_affinity,
    pod_anti_affinity,
    preemption_async,
    preemption_heavy,
    preferred_pod_affinity,
    preferred_pod_anti_affinity,
    scheduling_basic,
    scheduling_pods_with_pvs,
    topology_spreading,
)
from scheduler.clock import VirtualClock
from scheduler.cluster.simulated import SimulatedCluster
from scheduler.config.features import parse_feature_gates
from scheduler.config.loader import default_config, load_config
from scheduler.frameworkext.extender import Extender
from scheduler.options import UsageError, api_latency_seconds, check_max_attempts, peak_rss_mb
from scheduler.plugins.registry import new_registry
from scheduler.scheduler import Scheduler

WORKLOADS: dict[str, tuple[Callable[[int, int, int], Workload], tuple[int, int, int]]] = {
    "Gang": (gang, (5000, 1000, 10000)),
    "SchedulingBasic": (scheduling_basic, (5000, 1000, 10000)),
    "TopologySpreading": (topology_spreading, (5000, 5000, 10000)),
    "PreemptionAsync": (preemption_async, (5000, 20000, 5000)),
    "PreemptionHeavy": (preemption_heavy, (5000, 20000, 500)),
    "SchedulingPodsWithPVs": (scheduling_pods_with_pvs, (5000, 1000, 3000)),
    "LoadAware": (load_aware, (5000, 1000, 10000)),
    "NUMA": (numa, (1000, 0, 5000)),
    "Reservation": (reservation, (5000, 0, 10000)),
    # scheduler_perf's 5000Nodes_5000Pods (anti-affinity: 5000Nodes_2000Pods) sizes.
    "SchedulingPodAffinity": (pod_affinity, (5000, 5000, 5000)),
    "SchedulingPreferredPodAffinity": (preferred_pod_affinity, (5000, 5000, 5000)),
    "SchedulingPodAntiAffinity": (pod_anti_affinity, (5000, 1000, 2000)),
    "SchedulingPreferredPodAntiAffinity": (preferred_pod_anti_affinity, (5000, 5000, 5000)),
}


def shape_error(workload: str, nodes: int | None, init_pods: int | None, pods: int | None) -> str | None:
    """Why a generated workload of this shape cannot bind its pods (`scheduler.bench.shapes`;
    unset sizes take the workload's defaults), or None."""
    if workload not in WORKLOADS:
        return None
    default = WORKLOADS[workload][1]
    return shapes.shape_error(
        workload,
        default[0] if nodes is None else nodes,
        default[1] if init_pods is None else init_pods,
        default[2] if pods is None else pods,
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The bench command's flags."""
    parser.add_argument("--workload", default="SchedulingBasic", help=f"one of {', '.join(WORKLOADS)}, openb")
    parser.add_argument("--data", help="folder holding the openb trace's CSVs (with --workload openb)")
    parser.add_argument("--cpu-time", action="store_true", help="also report measured pods per CPU-second of this process")
    parser.add_argument(
        "--api-latency", default="0s", help="wall-clock time every API call (bind, status patch, delete) takes, e.g. 2ms"
    )
    parser.add_argument("--nodes", type=int, default=None)
    parser.add_argument("--init-pods", type=int, default=None)
    parser.add_argument("--pods", type=int, default=None)
    parser.add_argument("--cluster", action="append", help="schedule every pending pod of these files instead")
    parser.add_argument("--config", help="KubeSchedulerConfiguration file")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--feature-gates", default="")
    parser.add_argument("--profile", action="store_true", help="print a cProfile summary of the measured part")
    parser.add_argument("--debug-scores", type=int, default=0, help="debugTopNScores during the run (rows built only when read)")
    parser.add_argument(
        "--log-debug-scores", action="store_true", help="log the top-N table of every attempt (INFO), as Koordinator does"
    )
    parser.add_argument(
        "--max-attempts", type=int, default=None, help="stop after this many attempts (default: 100 per pod + 1000)"
    )
    parser.add_argument(
        "--progress",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help='every SECONDS, write a line `progress {"phase", "scheduled", "of"}` to stderr (0: never), for the console\'s progress bar',
    )
    parser.add_argument(
        "--plugin-timing",
        type=int,
        default=0,
        metavar="N",
        help="time each plugin in every Nth attempt (0: never), as the console's live page asks",
    )
    parser.add_argument(
        "--backend",
        choices=("simulated", "kubernetes"),
        default="simulated",
        help="kubernetes: through the kubernetes-client backend against an API server process (see scheduler/bench/remote.py)",
    )
    parser.add_argument("--kube-api-qps", type=float, default=0.0, help="client QPS with --backend kubernetes (0: unlimited)")
    parser.add_argument("--kube-api-burst", type=int, default=100, help="client burst with --backend kubernetes")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds the kubernetes backend run may take")


def _check_sizes(args: argparse.Namespace) -> None:
    for flag, value, least in (("--nodes", args.nodes, 1), ("--init-pods", args.init_pods, 0), ("--pods", args.pods, 0)):
        if value is not None and value < least:
            raise UsageError(f"{flag}: invalid value {value}; must be {least} or more")
    if args.max_attempts is not None and args.max_attempts < 1:
        raise UsageError(f"--max-attempts: invalid value {args.max_attempts}; must be 1 or more")


def _workload(args: argparse.Namespace) -> tuple[str, Workload]:
    _check_sizes(args)
    if args.cluster:
        objs: ClusterObjects = load_cluster(args.cluster)
        bound = [p for p in objs.pods if p.node_name]
        pending = [p for p in objs.pods if not p.node_name]
        return "cluster", Workload(objs.nodes, bound, pending, extensions=objs.extensions, storage=objs)
    if args.workload == "openb":
        if not args.data:
            raise UsageError("--data: required with --workload openb (the folder holding the trace's CSVs)")
        try:
            return "openb", openb(Path(args.data), args.nodes, args.pods)
        except TraceError as exc:
            raise UsageError(f"--data: {exc}") from exc
    if args.workload not in WORKLOADS:
        raise UsageError(f"--workload: unknown workload {args.workload!r}; valid: {', '.join(WORKLOADS)}")
    build, (n, i, p) = WORKLOADS[args.workload]
    return args.workload, build(
        args.nodes if args.nodes is not None else n,
        args.init_pods if args.init_pods is not None else i,
        args.pods if args.pods is not None else p,
    )


def _interleave_arrivals(sched: Scheduler, cluster: SimulatedCluster, clock: VirtualClock, work: Workload) -> None:
    """Pace the virtual clock by the measured pods placed, and create the next arrival each time
    another `arrival_every` of them got a node."""
    measured = {p.key for p in work.measured}
    pending = list(reversed(work.arrivals))
    placed = 0

    def on_attempt(record: Any) -> None:
        nonlocal placed
        if record.pod not in measured or record.outcome not in ("Scheduled", "Waiting"):
            return
        placed += 1
        if work.pace > 0:
            clock.advance(work.pace)
        if work.arrival_every > 0 and placed % work.arrival_every == 0 and pending:
            cluster.add_pod(pending.pop())

    sched.listeners.append(on_attempt)


class _BindTally:
    """Counts bindings as the cluster reports them: measured pods apart from churn pods, and
    when the last measured pod was bound."""

    def __init__(self, measured: set[str]) -> None:
        self._measured = measured
        self.measured = 0
        self.churn = 0
        self.last_bound_at: float | None = None

    def on_event(self, event: Any) -> None:
        """A pod that gained a node was bound."""
        if event.kind != "Pod" or event.new is None or not event.new.node_name:
            return
        if event.old is not None and event.old.node_name:
            return
        if event.new.uid not in self._measured:
            self.churn += 1
            return
        self.measured += 1
        self.last_bound_at = time.perf_counter()


class _Progress:
    """Writes how many measured pods are bound, at most every `every` seconds of wall time."""

    def __init__(self, tally: _BindTally, total: int, every: float, err: TextIO) -> None:
        self.tally, self.total, self.every, self.err = tally, total, every, err
        self.next = time.monotonic() + every

    def write(self, phase: str) -> None:
        """One progress line now."""
        self.err.write("progress " + json.dumps({"phase": phase, "scheduled": self.tally.measured, "of": self.total}) + "\n")
        self.err.flush()
        self.next = time.monotonic() + self.every

    def on_event(self, event: Any) -> None:
        """A cluster change: time for a line?"""
        if time.monotonic() >= self.next:
            self.write("measured")


def _cluster_objects(name: str, work: Workload) -> ClusterObjects:
    """The workload's nodes, extension objects and storage (and, from a file, its bound pods)."""
    objs = ClusterObjects(nodes=work.nodes, extensions=work.extensions)
    if work.storage is not None:
        objs.persistent_volumes = work.storage.persistent_volumes
        objs.persistent_volume_claims = work.storage.persistent_volume_claims
        objs.storage_classes = work.storage.storage_classes
        objs.csi_nodes = work.storage.csi_nodes
        objs.csi_drivers = work.storage.csi_drivers
        objs.csi_storage_capacities = work.storage.csi_storage_capacities
    if name == "cluster":
        objs.pods = list(work.init_pods)
    return objs


def _result(name: str, work: Workload, tally: _BindTally, popped: float | None, stop: str) -> dict[str, Any]:
    """The bench's JSON line: the measured interval runs from the first pod popped to the last bound."""
    # No pod bound (a pods-only file): no measured interval.
    bound = tally.last_bound_at
    seconds = bound - popped if bound is not None and popped is not None else 0.0
    result: dict[str, Any] = {
        "workload": name,
        "nodes": len(work.nodes),
        "pods": len(work.measured),
        "scheduled": tally.measured,
        "seconds": round(seconds, 4),
        "pods_per_second": round(tally.measured / seconds, 1) if seconds > 0 else 0.0,
        "peak_rss_mb": peak_rss_mb(),
        "stop": stop,
        "churn_scheduled": tally.churn,
    }
    return result


def run_bench(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Build the workload, schedule the initial pods, then measure the rest."""
    name, work = _workload(args)
    config = load_config(args.config) if args.config else (work.config or default_config())
    others = 0
    if name == "cluster":
        # Pending pods whose schedulerName no profile runs are not this run's to bind.
        ours = [p for p in work.measured if config.profile(p.scheduler_name) is not None]
        others = len(work.measured) - len(ours)
        work.measured = ours
    if getattr(args, "backend", "simulated") == "kubernetes":
        return run_remote(args, name, work, config, out, err)
    clock = VirtualClock(START)
    cluster = SimulatedCluster.from_objects(_cluster_objects(name, work), clock)
    cluster.record_events = False
    cluster.api_latency = api_latency_seconds(args.api_latency)
    if args.debug_scores < 0:
        raise UsageError(f"--debug-scores: invalid value {args.debug_scores}; must be 0 or more")
    if args.log_debug_scores:
        logging.basicConfig(level=logging.INFO, stream=err, format="%(message)s")
    sched = Scheduler(
        config,
        cluster,
        clock,
        new_registry(),
        seed=args.seed,
        extender=Extender(debug_top_n=args.debug_scores),
        feature_gates=parse_feature_gates(args.feature_gates or ""),
        keep_records=False,
    )
    if args.plugin_timing < 0:
        raise UsageError(f"--plugin-timing: invalid value {args.plugin_timing}; must be 0 or more")
    sched.plugin_timing_every = args.plugin_timing
    sched.start()
    if getattr(args, "progress", 0.0) > 0:  # built; the initial pods go next
        err.write("progress " + json.dumps({"phase": "initial", "scheduled": 0, "of": len(work.measured)}) + "\n")
        err.flush()
    if name != "cluster":
        for pod in work.init_pods:
            cluster.add_pod(pod)
        # The initial pods and any reserve pods (a Reservation is scheduled as one) go first.
        initial = sum(1 for p in cluster.pods.values() if not p.node_name)
        sched.run(max_attempts=sched.attempt_count + check_max_attempts(args.max_attempts, initial))
    sched.first_pop_at = None
    sched.last_bound_at = None
    sched.scheduled_count = 0
    if (work.arrivals and work.arrival_every > 0) or work.pace > 0:
        _interleave_arrivals(sched, cluster, clock, work)
    tally = _BindTally({p.uid for p in work.measured})
    cluster.watch(tally.on_event)
    progress = _Progress(tally, len(work.measured), args.progress, err) if getattr(args, "progress", 0.0) > 0 else None
    if progress is not None:
        progress.write("measured")
        cluster.watch(progress.on_event)
    for pod in work.measured:
        cluster.add_pod(pod)
    profiler = None
    if args.profile:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    # CPU time is read around the whole run (reading it per binding costs more than a binding).
    cpu_started = time.process_time()
    end = sched.run(
        max_attempts=sched.attempt_count + check_max_attempts(args.max_attempts, len(work.measured) + len(work.arrivals))
    )
    cpu = time.process_time() - cpu_started
    sched.shutdown()
    if profiler is not None:
        import pstats

        profiler.disable()
        pstats.Stats(profiler, stream=err).sort_stats("cumulative").print_stats(30)
    if name == "Gang":
        check_gangs(cluster)
    cluster.unwatch(tally.on_event)
    if progress is not None:
        cluster.unwatch(progress.on_event)
        progress.write("done")
    result = _result(name, work, tally, sched.first_pop_at, end.reason)
    if work.verify is not None:
        result.update(work.verify(cluster))
    if others:
        result["other_schedulers"] = others
    if args.cpu_time:
        result["cpu_seconds"] = round(cpu, 4)
        result["pods_per_cpu_second"] = round(tally.measured / cpu, 1) if cpu > 0 else 0.0
    if end.reason != "finished":
        err.write(f"bench: {end.describe()}\n")
    out.write(json.dumps(result) + "\n")
    return 0
