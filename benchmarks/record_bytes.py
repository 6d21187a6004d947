"""Bytes the history keeps per unschedulable attempt: the per-node `filter` dict against the compact groups.

Builds the engine over `pages_bench`'s cluster (5000 nodes by default), runs the cycle with no side
effects for a pod that fits nowhere under each profile, and prints the JSON size of the stored row
the old way (the attempt record's per-node `filter`, capped at 2000 nodes as SCHEDCONSOLE_HISTORY_FILTER_NODES
was, and uncapped) and the compact way (`filterGroups`, every node), plus the time to encode it.

    .venv/bin/python benchmarks/record_bytes.py [--nodes 5000]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "schedconsole.settings")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", type=int, default=5000)
    args = parser.parse_args()
    from benchmarks.pages_bench import CONFIG, seed
    from schedconsole.engine import bridge

    docs = [bridge.with_defaults(d, d["kind"]) for d in seed(args.nodes, 0, 0)]
    engine = bridge.Engine.build(CONFIG, bridge.load_objects(docs, "seed"), bridge.Hooks(), seed=1)
    while engine.step():
        pass
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "huge", "namespace": "bench"},
        "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "5", "memory": "1Gi"}}}]},
    }
    for profile in ("default-scheduler", "koordinator"):
        record = engine.scheduler.evaluate(engine._whatif_pod(pod), profile)
        failures = record.filter_failures()
        old_row = bridge.record_row(record, 10, 0)
        old_row.pop("filterGroups", None)
        old_row.pop("filterTruncated", None)
        capped = json.dumps(
            {**old_row, "filter": dict(list(failures.items())[:2000]), "filterTruncated": max(0, len(failures) - 2000)}
        )
        uncapped = json.dumps({**old_row, "filter": failures})
        times = []
        for _ in range(5):
            start = time.perf_counter()
            row = bridge.record_row(record, 10, len(failures) + 1)
            compact = json.dumps(row)
            times.append((time.perf_counter() - start) * 1000)
        print(
            json.dumps(
                {
                    "profile": profile,
                    "nodes": args.nodes,
                    "failed_nodes": len(failures),
                    "groups": len(row["filterGroups"]),
                    "bytes_per_node_dict_2000": len(capped),
                    "bytes_per_node_dict_all": len(uncapped),
                    "bytes_compact_all": len(compact),
                    "encode_ms_median": round(statistics.median(times), 1),
                }
            )
        )
    engine.stop()


if __name__ == "__main__":
    main()
