"""Binding against a remote API server: the binding cycle runs on the pool with the scheduler's
lock released while the request is in flight, a refused binding fails the attempt and requeues the
pod, and the loop does not spin while only API calls are in flight."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from scheduler.api.objects import Pod
from scheduler.apicalls import STEP_WAIT_SECONDS
from scheduler.clock import Clock
from scheduler.cluster.errors import APIError
from scheduler.cluster.simulated import SimulatedCluster
from scheduler.config.loader import default_config
from scheduler.plugins.registry import new_registry
from scheduler.scheduler import Scheduler
from tests.support.builders import make_node, make_pod


class RemoteCluster(SimulatedCluster):
    """A cluster whose writes take `latency` and whose changes come back as posted tasks, as the
    `kubernetes` backend's informers deliver them."""

    remote_api = True

    def __init__(self, latency: float = 0.0, refuse: frozenset[str] = frozenset()) -> None:
        super().__init__(clock=Clock())
        self.latency = latency
        self.refuse = refuse
        self.requests: list[tuple[str, str, bool]] = []  # pod, thread, whether the lock was held
        self.lock: Any = threading.RLock()
        self.post: Callable[[Callable[[], None]], None] = lambda task: task()

    def attach(self, lock: Any, unlocked: Callable[[Callable[[], Any]], Any], post: Callable[[Callable[[], None]], None]) -> None:
        self.lock, self.unlocked, self.post = lock, unlocked, post

    def bind(self, pod: Pod, node: str) -> None:
        self.unlocked(lambda: self._request(pod))
        self.post(lambda: SimulatedCluster.bind(self, pod, node))  # the informer sees it bound

    def _request(self, pod: Pod) -> None:
        self.requests.append((pod.name, threading.current_thread().name, self.lock._is_owned()))
        time.sleep(self.latency)
        if pod.name in self.refuse:
            raise APIError(f'Operation cannot be fulfilled on pods/binding "{pod.name}": pod is already assigned')


def run_until(sched: Scheduler, done: Callable[[], bool], timeout: float = 30.0) -> int:
    """Step until `done`; how many steps it took."""
    deadline = time.monotonic() + timeout
    steps = 0
    while not done():
        assert time.monotonic() < deadline, "not done in time"
        steps += 1
        if not sched.step():
            time.sleep(0.001)
    return steps


def start(cluster: RemoteCluster, config: Any = None, registry: Any = None) -> Scheduler:
    for i in range(2):
        cluster.nodes[f"n{i}"] = make_node(f"n{i}")
    sched = Scheduler(config or default_config(), cluster, cluster.clock, registry or new_registry(), seed=1)
    sched.start()
    return sched


def test_the_request_runs_on_the_pool_with_the_lock_released() -> None:
    cluster = RemoteCluster(latency=0.002)
    sched = start(cluster)
    for i in range(6):
        cluster.add_pod(make_pod(f"p{i}", cpu="100m"))
    run_until(sched, lambda: sched.scheduled_count == 6 and all(p.node_name for p in cluster.pods.values()))
    sched.shutdown()
    assert sorted(name for name, _, _ in cluster.requests) == [f"p{i}" for i in range(6)]
    assert all(thread.startswith("api") and not held for _, thread, held in cluster.requests)
    assert all(p.node_name for p in cluster.pods.values())
    assert sched._in_flight_api == 0 and not sched.cache._assumed


def test_a_refused_binding_fails_the_attempt_and_requeues_the_pod() -> None:
    cluster = RemoteCluster(refuse=frozenset({"taken"}))
    sched = start(cluster)
    cluster.add_pod(make_pod("taken", cpu="100m"))
    cluster.add_pod(make_pod("free", cpu="100m"))
    pods = {p.name: p.uid for p in cluster.pods.values()}

    def settled() -> bool:
        refused = any(r.pod == "default/taken" and r.outcome == "Error" for r in sched.records)
        return refused and bool(cluster.pods[pods["free"]].node_name) and sched._in_flight_api == 0

    run_until(sched, settled)  # stepping stops here, before the backoff could retry the pod
    sched.shutdown()
    assert not cluster.pods[pods["taken"]].node_name
    assert sched.queue.where(pods["taken"]) in ("active", "backoff")
    assert not sched.cache._assumed  # the refused pod forgotten, the bound one confirmed
    assert sched.scheduled_count == 1
    assert any(e.reason == "FailedScheduling" and "already assigned" in e.message for e in cluster.events)


@pytest.mark.parametrize("latency", [0.3], ids=["slow-server"])
def test_the_loop_waits_instead_of_spinning_while_a_binding_is_in_flight(latency: float) -> None:
    cluster = RemoteCluster(latency=latency)
    sched = start(cluster)
    cluster.add_pod(make_pod("p", cpu="100m"))
    began = time.monotonic()
    steps = run_until(sched, lambda: sched.scheduled_count == 1)
    elapsed = time.monotonic() - began
    sched.shutdown()
    # A spinning loop makes thousands of steps in 0.3 s; a waiting one about one per wait.
    assert steps <= elapsed / STEP_WAIT_SECONDS + 20, (steps, elapsed)
