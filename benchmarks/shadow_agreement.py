"""Shadow mode's agreement with the real kube-scheduler over a burst of pods.

    flock -x /work/cpu.lock .venv/bin/python benchmarks/shadow_agreement.py [--nodes 20] [--pods 500]
        [--seed 1] [--state DIR]

The control plane from ../shared/k8s (etcd, kube-apiserver, kube-scheduler v1.35.4 on the default
profile with `percentageOfNodesToScore: 100`); the workload of tests/support/shadowrun.py (nodes
of 4 to 32 CPUs in 3 zones, taints, pods with varied requests, affinity, spread, tolerations).
Prints one JSON line per pod that did not agree (outcome, both nodes, the explanation), one per
pod the cluster's scheduler left pending (its PodScheduled=False message, our look) and a
summary: the outcomes, the agreement rate (exact plus tie over the pods compared), the pods
missed (first seen bound), left pending and refused.
"""

from __future__ import annotations

import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> int:
    from tests.support.controlplane import Kubelet, bench_parser, bench_plane, bench_refused
    from tests.support.shadowrun import run_shadow

    parser = bench_parser(__doc__.splitlines()[0], nodes=20, pods=500)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    if bench_refused("shadow_agreement"):
        return 2
    with bench_plane(args.state) as plane:
        kubelet = Kubelet(plane.api).start()
        try:
            report, _ = run_shadow(plane, plane.api, kubelet, args.nodes, args.pods, seed=args.seed)
        finally:
            kubelet.stop()
    for entry in report["disagreements"] + report["changed"]:
        keep = ("pod", "outcome", "ours", "theirs", "explanation")
        print(json.dumps({k: entry.get(k) for k in keep}), flush=True)
    for entry in report["refused"]:  # left pending by the cluster's scheduler: its message, our look
        print(json.dumps({"outcome": "refused", **entry}), flush=True)
    summary = {k: report[k] for k in ("compared", "agreed", "agreementRate", "outcomes", "missed", "waiting")}
    summary["refused"] = len(report["refused"])
    print(json.dumps({"nodes": args.nodes, "pods": args.pods, "seed": args.seed, **summary}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
