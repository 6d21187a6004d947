"""Pages need a login; the login is rate limited; the live and attempt pages render."""

from __future__ import annotations

import pytest
from django.test import Client

from schedconsole.history.models import Attempt
from tests.console.conftest import pod, settle, wait_for


@pytest.mark.parametrize("path", ["/", "/attempts/1/", "/admin/"], ids=["live", "attempt", "admin"])
def test_pages_redirect_to_login(transactional_db, path) -> None:
    response = Client().get(path)
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_login_page_and_login(operator) -> None:
    client = Client(enforce_csrf_checks=False)
    page = client.get("/accounts/login/")
    assert page.status_code == 200 and b'name="username"' in page.content and b"csrfmiddlewaretoken" in page.content
    response = client.post("/accounts/login/", {"username": "olga", "password": "pw-olga"})
    assert response.status_code == 302 and response["Location"] == "/"


def test_the_icon_is_linked_and_served_without_login(transactional_db) -> None:
    # Browsers asked for /favicon.ico on every page and got a 404 (logged each time).
    client = Client()
    page = client.get("/accounts/login/")
    assert b'rel="icon" href="/static/favicon.svg"' in page.content
    response = client.get("/favicon.ico")
    assert response.status_code == 301 and response["Location"] == "/static/favicon.svg"


def test_login_needs_csrf(operator) -> None:
    client = Client(enforce_csrf_checks=True)
    assert client.post("/accounts/login/", {"username": "olga", "password": "pw-olga"}).status_code == 403


def test_login_rate_limit(operator, settings) -> None:
    settings.LOGIN_RATE_LIMIT = 3
    client = Client()
    for _ in range(3):
        assert client.post("/accounts/login/", {"username": "olga", "password": "wrong"}).status_code == 200
    refused = client.post("/accounts/login/", {"username": "olga", "password": "pw-olga"})
    assert refused.status_code == 429
    assert b"Too many failed logins" in refused.content
    from django.core.cache import cache

    cache.clear()
    assert client.post("/accounts/login/", {"username": "olga", "password": "pw-olga"}).status_code == 302


def test_live_page(engine, operator, viewer) -> None:
    client = Client()
    client.force_login(operator)
    page = client.get("/").content.decode()
    assert 'id="topn"' in page and "bin-packing" in page and "disabled" not in page.split('id="topn"')[1].split(">")[0]
    assert "live.js" in page
    client.force_login(viewer)
    page = client.get("/").content.decode()
    assert "disabled" in page.split('id="topn"')[1].split(">")[0]


def test_attempt_page(engine, api, operator) -> None:
    api.post("/api/pods/", pod("page", cpu="300m"), format="json")
    wait_for(lambda: api.get("/api/pods/default/page/").json()["node"])
    settle(engine)
    attempt = Attempt.objects.get(pod="default/page")
    client = Client()
    client.force_login(operator)
    page = client.get(f"/attempts/{attempt.id}/").content.decode()
    assert "default/page" in page and "NodeResourcesFit" in page and attempt.node in page
    assert client.get("/attempts/999999/").status_code == 404
