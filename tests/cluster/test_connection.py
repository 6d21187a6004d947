"""The backend's lean HTTP client: kept-alive connections, a closed one replaced, errors as Status."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from scheduler.clock import Clock
from scheduler.cluster.apiserver import APIServer
from scheduler.cluster.httpserver import APIHTTPServer
from scheduler.cluster.kubernetes import Connection, RateLimiter, RemoteError, _retry_seconds
from scheduler.cluster.simulated import NotFoundError, SimulatedCluster

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
