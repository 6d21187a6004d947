"""Continuous sync: a "live" cluster (the API served over HTTP by `httpserver.py`) mirrored into a
simulated one that our engine schedules."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from scheduler.apiserver.server import APIServer
from scheduler.clock import Clock
from scheduler.cluster.simulated import SimulatedCluster
from scheduler.config.loader import default_config
from scheduler.kube.client import Connection, RateLimiter
from scheduler.kube.mirror import MIRROR_GATE, LiveMirror
from scheduler.plugins.registry import new_registry
from scheduler.scheduler import Scheduler
from tests.support.servers import LiveCluster, live_pod, start_live

pytest.importorskip("kubernetes")


@dataclass
class Copy:
    """The simulated cluster the mirror writes into, with our engine scheduling it."""

    cluster: SimulatedCluster
    scheduler: Scheduler
    mirror: LiveMirror

    def run_until(self, check: Callable[[], bool], timeout: float = 15.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.scheduler.step():
                self.scheduler.flush_queues()
                if check():
                    return
                time.sleep(0.01)
        raise AssertionError(f"not reached in {timeout}s; sync: {self.mirror.status()}")

    def pods(self) -> dict[str, Any]:
        return {p.name: p for p in self.cluster.pods.values()}


@pytest.fixture
def live() -> Iterator[LiveCluster]:
    running = start_live()
    try:
        yield running
    finally:
        running.server.stop()


def start_copy(live: LiveCluster, keep_bindings: bool) -> Copy:
    from kubernetes import client

    cluster = SimulatedCluster(clock=Clock())
    scheduler = Scheduler(default_config(), cluster, cluster.clock, new_registry(), seed=1, keep_records=False)
    scheduler.start()
    configuration = client.Configuration()
    configuration.host = live.server.url
    connection = Connection(configuration, RateLimiter(0, 100))
    mirror = LiveMirror(connection, APIServer(cluster).handle, scheduler.submit, keep_bindings=keep_bindings, read_timeout=10)
    mirror.start()
    return Copy(cluster, scheduler, mirror)


@pytest.fixture
def copies() -> Iterator[list[Copy]]:
    made: list[Copy] = []
    yield made
    for c in made:
        c.mirror.stop()


def test_keeping_bindings_follows_the_live_scheduler(live: LiveCluster, copies: list[Copy]) -> None:
    copy = start_copy(live, keep_bindings=True)
    copies.append(copy)
    copy.run_until(lambda: {"bound", "pending"} <= set(copy.pods()) and set(copy.cluster.nodes) == {"n1", "n2"})
    pods = copy.pods()
    assert pods["bound"].node_name == "n1"
    # The pending pod waits for the live cluster's scheduler: gated here, never bound by us.
    copy.run_until(lambda: copy.scheduler.queue.where(copy.pods()["pending"].uid) == "gated")
    assert copy.pods()["pending"].node_name == ""
    assert any(g.get("name") == MIRROR_GATE for g in copy.pods()["pending"].raw["spec"]["schedulingGates"])

    live.bind("pending", "n2")  # "another scheduler" binds it
    copy.run_until(lambda: copy.pods()["pending"].node_name == "n2")
    assert not copy.pods()["pending"].raw["spec"].get("schedulingGates")

    live.create(live_pod("late"))
    live.send("PATCH", "/api/v1/nodes/n2", {"metadata": {"labels": {"zone": "b"}}}, "application/merge-patch+json")
    live.send(
        "PATCH", "/api/v1/namespaces/prod/pods/bound", {"metadata": {"labels": {"tier": "1"}}}, "application/merge-patch+json"
    )
    live.send("DELETE", "/api/v1/namespaces/prod/pods/bound?gracePeriodSeconds=0")
    copy.run_until(
        lambda: "late" in copy.pods() and "bound" not in copy.pods() and copy.cluster.nodes["n2"].labels.get("zone") == "b"
    )
    status = copy.mirror.status()
    assert status["state"] == "running" and status["failures"] == 0, status
    assert status["mirrored"]["Node"] == 2 and status["mirrored"]["Pod"] == 2
    assert "prod" in copy.cluster.namespaces
    pod_informer = next(i for i in status["informers"] if i["kind"] == "Pod")
    assert pod_informer["events"] >= 4 and pod_informer["lastEventAt"]


def test_pending_mode_leaves_every_pod_to_our_engine(live: LiveCluster, copies: list[Copy]) -> None:
    copy = start_copy(live, keep_bindings=False)
    copies.append(copy)
    copy.run_until(lambda: {"bound", "pending"} <= set(copy.pods()) and all(p.node_name for p in copy.pods().values()))
    assert all(p.node_name in ("n1", "n2") for p in copy.pods().values())
    # The live cluster's own binding later does not move our placement.
    ours = copy.pods()["pending"].node_name
    live.bind("pending", "n1" if ours == "n2" else "n2")
    live.send(
        "PATCH", "/api/v1/namespaces/prod/pods/pending", {"metadata": {"labels": {"seen": "yes"}}}, "application/merge-patch+json"
    )
    copy.run_until(lambda: copy.pods()["pending"].labels.get("seen") == "yes")
    assert copy.pods()["pending"].node_name == ours
    assert live.pods()["pending"] != ours


def test_a_too_old_version_relists_and_the_relist_repairs_the_copy(live: LiveCluster, copies: list[Copy]) -> None:
    copy = start_copy(live, keep_bindings=True)
    copies.append(copy)
    copy.run_until(lambda: {"bound", "pending"} <= set(copy.pods()))
    informer = next(i for i in copy.mirror.informers if i.kind.kind == "Pod")
    relists = informer.relists
    # The watch resumes from a version the server no longer has: 410 Gone, then a fresh list.
    # The watch's connection is registered by its own thread: wait for it before breaking it
    # (on a loaded machine the loop above can finish first, and nothing would be broken).
    copy.run_until(lambda: bool(informer._streams))
    informer.resource_version = "1"
    for conn in list(informer._streams):
        conn.sock.shutdown(2)
    copy.run_until(lambda: informer.relists > relists)
    # A relist that no longer has a mirrored pod deletes it (a deletion the watch missed).
    live_items = live.send("GET", "/api/v1/pods")["items"]
    copy.mirror._listed(informer.kind, "Pod", [i for i in live_items if i["metadata"]["name"] != "bound"])
    copy.run_until(lambda: "bound" not in copy.pods())
    assert copy.mirror.status()["failures"] == 0
