"""One leader: the Redis lock campaign and the database fencing token that keeps a stale leader
from storing anything."""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid

import pytest

from schedconsole.cluster.models import Binding, ClusterObject
from schedconsole.engine import operations as ops
from schedconsole.engine.leader import LeaderElector, bump_fence, current_fence
from tests.console.conftest import SMALL_CLUSTER, TWO_PROFILES, pod
from tests.support.waits import wait_for

pytestmark = pytest.mark.production

REDIS_URL = "redis://127.0.0.1:6379/0"


def _drive(host, until, limit: int = 200) -> None:
    """Run the engine by hand (run=False) until `until()` holds."""
    for _ in range(limit):
        host.engine.step()
        host._serve_requests()
        if until():
            return
        time.sleep(0.02)


@pytest.mark.django_db(transaction=True)
def test_the_leader_holding_the_token_stores_its_bindings(start_engine) -> None:
    token = bump_fence("engine-a")
    fenced = threading.Event()
    host = start_engine([*SMALL_CLUSTER, pod("p1")], TWO_PROFILES, run=False, fence=token, on_fenced=fenced.set)
    _drive(host, lambda: Binding.objects.filter(pod="default/p1").exists())
    assert Binding.objects.filter(pod="default/p1").count() == 1
    assert not fenced.is_set()


@pytest.mark.django_db(transaction=True)
def test_a_leader_whose_token_moved_stores_and_acknowledges_nothing(start_engine) -> None:
    token = bump_fence("engine-a")
    fenced = threading.Event()
    host = start_engine([*SMALL_CLUSTER, pod("p1")], TWO_PROFILES, run=False, fence=token, on_fenced=fenced.set)
    assert bump_fence("engine-b") == token + 1  # a successor took over while this one was away
    _drive(host, fenced.is_set)
    assert fenced.is_set()
    assert host.store is not None and host.store.fenced
    assert Binding.objects.count() == 0
    assert ClusterObject.objects.get(name="p1").node_name == ""
    # The binding was never acknowledged: the engine still sees the pod as not bound.
    assert ops.GetPod(namespace="default", name="p1").run(host.engine)["node"] is None


@pytest.fixture
def redis_url() -> str:
    try:
        socket.create_connection(("127.0.0.1", 6379), timeout=2).close()
    except OSError as exc:
        if os.getenv("CI"):
            pytest.fail(f"Redis at 127.0.0.1:6379: {exc}")
        pytest.skip(f"Redis at 127.0.0.1:6379: {exc}")
    return REDIS_URL


class _Events:
    def __init__(self) -> None:
        self.elected: list[int] = []
        self.lost = 0

    def on_elected(self, token: int) -> None:
        self.elected.append(token)

    def on_lost(self) -> None:
        self.lost += 1


@pytest.mark.django_db(transaction=True)
def test_one_leader_then_a_takeover_within_the_ttl(redis_url: str) -> None:
    TTL = 2  # seconds; renewals every TTL/3
    key = f"schedconsole:test:leader:{uuid.uuid4().hex}"
    a, b = _Events(), _Events()
    first = LeaderElector("a@test", a.on_elected, a.on_lost, ttl=TTL, redis_url=redis_url, key=key)
    second = LeaderElector("b@test", b.on_elected, b.on_lost, ttl=TTL, redis_url=redis_url, key=key)
    first.start()
    wait_for(lambda: a.elected, 5)
    try:
        token = a.elected[0]
        assert current_fence() == token
        # The lock vanishes (Redis restarted empty): the leader takes it back with the same token.
        # (Before the follower campaigns: with both running, either may take a vanished lock.)
        first._client.delete(key)
        wait_for(lambda: first._client.exists(key), 5, what="the lock taken back at a renewal")
        assert first.leading and a.lost == 0 and current_fence() == token

        second.start()
        time.sleep(2.5)  # several renewals: the follower never gets in
        assert first.leading and not second.leading and b.elected == []
        assert current_fence() == token

        # The leader dies without a word (its campaign stops; the key is left to expire).
        first._stop.set()
        first._thread.join(5)
        died = time.monotonic()
        wait_for(lambda: b.elected, 10)
        # The TTL plus one campaign period, and a margin for a loaded 2-core machine's scheduling.
        assert time.monotonic() - died < TTL + TTL / 3 + 0.75
        assert b.elected == [token + 1] and current_fence() == token + 1
    finally:
        if second._thread.ident is not None:  # started
            second.stop()
        first._client.delete(key)
    assert b.lost == 1  # giving the lock up on stop stops the engine


@pytest.mark.django_db(transaction=True)
def test_warm_stop_hands_over_at_once(redis_url: str) -> None:
    key = f"schedconsole:test:leader:{uuid.uuid4().hex}"
    a, b = _Events(), _Events()
    first = LeaderElector("a@test", a.on_elected, a.on_lost, ttl=10, redis_url=redis_url, key=key)
    second = LeaderElector("b@test", b.on_elected, b.on_lost, ttl=10, redis_url=redis_url, key=key)
    first.start()
    wait_for(lambda: a.elected, 5)
    second.start()
    try:
        stopped = time.monotonic()
        first.stop()
        wait_for(lambda: b.elected, 10)
        assert time.monotonic() - stopped < 5  # not the 10 s TTL: the lock was released
        assert a.lost == 1
    finally:
        second.stop()


@pytest.mark.django_db(transaction=True)
def test_a_leader_whose_engine_failed_steps_down(redis_url: str) -> None:
    key = f"schedconsole:test:leader:{uuid.uuid4().hex}"
    a, b = _Events(), _Events()
    broken = threading.Event()
    first = LeaderElector("a@test", a.on_elected, a.on_lost, ttl=1, redis_url=redis_url, key=key, failed=broken.is_set)
    second = LeaderElector("b@test", b.on_elected, b.on_lost, ttl=1, redis_url=redis_url, key=key)
    first.start()
    wait_for(lambda: a.elected, 5)
    second.start()
    try:
        broken.set()  # e.g. the store died: holding the lock would leave nobody scheduling
        wait_for(lambda: b.elected, 5)
        assert a.lost == 1 and b.elected == [a.elected[0] + 1]
    finally:
        first.stop()
        second.stop()
