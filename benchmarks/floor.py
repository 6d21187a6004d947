"""The NumPy floor for SchedulingBasic: only the workload's arithmetic, nothing else.

Per pod: take the next nodes in order from a rotating start until numFeasibleNodesToFind (10% of
5000 = 500) fit (NodeResourcesFit's cpu, memory and pod-count check), score them with
LeastAllocated and BalancedAllocation (Go integer semantics: truncating division, int64 of the
float score), add the two, pick the highest (first on ties) and add the pod to that node. No
queue, no framework, no objects: the engine's per-pod cost above this is overhead.

    python benchmarks/floor.py [--nodes 5000 --init-pods 1000 --pods 10000]

Prints one JSON line like `bench --cpu-time`; compare `pods_per_cpu_second` with the engine's
measured in the same minute.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

CPU_M, MEM = 4000, 32 * 2**30
MAX_PODS = 110
POD_CPU_M, POD_MEM = 100, 500 * 2**20


def feasible_to_find(num_nodes: int) -> int:
    """numFeasibleNodesToFind with the default percentage."""
    if num_nodes < 100:
        return num_nodes
    pct = max(50 - num_nodes // 125, 5)
    return max(num_nodes * pct // 100, 100)


def main(argv: list[str]) -> int:
    """Schedule the initial pods unmeasured, then time the measured ones."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--init-pods", type=int, default=1000)
    parser.add_argument("--pods", type=int, default=10000)
    args = parser.parse_args(argv)
    n = args.nodes
    alloc = np.array([CPU_M, MEM], dtype=np.int64)
    requested = np.zeros((n, 2), dtype=np.int64)
    pods = np.zeros(n, dtype=np.int64)
    pod = np.array([POD_CPU_M, POD_MEM], dtype=np.int64)
    to_find = feasible_to_find(n)
    start = 0

    def schedule_one() -> None:
        nonlocal start
        # Windows of 2x the nodes wanted, in order from the rotating start, until enough fit.
        found: list[np.ndarray] = []
        got, lo, processed = 0, 0, n
        while lo < n and got < to_find:
            order = (start + np.arange(lo, min(n, lo + 2 * to_find))) % n
            fits = ((requested[order] + pod) <= alloc).all(axis=1) & (pods[order] < MAX_PODS)
            hits = np.flatnonzero(fits)[: to_find - got]
            found.append(order[hits])
            got += len(hits)
            if got == to_find:
                processed = lo + int(hits[-1]) + 1
            lo += 2 * to_find
        start = (start + processed) % n
        rows = np.concatenate(found)
        after = requested[rows] + pod
        least = ((alloc - after) * 100 // alloc).sum(axis=1) // 2
        fractions = np.minimum(after / alloc, 1.0)
        balanced = ((1 - np.abs(fractions[:, 0] - fractions[:, 1]) / 2) * 100).astype(np.int64)
        best = rows[int(np.argmax(least + balanced))]
        requested[best] += pod
        pods[best] += 1

    for _ in range(args.init_pods):
        schedule_one()
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(args.pods):
        schedule_one()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(
        json.dumps(
            {
                "workload": "SchedulingBasic-floor",
                "nodes": n,
                "pods": args.pods,
                "seconds": round(wall, 4),
                "pods_per_second": round(args.pods / wall, 1),
                "cpu_seconds": round(cpu, 4),
                "pods_per_cpu_second": round(args.pods / cpu, 1),
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
