"""`python -m scheduler simulate` and `python -m scheduler bench` (docs/simulate.md, docs/benchmarks.md)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any, TextIO

from scheduler.api.duration import parse_duration
from scheduler.api.fields import FieldError, parse_time
from scheduler.api.loader import ClusterObjects, LoadError, load_cluster
from scheduler.bench.run import add_arguments, run_bench
from scheduler.clock import VirtualClock
from scheduler.cluster.faults import FaultConfigError, load_faults
from scheduler.cluster.simulated import SimulatedCluster
from scheduler.config.features import FeatureGateError, FeatureGates, parse_feature_gates
from scheduler.config.loader import ConfigError, default_config, load_config
from scheduler.framework.runtime import FrameworkError
from scheduler.frameworkext.debug import render_markdown
from scheduler.frameworkext.extender import Extender
from scheduler.options import ATTEMPTS_PER_POD, EXIT_BAD_INPUT, MIN_ATTEMPTS, UsageError, api_latency_seconds, check_max_attempts
from scheduler.plugins.registry import new_registry
from scheduler.records import ScoresSpec, record_json
from scheduler.scheduler import Scheduler


def _build(
    args: argparse.Namespace, objs: ClusterObjects, now: float, keep_records: bool = True
) -> tuple[Scheduler, SimulatedCluster]:
    config = load_config(args.config) if args.config else default_config()
    gates = parse_feature_gates(args.feature_gates or "")
    clock = VirtualClock(now)
    cluster = SimulatedCluster.from_objects(objs, clock)
    if getattr(args, "api_latency", None):
        cluster.api_latency = api_latency_seconds(args.api_latency)
    if getattr(args, "faults", None):
        try:
            cluster.faults = load_faults(args.faults)
        except FaultConfigError as exc:
            raise UsageError(f"--faults: {exc}") from exc
    extender = Extender(debug_top_n=max(0, getattr(args, "debug_scores", 0) or 0))
    sched = Scheduler(
        config, cluster, clock, new_registry(), seed=args.seed, feature_gates=gates, keep_records=keep_records, extender=extender
    )
    return sched, cluster


def _now(text: str | None) -> float:
    if not text:
        return time.time()
    try:
        return parse_time(text, "--now")
    except FieldError as exc:
        raise UsageError(str(exc)) from exc


def simulate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Run `simulate`: schedule the cluster's pending pods on a virtual clock and report."""
    scores = ScoresSpec.parse(args.scores)
    if args.debug_scores < 0:
        raise UsageError(f"--debug-scores: invalid value {args.debug_scores}; must be 0 or more")
    now = _now(args.now)
    until = parse_until(args.until, now)
    objs = load_cluster(args.cluster)
    for warning in objs.warnings:
        print(warning, file=err)
    max_attempts = check_max_attempts(args.max_attempts, len(objs.pods))
    sched, cluster = _build(args, objs, now)
    started = time.perf_counter()
    sched.start()
    end = sched.run(max_attempts=max_attempts, until=until)
    sched.shutdown()
    elapsed = time.perf_counter() - started
    print(f"simulate: {end.describe()}", file=err)
    if args.output == "table":
        write_table(sched, scores, args.debug_scores, out)
    else:
        json.dump(result_json(sched, cluster, scores, objs, elapsed), out, indent=2)
        out.write("\n")
    return 0


def parse_until(text: str | None, start: float) -> float | None:
    """--until: an RFC 3339 time, or a duration after the start (`90s`, `10m`, `1h30m`)."""
    if not text:
        return None
    nanos = parse_duration(text)
    if nanos is not None:
        if nanos < 0:
            raise UsageError(f"--until: invalid value {text!r}; a duration must not be negative")
        return start + nanos / 1e9
    try:
        moment = parse_time(text, "--until")
    except FieldError:
        raise UsageError(
            f"--until: invalid value {text!r}; expected an RFC 3339 time (2026-01-01T00:10:00Z) or a duration after --now (10m)"
        ) from None
    if moment < start:
        raise UsageError(f"--until: {text} is before the start of the run")
    return moment


def result_json(
    sched: Scheduler, cluster: SimulatedCluster, scores: ScoresSpec, objs: ClusterObjects, elapsed: float
) -> dict[str, Any]:
    """The whole `simulate --output json` document (`cluster`: the one `sched` scheduled)."""
    pods: dict[str, Any] = {}
    for pod in objs.pods:
        live = cluster.pods.get(pod.uid)
        if live is None:
            gone = cluster.deleted.get(pod.uid, pod)
            pods[pod.key] = {
                "node": gone.node_name or None,
                "phase": "Deleted",
                "nominatedNode": None,
                "annotations": dict(gone.annotations),
            }
            continue
        pods[pod.key] = {
            "node": live.node_name or None,
            "phase": live.phase,
            "nominatedNode": live.nominated_node_name or None,
            "annotations": dict(live.annotations),
        }
    attempted = {r.uid for r in sched.records}
    return {
        "results": [record_json(r, scores) for r in sched.records],
        "weights": {name: dict(fwk.weights) for name, fwk in sched.profiles.items()},
        "pods": pods,
        "reservations": reservations_json(cluster),
        "metrics": sched.metrics.as_json(),
        "stats": {
            "pods": len(attempted),
            "attempts": len(sched.records),
            "scheduling_seconds": round(elapsed, 6),
            "pods_per_second": round(sched.scheduled_count / elapsed, 1) if elapsed > 0 else 0.0,
            "stop": sched.run_end.reason if sched.run_end is not None else "finished",
        },
    }


def reservations_json(cluster: Any) -> dict[str, dict[str, Any]]:
    """Each Reservation's node and phase, as its status says at the end of the run."""
    out: dict[str, dict[str, Any]] = {}
    for doc in getattr(cluster, "extensions", {}).get("Reservation", ()):
        status = doc.get("status") or {}
        name = (doc.get("metadata") or {}).get("name", "")
        out[name] = {"node": status.get("nodeName") or None, "phase": status.get("phase") or "Pending"}
    return out


def write_table(sched: Scheduler, scores: ScoresSpec, debug_scores: int, out: TextIO) -> None:
    """Readable tables: one line per attempt, its failures, and the top score table."""
    top = scores.top if scores.mode == "top" else None
    for r in sched.records:
        where = r.node or r.nominated_node or "-"
        out.write(f"{r.pod}  attempt {r.attempt}  [{r.profile}]  {r.outcome}  {where}\n")
        if r.message:
            out.write(f"  {r.message}\n")
        if r.victims:
            out.write(f"  victims: {', '.join(r.victims)}\n")
        for node, fail in sorted(r.filter_failures().items()):
            out.write(f"  {node}: {fail['plugin']} {fail['code']}: {'; '.join(fail['reasons'])}\n")
        so = r.score_outcome
        # --debug-scores N prints the top-N table for every attempt, even with --scores none.
        n = debug_scores if debug_scores > 0 else (0 if scores.mode == "none" or so is None else (top or len(so.positions)))
        rows = r.top_rows(n)
        if rows and so is not None:
            out.write(render_markdown(r.pod, rows, so.plugins) + "\n")
        out.write("\n")


def main(argv: list[str] | None = None, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Entry point of `python -m scheduler`."""
    out = out or sys.stdout
    err = err or sys.stderr
    parser = argparse.ArgumentParser(prog="python -m scheduler", description="schedconsole's scheduling engine")
    sub = parser.add_subparsers(dest="command", required=True)
    sim = sub.add_parser("simulate", help="schedule the pending pods of cluster files on a virtual clock")
    sim.add_argument("--cluster", action="append", required=True, help="YAML/JSON file or folder (repeatable)")
    sim.add_argument("--config", help="KubeSchedulerConfiguration file")
    sim.add_argument("--now", help="the virtual clock's start, RFC 3339 (default: now)")
    sim.add_argument("--seed", type=int, default=None, help="seed for tie-breaking")
    sim.add_argument("--output", choices=("json", "table"), default="json")
    sim.add_argument("--scores", default="all", help="all, none or top:N")
    sim.add_argument("--debug-scores", type=int, default=0, help="top-N score table per attempt")
    sim.add_argument("--feature-gates", default="", help="A=true,B=false")
    sim.add_argument("--faults", help="YAML file of API faults to inject (fail or delay chosen calls)")
    sim.add_argument(
        "--max-attempts",
        type=int,
        default=None,
        help=f"stop after this many scheduling attempts (default: {ATTEMPTS_PER_POD} per pod + {MIN_ATTEMPTS})",
    )
    sim.add_argument("--until", help="stop when the virtual clock would pass this RFC 3339 time or duration after --now (10m)")
    sim.add_argument(
        "--api-latency", default="0s", help="wall-clock time every API call takes (bind, status patch, delete), e.g. 2ms"
    )
    bench = sub.add_parser("bench", help="measure scheduling throughput on a scheduler_perf-shaped workload")
    add_arguments(bench)
    args = parser.parse_args(argv)
    try:
        if args.command == "simulate":
            return simulate(args, out, err)
        return run_bench(args, out, err)
    except (LoadError, ConfigError, FrameworkError, FeatureGateError, UsageError) as exc:
        print(f"error: {exc}", file=err)
        return EXIT_BAD_INPUT


__all__ = ["FeatureGates", "main"]
