"""Console benchmark: SchedulingBasic-shaped load through the console vs the bare engine.

Runs, interleaved and `--repeat` times, in one session on this machine:
  bare     `python -m scheduler bench --workload SchedulingBasic` (in memory, no persistence)
  hosted   `manage.py runconsole` (engine thread, SQLite, group-commit store, live publisher); the
           measured pods arrive through `POST /api/import/`; the rate runs from the first measured
           pod's first attempt to the last binding stored, as scheduler_perf measures
  hosted+ws  the same with N websocket clients connected to /ws/scores/ and reading
and then the latency of `GET /apis/v1/nodes/<n>` with C concurrent clients.
Prints one JSON line per run and a summary line with medians and ratios. A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import json
import os
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from datetime import datetime
from http.cookiejar import CookieJar
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PASSWORD = "bench-password-123"


def node_doc(i: int) -> dict[str, Any]:
    name = f"node-{i:05d}"
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "uid": f"uid-{name}", "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": "4", "memory": "32Gi", "pods": "110"}},
    }


def pod_doc(prefix: str, i: int, node: str | None = None) -> dict[str, Any]:
    name = f"{prefix}-{i:06d}"
    spec: dict[str, Any] = {
        "containers": [
            {"name": "c", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}}}
        ]
    }
    if node:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "bench", "uid": f"uid-{name}"},
        "spec": spec,
    }


def bare(nodes: int, init: int, pods: int) -> dict[str, float]:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "scheduler",
            "bench",
            "--workload",
            "SchedulingBasic",
            "--nodes",
            str(nodes),
            "--init-pods",
            str(init),
            "--pods",
            str(pods),
            "--cpu-time",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    result = json.loads(out.strip().splitlines()[-1])
    return {"pods_per_second": float(result["pods_per_second"]), "pods_per_cpu_second": float(result["pods_per_cpu_second"])}


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system, every thread) a process has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Console:
    """A console subprocess over a fresh var dir seeded with nodes and bound initial pods."""

    def __init__(self, nodes: int, init: int, pods: int) -> None:
        self.var = Path(tempfile.mkdtemp(prefix="console-bench-"))
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {
            **os.environ,
            "SCHEDCONSOLE_VAR_DIR": str(self.var),
            "SCHEDCONSOLE_DEMO": "false",
            "SCHEDCONSOLE_ADMIN_PASSWORD": PASSWORD,
            "SCHEDCONSOLE_UPLOAD_MAX_BYTES": str(200 * 1024 * 1024),
            "SCHEDCONSOLE_CONTROL_TIMEOUT": "300",
            "PORT": str(self.port),
            "DJANGO_SETTINGS_MODULE": "schedconsole.settings",
        }
        for key in ("REDIS_URL", "DATABASE_URL"):
            self.env.pop(key, None)
        seed = [node_doc(i) for i in range(nodes)] + [pod_doc("init", i, f"node-{i % nodes:05d}") for i in range(init)]
        (self.var / "seed.json").write_text(json.dumps(seed))
        code = (
            "import django, json; django.setup(); from django.core.management import call_command; call_command('migrate', verbosity=0); "
            f"from schedconsole.engine.store import save_documents; save_documents(json.load(open({str(self.var / 'seed.json')!r})))"
        )
        subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=self.env, check=True)
        self.log = (self.var / "console.log").open("w")
        self.proc = subprocess.Popen(
            [sys.executable, "manage.py", "runconsole"], cwd=ROOT, env=self.env, stdout=self.log, stderr=subprocess.STDOUT
        )
        deadline = time.monotonic() + 120
        while f"Console: {self.url}/" not in (self.var / "console.log").read_text():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError((self.var / "console.log").read_text())
            time.sleep(0.2)
        self.token = subprocess.run(
            [sys.executable, "manage.py", "drf_create_token", "admin"],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()[2]

    def request(self, method: str, path: str, body: bytes | None = None, content_type: str = "application/json") -> Any:
        req = urllib.request.Request(
            self.url + path,
            method=method,
            data=body,
            headers={"Authorization": f"Token {self.token}", "Content-Type": content_type},
        )
        with urllib.request.urlopen(req, timeout=300) as response:
            return json.loads(response.read())

    def session_cookie(self) -> str:
        jar = CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        opener.open(self.url + "/accounts/login/").read()
        csrf = next(c.value for c in jar if c.name == "csrftoken")
        data = urllib.parse.urlencode({"username": "admin", "password": PASSWORD, "csrfmiddlewaretoken": csrf}).encode()
        opener.open(
            urllib.request.Request(self.url + "/accounts/login/", data=data, headers={"Referer": self.url + "/accounts/login/"})
        ).read()
        return "; ".join(f"{c.name}={c.value}" for c in jar)

    def db(self) -> sqlite3.Connection:
        return sqlite3.connect(self.var / "schedconsole.sqlite3", timeout=30)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(60)
        self.log.close()


def _ts(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


def hosted(nodes: int, init: int, pods: int, clients: int) -> dict[str, Any]:
    console = Console(nodes, init, pods)
    received = [0, 0]
    stop = threading.Event()
    thread = None
    try:
        if clients:
            cookie = console.session_cookie()
            ready = threading.Event()
            thread = threading.Thread(
                target=lambda: asyncio.run(_clients(console, cookie, clients, received, ready, stop)), daemon=True
            )
            thread.start()
            if not ready.wait(60):
                raise RuntimeError("websocket clients did not connect")
        body = json.dumps([pod_doc("pod", i) for i in range(pods)]).encode()
        console.request("POST", "/api/import/", body)
        cpu_started = process_cpu(console.proc.pid)  # the import is parsed and stored by now
        with console.db() as db:
            deadline = time.monotonic() + 900
            while db.execute("SELECT COUNT(*) FROM cluster_binding WHERE pod LIKE 'bench/pod-%'").fetchone()[0] < pods:
                if time.monotonic() > deadline:
                    raise RuntimeError("not every measured pod was bound")
                time.sleep(0.1)
            cpu = process_cpu(console.proc.pid) - cpu_started
            first = (
                db.execute("SELECT MIN(at) FROM history_attempt WHERE pod LIKE 'bench/pod-%'").fetchone()[0]
                or db.execute("SELECT MIN(at) FROM cluster_binding WHERE pod LIKE 'bench/pod-%'").fetchone()[0]
            )
            last = db.execute("SELECT MAX(at) FROM cluster_binding WHERE pod LIKE 'bench/pod-%'").fetchone()[0]
            attempts = db.execute("SELECT COUNT(*) FROM history_attempt WHERE pod LIKE 'bench/pod-%'").fetchone()[0]
            score_rows = sum(
                len(json.loads(d).get("scoreTable", {}).get("rows", []))
                for (d,) in db.execute("SELECT detail FROM history_attempt")
            )
        seconds = _ts(last) - _ts(first)
        time.sleep(1.0)
        result = {
            "pods": pods,
            "seconds": round(seconds, 3),
            "pods_per_second": round(pods / seconds, 1),
            "cpu_seconds": round(cpu, 2),
            "pods_per_cpu_second": round(pods / cpu, 1),
            "attempts_stored": attempts,
            "score_rows_stored": score_rows,
            "clients": clients,
            "ws_messages": received[0],
            "ws_missed": received[1],
        }
        return result
    finally:
        stop.set()
        if thread is not None:
            thread.join(10)
        console.stop()


class Clients:
    """N websocket clients reading /ws/scores/ on their own thread until stopped."""

    def __init__(self, console: Console, cookie: str, n: int) -> None:
        self.received = [0, 0]
        self.stop_event = threading.Event()
        ready = threading.Event()
        self.thread = threading.Thread(
            target=lambda: asyncio.run(_clients(console, cookie, n, self.received, ready, self.stop_event)), daemon=True
        )
        self.thread.start()
        if not ready.wait(60):
            raise RuntimeError("websocket clients did not connect")

    def stop(self) -> None:
        self.stop_event.set()
        self.thread.join(10)


def alternating(nodes: int, init: int, pods: int, phases: int, clients: int) -> dict[str, Any]:
    """One console; measured phases of `pods` pods each, alternately without and with `clients`
    websocket clients, in the order A B B A A B B A ... (a drift of the machine's speed or of the
    cluster's size over the run weighs on both sides alike). Each phase's rate runs from its first
    pod's first attempt to its last binding stored."""
    console = Console(nodes, init, 0)
    try:
        cookie = console.session_cookie()
        rates: dict[int, list[float]] = {0: [], clients: []}
        cpus: dict[int, list[float]] = {0: [], clients: []}
        by_phase: list[float] = []
        order = [clients if (i + 1) // 2 % 2 else 0 for i in range(2 * phases)]
        with console.db() as db:
            for i, n in enumerate(order):
                group = Clients(console, cookie, n) if n else None
                try:
                    prefix = f"ph{i:02d}"
                    body = json.dumps([pod_doc(prefix, j) for j in range(pods)]).encode()
                    console.request("POST", "/api/import/", body)
                    cpu_started = process_cpu(console.proc.pid)
                    deadline = time.monotonic() + 900
                    while (
                        db.execute("SELECT COUNT(*) FROM cluster_binding WHERE pod LIKE ?", (f"bench/{prefix}-%",)).fetchone()[0]
                        < pods
                    ):
                        if time.monotonic() > deadline:
                            raise RuntimeError("not every measured pod was bound")
                        time.sleep(0.1)
                    cpu = process_cpu(console.proc.pid) - cpu_started
                    first = db.execute("SELECT MIN(at) FROM history_attempt WHERE pod LIKE ?", (f"bench/{prefix}-%",)).fetchone()[
                        0
                    ]
                    last = db.execute("SELECT MAX(at) FROM cluster_binding WHERE pod LIKE ?", (f"bench/{prefix}-%",)).fetchone()[
                        0
                    ]
                finally:
                    if group is not None:
                        group.stop()
                rate = pods / (_ts(last) - _ts(first))
                rates[n].append(rate)
                by_phase.append(rate)
                cpus[n].append(pods / cpu)
                print(
                    json.dumps(
                        {
                            "run": "phase",
                            "phase": i,
                            "clients": n,
                            "pods_per_second": round(rate, 1),
                            "pods_per_cpu_second": round(pods / cpu, 1),
                            "ws_messages": group.received[0] if group else 0,
                        }
                    ),
                    flush=True,
                )
                time.sleep(1.0)  # the clients' disconnects settle
        # Per block of four (A B B A): the phases with clients against those without.
        pairs = []
        for start in range(0, len(order), 4):
            block = list(zip(order[start : start + 4], by_phase[start : start + 4], strict=True))
            with_ = [r for n, r in block if n]
            without = [r for n, r in block if not n]
            if with_ and without:
                pairs.append(statistics.mean(with_) / statistics.mean(without))
        return {
            "run": "alternating",
            "clients": clients,
            "pods_per_phase": pods,
            "phases": len(order),
            "without": [round(r, 1) for r in rates[0]],
            "with": [round(r, 1) for r in rates[clients]],
            "ratios": [round(r, 3) for r in pairs],
            "median_ratio": round(statistics.median(pairs), 3),
            "ratio_of_medians": round(statistics.median(rates[clients]) / statistics.median(rates[0]), 3),
            "cpu_ratio_of_medians": round(statistics.median(cpus[clients]) / statistics.median(cpus[0]), 3),
        }
    finally:
        console.stop()


async def _clients(
    console: Console, cookie: str, n: int, received: list[int], ready: threading.Event, stop: threading.Event
) -> None:
    import websockets

    url = f"ws://127.0.0.1:{console.port}/ws/scores/"
    headers = {"Cookie": cookie, "Origin": console.url}
    connections = [await websockets.connect(url, additional_headers=headers, max_queue=None) for _ in range(n)]
    for ws in connections:
        await ws.recv()  # hello
    ready.set()

    async def read(ws: Any) -> None:
        while not stop.is_set():
            try:
                message = json.loads(await asyncio.wait_for(ws.recv(), 0.5))
            except TimeoutError:
                continue
            if message["type"] == "attempt":
                received[0] += 1
            elif message["type"] == "missed":
                received[1] += message["count"]

    await asyncio.gather(*(read(ws) for ws in connections), return_exceptions=True)
    for ws in connections:
        await ws.close()


def latency(nodes: int, init: int, concurrency: int, requests: int) -> dict[str, Any]:
    console = Console(nodes, init, 0)
    try:

        def one(i: int) -> float:
            started = time.perf_counter()
            req = urllib.request.Request(
                f"{console.url}/apis/v1/nodes/node-{i % nodes:05d}", headers={"Authorization": f"Token {console.token}"}
            )
            with urllib.request.urlopen(req, timeout=30) as response:
                response.read()
            return time.perf_counter() - started

        for i in range(concurrency):
            one(i)  # warm up
        with concurrent.futures.ThreadPoolExecutor(concurrency) as pool:
            times = sorted(pool.map(one, range(requests)))
        return {
            "concurrency": concurrency,
            "requests": requests,
            "p50_ms": round(times[len(times) // 2] * 1000, 1),
            "p95_ms": round(times[int(len(times) * 0.95)] * 1000, 1),
            "max_ms": round(times[-1] * 1000, 1),
        }
    finally:
        console.stop()


WRK_SCRIPT = """
done = function(summary, latency, requests)
  io.write(string.format("wrk %d %d %d %d %d\\n", summary.requests, latency:percentile(50), latency:percentile(95), latency.max, summary.errors.status))
end
"""


def latency_wrk(nodes: int, init: int, concurrency: int, seconds: int) -> dict[str, Any] | None:
    """The same with wrk (Debian's `wrk`), keep-alive connections and a C client: the server's latency
    without a Python client's own queueing. None when wrk is not installed."""
    import shutil

    if shutil.which("wrk") is None:
        return None
    console = Console(nodes, init, 0)
    try:
        script = console.var / "p95.lua"
        script.write_text(WRK_SCRIPT)
        out = subprocess.run(
            [
                "wrk",
                "-t2",
                f"-c{concurrency}",
                f"-d{seconds}s",
                "-s",
                str(script),
                "-H",
                f"Authorization: Token {console.token}",
                f"{console.url}/apis/v1/nodes/node-{nodes // 2:05d}",
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        line = next(ln for ln in out.splitlines() if ln.startswith("wrk "))
        requests, p50, p95, worst, errors = (int(x) for x in line.split()[1:])
        return {
            "client": "wrk",
            "concurrency": concurrency,
            "requests": requests,
            "rps": round(requests / seconds, 1),
            "p50_ms": round(p50 / 1000, 1),
            "p95_ms": round(p95 / 1000, 1),
            "max_ms": round(worst / 1000, 1),
            "non_2xx": errors,
        }
    finally:
        console.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--init-pods", type=int, default=1000)
    parser.add_argument("--pods", type=int, default=10000)
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument(
        "--alternate",
        type=int,
        default=0,
        metavar="PHASES",
        help="instead: one console, PHASES phases without and PHASES with the websocket clients, alternating (A B B A ...), --pods pods each",
    )
    args = parser.parse_args()
    if args.alternate:
        print(json.dumps(alternating(args.nodes, args.init_pods, args.pods, args.alternate, args.clients)), flush=True)
        return
    runs: dict[str, list[float]] = {"bare": [], "hosted": [], "hosted_ws": []}
    cpu: dict[str, list[float]] = {"bare": [], "hosted": [], "hosted_ws": []}
    for _ in range(args.repeat):
        result = bare(args.nodes, args.init_pods, args.pods)
        print(json.dumps({"run": "bare", **result}), flush=True)
        runs["bare"].append(result["pods_per_second"])
        cpu["bare"].append(result["pods_per_cpu_second"])
        for name, clients in (("hosted", 0), ("hosted_ws", args.clients)):
            result = hosted(args.nodes, args.init_pods, args.pods, clients)
            print(json.dumps({"run": name, **result}), flush=True)
            runs[name].append(result["pods_per_second"])
            cpu[name].append(result["pods_per_cpu_second"])
    lat = latency(args.nodes, args.init_pods, args.concurrency, args.requests)
    print(json.dumps({"run": "nodes_route_latency", **lat}), flush=True)
    lat_wrk = latency_wrk(args.nodes, args.init_pods, args.concurrency, 15)
    if lat_wrk is not None:
        print(json.dumps({"run": "nodes_route_latency", **lat_wrk}), flush=True)
        lat = lat_wrk
    med = {k: statistics.median(v) for k, v in runs.items()}
    med_cpu = {k: statistics.median(v) for k, v in cpu.items()}
    print(
        json.dumps(
            {
                "summary": med,
                "hosted_vs_bare": round(med["hosted"] / med["bare"], 3),
                "ws_vs_hosted": round(med["hosted_ws"] / med["hosted"], 3),
                "per_cpu_second": med_cpu,
                "cpu_hosted_vs_bare": round(med_cpu["hosted"] / med_cpu["bare"], 3),
                "cpu_ws_vs_hosted": round(med_cpu["hosted_ws"] / med_cpu["hosted"], 3),
                "nodes_route_p95_ms": lat["p95_ms"],
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    main()
