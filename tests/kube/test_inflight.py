"""Requests the scheduling thread sends without waiting (cluster/inflight.py): answers parsed from
bytes as they arrive, refusals handed back for the ordinary path, and a scheduler whose plain
bindings never touch its API pool."""

from __future__ import annotations

import http.client
import socket
import ssl
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from scheduler.apiserver.httpserver import APIHTTPServer
from scheduler.apiserver.server import APIServer
from scheduler.clock import Clock
from scheduler.cluster.errors import Retry
from scheduler.cluster.simulated import SimulatedCluster
from scheduler.config.loader import parse_config
from scheduler.kube.backend import KubernetesCluster
from scheduler.kube.client import Connection, RateLimiter, RemoteError
from scheduler.kube.inflight import InFlight, parse_answer
from scheduler.plugins.registry import new_registry
from scheduler.scheduler import Scheduler
from tests.support.builders import make_node
from tests.support.servers import ScriptedServer
from tests.support.waits import wait_for

pytest.importorskip("kubernetes")

CHUNKED = b'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n4;x=1\r\n{"a"\r\n3\r\n:1}\r\n0\r\nT: v\r\n\r\n'


@pytest.mark.parametrize(
    ("answer", "method", "body"),
    [
        (CHUNKED, "POST", b'{"a":1}'),
        (b'HTTP/1.1 201 Created\r\nContent-Length: 7\r\n\r\n{"b":2}', "POST", b'{"b":2}'),
        (b"HTTP/1.1 204 No Content\r\n\r\n", "DELETE", b""),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n", "HEAD", b""),
    ],
    ids=["interim-then-chunked-with-trailer", "length", "no-content", "head"],
)
def test_an_answer_is_complete_only_with_its_last_byte(answer: bytes, method: str, body: bytes) -> None:
    for cut in range(len(answer)):
        if method != "HEAD" and cut < len(answer):
            assert parse_answer(answer[:cut], method, eof=False) is None, cut
    parsed = parse_answer(answer + b"HTTP/1.1 200", method, eof=False)  # what follows is not taken
    assert parsed is not None
    got, used = parsed
    assert (got.body, used) == (body, len(answer))


def test_a_body_without_length_ends_with_the_connection() -> None:
    answer = b'HTTP/1.0 200 OK\r\n\r\n{"c":3}'
    assert parse_answer(answer, "GET", eof=False) is None
    parsed = parse_answer(answer, "GET", eof=True)
    assert parsed is not None and parsed[0].body == b'{"c":3}' and parsed[0].will_close
    with pytest.raises(http.client.IncompleteRead):
        parse_answer(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n{}", "GET", eof=True)


def _inflight(answers: list[tuple[bytes, bool]], timeout: float = 5.0) -> tuple[ScriptedServer, InFlight]:
    from kubernetes import client

    server = ScriptedServer(answers)
    configuration = client.Configuration()
    configuration.host = server.url
    connection = Connection(configuration, RateLimiter(0, 1))
    connection.timeout = timeout
    return server, InFlight(connection, limit=1)


def _send(inflight: InFlight, results: list[tuple[Any, BaseException | None]], body: Any = None) -> None:
    """Send once a connection is open (the first `send` only starts opening one)."""
    deadline = time.monotonic() + 5
    while not inflight.send("POST", "/api/v1/x", body or {"n": 1}, "application/json", lambda b, e: results.append((b, e))):
        assert time.monotonic() < deadline, "no connection opened"
        time.sleep(0.01)


def _answers(inflight: InFlight, results: list[Any], want: int) -> None:
    deadline = time.monotonic() + 5
    while len(results) < want:
        assert time.monotonic() < deadline, "no answer"
        inflight.wait(0.05)
        inflight.poll()


def test_answers_refusals_and_failures_reach_done() -> None:
    server, inflight = _inflight(
        [
            (b'HTTP/1.1 201 Created\r\nContent-Length: 7\r\n\r\n{"b":2}', False),
            (b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 2\r\nContent-Length: 2\r\n\r\n{}", False),
            (b'HTTP/1.1 409 Conflict\r\nContent-Length: 49\r\n\r\n{"kind":"Status","reason":"Conflict","message":"no"}', False),
        ]
    )
    results: list[tuple[Any, BaseException | None]] = []
    try:
        for i in range(3):
            _send(inflight, results, {"n": i})
            assert inflight.pending == 1
            _answers(inflight, results, i + 1)
        (first, ok), (_, refused), (_, failed) = results
        assert first == {"b": 2} and ok is None
        assert isinstance(refused, Retry) and refused.wait == 2.0
        assert isinstance(failed, RemoteError) and failed.code == 409
        assert server.connections == 1 and inflight.pending == 0  # one kept-alive connection throughout
        assert server.requests[0].startswith(b"POST /api/v1/x HTTP/1.1\r\n") and server.requests[0].endswith(b'{"n":0}')
    finally:
        inflight.close()
        server.close()


def test_a_kept_alive_connection_closed_by_the_server_is_retried_not_failed() -> None:
    # The server answers and closes without saying so; the next request, sent on that connection
    # before anything was read from it, gets no answer.
    server, inflight = _inflight([(b"HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\n{}", True), (b"", True)])
    results: list[tuple[Any, BaseException | None]] = []
    try:
        _send(inflight, results)
        _answers(inflight, results, 1)
        wait_for(lambda: server.closed == 1, 5, 0.01, what="the server closing the connection")
        _send(inflight, results)
        _answers(inflight, results, 2)
        assert isinstance(results[1][1], Retry) and results[1][1].wait == 0.0
    finally:
        inflight.close()
        server.close()


def test_a_request_without_an_answer_fails_at_its_timeout() -> None:
    # The server reads the request, answers nothing and keeps the connection open.
    server, inflight = _inflight([(b"", False), (b"", False)], timeout=0.3)
    results: list[tuple[Any, BaseException | None]] = []
    try:
        _send(inflight, results)
        _answers(inflight, results, 1)
        failure = results[0][1]
        assert isinstance(failure, RemoteError) and failure.code == 0 and "timed out" in str(failure)
    finally:
        inflight.close()
        server.close()


def test_answers_over_tls_arriving_in_pieces_on_one_connection(tmp_path: Path) -> None:
    from kubernetes import client

    from tests.k8sapi.conftest import self_signed

    cert, key = self_signed(tmp_path)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    listener = socket.create_server(("127.0.0.1", 0))
    received: list[bytes] = []

    def serve() -> None:
        conn, _ = listener.accept()
        with context.wrap_socket(conn, server_side=True) as tls, tls.makefile("rb") as rfile:
            for n in range(2):
                head = b""
                while not head.endswith(b"\r\n\r\n"):
                    head += rfile.readline()
                length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
                received.append(head + rfile.read(length))
                # The answer in two TLS records, the second a little later.
                tls.sendall(b"HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n")
                time.sleep(0.05)
                tls.sendall(b'7\r\n{"n":%d}\r\n0\r\n\r\n' % n)
            time.sleep(0.5)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    configuration = client.Configuration()
    configuration.host = f"https://127.0.0.1:{listener.getsockname()[1]}"
    configuration.verify_ssl = False
    configuration.api_key = {"authorization": "Bearer secret"}
    inflight = InFlight(Connection(configuration, RateLimiter(0, 1)), limit=1)
    results: list[tuple[Any, BaseException | None]] = []
    try:
        for n in range(2):
            _send(inflight, results, {"n": n})
            _answers(inflight, results, n + 1)
        assert results == [({"n": 0}, None), ({"n": 1}, None)]
        assert len(received) == 2 and all(b"authorization: bearer secret\r\n" in r.lower() for r in received)
    finally:
        inflight.close()
        listener.close()


def test_the_scheduler_binds_plain_pods_from_its_own_thread() -> None:
    from kubernetes import client

    cluster = SimulatedCluster(clock=Clock())
    for i in range(3):
        cluster.add_node(make_node(f"n{i}", cpu="4"))
    api = APIServer(cluster)
    server = APIHTTPServer(api).start()
    configuration = client.Configuration()
    configuration.host = server.url
    connection = Connection(configuration, RateLimiter(0, 100))
    remote = KubernetesCluster.open(connection, Clock())
    config = parse_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}, "test")
    sched = Scheduler(config, remote, remote.clock, new_registry(), seed=1)
    pool_tasks: list[Any] = []
    real_submit = sched._pool.submit
    sched._pool.submit = lambda fn, *a: (pool_tasks.append(fn), real_submit(fn, *a))[1]  # type: ignore[method-assign]
    sched.start()
    remote.watch_all()

    def create_and_bind(name: str) -> None:
        code, _ = api.handle(
            {
                "verb": "create",
                "version": "v1",
                "resource": "pods",
                "namespace": "default",
                "body": {
                    "metadata": {"name": name},
                    "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "100m"}}}]},
                },
            }
        )
        assert code == 201
        deadline = time.monotonic() + 20
        while not any(p.name == name and p.node_name for p in cluster.pods.values()):
            assert time.monotonic() < deadline, f"{name} not bound"
            if not sched.step():
                time.sleep(0.005)

    try:
        # The first binding goes through the pool: the loop's connection is only being opened.
        create_and_bind("first")
        deadline = time.monotonic() + 5
        while not remote._inflight._idle:
            assert time.monotonic() < deadline, "no connection opened"
            time.sleep(0.01)
        before = len(pool_tasks)
        for i in range(10):
            create_and_bind(f"p{i}")
        assert len(pool_tasks) == before, "a plain binding went through the pool"
        sched.finish_bindings(10)  # p9's answer may not have been read yet
        assert sched.scheduled_count == 11 and not remote.async_pending
        # A binding in flight when the scheduler stops (or hands the cluster to another) is
        # finished by `finish_bindings`.
        code, _ = api.handle(
            {
                "verb": "create",
                "version": "v1",
                "resource": "pods",
                "namespace": "default",
                "body": {"metadata": {"name": "last"}, "spec": {"containers": [{"name": "c", "image": "x"}]}},
            }
        )
        assert code == 201
        deadline = time.monotonic() + 20
        while not remote.async_pending:
            assert time.monotonic() < deadline, "the last binding was not sent"
            sched.step()
        assert sched.scheduled_count == 11
        sched.finish_bindings(10)
        assert not remote.async_pending and sched.scheduled_count == 12
        sched.shutdown()
        assert remote.connection.requests >= 11
    finally:
        remote.close()
        server.stop()
