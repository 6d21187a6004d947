"""Live servers the tests start: a free port, the console as `manage.py runconsole` runs it, a
"live" cluster served over HTTP, and a scripted raw HTTP server."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from scheduler.apiserver.httpserver import APIHTTPServer
from scheduler.apiserver.server import APIServer
from scheduler.clock import Clock
from scheduler.cluster.simulated import SimulatedCluster
from tests.support.builders import node_doc, pod_doc

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class ConsoleProcess:
    """A running `manage.py runconsole`: its address, the admin's API token, its log and process."""

    url: str
    token: str
    log: Path
    proc: subprocess.Popen[bytes]
    env: dict[str, str]

    def manage(self, *args: str) -> str:
        """Run another `manage.py` command against the console's database; its standard output."""
        done = subprocess.run(
            [sys.executable, "manage.py", *args], cwd=ROOT, env=self.env, capture_output=True, text=True, check=True
        )
        return done.stdout

    def stop(self, timeout: float = 30) -> None:
        self.proc.terminate()
        self.proc.wait(timeout)


def start_console(var: Path, env: Mapping[str, str] | None = None, timeout: float = 90, database_url: str = "") -> ConsoleProcess:
    """Start the embedded console (the README's first command without setup) on a free port.

    `var` holds its SQLite database (unless `database_url` names another) and log; `env` adds
    settings (the admin's password, the demo cluster, TLS, modes). No Redis reaches it: it runs
    embedded. Fails the test, with the log, when the console does not say where it listens within
    `timeout` seconds.
    """
    port = free_port()
    full = {
        **os.environ,
        "SCHEDCONSOLE_VAR_DIR": str(var),
        "SCHEDCONSOLE_DEMO_TRICKLE": "0",
        "PORT": str(port),
        "DJANGO_SETTINGS_MODULE": "schedconsole.settings",
        **(env or {}),
    }
    full.pop("REDIS_URL", None)
    full.pop("DATABASE_URL", None)
    if database_url:
        full["DATABASE_URL"] = database_url
    scheme = "https" if full.get("SCHEDCONSOLE_TLS_CERT") else "http"
    log = var / "console.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "manage.py", "runconsole"], cwd=ROOT, env=full, stdout=out, stderr=subprocess.STDOUT
        )
    deadline = time.monotonic() + timeout
    while f"Console: {scheme}://127.0.0.1:{port}/" not in log.read_text():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            proc.wait(10)
            pytest.fail(f"the console did not start:\n{log.read_text()}")
        time.sleep(0.2)
    running = ConsoleProcess(f"{scheme}://127.0.0.1:{port}", "", log, proc, full)
    try:
        running.token = running.manage("drf_create_token", "admin").split()[2]
    except BaseException:
        running.stop()
        raise
    return running


@dataclass
class LiveCluster:
    """A "live" cluster: the API served over HTTP by `httpserver.py`, written to as another scheduler would."""

    server: APIHTTPServer

    def send(self, method: str, path: str, body: Any = None, content_type: str = "application/json") -> Any:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.server.url + path, data=data, method=method, headers={"Content-Type": content_type})
        with urllib.request.urlopen(request, timeout=10) as answer:
            return json.loads(answer.read())

    def create(self, doc: dict[str, Any]) -> None:
        plural = "nodes" if doc["kind"] == "Node" else "namespaces" if doc["kind"] == "Namespace" else "pods"
        prefix = "/api/v1" + (f"/namespaces/{doc['metadata']['namespace']}" if plural == "pods" else "")
        self.send("POST", f"{prefix}/{plural}", doc)

    def bind(self, name: str, node_name: str) -> None:
        binding = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": name},
            "target": {"kind": "Node", "name": node_name},
        }
        self.send("POST", f"/api/v1/namespaces/prod/pods/{name}/binding", binding)

    def pods(self) -> dict[str, str]:
        items = self.send("GET", "/api/v1/pods")["items"]
        return {i["metadata"]["name"]: i["spec"].get("nodeName", "") for i in items}


def live_pod(name: str, node_name: str = "") -> dict[str, Any]:
    """A pod of the live cluster's namespace `prod`, bound when `node_name` is given."""
    return pod_doc(name, "prod", "500m", "64Mi", node_name=node_name, labels={"app": "web"})


def start_live() -> LiveCluster:
    """A live cluster on its own API server: namespace prod, nodes n1 and n2, a bound and a pending pod.
    The caller stops it (`server.stop()`)."""
    server = APIHTTPServer(APIServer(SimulatedCluster(clock=Clock()))).start()
    running = LiveCluster(server)
    running.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "prod"}})
    for name in ("n1", "n2"):
        running.create(node_doc(name))
    running.create(live_pod("bound", "n1"))
    running.create(live_pod("pending"))
    return running


class ScriptedServer:
    """A raw TCP server answering each request on a connection with the next scripted bytes (and
    closing after those marked so), recording what it was sent."""

    def __init__(self, answers: list[tuple[bytes, bool]]) -> None:
        self.answers = list(answers)
        self.requests: list[bytes] = []
        self.connections = 0
        self.closed = 0  # connections this side has closed
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _serve(self) -> None:
        while self.answers:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            with conn, conn.makefile("rb") as rfile:
                while self.answers:
                    head = b""
                    while not head.endswith(b"\r\n\r\n"):
                        line = rfile.readline()
                        if not line:
                            break
                        head += line
                    if not head:
                        break
                    length = next(
                        (
                            int(v)
                            for k, _, v in (h.partition(b": ") for h in head.split(b"\r\n"))
                            if k.lower() == b"content-length"
                        ),
                        0,
                    )
                    self.requests.append(head + rfile.read(length))
                    answer, close = self.answers.pop(0)
                    conn.sendall(answer)
                    if close:
                        break
            self.closed += 1

    def close(self) -> None:
        self.sock.close()
