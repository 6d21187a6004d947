"""A small standalone HTTP front for `APIServer` (no console): the API server the cluster backend's
benchmark talks to, with a fixed latency added to every request, as a remote server's round trip.

`python -m scheduler.apiserver.httpserver --cluster FILE --port N --latency 2ms` serves the objects
of a cluster file. Requests are served one at a time against the cluster (one lock), watches poll
the API server's log.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import orjson

from scheduler.api.loader import load_cluster
from scheduler.apiserver.resources import RESOURCES
from scheduler.apiserver.server import APIServer
from scheduler.clock import Clock
from scheduler.cluster.simulated import SimulatedCluster
from scheduler.options import api_latency_seconds

VERBS = {"GET": "get", "POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}


def route(path: str) -> dict[str, str] | None:
    """The group, version, resource, namespace, name and subresource a path names."""
    parts = [p for p in path.split("/") if p]
    if parts[:2] == ["api", "v1"]:
        group, version, rest = "", "v1", parts[2:]
    elif len(parts) >= 3 and parts[0] == "apis":
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        return None
    names = {r.name for r in RESOURCES if (r.group, r.version) == (group, version) and r.namespaced}
    namespace = ""
    if len(rest) >= 3 and rest[0] == "namespaces" and rest[2] in names:
        namespace, rest = rest[1], rest[2:]
    if not rest or len(rest) > 3:
        return None
    return {
        "group": group,
        "version": version,
        "resource": rest[0],
        "namespace": namespace,
        "name": rest[1] if len(rest) > 1 else "",
        "subresource": rest[2] if len(rest) > 2 else "",
    }


class APIHTTPServer:
    """Serves an APIServer over HTTP on 127.0.0.1 (plain HTTP, no authentication: for benchmarks and tests)."""

    def __init__(self, api: APIServer, latency: float = 0.0, port: int = 0) -> None:
        self.api = api
        self.latency = latency
        self.lock = threading.Lock()
        # One condition per resource: a change wakes only the watches of its resource.
        self.changed: dict[str, threading.Condition] = {}
        self.requests = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            raw_requestline: bytes
            disable_nagle_algorithm = True  # a watch's headers and events go in separate writes

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def parse_request(self) -> bool:
                """A well-formed HTTP/1.x request's headers read with a few lines (the standard
                handler parses them with the `email` package, most of this server's CPU per
                binding); anything else goes the standard way."""
                words = self.raw_requestline.decode("latin-1").rstrip("\r\n").split(" ")
                if len(words) != 3 or words[2] not in ("HTTP/1.1", "HTTP/1.0"):
                    return bool(super().parse_request())
                self.command, self.path, self.request_version = words
                self.requestline = " ".join(words)
                headers = _Headers()
                while True:
                    line = self.rfile.readline(65537)
                    if line in (b"\r\n", b"\n", b""):
                        break
                    if len(line) > 65536 or len(headers) > 100:
                        self.send_error(431)
                        return False
                    name, _, value = line.decode("latin-1").partition(":")
                    headers[name.strip().lower()] = value.strip()
                self.headers = headers  # type: ignore[assignment]
                connection = headers.get("connection", "").lower()
                self.close_connection = connection == "close" or (words[2] == "HTTP/1.0" and connection != "keep-alive")
                if headers.get("expect", "").lower() == "100-continue":
                    return bool(self.handle_expect_100())
                return True

            def _any(self) -> None:
                server.handle(self)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _any

        self.http = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.http.daemon_threads = True
        self._thread = threading.Thread(target=self.http.serve_forever, name="apiserver-http", daemon=True)

    @property
    def url(self) -> str:
        """The base URL."""
        return f"http://127.0.0.1:{self.http.server_address[1]}"

    def start(self) -> APIHTTPServer:
        """Serve on a thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving."""
        self.http.shutdown()
        self.http.server_close()

    def call(self, request: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """One request against the cluster, under the lock."""
        with self.lock:
            answer = self.api.handle(request)
            if request["verb"] not in ("get", "list", "watch"):
                resource = "pods" if request["resource"] == "bindings" else request["resource"]
                self._condition(resource).notify_all()  # watchers wake on a change, not on a timer
            return answer

    def _condition(self, resource: str) -> threading.Condition:
        condition = self.changed.get(resource)
        if condition is None:
            condition = self.changed[resource] = threading.Condition(self.lock)
        return condition

    def handle(self, req: BaseHTTPRequestHandler) -> None:
        """Translate one HTTP request."""
        self.requests += 1
        url = urlsplit(req.path)
        query = dict(parse_qsl(url.query))
        length = int(req.headers.get("Content-Length") or 0)
        raw = req.rfile.read(length) if length else b""
        target = route(url.path)
        if target is None or req.command not in VERBS:
            self._reply(
                req,
                404,
                {
                    "kind": "Status",
                    "code": 404,
                    "reason": "NotFound",
                    "message": "the server could not find the requested resource",
                },
            )
            return
        verb = VERBS[req.command]
        if verb == "get" and not target["name"]:
            verb = "watch" if query.get("watch") in ("true", "1") else "list"
        request = {
            **target,
            "verb": verb,
            "query": query,
            "body": json.loads(raw) if raw else None,
            "contentType": req.headers.get("Content-Type", ""),
        }
        if verb == "watch":
            self._watch(req, request)
            return
        if self.latency:
            time.sleep(self.latency)
        code, body = self.call(request)
        self._reply(req, code, body)

    def _watch(self, req: BaseHTTPRequestHandler, request: dict[str, Any]) -> None:
        query = request["query"]
        rv = query.get("resourceVersion", "")
        deadline = time.monotonic() + float(query.get("timeoutSeconds") or 1800)
        req.send_response(200)
        req.send_header("Content-Type", "application/json")
        req.send_header("Transfer-Encoding", "chunked")
        req.end_headers()

        def send(events: list[dict[str, Any]]) -> None:
            """The events found by one look at the log: one chunk, one write."""
            if not events:
                return
            lines = b"".join(_dumps(event) + b"\n" for event in events)
            req.wfile.write(f"{len(lines):x}\r\n".encode() + lines + b"\r\n")
            req.wfile.flush()

        try:
            if rv in ("", "0"):
                code, listed = self.call({**request, "verb": "list"})
                send([{"type": "ADDED", "object": item} for item in listed.get("items") or []])
                rv = listed["metadata"]["resourceVersion"]
            while time.monotonic() < deadline:
                code, answer = self.call({**request, "query": {**query, "resourceVersion": rv}})
                if code != 200:
                    send([{"type": "ERROR", "object": answer}])
                    break
                send(answer["events"])
                rv = answer["resourceVersion"]
                with self.lock:
                    if str(self.api.rv) == rv:
                        self._condition(request["resource"]).wait(1.0)
            req.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass
        req.close_connection = True

    @staticmethod
    def _reply(req: BaseHTTPRequestHandler, code: int, body: dict[str, Any]) -> None:
        """The answer in one write (status line, headers and body; two writes cost the client a
        second read now and then)."""
        data = _dumps(body)
        try:
            phrase = HTTPStatus(code).phrase
        except ValueError:
            phrase = ""
        head = f"{req.protocol_version} {code} {phrase}\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
        req.wfile.write(head.encode("latin-1") + data)


class _Headers(dict[str, str]):
    """A request's headers (names lower-cased) read case-insensitively, as `handle` reads them."""

    def get(self, name: str, default: Any = None) -> Any:
        return super().get(name.lower(), default)


def _dumps(value: Any) -> bytes:
    """JSON bytes (orjson: a watch event is encoded for every change; the standard library's
    encoder for what orjson refuses, such as integers beyond 64 bits)."""
    try:
        return orjson.dumps(value)
    except TypeError:
        return json.dumps(value).encode()


def main(argv: list[str] | None = None) -> int:
    """Serve a cluster file until interrupted."""
    parser = argparse.ArgumentParser(prog="python -m scheduler.apiserver.httpserver")
    parser.add_argument("--cluster", action="append", default=[])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", default="0s")
    args = parser.parse_args(argv)
    cluster = (
        SimulatedCluster.from_objects(load_cluster(args.cluster), Clock()) if args.cluster else SimulatedCluster(clock=Clock())
    )
    server = APIHTTPServer(APIServer(cluster), api_latency_seconds(args.latency), args.port).start()
    print(f"API server: {server.url}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
