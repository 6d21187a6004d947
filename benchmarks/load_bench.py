"""Load benchmark: read a large cluster file as YAML and as JSON, report MB/s and peak memory.

    .venv/bin/python benchmarks/load_bench.py                      # 5000 nodes + 100000 pods
    .venv/bin/python benchmarks/load_bench.py --nodes 500 --pods 10000 --repeat 3
    .venv/bin/python benchmarks/load_bench.py --repeat 3 --reference ../main   # interleaved with another tree

Files are generated once under var/bench/ (never committed) by benchmarks/gen_cluster.py:
`kubectl get nodes,pods -A -o yaml|json`-shaped Lists. Each load runs in a fresh process that
reports its own wall time, CPU time (the machine is shared: CPU time shows the speed on an idle
core) and peak RSS (VmHWM), so runs do not share memory. Prints one line
per run and a JSON summary (medians) as the last line. With `--reference`, every run of this
tree's loader is followed by one of the other checkout's (same file, same minutes: the machine is
shared, so only such pairs compare), and the summary adds the reference's medians and the ratios.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import resource
import statistics
import subprocess
import sys
import time
from typing import Any

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))


def high_water_mb() -> float:
    """This process's peak RSS in MiB (VmHWM: unlike ru_maxrss, not inherited across exec)."""
    for line in pathlib.Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(path: str, tree: str) -> None:
    """Load one file in this process with the loader of `tree` and print seconds and memory as JSON."""
    sys.path.insert(0, tree)
    from scheduler.api.loader import load_cluster

    base = high_water_mb()
    started, cpu_started = time.perf_counter(), time.process_time()
    objs = load_cluster([path])
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu_started
    peak = high_water_mb()
    print(
        json.dumps(
            {
                "seconds": seconds,
                "cpu_seconds": cpu_seconds,
                "peak_rss_mb": peak,
                "base_rss_mb": base,
                "nodes": len(objs.nodes),
                "pods": len(objs.pods),
            }
        )
    )


def ensure(path: pathlib.Path, fmt: str, nodes: int, pods: int) -> float:
    """The file's size in MB, generating it first if needed."""
    if not path.exists():
        sys.path.insert(0, str(HERE))
        from gen_cluster import write

        print(f"generating {path} ...", file=sys.stderr)
        write(path, fmt, nodes, pods)
    return path.stat().st_size / 1e6


def main() -> None:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=100000)
    parser.add_argument("--dir", default=str(ROOT / "var" / "bench"))
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--formats", default="yaml,json")
    parser.add_argument("--reference", help="another checkout (e.g. ../main) whose loader runs after each run of this one")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--tree", default=str(ROOT), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.tree)
        return
    trees = {"": str(ROOT)}
    if args.reference:
        reference = pathlib.Path(args.reference).resolve()
        if not (reference / "scheduler" / "api" / "loader.py").is_file():
            parser.error(f"--reference: no scheduler/api/loader.py under {reference}")
        trees["reference"] = str(reference)
    summary: dict[str, dict[str, Any]] = {}
    for fmt in args.formats.split(","):
        path = pathlib.Path(args.dir) / f"cluster-{args.nodes}n-{args.pods}p.{fmt}"
        size = ensure(path, fmt, args.nodes, args.pods)
        runs: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
        for _ in range(args.repeat):
            for name, tree in trees.items():
                command = [sys.executable, __file__, "--child", str(path), "--tree", tree]
                proc = subprocess.run(command, capture_output=True, text=True, check=True)
                run = json.loads(proc.stdout.strip().splitlines()[-1])
                run["mb_per_s"] = size / run["seconds"]
                run["cpu_mb_per_s"] = size / run["cpu_seconds"]
                run["peak_over_size"] = run["peak_rss_mb"] * 1.048576 / size
                runs[name].append(run)
                print(
                    f"{fmt}{' (' + name + ')' if name else ''}: {size:.1f} MB, {run['nodes']} nodes + {run['pods']} pods in "
                    f"{run['seconds']:.1f} s = {run['mb_per_s']:.1f} MB/s ({run['cpu_seconds']:.1f} s of CPU = {run['cpu_mb_per_s']:.1f} MB/s); "
                    f"peak RSS {run['peak_rss_mb']:.0f} MiB ({run['peak_over_size']:.2f}x the file; {run['base_rss_mb']:.0f} MiB before loading)"
                )
        summary[fmt] = {"file_mb": round(size, 1)}
        for name, done in runs.items():
            prefix = f"{name}_" if name else ""
            summary[fmt].update(
                {
                    prefix + "mb_per_s": round(statistics.median(r["mb_per_s"] for r in done), 2),
                    prefix + "cpu_mb_per_s": round(statistics.median(r["cpu_mb_per_s"] for r in done), 2),
                    prefix + "peak_rss_mb": round(statistics.median(r["peak_rss_mb"] for r in done), 1),
                    prefix + "peak_over_size": round(statistics.median(r["peak_over_size"] for r in done), 2),
                }
            )
        if args.reference:
            # CPU time of the pairs run back to back (this tree's over the reference's).
            pairs = [
                theirs["cpu_seconds"] / ours["cpu_seconds"] for ours, theirs in zip(runs[""], runs["reference"], strict=True)
            ]
            summary[fmt]["cpu_ratio_pairs"] = [round(p, 2) for p in pairs]
            summary[fmt]["cpu_ratio_median"] = round(statistics.median(pairs), 2)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
