"""The continuous sync across engine restarts: one an operator started resumes by itself and catches
up with what changed on the live side meanwhile; one an operator stopped stays stopped."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.test import Client

from schedconsole.cluster.models import ClusterObject, ClusterSync
from schedconsole.engine import operations as ops
from tests.console.conftest import settle
from tests.support.waits import wait_for

pytest.importorskip("kubernetes")

from tests.support.servers import LiveCluster, live_pod, start_live

WAIT = 30.0  # generous: the machine may be loaded


@pytest.fixture
def live(settings, tmp_path: Path) -> Iterator[LiveCluster]:
    """A live cluster (namespace prod, nodes n1 and n2, a bound and a pending pod) that the
    settings' kubeconfig names, as the Cluster page's sync reads it."""
    running = start_live()
    server = running.server
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "live", "cluster": {"server": server.url}}],
                "users": [{"name": "u", "user": {"token": "unused"}}],
                "contexts": [{"name": "live", "context": {"cluster": "live", "user": "u"}}],
                "current-context": "live",
            }
        )
    )
    settings.KUBECONFIG = str(kubeconfig)
    try:
        yield running
    finally:
        server.stop()


def stored_pods() -> dict[str, str]:
    """The simulated cluster's pods as the console stored them: name → node."""
    return {o.name: o.node_name for o in ClusterObject.objects.filter(kind="Pod", namespace="prod", deleted=False)}


def operator_client(operator) -> Client:
    client = Client()
    client.force_login(operator)
    return client


def start_sync(client: Client) -> None:
    page = client.post("/cluster/sync/", {"action": "start", "bindings": "keep"}, follow=True).content.decode()
    assert "Sync from" in page and "started" in page, page
    wait_for(lambda: stored_pods() == {"bound": "n1", "pending": ""}, WAIT)


def test_a_running_sync_resumes_after_a_restart_and_catches_up(start_engine, operator, live: LiveCluster) -> None:
    host = start_engine()
    client = operator_client(operator)
    start_sync(client)
    assert "resumes by itself" in client.get("/cluster/").content.decode()
    host.stop()  # the console stops (or dies after its last save) with the sync running
    row = ClusterSync.objects.get()
    assert row.running and ["Pod", "prod", "pending"] in [k[:3] for k in row.mirrored]

    # Meanwhile on the live side: the pending pod is bound, a pod is created, one deleted.
    live.bind("pending", "n2")
    live.create(live_pod("late"))
    live.send("DELETE", "/api/v1/namespaces/prod/pods/bound?gracePeriodSeconds=0")

    host = start_engine()
    wait_for(lambda: stored_pods() == {"pending": "n2", "late": ""}, WAIT)
    status = host.call(ops.GetSyncStatus())
    assert status["running"] and status["resumedWith"] == len(row.mirrored), status
    assert status["failures"] == 0, status
    page = client.get("/cluster/").content.decode()
    assert f"resumed with {len(row.mirrored)} objects mirrored before" in page and 'value="stop"' in page
    # It follows the watch again, not only the first list.
    live.create(live_pod("later"))
    wait_for(lambda: "later" in stored_pods(), WAIT)
    assert ClusterSync.objects.get().resumed_at is not None


def test_a_stopped_sync_stays_stopped(start_engine, operator, live: LiveCluster) -> None:
    host = start_engine()
    client = operator_client(operator)
    start_sync(client)
    page = client.post("/cluster/sync/", {"action": "stop"}, follow=True).content.decode()
    assert "Sync stopped" in page
    host.stop()
    assert not ClusterSync.objects.get().running

    live.create(live_pod("late"))
    host = start_engine()
    settle(host)
    assert host.call(ops.GetSyncStatus()) is None
    assert "Not started" in client.get("/cluster/").content.decode()
    assert stored_pods() == {"bound": "n1", "pending": ""}  # what was mirrored stays, nothing more


def test_a_sync_that_cannot_resume_says_why_and_can_be_given_up(
    start_engine, operator, live: LiveCluster, settings, tmp_path: Path
) -> None:
    ClusterSync.objects.create(pk=1, running=True, kubeconfig=str(tmp_path / "gone"), started_by="alice")
    host = start_engine()
    settle(host)
    assert host.call(ops.GetSyncStatus()) is None
    client = operator_client(operator)
    page = client.get("/cluster/").content.decode()
    assert "not resumed" in page and "started by alice did not resume" in page and "gone" in page
    page = client.post("/cluster/sync/", {"action": "stop"}, follow=True).content.decode()
    assert "it will not resume" in page
    assert not ClusterSync.objects.get().running
    assert "Not started" in client.get("/cluster/").content.decode()
