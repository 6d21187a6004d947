"""The backend's lean HTTP client: kept-alive connections, a closed one replaced, errors as Status."""

from __future__ import annotations

import http.client
import socket
import threading
from collections.abc import Iterator

import pytest

from scheduler.apiserver.httpserver import APIHTTPServer
from scheduler.apiserver.server import APIServer
from scheduler.clock import Clock
from scheduler.cluster.errors import NotFoundError
from scheduler.cluster.simulated import SimulatedCluster
from scheduler.kube.client import Connection, RateLimiter, RemoteError, _retry_seconds
from scheduler.kube.wire import dechunk
from tests.support.servers import ScriptedServer

pytest.importorskip("kubernetes")


@pytest.fixture
def connection() -> Iterator[Connection]:
    from kubernetes import client

    server = APIHTTPServer(APIServer(SimulatedCluster(clock=Clock()))).start()
    configuration = client.Configuration()
    configuration.host = server.url
    try:
        yield Connection(configuration, RateLimiter(0, 1))
    finally:
        server.stop()


def test_requests_reuse_one_connection_per_thread(connection: Connection) -> None:
    connection.request("GET", "/api/v1/nodes")
    kept = connection._local.conn
    assert kept is not None
    connection.request(
        "POST", "/api/v1/nodes", {"kind": "Node", "metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "1"}}}
    )
    assert connection._local.conn is kept
    assert [n["metadata"]["name"] for n in connection.request("GET", "/api/v1/nodes")["items"]] == ["n"]


def test_a_closed_kept_alive_connection_is_replaced(connection: Connection) -> None:
    connection.request("GET", "/api/v1/nodes")
    kept = connection._local.conn
    kept.sock.shutdown(socket.SHUT_RDWR)  # as a server closing an idle connection
    assert connection.request("GET", "/api/v1/nodes")["items"] == []
    assert connection._local.conn is not kept


def test_refusals_carry_the_status(connection: Connection) -> None:
    with pytest.raises(NotFoundError) as missing:
        connection.request("GET", "/api/v1/namespaces/default/pods/nope")
    assert isinstance(missing.value, RemoteError) and missing.value.code == 404 and 'pods "nope" not found' in str(missing.value)
    connection.request("POST", "/api/v1/namespaces", {"kind": "Namespace", "metadata": {"name": "x"}})
    with pytest.raises(RemoteError) as exists:
        connection.request("POST", "/api/v1/namespaces", {"kind": "Namespace", "metadata": {"name": "x"}})
    assert exists.value.code == 409 and exists.value.reason == "AlreadyExists"


@pytest.mark.parametrize(
    ("header", "want"),
    [(None, 1.0), ("3", 3.0), ("120", 10.0), ("Wed, 21 Oct 2015 07:28:00 GMT", 1.0)],
    ids=["absent", "seconds", "capped", "date"],
)
def test_retry_after(header: str | None, want: float) -> None:
    assert _retry_seconds(header) == want


def scripted(answers: list[tuple[bytes, bool]]) -> tuple[ScriptedServer, Connection]:
    from kubernetes import client

    server = ScriptedServer(answers)
    configuration = client.Configuration()
    configuration.host = server.url
    return server, Connection(configuration, RateLimiter(0, 1))


def test_answers_with_chunks_without_length_and_closing_are_read() -> None:
    server, connection = scripted(
        [
            (
                b'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{"a"\r\n3\r\n:1}\r\n0\r\n\r\n',
                False,
            ),
            (b'HTTP/1.1 201 Created\r\nContent-Length: 7\r\nConnection: close\r\n\r\n{"b":2}', True),
            (b'HTTP/1.0 200 OK\r\n\r\n{"c":3}', True),
        ]
    )
    try:
        assert connection.request("GET", "/api/v1/x") == {"a": 1}
        assert connection.request("POST", "/api/v1/x", {"n": 1}) == {"b": 2}
        assert connection._local.conn is None  # the server said it closes
        assert connection.request("DELETE", "/api/v1/x") == {"c": 3}  # read until the server closed
        assert server.connections == 2
        first, second, third = server.requests
        assert first.startswith(b"GET /api/v1/x HTTP/1.1\r\nHost: 127.0.0.1:") and b"Content-Length" not in first
        assert (
            second.startswith(b"POST /api/v1/x HTTP/1.1\r\n")
            and b"Content-Length: 7\r\n" in second
            and second.endswith(b'{"n":1}')
        )
        assert b"Content-Type: application/json\r\n" in second
        assert third.startswith(b"DELETE /api/v1/x HTTP/1.1\r\n")
    finally:
        server.close()


def _chunked(*chunks: bytes, last: bool = True) -> bytes:
    body = b"".join(b"%x;ext=1\r\n%s\r\n" % (len(c), c) for c in chunks)
    return body + (b"0\r\nX-Trailer: t\r\n\r\n" if last else b"")


def test_dechunking_fed_a_byte_at_a_time_gives_the_payload_once() -> None:
    wire = _chunked(b'{"type":"ADDED"}\n{"ty', b'pe":"MODIFIED"}\n', b"x" * 300)
    payload, pending, finished = b"", b"", False
    for i in range(len(wire)):
        pending += wire[i : i + 1]
        part, end, finished = dechunk(pending)
        pending = pending[end:]
        payload += part
        if finished:
            assert i < len(wire) - 1  # the trailers are not waited for
            break
    assert finished and payload == b'{"type":"ADDED"}\n{"type":"MODIFIED"}\n' + b"x" * 300
    with pytest.raises(ValueError):
        dechunk(b"zz\r\n")
    with pytest.raises(http.client.HTTPException):
        dechunk(b"1" * 2000)


def test_a_watch_streams_its_events_and_a_cut_stream_is_an_error() -> None:
    events = [b'{"type":"ADDED","object":{"n":1}}', b'{"type":"MODIFIED","object":{"n":2}}']
    gone_body = b'{"kind":"Status","reason":"Expired","message":"too old resource version"}'
    server, connection = scripted(
        [
            # A watch that ends properly (its timeout): an event split over two chunks.
            (
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                + _chunked(events[0] + b"\n" + events[1][:9], events[1][9:] + b"\n"),
                True,
            ),
            # One cut after its first event.
            (
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                + _chunked(events[0] + b"\n", b'{"type":"MOD', last=False),
                True,
            ),
            # A server that delimits the stream by its length, without a final newline.
            (b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(events[1]), events[1]), True),
            (b"HTTP/1.1 410 Gone\r\nContent-Length: %d\r\n\r\n%s" % (len(gone_body), gone_body), True),
        ]
    )
    try:
        holder: list[object] = []
        got = list(connection.stream("/api/v1/pods", {"resourceVersion": "5"}, 5.0, holder))
        assert [e["object"]["n"] for e in got] == [1, 2] and holder == []
        assert server.requests[0].startswith(b"GET /api/v1/pods?resourceVersion=5&watch=true HTTP/1.1\r\n")
        stream = connection.stream("/api/v1/pods", {}, 5.0)
        assert next(stream)["object"] == {"n": 1}
        with pytest.raises(http.client.IncompleteRead):
            next(stream)
        assert [e["object"]["n"] for e in connection.stream("/api/v1/pods", {}, 5.0)] == [2]
        with pytest.raises(RemoteError) as gone:
            list(connection.stream("/api/v1/pods", {}, 5.0))
        assert gone.value.code == 410 and gone.value.reason == "Expired" and str(gone.value) == "too old resource version"
    finally:
        server.close()


def test_too_many_requests_is_retried_after_the_servers_delay() -> None:
    server, connection = scripted(
        [
            (b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 0\r\nContent-Length: 2\r\n\r\n{}", False),
            (
                b'HTTP/1.1 500 Internal Server Error\r\nContent-Length: 48\r\n\r\n{"kind":"Status","reason":"x","message":"boom!"}',
                False,
            ),
        ]
    )
    try:
        with pytest.raises(RemoteError) as failed:
            connection.request("POST", "/api/v1/x", {"n": 1})
        assert failed.value.code == 500 and str(failed.value) == "boom!"  # a 500 without Retry-After is final
        assert len(server.requests) == 2 and server.connections == 1
    finally:
        server.close()


def test_a_garbled_answer_is_a_failure_not_a_crash() -> None:
    server, connection = scripted([(b"SSH-2.0-OpenSSH\r\n\r\n", True)])
    try:
        with pytest.raises(RemoteError) as failed:
            connection.request("GET", "/api/v1/x")
        assert failed.value.code == 0 and failed.value.reason == "ServiceUnavailable"
    finally:
        server.close()


def test_requests_go_through_the_proxys_tunnel(connection: Connection) -> None:
    from kubernetes import client

    target = connection.host.removeprefix("http://")
    tunnels: list[bytes] = []
    proxy = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        conn, _ = proxy.accept()
        head = b""
        while not head.endswith(b"\r\n\r\n"):
            head += conn.recv(1)
        tunnels.append(head)
        host, port = target.split(":")
        upstream = socket.create_connection((host, int(port)))
        conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")

        def pipe(a: socket.socket, b: socket.socket) -> None:
            while data := a.recv(65536):
                b.sendall(data)

        threading.Thread(target=pipe, args=(upstream, conn), daemon=True).start()
        pipe(conn, upstream)

    threading.Thread(target=serve, daemon=True).start()
    configuration = client.Configuration()
    configuration.host = connection.host
    configuration.proxy = f"http://127.0.0.1:{proxy.getsockname()[1]}"
    proxied = Connection(configuration, RateLimiter(0, 1))
    try:
        assert proxied.request("GET", "/api/v1/nodes")["items"] == []
        assert tunnels == [f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode()]
    finally:
        proxied.close()
        proxy.close()


def test_the_bench_server_reads_raw_requests() -> None:
    """The test API server's lean request reading: headers in any case, a kept-alive HTTP/1.1
    connection, HTTP/1.0 closed after its answer, a watch's events arriving as they are found."""
    server = APIHTTPServer(APIServer(SimulatedCluster(clock=Clock()))).start()
    port = int(server.url.rsplit(":", 1)[1])
    body = b'{"kind": "Namespace", "metadata": {"name": "raw"}}'
    try:
        with socket.create_connection(("127.0.0.1", port), 5) as sock, sock.makefile("rb") as answers:
            sock.sendall(
                b"POST /api/v1/namespaces HTTP/1.1\r\nHost: x\r\ncontent-TYPE: application/json\r\nCONTENT-LENGTH: %d\r\n\r\n%s"
                % (len(body), body)
            )
            assert answers.readline().startswith(b"HTTP/1.1 201 ")
            length = 0
            while (line := answers.readline()) != b"\r\n":
                name, _, value = line.decode().partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            assert b'"name":"raw"' in answers.read(length)
            sock.sendall(b"GET /api/v1/namespaces/raw HTTP/1.0\r\n\r\n")  # same connection: it was kept
            assert answers.readline().startswith(b"HTTP/1.1 200 ")
            assert b'"name":"raw"' in answers.read()  # read to the end: HTTP/1.0 is closed after the answer
        with socket.create_connection(("127.0.0.1", port), 5) as sock:
            sock.sendall(b"GET /api/v1/nodes BOGUS/1\r\n\r\n")  # not HTTP/1.x: the standard handler refuses it
            assert b"Error code: 400" in sock.makefile("rb").read()
    finally:
        server.stop()
