"""Pages need a login; the login is rate limited; the live and attempt pages render."""

from __future__ import annotations

import pytest
from django.test import Client

from schedconsole.history.models import Attempt
from tests.console.conftest import pod, settle
from tests.support.waits import wait_for


@pytest.fixture(autouse=True)
def _fresh_login_counters() -> None:
    from django.core.cache import cache

    cache.clear()  # failure counters live in the cache, which outlives a test


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


def _fail_login(client: Client, name: str, address: str = "10.0.0.1") -> int:
    return client.post("/accounts/login/", {"username": name, "password": "wrong"}, REMOTE_ADDR=address).status_code


def test_name_variants_share_one_counter(operator, settings) -> None:
    # "olga   " and "ｏlga" log in as olga (stripped, NFKC): each got a fresh counter.
    settings.LOGIN_RATE_LIMIT = 3
    client = Client()
    assert [_fail_login(client, name) for name in ("olga", "olga   ", "\uff4flga")] == [200, 200, 200]
    assert _fail_login(client, "  olga") == 429
    refused = client.post("/accounts/login/", {"username": "olga", "password": "pw-olga"}, REMOTE_ADDR="10.0.0.1")
    assert refused.status_code == 429 and refused["Retry-After"] == "60"
    # The owner at another address is not locked out by the guesser.
    ok = client.post("/accounts/login/", {"username": "olga", "password": "pw-olga"}, REMOTE_ADDR="10.0.0.2")
    assert ok.status_code == 302


def test_one_address_is_limited_over_all_names(operator, settings) -> None:
    settings.LOGIN_ADDRESS_LIMIT = 4
    client = Client()
    assert [_fail_login(client, f"name-{i}", "10.0.0.3") for i in range(5)] == [200, 200, 200, 200, 429]
    assert _fail_login(client, "other", "10.0.0.4") == 200


def test_unknown_names_are_limited_over_all_addresses_but_users_are_not(operator, settings) -> None:
    # Fresh names from many addresses cost a password hash each: they are limited together.
    settings.LOGIN_UNKNOWN_LIMIT = 5
    client = Client()
    statuses = [_fail_login(client, f"fresh-{i}", f"10.1.0.{i}") for i in range(7)]
    assert statuses == [200] * 5 + [429] * 2
    assert _fail_login(client, "olga", "10.1.0.99") == 200  # a user's name still gets its password checked
    ok = client.post("/accounts/login/", {"username": "olga", "password": "pw-olga"}, REMOTE_ADDR="10.1.0.98")
    assert ok.status_code == 302


@pytest.mark.parametrize("path", ["/", "/pods/", "/jobs/", "/profiles/"], ids=["live", "pods", "jobs", "profiles"])
def test_a_user_without_a_role_gets_403_on_pages(transactional_db, path) -> None:
    from tests.console.conftest import make_user

    client = Client()
    client.force_login(make_user("nobody"))
    response = client.get(path)
    assert response.status_code == 403 and b"no role" in response.content
    assert client.post("/accounts/logout/").status_code == 302


@pytest.mark.parametrize("path", ["/api/schema/", "/api/docs/"], ids=["schema", "docs"])
def test_schema_and_docs_need_a_login(viewer, path) -> None:
    assert Client().get(path).status_code in (401, 403)
    client = Client()
    client.force_login(viewer)
    assert client.get(path).status_code == 200


def test_readyz_shows_detail_to_logged_in_users_only(engine, viewer) -> None:
    from unittest import mock

    with mock.patch("schedconsole.api.koord._broker", side_effect=RuntimeError("redis at 10.9.8.7:6379 refused")):
        anonymous = Client().get("/readyz")
        client = Client()
        client.force_login(viewer)
        logged_in = client.get("/readyz")
    assert anonymous.status_code == logged_in.status_code == 503
    assert anonymous.json()["checks"]["broker"] == "failed" and "10.9.8.7" not in anonymous.content.decode()
    assert logged_in.json()["checks"]["broker"] == "failed: redis at 10.9.8.7:6379 refused"
