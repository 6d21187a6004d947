"""Drain a backlog through a real kube-apiserver: the `kubernetes` backend beside the real
kube-scheduler, same API server, same client QPS and burst.

    flock -x /work/cpu.lock .venv/bin/python benchmarks/real_apiserver.py [--nodes 500] [--pods 2000]
        [--runs 3] [--qps 5000] [--burst 5000] [--state DIR]

The control plane comes from ../shared/k8s (etcd, kube-apiserver; see tests/support/controlplane.py).
500 nodes of 4, 8 and 16 CPUs in 3 zones. Per run the scheduler under test starts, proves it is
ready (binds one pod), is stopped (SIGSTOP) while the backlog is created, and resumed (SIGCONT);
the run's time is from the resume to the last binding a watch sees, and its CPU seconds are the
scheduler process's (user + system) over the same span, beside kube-apiserver's and etcd's.
Each run also reports the requests kube-apiserver served over that span and, once every pod's
`Scheduled` Event has been written, the time that took and the CPU seconds until then
(`cpu_ms_per_pod_with_events`; `all_...`: with kube-apiserver's and etcd's), since Events
written after the last binding cost nothing within the drain.
kube-scheduler (A) and ours (B) alternate A B B A A B...; the output is one JSON line per run and
a summary with the medians and the ratio of pods/s (ours over kube-scheduler's) and of CPU
seconds per pod, and each round's ratio (a round: two consecutive runs, one of each) with their
median.

Ours runs as `--engine KUBECONFIG` in a child process: the backend and the scheduler loop as the
console's engine thread drives them, Events on, no console around it (no store, no history).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import signal
import statistics
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

NS = "bench"


def cpu_seconds(pid: int) -> float:
    """User plus system CPU seconds of a process (and its reaped children: none here)."""
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def thread_cpu() -> dict[str, float]:
    """CPU seconds of each live thread of this process, by thread name (Linux `/proc`)."""
    out: dict[str, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for thread in threading.enumerate():
        try:
            fields = pathlib.Path(f"/proc/self/task/{thread.native_id}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        name = thread.name.split("-")[0] if thread.name.startswith(("api", "Thread")) else thread.name
        out[name] = round(out.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / tick, 3)
    return out


def run_engine(kubeconfig: str, qps: float, burst: int, profile: str = "") -> None:
    """The child: our backend and scheduler over the cluster until SIGTERM. `profile`: a path
    prefix for the scheduling loop's cProfile statistics and every thread's CPU seconds."""
    from scheduler.clock import Clock
    from scheduler.config.loader import parse_config
    from scheduler.kube.backend import KubernetesCluster
    from scheduler.kube.client import connect
    from scheduler.plugins.registry import new_registry
    from scheduler.scheduler import Scheduler

    sys.setswitchinterval(0.002)  # as `bench --backend kubernetes` (see scheduler/bench/remote.py)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    cluster = KubernetesCluster.open(connect(kubeconfig, qps=qps, burst=burst), Clock())
    config = parse_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}, "bench")
    scheduler = Scheduler(config, cluster, cluster.clock, new_registry(), seed=1, keep_records=False)
    scheduler.start()
    cluster.watch_all()
    print("engine: ready", flush=True)
    profiler = None
    if profile:
        import cProfile

        profiler = cProfile.Profile(time.thread_time)  # CPU: waits (and SIGSTOP) cost nothing
        profiler.enable()
    while not stop.is_set():
        if not scheduler.step():
            scheduler.flush_queues()
            scheduler._work_arrived.wait(0.005)  # the host's idle wait: woken by informers and answers
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(f"{profile}.prof")
        pathlib.Path(f"{profile}.threads.json").write_text(json.dumps(thread_cpu()))
    scheduler.shutdown()
    cluster.close()


def bench_pod(name: str, i: int) -> dict[str, Any]:
    cpu = ("100m", "250m", "500m")[i % 3]
    memory = ("128Mi", "256Mi", "512Mi")[i % 3]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS, "labels": {"app": f"app-{i % 10}"}},
        "spec": {"containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu, "memory": memory}}}]},
    }


def create_all(api: Any, docs: list[dict[str, Any]], workers: int = 8) -> None:
    from tests.support.controlplane import collection_path

    def one(doc: dict[str, Any]) -> None:
        status, body = api.request("POST", collection_path(doc), doc)
        if status >= 300:
            raise RuntimeError(f"creating {doc['metadata']['name']}: {status} {body}")

    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(one, docs))


def clear_pods(api: Any) -> None:
    api.request("DELETE", f"/api/v1/namespaces/{NS}/pods", {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0})
    deadline = time.monotonic() + 120
    while api.items(f"/api/v1/namespaces/{NS}/pods") and time.monotonic() < deadline:
        time.sleep(0.5)


def wait_bound(api: Any, name: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status, body = api.request("GET", f"/api/v1/namespaces/{NS}/pods/{name}")
        if status == 200 and body["spec"].get("nodeName"):
            return
        time.sleep(0.1)
    raise RuntimeError(f"{name} not bound within {timeout}s")


def request_counts(api: Any) -> dict[str, float]:
    """kube-apiserver's `apiserver_request_total`, summed by verb, resource and subresource."""
    _, body = api.request("GET", "/metrics")
    text = body if isinstance(body, str) else (body.decode() if isinstance(body, bytes) else "")
    counts: dict[str, float] = {}
    for line in text.splitlines():
        if not line.startswith("apiserver_request_total{"):
            continue
        labels_text, _, value = line[len("apiserver_request_total{") :].rpartition("} ")
        labels = dict(part.split("=", 1) for part in labels_text.split(",") if "=" in part)
        labels = {k: v.strip('"') for k, v in labels.items()}
        sub = labels.get("subresource", "")
        key = f"{labels.get('verb', '')} {labels.get('resource', '')}{'/' + sub if sub else ''}"
        counts[key] = counts.get(key, 0.0) + float(value)
    return counts


def one_run(plane: Any, api: Any, who: str, pods: int, qps: float, burst: int, run: int, profile: str = "") -> dict[str, Any]:
    clear_pods(api)
    if who == "kube-scheduler":
        config = plane.kube_scheduler_config(client_qps=qps, client_burst=burst)
        proc = plane.kube_scheduler(config)
    else:
        log = open(plane.state / "logs" / f"engine-{run}.log", "wb")  # held by the child
        proc = subprocess.Popen(
            [sys.executable, __file__, "--engine", plane.admin_kubeconfig, "--qps", str(qps), "--burst", str(burst)]
            + (["--profile", f"{profile}-{run}"] if profile else []),
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
        )
    try:
        warm = f"warm-{run}"
        create_all(api, [bench_pod(warm, 0)], 1)
        wait_bound(api, warm)
        os.kill(proc.pid, signal.SIGSTOP)
        version = api.get(f"/api/v1/namespaces/{NS}/pods")["metadata"]["resourceVersion"]
        names = [f"p-{run}-{i:05d}" for i in range(pods)]
        create_all(api, [bench_pod(n, i) for i, n in enumerate(names)])
        bound: dict[str, float] = {}
        done = threading.Event()

        def watch() -> None:
            while not done.is_set():
                for event in api.watch(f"/api/v1/namespaces/{NS}/pods", version, 300):
                    obj = event["object"]
                    meta = obj.get("metadata") or {}
                    if event["type"] == "BOOKMARK":
                        continue
                    if (obj.get("spec") or {}).get("nodeName") and meta.get("name") in wanted:
                        bound.setdefault(meta["name"], time.monotonic())
                        if len(bound) == len(wanted):
                            done.set()
                            return

        wanted = set(names)
        watcher = threading.Thread(target=watch, daemon=True)
        server_pids = [int((plane.state / f"{name}.pid").read_text()) for name in ("apiserver", "etcd")]
        # Until every pod's Scheduled Event is written too: the time and the CPU seconds then
        # (a scheduler that writes its Events after its bindings pays for them past the drain).
        events_version = api.get(f"/apis/events.k8s.io/v1/namespaces/{NS}/events")["metadata"]["resourceVersion"]
        told: set[str] = set()
        told_at: list[float] = []
        events_done = threading.Event()

        def watch_events() -> None:
            while not events_done.is_set() and not stopping.is_set():
                for event in api.watch(f"/apis/events.k8s.io/v1/namespaces/{NS}/events", events_version, 300):
                    obj = event["object"]
                    if event["type"] != "ADDED" or obj.get("reason") != "Scheduled":
                        continue
                    if (obj.get("regarding") or {}).get("name") in wanted:
                        told.add(obj["regarding"]["name"])
                        if len(told) == len(wanted):
                            told_at.extend([time.monotonic(), cpu_seconds(proc.pid), *(cpu_seconds(p) for p in server_pids)])
                            events_done.set()
                            return

        stopping = threading.Event()
        event_watcher = threading.Thread(target=watch_events, daemon=True)
        server_before = [cpu_seconds(pid) for pid in server_pids]
        requests_before = request_counts(api)
        cpu_before = cpu_seconds(proc.pid)
        resumed = time.monotonic()
        os.kill(proc.pid, signal.SIGCONT)
        watcher.start()
        event_watcher.start()
        finished = done.wait(600)
        cpu = cpu_seconds(proc.pid) - cpu_before
        apiserver_cpu, etcd_cpu = (cpu_seconds(pid) - before for pid, before in zip(server_pids, server_before, strict=True))
        seconds = max(bound.values()) - resumed if bound else 0.0
        requests_after = request_counts(api)
        # The requests kube-apiserver served over the run (both schedulers', the watch's, ours):
        # what each scheduler asked of it, beside the CPU it took.
        served = {k: int(v - requests_before.get(k, 0.0)) for k, v in requests_after.items()}
        served = {k: v for k, v in sorted(served.items(), key=lambda kv: -kv[1]) if v >= 10}
        events_done.wait(120)
        stopping.set()
        with_events = {}
        if told_at:
            at, own, apiserver_end, etcd_end = told_at
            total = (own - cpu_before) + (apiserver_end - server_before[0]) + (etcd_end - server_before[1])
            with_events = {
                "events_seconds": round(at - resumed, 3),
                "cpu_ms_per_pod_with_events": round(1000 * (own - cpu_before) / len(wanted), 3),
                "all_cpu_ms_per_pod_with_events": round(1000 * total / len(wanted), 3),
            }
    finally:
        os.kill(proc.pid, signal.SIGCONT)
        proc.terminate()
        proc.wait(60)
        api.end_watches()
    return {
        "run": run,
        "scheduler": who,
        "pods": pods,
        "bound": len(bound),
        "complete": finished,
        "seconds": round(seconds, 3),
        "pods_per_second": round(len(bound) / seconds, 1) if seconds > 0 else 0.0,
        "cpu_seconds": round(cpu, 3),
        "cpu_ms_per_pod": round(1000 * cpu / max(1, len(bound)), 3),
        # The API server's and etcd's CPU over the same span: what serving this scheduler cost.
        "apiserver_cpu_seconds": round(apiserver_cpu, 3),
        "etcd_cpu_seconds": round(etcd_cpu, 3),
        "requests": served,
        **with_events,
    }


def main() -> int:
    from tests.support.controlplane import bench_parser

    parser = bench_parser(__doc__.split("\n\n")[0], nodes=500, pods=2000)
    parser.add_argument("--runs", type=int, default=3, help="runs of each scheduler, interleaved A B B A A B ...")
    parser.add_argument("--qps", type=float, default=5000.0, help="client QPS of both schedulers")
    parser.add_argument("--burst", type=int, default=5000)
    parser.add_argument(
        "--profile", default="", help="path prefix: our runs' loop profile (.prof) and per-thread CPU (.threads.json)"
    )
    parser.add_argument("--engine", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.engine:
        run_engine(args.engine, args.qps, args.burst, args.profile)
        return 0

    from tests.support.builders import node_doc
    from tests.support.controlplane import Kubelet, bench_plane, bench_refused, namespace

    if bench_refused("real_apiserver"):
        return 2
    with bench_plane(args.state) as plane:
        api = plane.api
        namespace(api, NS)
        kubelet = Kubelet(api)
        zones = ("zone-a", "zone-b", "zone-c")
        nodes = [
            node_doc(
                f"node-{i:04d}",
                cpu=("4", "8", "16")[i % 3],
                memory="64Gi",
                labels={"topology.kubernetes.io/zone": zones[i % 3]},
            )
            for i in range(args.nodes)
        ]
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(kubelet.add_node, nodes))
        order = ["kube-scheduler", "schedconsole", "schedconsole", "kube-scheduler"]
        sequence = [order[i % 4] for i in range(2 * args.runs)]
        results = []
        for run, who in enumerate(sequence):
            result = one_run(plane, api, who, args.pods, args.qps, args.burst, run, args.profile)
            print(json.dumps(result), flush=True)
            results.append(result)
    summary = summarize(results)
    print(json.dumps(summary), flush=True)
    return 0 if all(r["complete"] for r in results) else 1


def summarize(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians per scheduler, and ours over kube-scheduler's."""
    out: dict[str, Any] = {}
    for who in ("kube-scheduler", "schedconsole"):
        mine = [r for r in results if r["scheduler"] == who]
        out[who] = {
            "runs": len(mine),
            "pods_per_second": statistics.median(r["pods_per_second"] for r in mine),
            "cpu_ms_per_pod": statistics.median(r["cpu_ms_per_pod"] for r in mine),
        }
        for key in ("events_seconds", "cpu_ms_per_pod_with_events", "all_cpu_ms_per_pod_with_events"):
            values = [r[key] for r in mine if key in r]
            if values:
                out[who][key] = statistics.median(values)
    # Rounds: consecutive pairs of runs (A B, B A, ...), each ours over kube-scheduler's.
    rounds = []
    for first, second in zip(results[::2], results[1::2], strict=False):
        pair = {first["scheduler"]: first, second["scheduler"]: second}
        if len(pair) == 2 and pair["kube-scheduler"]["pods_per_second"]:
            rounds.append(round(pair["schedconsole"]["pods_per_second"] / pair["kube-scheduler"]["pods_per_second"], 3))
    out["round_ratios_pods_per_second"] = rounds
    out["median_round_ratio"] = statistics.median(rounds) if rounds else None
    ks, ours = out["kube-scheduler"], out["schedconsole"]
    out["ratio_pods_per_second"] = round(ours["pods_per_second"] / ks["pods_per_second"], 3) if ks["pods_per_second"] else None
    out["ratio_cpu_per_pod"] = round(ours["cpu_ms_per_pod"] / ks["cpu_ms_per_pod"], 3) if ks["cpu_ms_per_pod"] else None
    for key in ("cpu_ms_per_pod_with_events", "all_cpu_ms_per_pod_with_events"):
        if ks.get(key) and ours.get(key):
            out[f"ratio_{key}"] = round(ours[key] / ks[key], 3)
    return out


if __name__ == "__main__":
    sys.exit(main())
