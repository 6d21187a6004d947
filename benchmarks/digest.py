"""A digest of every decision a bench workload makes: each attempt's pod, outcome, node, nominated
node, victims and message, in order. Equal digests before and after an engine change mean the
change decided nothing differently.

Run from the root of the tree to check (it imports that tree's `scheduler`):

    PYTHONPATH=. python benchmarks/digest.py SchedulingBasic --nodes 500 --pods 2000
    PYTHONPATH=. python benchmarks/digest.py openb --data ../shared/data/openb

Only the workload builders and the Scheduler's constructor are used, so it also runs on trees
older than the bench flags it compares; when the checked tree lacks openb, this file's tree builds it.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

try:
    from scheduler.bench import run as bench_run
    from scheduler.bench import workloads as bench
except ImportError:  # a tree from before the bench package
    from scheduler import bench  # type: ignore[no-redef]

    bench_run = bench  # type: ignore[no-redef]
from scheduler.api.loader import ClusterObjects
from scheduler.clock import VirtualClock
from scheduler.cluster.simulated import SimulatedCluster
from scheduler.config.features import parse_feature_gates
from scheduler.config.loader import default_config
from scheduler.plugins.registry import new_registry
from scheduler.scheduler import Scheduler


def _this_bench() -> Any:
    """This file's tree's bench module (for workloads the checked tree does not have yet)."""
    here = Path(__file__).resolve().parent.parent / "scheduler" / "bench" / "workloads.py"
    spec = importlib.util.spec_from_file_location("digest_bench", here)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["digest_bench"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _openb(data: str, nodes: int | None, pods: int | None) -> Any:
    source = bench if hasattr(bench, "openb") else _this_bench()
    return source.openb(Path(data), nodes, pods)


def main(argv: list[str]) -> int:
    """Run one workload and print its attempt count and digest as JSON."""
    parser = argparse.ArgumentParser()
    parser.add_argument("workload")
    parser.add_argument("--nodes", type=int)
    parser.add_argument("--init-pods", type=int)
    parser.add_argument("--pods", type=int)
    parser.add_argument("--data", default="../shared/data/openb")
    parser.add_argument("--feature-gates", default="")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    if args.workload == "openb":
        work = _openb(args.data, args.nodes, args.pods)
    else:
        build, (n, i, p) = bench_run.WORKLOADS[args.workload]
        work = build(args.nodes or n, args.init_pods if args.init_pods is not None else i, args.pods or p)
    clock = VirtualClock(bench.START)
    cluster = SimulatedCluster.from_objects(ClusterObjects(nodes=work.nodes), clock)
    cluster.record_events = False
    sched = Scheduler(
        default_config(),
        cluster,
        clock,
        new_registry(),
        seed=args.seed,
        feature_gates=parse_feature_gates(args.feature_gates),
        keep_records=True,
    )
    sched.start()
    for pod in work.init_pods:
        cluster.add_pod(pod)
    sched.run()
    if (work.arrivals and work.arrival_every > 0) or work.pace > 0:
        bench_run._interleave_arrivals(sched, cluster, clock, work)
    for pod in work.measured:
        cluster.add_pod(pod)
    sched.run()
    h = hashlib.sha256()
    outcomes: dict[str, int] = {}
    for r in sched.records:
        h.update(json.dumps([r.pod, r.outcome, r.node, r.nominated_node, r.victims, r.message]).encode())
        outcomes[r.outcome] = outcomes.get(r.outcome, 0) + 1
    print(
        json.dumps(
            {"workload": args.workload, "attempts": len(sched.records), "outcomes": outcomes, "digest": h.hexdigest()[:16]}
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
