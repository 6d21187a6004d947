"""The backend through what a real control plane does to its clients: quiet watches ended by the
server (not by a read timeout), a kube-apiserver restart mid-run, and watches answered 410 Gone
after etcd was compacted (then a relist)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from scheduler.kube.client import connect
from tests.support.builders import node_doc, pod_doc
from tests.support.controlplane import Api, ControlPlane, Kubelet, namespace
from tests.support.engines import RemoteEngine, cache_matches
from tests.support.waits import wait_for

pytestmark = pytest.mark.realcluster
NS = "resilience"


def pod(name: str) -> dict[str, Any]:
    return pod_doc(name, NS, "100m", "64Mi", spec={"schedulerName": "remote-scheduler"})


def bound(api: Api, name: str) -> str:
    return str(api.get(f"/api/v1/namespaces/{NS}/pods/{name}")["spec"].get("nodeName") or "")


@pytest.fixture(scope="module")
def engine(control_plane: ControlPlane, api: Api, kubelet: Kubelet) -> Iterator[RemoteEngine]:
    namespace(api, NS)
    for i in range(2):
        kubelet.add_node(node_doc(f"node-{i}", cpu="8", memory="8Gi"))
    # A read timeout far shorter than the watches: a quiet watch must still end cleanly.
    running = RemoteEngine(connect(control_plane.admin_kubeconfig), read_timeout=2, watch_seconds=6)
    yield running
    running.stop()


def test_quiet_watches_end_by_the_servers_timeout(engine: RemoteEngine) -> None:
    informers = {i.kind.kind: i for i in engine.cluster.informers}
    quiet = informers["PriorityClass"]
    wait_for(lambda: quiet.watches >= 2, 30, 0.2, what="the server ended the first watch and a second began")
    assert quiet.broken == 0, "a quiet watch was cut by the client's read timeout"


def test_an_api_server_restart_and_410_gone(control_plane: ControlPlane, api: Api, engine: RemoteEngine) -> None:
    for i in range(6):
        api.create(pod(f"before-{i}"))
    wait_for(lambda: all(bound(api, f"before-{i}") for i in range(6)), 30, 0.1, what="bound before the restart")
    informers = {i.kind.kind: i for i in engine.cluster.informers}
    expired_before = sum(i.expired for i in informers.values())
    # etcd compacted to now: a watch resumed from an older version is answered 410 Gone.
    control_plane.compact_etcd()
    control_plane.restart_apiserver(down_for=1.0)
    for i in range(4):
        api.create(pod(f"after-{i}"))
    wait_for(lambda: all(bound(api, f"after-{i}") for i in range(4)), 60, 0.2, what="bound after the restart")
    assert engine.alive
    wait_for(lambda: cache_matches(engine.cluster), 60, 0.5, what="the cache equals a fresh list")
    assert sum(i.expired for i in informers.values()) > expired_before, {k: (i.expired, i.relists) for k, i in informers.items()}
    names = [p["metadata"]["name"] for p in api.items(f"/api/v1/namespaces/{NS}/pods")]
    assert sorted(names) == sorted([f"before-{i}" for i in range(6)] + [f"after-{i}" for i in range(4)])


def test_a_watch_backlog_is_taken_in_a_few_reads(control_plane: ControlPlane, api: Api, engine: RemoteEngine) -> None:
    """kube-apiserver writes a watch in pieces of about 4 KiB (one TLS record each) and a TLS read
    returns one record: read piece by piece, with the informer's pause between reads, a backlog
    of pods came in at about two events per pause (the ceiling of the real-apiserver benchmark).
    Everything already there is taken by one read now."""
    names = {f"backlog-{i:03d}" for i in range(200)}
    for name in sorted(names):
        api.create(pod_doc(name, NS, "100m", "64Mi", spec={"schedulerName": "nobody"}))
    connection = connect(control_plane.admin_kubeconfig)
    wire, headers = connection._open_watch(
        f"/api/v1/namespaces/{NS}/pods", {"resourceVersion": "0", "watch": "true", "timeoutSeconds": "10"}, 30
    )
    seen: set[str] = set()
    reads = 0
    buffer = b""
    try:
        for part in wire.body_parts(headers):
            reads += 1
            buffer += part
            *lines, buffer = buffer.split(b"\n")
            seen.update(orjson.loads(line)["object"]["metadata"]["name"] for line in lines if line.strip())
            if names <= seen:
                break
            time.sleep(0.005)  # the informer's pause between reads (watch_batch_seconds)
    finally:
        wire.close()
        connection.close()
    assert names <= seen
    assert reads <= 20, f"{reads} reads for a backlog of {len(names)} pods"
