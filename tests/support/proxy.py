"""An HTTP proxy in front of /k8s that injects faults: watches closed mid-stream, 410 Gone, 429
with Retry-After, 500s, latency, and a rival scheduler binding a pod just before ours."""

from __future__ import annotations

import http.client
import json
import re
import ssl
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit


@dataclass
class Rule:
    """A fault for requests matching `method` and the `path` regex, `count` times (after `skip`)."""

    method: str
    path: str
    fault: str  # "close-after:N", "gone", "status:CODE", "retry-after:CODE:SECONDS", "delay:SECONDS", "rival:NODE"
    count: int = 1
    skip: int = 0
    seen: int = 0

    def take(self, method: str, path: str) -> bool:
        """Whether this request gets the fault (counts it)."""
        if method != self.method or not re.search(self.path, path):
            return False
        self.seen += 1
        return self.skip < self.seen <= self.skip + self.count


@dataclass
class FaultProxy:
    """Forwards to `upstream` (https) with the rules applied; records what happened."""

    upstream: str
    token: str
    rules: list[Rule] = field(default_factory=list)
    latency: float = 0.0  # added to every non-watch request
    applied: Counter[str] = field(default_factory=Counter)
    bindings: Counter[str] = field(default_factory=Counter)  # successful bindings by pod
    events: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        """The proxy's base URL (the API's /k8s prefix included)."""
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}/k8s"

    def start(self) -> None:
        """Serve on a free port."""
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go in separate writes: no 40 ms delayed-ACK stall

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _any(self) -> None:
                proxy.handle(self)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _any

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        """Stop serving."""
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()

    def _rule(self, method: str, path: str) -> Rule | None:
        with self.lock:
            for rule in self.rules:
                if rule.take(method, path):
                    self.applied[rule.fault.split(":")[0]] += 1
                    return rule
        return None

    def _upstream(self, method: str, path: str, body: bytes | None, headers: dict[str, str]) -> http.client.HTTPResponse:
        target = urlsplit(self.upstream)
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        conn = http.client.HTTPSConnection(target.hostname or "127.0.0.1", target.port, context=context, timeout=120)
        conn.request(method, path, body=body, headers=headers)
        return conn.getresponse()

    def handle(self, req: BaseHTTPRequestHandler) -> None:
        """Serve one request: apply a matching rule, else forward."""
        method, path = req.command, req.path
        length = int(req.headers.get("Content-Length") or 0)
        body = req.rfile.read(length) if length else None
        headers = {k: v for k, v in req.headers.items() if k.lower() in ("authorization", "content-type", "accept")}
        watch = "watch=true" in path or "watch=1" in path
        rule = self._rule(method, path)
        fault = rule.fault if rule is not None else ""
        if not watch and self.latency:
            time.sleep(self.latency)
        if fault.startswith("delay:"):
            time.sleep(float(fault.split(":")[1]))
        elif fault.startswith("status:") or fault.startswith("retry-after:"):
            parts = fault.split(":")
            code = int(parts[1])
            extra = {"Retry-After": parts[2]} if parts[0] == "retry-after" else {}
            self._reply(
                req,
                code,
                {
                    "kind": "Status",
                    "apiVersion": "v1",
                    "status": "Failure",
                    "code": code,
                    "reason": "Injected",
                    "message": f"injected {code}",
                },
                extra,
            )
            return
        elif fault == "gone":
            status = {
                "kind": "Status",
                "apiVersion": "v1",
                "status": "Failure",
                "code": 410,
                "reason": "Expired",
                "message": "too old resource version (injected)",
            }
            self._stream(req, iter([json.dumps({"type": "ERROR", "object": status}).encode() + b"\n"]))
            return
        elif fault.startswith("rival:"):
            # Another scheduler binds the pod first: ours then gets the API server's 409.
            pod = path.rstrip("/").split("/")[-2]
            rival = {
                "apiVersion": "v1",
                "kind": "Binding",
                "metadata": {"name": pod},
                "target": {"kind": "Node", "name": fault.split(":")[1]},
            }
            ns_path = path.rsplit("/pods/", 1)[0] + "/bindings"
            done = self._upstream(
                "POST",
                ns_path,
                json.dumps(rival).encode(),
                {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"},
            )
            done.read()
            time.sleep(0.3)  # the engine stores the rival's binding before it shows
        upstream = self._upstream(method, path, body, headers)
        if watch:
            limit = int(fault.split(":")[1]) if fault.startswith("close-after:") else None
            self._stream(req, self._lines(upstream, limit))
            return
        data = upstream.read()
        if method == "POST" and path.endswith("/binding") and upstream.status < 300:
            with self.lock:
                self.bindings[path.rstrip("/").split("/")[-2]] += 1
        if method == "POST" and "/events" in path and upstream.status < 300 and body:
            with self.lock:
                self.events.append(json.loads(body))
        req.send_response(upstream.status)
        req.send_header("Content-Type", upstream.getheader("Content-Type") or "application/json")
        req.send_header("Content-Length", str(len(data)))
        req.end_headers()
        req.wfile.write(data)

    @staticmethod
    def _lines(upstream: http.client.HTTPResponse, limit: int | None) -> Any:
        sent = 0
        while True:
            line = upstream.readline()
            if not line:
                return
            yield line
            sent += 1
            if limit is not None and sent >= limit:
                upstream.close()
                return  # closed mid-stream

    @staticmethod
    def _reply(req: BaseHTTPRequestHandler, code: int, body: dict[str, Any], headers: dict[str, str]) -> None:
        data = json.dumps(body).encode()
        req.send_response(code)
        req.send_header("Content-Type", "application/json")
        req.send_header("Content-Length", str(len(data)))
        for k, v in headers.items():
            req.send_header(k, v)
        req.end_headers()
        req.wfile.write(data)

    @staticmethod
    def _stream(req: BaseHTTPRequestHandler, lines: Any) -> None:
        req.send_response(200)
        req.send_header("Content-Type", "application/json")
        req.send_header("Transfer-Encoding", "chunked")
        req.end_headers()
        try:
            for line in lines:
                req.wfile.write(f"{len(line):x}\r\n".encode() + line + b"\r\n")
                req.wfile.flush()
            req.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass
        req.close_connection = True


def client_for(url: str, token: str, qps: float = 50.0, burst: int = 100, timeout: float = 30.0) -> Any:
    """A backend connection to `url` with a bearer token (what a kubeconfig would give)."""
    from kubernetes import client

    from scheduler.kube.client import Connection, RateLimiter

    configuration = client.Configuration()
    configuration.host = url
    configuration.api_key = {"BearerToken": token}
    configuration.api_key_prefix = {"BearerToken": "Bearer"}
    configuration.verify_ssl = False
    configuration.connection_pool_maxsize = 32
    return Connection(client.ApiClient(configuration), RateLimiter(qps, burst), timeout=timeout)


Step = Callable[[], bool]
