"""Koordinator's routes, /metrics, /healthz and /readyz, and the engine being away (503) or slow (504)."""

from __future__ import annotations

import threading
import time

import pytest
from django.test import Client
from rest_framework.authtoken.models import Token

from tests.console.conftest import pod, settle
from tests.support.waits import wait_for


@pytest.fixture
def token_client(operator) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=operator)[0].key}")


def test_services_listing(engine, token_client) -> None:
    response = token_client.get("/apis/v1/__services__")
    assert response.status_code == 200
    assert "/apis/v1/nodes/:nodeName" in response.json()["GET"]


def test_node_info(engine, api, token_client) -> None:
    api.post("/api/pods/", pod("p1", cpu="500m"), format="json")
    node = wait_for(lambda: api.get("/api/pods/default/p1/").json()["node"])
    body = token_client.get(f"/apis/v1/nodes/{node}").json()
    assert body["requested"]["MilliCPU"] == 500
    assert [p["Pod"]["metadata"]["name"] for p in body["pods"]] == ["p1"]
    missing = token_client.get("/apis/v1/nodes/nope")
    assert missing.status_code == 404 and missing.json() == {"message": "cannot find node nope"}


def test_debug_flag_routes(engine, token_client, api) -> None:
    response = token_client.put("/debug/flags/s", "7", content_type="text/plain")
    assert response.status_code == 200
    assert response.content.decode().strip() == "successfully set debugTopNScores to 7"
    assert api.get("/api/debug-flags/").json()["debugTopNScores"] == 7
    assert token_client.put("/debug/flags/s", "x", content_type="text/plain").status_code == 400
    assert token_client.get("/debug/flags/s").status_code == 406
    posted = token_client.post("/debug/flags/s", "9", content_type="text/plain")  # DESIGN: PUT (or POST)
    assert (posted.status_code, posted.content.decode().strip()) == (200, "successfully set debugTopNScores to 9")
    assert api.get("/api/debug-flags/").json()["debugTopNScores"] == 9
    assert token_client.post("/debug/flags/s", "x", content_type="text/plain").status_code == 400
    assert token_client.delete("/debug/flags/s").status_code == 406
    response = token_client.put("/debug/flags/f", "true", content_type="text/plain")
    assert response.content.decode().strip() == "successfully set debugFilterFailure to true"
    assert api.get("/api/audit/?action=debug-flags.set").json()["count"] == 3


def test_routes_need_login_and_roles(engine, viewer) -> None:
    anonymous = Client().get("/apis/v1/__services__")
    assert anonymous.status_code == 401 and "authentication required" in anonymous.json()["message"]
    client = Client(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=viewer)[0].key}")
    assert client.get("/apis/v1/__services__").status_code == 200
    refused = client.put("/debug/flags/s", "3", content_type="text/plain")
    assert refused.status_code == 403 and "operator" in refused.json()["message"]
    assert Client().get("/metrics").status_code == 401


def test_session_put_needs_csrf(engine, operator) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(operator)
    response = client.put("/debug/flags/s", "3", content_type="text/plain")
    assert response.status_code == 403 and "CSRF" in response.json()["message"]


def test_metrics(engine, api, token_client) -> None:
    api.post("/api/pods/", pod("m"), format="json")
    wait_for(lambda: api.get("/api/pods/default/m/").json()["node"])
    text = token_client.get("/metrics").content.decode()
    assert 'scheduler_schedule_attempts_total{profile="default-scheduler",result="scheduled"} 1.0' in text
    assert "scheduler_pending_pods" in text


def test_health_and_readiness_without_login(engine) -> None:
    client = Client()
    assert client.get("/healthz").status_code == 200
    ready = client.get("/readyz")
    assert ready.status_code == 200
    assert ready.json()["checks"] == {"database": "ok", "broker": "ok", "engine": "ok"}  # the detail is for logged-in users


def test_engine_stopped_gives_503(engine, api) -> None:
    engine.stop()
    response = api.get("/api/nodes/")
    assert response.status_code == 503
    assert "not running" in response.json()["detail"]
    ready = Client().get("/readyz")
    assert ready.status_code == 503 and ready.json()["checks"]["engine"].startswith("failed")


def test_engine_busy_gives_504(engine, api, settings) -> None:
    settings.CONTROL_TIMEOUT_SECONDS = 1
    release = threading.Event()
    engine.post(lambda: release.wait(5))
    started = time.monotonic()
    response = api.get("/api/nodes/")
    release.set()
    assert response.status_code == 504
    assert time.monotonic() - started < 3
    settle(engine)
    assert api.get("/api/nodes/").status_code == 200


def test_the_top_n_table_goes_to_the_log_as_koord_scheduler_logs_it(engine, api, token_client, caplog) -> None:
    # The engine logged it at INFO under a root logger at WARNING: nothing ever showed.
    import logging

    assert logging.getLogger("scheduler.frameworkext.debug").isEnabledFor(logging.INFO)
    token_client.put("/debug/flags/s", "2", content_type="text/plain")
    with caplog.at_level(logging.INFO, logger="scheduler.frameworkext.debug"):
        api.post("/api/pods/", pod("logged", cpu="100m"), format="json")
        wait_for(lambda: "Top2 scores for Pod: default/logged" in caplog.text)
    assert "| # | Pod | Node | Score |" in caplog.text


def test_debug_flags_v_sets_the_log_verbosity_as_kube_does(engine, token_client) -> None:
    import logging

    try:
        response = token_client.put("/debug/flags/v", "4", content_type="text/plain")
        assert response.status_code == 200
        assert response.content.decode().strip() == "successfully set klog.logging.verbosity to 4"
        assert logging.getLogger("scheduler").getEffectiveLevel() == logging.DEBUG
        bad = token_client.put("/debug/flags/v", "loud", content_type="text/plain")
        assert bad.status_code == 400
        assert (
            bad.content.decode().strip()
            == 'failed set klog.logging.verbosity loud: strconv.ParseInt: parsing "loud": invalid syntax'
        )
        assert token_client.get("/debug/flags/v").status_code == 406
    finally:
        logging.getLogger("scheduler").setLevel(logging.NOTSET)
