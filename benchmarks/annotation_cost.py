"""What the result annotations cost the engine: 600 pods created on the demo's 48 nodes, scheduled
by the hosted engine (no store, no live view), with SCHEDCONSOLE_RESULT_ANNOTATIONS on and off.

`python benchmarks/annotation_cost.py --annotate on|off [--pods 600] [--profile]` prints one JSON
line: seconds from the pods' creation to the last one bound (building the engine excluded).
Run it from the tree to measure; alternate trees and settings for an interleaved series.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path.cwd()
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "schedconsole.settings")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--annotate", choices=("on", "off"), required=True)
    parser.add_argument("--pods", type=int, default=600)
    parser.add_argument("--profile", action="store_true", help="print a cProfile summary of the measured part")
    args = parser.parse_args()
    import django

    django.setup()
    from schedconsole.engine import bridge, demo

    nodes = [d for d in demo.cluster_documents() if d["kind"] == "Node"]
    docs = [bridge.with_defaults(d, "Node") for d in nodes]
    engine = bridge.Engine.build(demo.config_document(), bridge.load_objects(docs, "seed"), bridge.Hooks(), seed=1)
    setter = getattr(engine, "set_annotate_results", None)  # the tree before raw scores had none
    if setter is not None:
        setter(args.annotate == "on")
    else:
        engine.annotate_results = args.annotate == "on"
    while engine.step():
        pass
    pods = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"p-{i:04d}", "namespace": "default", "labels": {"app": f"a{i % 7}"}},
            "spec": {
                "containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]
            },
        }
        for i in range(args.pods)
    ]
    objects = engine.load_new(pods, "bench")
    profiler = None
    if args.profile:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    start, cpu = time.perf_counter(), time.process_time()
    engine.create_objects(objects, pods)
    while engine.step():
        pass
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    if profiler is not None:
        import pstats

        profiler.disable()
        pstats.Stats(profiler, stream=sys.stderr).sort_stats("cumulative").print_stats(40)
    bound = sum(1 for p in engine.cluster.pods.values() if p.node_name)
    print(
        json.dumps(
            {"annotate": args.annotate, "pods": args.pods, "bound": bound, "seconds": round(seconds, 4), "cpu": round(cpu, 4)}
        )
    )


if __name__ == "__main__":
    main()
