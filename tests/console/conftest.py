"""Fixtures for the console: users by role, API clients, and a running engine over a small cluster."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from schedconsole.engine import bridge
from schedconsole.engine import host as host_module
from schedconsole.engine.store import save_documents
from tests.support.builders import node_doc, pod_doc
from tests.support.waits import wait_for


def node(name: str, cpu: str = "4", memory: str = "8Gi", zone: str = "zone-a", **spec: Any) -> dict[str, Any]:
    """A Node document in a zone."""
    return node_doc(name, cpu, memory, labels={"topology.kubernetes.io/zone": zone}, spec=spec)


def pod(name: str, cpu: str = "100m", memory: str = "128Mi", namespace: str = "default", **spec: Any) -> dict[str, Any]:
    """A Pod document labelled app=<name>."""
    return pod_doc(name, namespace, cpu, memory, image="nginx", spec=spec, labels={"app": name})


SMALL_CLUSTER = [node("node-a", zone="zone-a"), node("node-b", zone="zone-b"), node("node-c", cpu="2", zone="zone-c")]
TWO_PROFILES = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {"schedulerName": "default-scheduler"},
        {
            "schedulerName": "bin-packing",
            "pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}],
        },
    ],
}


@pytest.fixture(autouse=True)
def _console_settings(settings: Any) -> None:
    settings.DEMO_CLUSTER = False
    settings.DEMO_TRICKLE_PODS_PER_SECOND = 0
    settings.DEBUG_TOP_N_SCORES = 3
    settings.CONTROL_TIMEOUT_SECONDS = 10


def make_user(name: str, *groups: str) -> User:
    """A user in the given groups."""
    user = User.objects.create_user(name, password="pw-" + name)
    for group in groups:
        user.groups.add(Group.objects.get_or_create(name=group)[0])
    return user


@pytest.fixture
def operator(transactional_db: None) -> User:
    """A user with the operator role."""
    return make_user("olga", "operator")


@pytest.fixture
def viewer(transactional_db: None) -> User:
    """A user with the viewer role only."""
    return make_user("victor", "viewer")


@pytest.fixture
def api(operator: User) -> APIClient:
    """An API client logged in as the operator (token auth)."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=operator)[0].key}")
    return client


@pytest.fixture
def viewer_api(viewer: User) -> APIClient:
    """An API client logged in as the viewer (session auth)."""
    client = APIClient()
    client.force_login(viewer)
    return client


@pytest.fixture
def anon() -> APIClient:
    """An API client with no credentials."""
    return APIClient()


@pytest.fixture
def start_engine(transactional_db: None) -> Iterator[Callable[..., host_module.EngineHost]]:
    """Start the engine over stored documents (and a configuration); stopped after the test."""
    started: list[host_module.EngineHost] = []

    def start(
        documents: list[dict[str, Any]] | None = None,
        config: dict[str, Any] | None = None,
        live: bool = False,
        run: bool = True,
        **kwargs: Any,
    ) -> host_module.EngineHost:
        if config is not None:
            from schedconsole.profiles.models import ProfileVersion

            ProfileVersion.objects.create(version=1, document=config, active=True, comment="test")
        if documents:
            save_documents([bridge.with_defaults(d, d["kind"]) for d in documents])
        host_module._host = None
        host = host_module.get_host()
        host.start(live=live, seed=1, run=run, **kwargs)
        started.append(host)
        return host

    yield start
    for host in started:
        if host.running or host.store is not None:
            host.stop()
    host_module._host = None


@pytest.fixture
def engine(start_engine: Callable[..., host_module.EngineHost]) -> host_module.EngineHost:
    """A running engine over three nodes and two profiles."""
    return start_engine(SMALL_CLUSTER, TWO_PROFILES)


def wait_idle(host: host_module.EngineHost, timeout: float = 10.0) -> None:
    """Wait until a turn of the engine's loop, taken on the engine thread, finds nothing to do."""

    def a_turn_is_idle() -> bool:
        answered = threading.Event()
        idle: list[bool] = []

        def turn() -> None:
            assert host.engine is not None
            idle.append(not host.engine.step())
            answered.set()

        host.post(turn)
        return answered.wait(timeout) and idle[0]

    wait_for(a_turn_is_idle, timeout, 0, what="the engine idle")


def settle(host: host_module.EngineHost) -> None:
    """Wait until the engine is idle and the store has written everything."""
    wait_idle(host)
    assert host.store is not None
    host.store.flush()
