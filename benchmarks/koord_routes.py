"""Latency of Koordinator's REST routes (`GET /apis/v1/nodes/<name>`, token auth) on consoles built
from two source trees, interleaved in one sitting: A B A B ... (`--rounds` each).

Each run starts `manage.py runconsole` (embedded: SQLite, engine in the process) from the tree
over `--nodes` nodes, or with `--production` the tree's own test stack (`tests/support/stack.py`:
uvicorn, an engine and a task worker, PostgreSQL, Redis), then `--concurrency` keep-alive
connections (an asyncio client, light on CPU) ask for nodes for `--seconds`. Prints a JSON line per run and one with the medians of p50,
p95 and requests a second per tree, and B's over A's. A benchmark, not a test; run it under
`flock -x /work/cpu.lock` on a shared machine.

    python benchmarks/koord_routes.py --tree before=/path/a --tree after=/path/b
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

PASSWORD = "bench-password-123"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(tree: Path, nodes: int) -> tuple[subprocess.Popen[bytes], int, str, Path]:
    """runconsole from `tree` over `nodes` nodes; its process, port, an admin token and var dir."""
    var = Path(tempfile.mkdtemp(prefix="koord-routes-"))
    port = _free_port()
    env = {
        **os.environ,
        "SCHEDCONSOLE_VAR_DIR": str(var),
        "SCHEDCONSOLE_DEMO": "false",
        "SCHEDCONSOLE_ADMIN_PASSWORD": PASSWORD,
        "PORT": str(port),
        "DJANGO_SETTINGS_MODULE": "schedconsole.settings",
        "LOG_LEVEL": "ERROR",
    }
    for key in ("REDIS_URL", "DATABASE_URL"):
        env.pop(key, None)
    seed = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": f"node-{i:05d}", "uid": f"uid-node-{i:05d}"},
            "status": {"allocatable": {"cpu": "4", "memory": "32Gi", "pods": "110"}},
        }
        for i in range(nodes)
    ]
    (var / "seed.json").write_text(json.dumps(seed))
    code = (
        "import django, json; django.setup(); from django.core.management import call_command; call_command('migrate', verbosity=0); "
        f"from schedconsole.engine.store import save_documents; save_documents(json.load(open({str(var / 'seed.json')!r})))"
    )
    subprocess.run([sys.executable, "-c", code], cwd=tree, env=env, check=True)
    log = (var / "console.log").open("w")
    proc = subprocess.Popen([sys.executable, "manage.py", "runconsole"], cwd=tree, env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while f"Console: http://127.0.0.1:{port}/" not in (var / "console.log").read_text():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError((var / "console.log").read_text())
        time.sleep(0.2)
    token = subprocess.run(
        [sys.executable, "manage.py", "drf_create_token", "admin"], cwd=tree, env=env, capture_output=True, text=True, check=True
    ).stdout.split()[2]
    return proc, port, token, var


PRODUCTION = """
import json, pathlib, sys, tempfile
from tests.support.stack import Stack, nodes_yaml, pods_yaml
from tests.support.waits import wait_for
stack = Stack(pathlib.Path(tempfile.mkdtemp(prefix="koord-routes-")))
try:
    for name in ("engine-a", "tasks", "web"):
        stack.start(name)
    wait_for(lambda: stack.http("GET", "/readyz", auth=False)[0] == 200, 60, 0.2, what="readyz", ignoring=(Exception,))
    nodes = int(sys.argv[1])
    status, body = stack.http("POST", "/api/import/", nodes_yaml(nodes) + pods_yaml(1, "tick"), content_type="application/yaml")
    assert status == 201, body
    # The routes read the scheduler's snapshot, which a scheduling cycle (the one pod's) brings up to date.
    wait_for(lambda: stack.http("GET", f"/apis/v1/nodes/node-{nodes - 1}")[0] == 200, 60, 0.2, what="the nodes served")
    print(json.dumps({"port": stack.web_port, "token": stack.token}), flush=True)
    sys.stdin.read()
finally:
    stack.close()
"""


def start_production(tree: Path, nodes: int) -> tuple[subprocess.Popen[str], int, str]:
    """The tree's production test stack over `nodes` nodes (named node-<i>); its process, port, token."""
    proc = subprocess.Popen(
        [sys.executable, "-c", PRODUCTION, str(nodes)], cwd=tree, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    started = json.loads(proc.stdout.readline())
    return proc, int(started["port"]), str(started["token"])


async def _client(port: int, token: str, nodes: int, until: float, times: list[float], worker: int, name: str) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    i = worker
    while time.perf_counter() < until:
        request = (
            f"GET /apis/v1/nodes/{name.format(i % nodes)} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Token {token}\r\n\r\n"
        ).encode()
        started = time.perf_counter()
        writer.write(request)
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:"))
        body = await reader.readexactly(length)
        if not head.startswith(b"HTTP/1.1 200"):
            raise RuntimeError(
                f"{request.decode().splitlines()[0]}: {head.decode(errors='replace')}{body.decode(errors='replace')}"
            )
        times.append(time.perf_counter() - started)
        i += 7
    writer.close()


def measure(port: int, token: str, nodes: int, concurrency: int, seconds: float, name: str = "node-{:05d}") -> dict[str, Any]:
    """Requests from `concurrency` keep-alive connections for `seconds` (after a second's warm-up)."""

    async def run(duration: float) -> list[float]:
        times: list[float] = []
        until = time.perf_counter() + duration
        await asyncio.gather(*(_client(port, token, nodes, until, times, w, name) for w in range(concurrency)))
        return times

    asyncio.run(run(1.0))
    times = sorted(asyncio.run(run(seconds)))
    return {
        "requests": len(times),
        "rps": round(len(times) / seconds, 1),
        "p50_ms": round(times[len(times) // 2] * 1000, 2),
        "p95_ms": round(times[int(len(times) * 0.95)] * 1000, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tree", action="append", required=True, metavar="NAME=PATH", help="a source tree (two)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--production", action="store_true", help="the production test stack instead of runconsole")
    args = parser.parse_args()
    trees = [(name, Path(path)) for name, path in (t.split("=", 1) for t in args.tree)]
    results: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in trees}
    for round_ in range(args.rounds):
        for name, tree in trees if round_ % 2 == 0 else list(reversed(trees)):
            if args.production:
                stack, port, token = start_production(tree, args.nodes)
                try:
                    result = measure(port, token, args.nodes, args.concurrency, args.seconds, "node-{}")
                finally:
                    stack.communicate("", timeout=60)  # end of input: the stack closes
            else:
                proc, port, token, _ = start(tree, args.nodes)
                try:
                    result = measure(port, token, args.nodes, args.concurrency, args.seconds)
                finally:
                    proc.terminate()
                    proc.wait(30)
            results[name].append(result)
            print(json.dumps({"tree": name, "round": round_, **result}), flush=True)
    medians = {
        name: {k: statistics.median(r[k] for r in runs) for k in ("rps", "p50_ms", "p95_ms")} for name, runs in results.items()
    }
    (a, _), (b, _) = trees[0], trees[1]
    ratios = {k: round(medians[b][k] / medians[a][k], 3) for k in ("rps", "p50_ms", "p95_ms")}
    print(json.dumps({"medians": medians, f"{b}_over_{a}": ratios}), flush=True)


if __name__ == "__main__":
    main()
