"""Load check of the production wiring: the engine's throughput with and without 200 websocket
clients on the web server (uvicorn) and 50 concurrent REST clients, and the REST clients' p95 latencies.

One stack (tests/support/stack.py: PostgreSQL, a private Redis, uvicorn, two engine workers of
which one leads, a task worker). Runs alternate, `--repeat` times each, on the same stack:
  quiet   N pods imported; the rate runs from the first attempt to the last binding stored
  loaded  the same while W websocket clients read /ws/scores/ and C threads loop over REST routes
          (each sends its next request once answered; with `--rest-rate R`, at R requests a second
          in all instead, each thread on a schedule of its own, so faster answers bring no more load)
Prints a JSON line per run and a summary with medians and the loaded/quiet ratio. A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.stack import Stack, nodes_yaml, pods_yaml
from tests.support.waits import wait_for

ROUTES = ("/api/nodes/?limit=20", "/apis/v1/nodes/node-{i}", "/api/pods/?limit=20", "/api/queue/", "/apis/v1/__services__")


def _rate(stack: Stack, prefix: str, pods: int) -> float:
    wait_for(
        lambda: stack.query(f"SELECT COUNT(*) FROM cluster_binding WHERE pod LIKE 'default/{prefix}-%'")[0][0] >= pods,
        900,
        0.25,
        what="all bound",
        ignoring=(Exception,),
    )
    ((first,),) = stack.query(f"SELECT MIN(at) FROM history_attempt WHERE pod LIKE 'default/{prefix}-%'")
    ((last,),) = stack.query(f"SELECT MAX(at) FROM cluster_binding WHERE pod LIKE 'default/{prefix}-%'")
    return pods / (last - first).total_seconds()


async def _ws_clients(
    stack: Stack, cookie: str, n: int, counts: list[int], ready: threading.Event, stop: threading.Event
) -> None:
    import websockets

    url = f"ws://127.0.0.1:{stack.web_port}/ws/scores/"
    conns = [
        await websockets.connect(url, additional_headers={"Cookie": cookie}, origin=stack.url, max_queue=None) for _ in range(n)
    ]
    for ws in conns:
        await ws.recv()
    ready.set()

    async def read(ws: Any) -> None:
        while not stop.is_set():
            try:
                message = json.loads(await asyncio.wait_for(ws.recv(), 0.5))
            except TimeoutError:
                continue
            counts[0 if message["type"] == "attempt" else 1] += 1

    await asyncio.gather(*(read(ws) for ws in conns), return_exceptions=True)
    for ws in conns:
        await ws.close()


def _rest_clients(
    stack: Stack, n: int, nodes: int, stop: threading.Event, times: dict[str, list[float]], errors: list[int], rate: float = 0.0
) -> list[threading.Thread]:
    def loop(k: int) -> None:
        i = k
        period = n / rate if rate else 0.0
        due = time.perf_counter() + period * k / n
        while not stop.is_set():
            if period:
                # Open loop: the next request is due a period after the last one was due; a late
                # answer does not postpone the schedule (its wait counts in the latency from `due`).
                if stop.wait(max(0.0, due - time.perf_counter())):
                    return
            route = ROUTES[i % len(ROUTES)]
            path = route.format(i=i % nodes)
            req = urllib.request.Request(stack.url + path, headers={"Authorization": f"Token {stack.token}"})
            started = due if period else time.perf_counter()
            due += period
            try:
                with urllib.request.urlopen(req, timeout=30) as response:
                    response.read()
                times.setdefault(route, []).append(time.perf_counter() - started)
            except Exception:
                errors[0] += 1
            i += 1

    threads = [threading.Thread(target=loop, args=(k,), daemon=True) for k in range(n)]
    for t in threads:
        t.start()
    return threads


def _p95(values: list[float]) -> float:
    values = sorted(values)
    return round(values[int(len(values) * 0.95)] * 1000, 1) if values else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--pods", type=int, default=2000)
    parser.add_argument("--ws", type=int, default=200)
    parser.add_argument("--rest", type=int, default=50)
    parser.add_argument(
        "--rest-rate", type=float, default=0.0, help="REST requests a second in all (0: each client as fast as answered)"
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--env", action="append", default=[], metavar="NAME=VALUE", help="a setting for the stack's processes (repeatable)"
    )
    parser.add_argument("--quiet-only", action="store_true", help="quiet runs only (no loaded runs)")
    args = parser.parse_args()
    stack = Stack(Path(tempfile.mkdtemp(prefix="production-load-")), leader_ttl=10)
    stack.env.update(dict(item.split("=", 1) for item in args.env))
    stack.env["SCHEDCONSOLE_CONTROL_TIMEOUT"] = "60"  # a 2000-pod import under load takes longer than the tests' 5 s
    stack.env["SCHEDCONSOLE_IMPORT_TIMEOUT"] = "300"
    try:
        for name in ("web", "engine-a", "engine-b", "tasks"):
            stack.start(name)
        wait_for(lambda: stack.http("GET", "/readyz", auth=False)[0] == 200, 60, 0.1, what="readyz", ignoring=(Exception,))
        assert stack.http("POST", "/api/import/", nodes_yaml(args.nodes, cpu="4"), content_type="application/yaml")[0] == 201
        stack.http("PUT", "/api/debug-flags/", {"debugTopNScores": 5, "debugFilterFailure": False})
        cookie = stack.session_cookie()
        quiet: list[float] = []
        loaded: list[float] = []
        p95s: dict[str, list[float]] = {}
        for run in range(args.repeat):
            for mode in ("quiet",) if args.quiet_only else ("quiet", "loaded"):
                prefix = f"{mode[0]}{run}"
                stop = threading.Event()
                counts = [0, 0]
                times: dict[str, list[float]] = {}
                errors = [0]
                threads: list[threading.Thread] = []
                if mode == "loaded":
                    ready = threading.Event()
                    threads.append(
                        threading.Thread(
                            target=asyncio.run, args=(_ws_clients(stack, cookie, args.ws, counts, ready, stop),), daemon=True
                        )
                    )
                    threads[0].start()
                    if not ready.wait(120):
                        raise RuntimeError("websocket clients did not connect")
                    threads += _rest_clients(stack, args.rest, args.nodes, stop, times, errors, args.rest_rate)
                    time.sleep(1.0)
                status, body = stack.http(
                    "POST", "/api/import/", pods_yaml(args.pods, prefix), content_type="application/yaml", timeout=300
                )
                assert status == 201, body
                rate = _rate(stack, prefix, args.pods)
                stop.set()
                for t in threads:
                    t.join(15)
                line: dict[str, Any] = {"mode": mode, "run": run, "pods": args.pods, "pods_per_second": round(rate, 1)}
                if mode == "loaded":
                    line.update(
                        {
                            "ws_clients": args.ws,
                            "ws_attempts": counts[0],
                            "ws_other": counts[1],
                            "rest_clients": args.rest,
                            "rest_rate": args.rest_rate or "closed loop",
                            "rest_errors": errors[0],
                            "rest_requests": sum(len(v) for v in times.values()),
                            "p95_ms": {r: _p95(v) for r, v in times.items()},
                        }
                    )
                    for route, values in times.items():
                        p95s.setdefault(route, []).append(_p95(values))
                    loaded.append(rate)
                else:
                    quiet.append(rate)
                print(json.dumps(line), flush=True)
        print(
            json.dumps(
                {
                    "summary": True,
                    "quiet_median": round(statistics.median(quiet), 1),
                    "loaded_median": round(statistics.median(loaded), 1) if loaded else None,
                    "loaded_over_quiet": round(statistics.median(loaded) / statistics.median(quiet), 3) if loaded else None,
                    "p95_ms_median": {r: statistics.median(v) for r, v in p95s.items()},
                }
            )
        )
    finally:
        stack.close()


if __name__ == "__main__":
    main()
