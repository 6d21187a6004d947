"""The cluster page: mode and sync state for everyone, starting and stopping the sync for operators."""

from __future__ import annotations

from django.test import Client

from schedconsole.profiles.models import AuditEntry


def test_page_needs_a_login(transactional_db) -> None:
    for path in ("/cluster/",):
        response = Client().get(path)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    assert Client().post("/cluster/sync/", {"action": "start"}).status_code == 302


def test_viewer_sees_the_mode_without_the_sync_form(engine, viewer) -> None:
    client = Client()
    client.force_login(viewer)
    page = client.get("/cluster/").content.decode()
    assert "simulated mode" in page and "Continuous sync of a live cluster" in page and "Not started" in page
    assert 'value="start"' not in page
    assert client.post("/cluster/sync/", {"action": "start"}).status_code == 403


def test_operator_start_with_an_unreadable_kubeconfig_says_why(engine, operator, settings, tmp_path) -> None:
    settings.KUBECONFIG = str(tmp_path / "missing-kubeconfig")
    client = Client()
    client.force_login(operator)
    assert 'value="start"' in client.get("/cluster/").content.decode()
    page = client.post("/cluster/sync/", {"action": "start", "bindings": "pending"}, follow=True).content.decode()
    assert "The sync was not started: cannot connect with" in page and "missing-kubeconfig" in page
    stop = client.post("/cluster/sync/", {"action": "stop"}, follow=True).content.decode()
    assert "The sync was not stopped: no sync is running" in stop
    assert not AuditEntry.objects.filter(action__startswith="cluster.sync").exists()
    assert "unknown action" in client.post("/cluster/sync/", {"action": "nope"}, follow=True).content.decode()
