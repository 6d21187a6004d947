"""`bench --backend kubernetes`: the same workload through the `kubernetes`-client backend against an
API server in another process (`scheduler.apiserver.httpserver`) that answers every request after
`--api-latency`.

The workload's nodes and pods are written to a file the API server loads, so every pod is pending
when the scheduler's informers list; `seconds` runs from the first pod taken from the queue to the
last measured pod the informer sees bound (the API server's acknowledgement), as in the simulated
bench. Client QPS is unlimited unless `--kube-api-qps` is given (scheduler_perf raises it likewise).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, TextIO

from scheduler.clock import Clock
from scheduler.frameworkext.extender import Extender
from scheduler.kube.backend import KubernetesCluster
from scheduler.kube.client import Connection, RateLimiter
from scheduler.options import api_latency_seconds, peak_rss_mb
from scheduler.plugins.registry import new_registry
from scheduler.scheduler import Scheduler


def _documents(work: Any) -> list[dict[str, Any]]:
    docs = [{**node.raw, "apiVersion": "v1", "kind": "Node"} for node in work.nodes]
    names = [node.name for node in work.nodes]
    for i, pod in enumerate([*work.init_pods, *work.measured]):
        doc = {**pod.raw, "apiVersion": "v1", "kind": "Pod"}
        doc.setdefault("metadata", {}).setdefault("uid", pod.uid)
        if i < len(work.init_pods) and names:
            # The initial pods are running already (the simulated bench schedules them unmeasured).
            doc.setdefault("spec", {})["nodeName"] = names[i % len(names)]
        docs.append(doc)
    return docs


def _process_cpu(pid: int) -> float:
    """User plus system CPU seconds of a process (Linux `/proc`; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_remote(args: argparse.Namespace, name: str, work: Any, config: Any, out: TextIO, err: TextIO) -> int:
    """Run the workload through the cluster backend; print the bench's JSON line."""
    from kubernetes import client  # optional: only this backend needs the package

    latency = api_latency_seconds(args.api_latency)
    # API threads hand the scheduler's lock back and forth with the loop: hand the GIL over sooner
    # than CPython's 5 ms default. Measured (SchedulingBasic 500/2000, 2 ms): 2 ms costs the least
    # CPU per pod; 0.5 ms spends a fifth more on switching threads, 5 ms leaves bindings waiting.
    sys.setswitchinterval(0.002)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cluster.json"
        path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": _documents(work)}))
        server = subprocess.Popen(
            [sys.executable, "-m", "scheduler.apiserver.httpserver", "--cluster", str(path), "--latency", args.api_latency],
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        )
        try:
            assert server.stdout is not None
            line = server.stdout.readline()
            if not line.startswith("API server: "):
                err.write(f"bench: the API server did not start: {line}\n")
                return 1
            url = line.split(": ", 1)[1].strip()
            configuration = client.Configuration()
            configuration.host = url
            configuration.connection_pool_maxsize = 64
            qps = float(args.kube_api_qps or 0)
            connection = Connection(client.ApiClient(configuration), RateLimiter(qps, int(args.kube_api_burst or 100)))
            cluster = KubernetesCluster.open(connection, Clock())
            cluster.record_events = False
            sched = Scheduler(
                config, cluster, cluster.clock, new_registry(), seed=args.seed, extender=Extender(), keep_records=False
            )
            measured = {p.uid for p in work.measured}
            bound: dict[str, float] = {}

            def on_event(event: Any) -> None:
                if event.kind == "Pod" and event.new is not None and event.new.node_name and event.new.uid in measured:
                    bound.setdefault(event.new.uid, time.perf_counter())

            cluster.watch(on_event)
            sched.start()
            cluster.watch_all()
            deadline = time.monotonic() + float(args.timeout)
            # CPU time of both processes around the measured run (loading excluded).
            cpu_started, server_started = time.process_time(), _process_cpu(server.pid)
            loop_started = time.thread_time()
            while len(bound) < len(measured) and time.monotonic() < deadline:
                if not sched.step():
                    sched.flush_queues()
                    time.sleep(0.001)
            loop_cpu = time.thread_time() - loop_started
            cpu, server_cpu = time.process_time() - cpu_started, _process_cpu(server.pid) - server_started
            cluster.close()
            sched.shutdown()
        finally:
            server.terminate()
            server.wait(10)
    popped = sched.first_pop_at
    last = max(bound.values()) if bound else None
    seconds = last - popped if last is not None and popped is not None else 0.0
    result = {
        "workload": name,
        "nodes": len(work.nodes),
        "pods": len(work.measured),
        "scheduled": len(bound),
        "seconds": round(seconds, 4),
        "pods_per_second": round(len(bound) / seconds, 1) if seconds > 0 else 0.0,
        "peak_rss_mb": peak_rss_mb(),
        "backend": "kubernetes",
        "api_latency_seconds": latency,
        "api_requests": connection.requests,
        # CPU seconds over the measured run: this process (scheduling, client, informers) and the
        # API server's process, which share the machine's cores.
        "cpu_seconds": round(cpu, 3),
        "pods_per_cpu_second": round(len(bound) / cpu, 1) if cpu > 0 else 0.0,
        # Of `cpu_seconds`, the scheduling thread's own (cycles, applying the informers' changes).
        "loop_cpu_seconds": round(loop_cpu, 3),
        "server_cpu_seconds": round(server_cpu, 3),
    }
    out.write(json.dumps(result) + "\n")
    return 0 if len(bound) == len(measured) else 1
