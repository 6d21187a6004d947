"""Koordinator's polled routes through the ASGI application (Django with one async-native middleware):
DRF's token authentication (Token or Bearer) or the session, per request, never cached; the upload
limit however the body is framed; no control characters in the query."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import sync_to_async
from channels.testing import HttpCommunicator
from django.test import Client
from rest_framework.authtoken.models import Token

from schedconsole.asgi import application
from tests.console.conftest import SMALL_CLUSTER, TWO_PROFILES, make_user


def _setup(start_engine) -> dict[str, str]:
    start_engine(SMALL_CLUSTER, TWO_PROFILES)
    operator, viewer = make_user("ops", "operator"), make_user("view", "viewer")
    session, op_session = Client(), Client()
    session.force_login(viewer)
    op_session.force_login(operator)
    return {
        "op_session": op_session.cookies["sessionid"].value,
        "operator": Token.objects.create(user=operator).key,
        "viewer": Token.objects.create(user=viewer).key,
        "session": session.cookies["sessionid"].value,
    }


async def _call(method: str, path: str, headers: list[tuple[bytes, bytes]], body: bytes = b"") -> tuple[int, bytes]:
    if not any(name == b"host" for name, _ in headers):
        headers = [(b"host", b"127.0.0.1:8000"), *headers]
    response = await HttpCommunicator(application, method, path, body=body, headers=headers).get_response(timeout=10)
    return response["status"], response["body"]


@pytest.mark.django_db(transaction=True)
async def test_polled_routes(start_engine) -> None:
    keys = await sync_to_async(_setup)(start_engine)
    token = [(b"authorization", f"Token {keys['operator']}".encode())]
    status, body = await _call("GET", "/apis/v1/nodes/node-a", token)
    assert status == 200 and json.loads(body)["allocatable"]["MilliCPU"] == 4000
    status, body = await _call("GET", "/apis/v1/nodes/nope", token)
    assert status == 404 and json.loads(body) == {"message": "cannot find node nope"}
    status, body = await _call("PUT", "/debug/flags/s", token, b"4")
    assert status == 200 and body.decode().strip() == "successfully set debugTopNScores to 4"
    assert (await _call("GET", "/apis/v1/__services__", []))[0] == 401
    assert (await _call("GET", "/apis/v1/__services__", [(b"authorization", b"Token wrong")]))[0] == 401
    viewer = [(b"authorization", f"Token {keys['viewer']}".encode())]
    status, body = await _call("PUT", "/debug/flags/s", viewer, b"2")
    assert status == 403 and "operator" in json.loads(body)["message"]
    cookie = [(b"cookie", f"sessionid={keys['session']}".encode())]
    assert (await _call("GET", "/apis/v1/__services__", cookie))[0] == 200
    status, body = await _call("GET", "/apis/v1/__services__", [(b"host", b"evil.example"), *token])
    assert status == 400  # DisallowedHost, as through Django's full stack
    bearer = [(b"authorization", f"Bearer {keys['operator']}".encode())]
    assert (await _call("GET", "/apis/v1/nodes/node-a", bearer))[0] == 200
    # A session write is refused without a CSRF token.
    op_cookie = [(b"cookie", f"sessionid={keys['op_session']}".encode())]
    status, body = await _call("PUT", "/debug/flags/s", op_cookie, b"2")
    assert status == 403 and "CSRF" in json.loads(body)["message"]


@pytest.mark.django_db(transaction=True)
async def test_a_deleted_token_and_a_logged_out_session_are_refused_at_once(start_engine) -> None:
    # The fast path kept identities for 5 s: a deleted token went on working, writes included.
    keys = await sync_to_async(_setup)(start_engine)
    token = [(b"authorization", f"Token {keys['operator']}".encode())]
    assert (await _call("PUT", "/debug/flags/s", token, b"3"))[0] == 200
    await Token.objects.filter(key=keys["operator"]).adelete()
    assert (await _call("PUT", "/debug/flags/s", token, b"2"))[0] == 401
    assert (await _call("GET", "/apis/v1/nodes/node-a", token))[0] == 401
    cookie = [(b"cookie", f"sessionid={keys['session']}".encode())]
    assert (await _call("GET", "/metrics", cookie))[0] == 200
    from django.contrib.sessions.models import Session

    await Session.objects.filter(session_key=keys["session"]).adelete()  # what logout does
    assert (await _call("GET", "/metrics", cookie))[0] == 401


async def _chunked(path: str, headers: list[tuple[bytes, bytes]], chunks: int, size: int) -> tuple[int, int]:
    """A body sent in chunks without a length; how many chunks the application read."""
    from channels.testing import ApplicationCommunicator

    scope = {
        "type": "http",
        "http_version": "1.1",
        "method": "PUT",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "headers": [(b"host", b"127.0.0.1:8000"), *headers],
    }
    communicator = ApplicationCommunicator(application, scope)
    for _ in range(chunks):
        await communicator.send_input({"type": "http.request", "body": b"x" * size, "more_body": True})
    await communicator.send_input({"type": "http.request", "body": b"", "more_body": False})
    start = await communicator.receive_output(10)
    await communicator.wait(10)
    return start["status"], communicator.input_queue.qsize()


@pytest.mark.django_db(transaction=True)
async def test_a_chunked_body_over_the_limit_is_413_before_it_is_read(start_engine, settings) -> None:
    settings.UPLOAD_MAX_BYTES = 4096
    keys = await sync_to_async(_setup)(start_engine)
    token = [(b"authorization", f"Token {keys['operator']}".encode())]
    for path in ("/debug/flags/s", "/api/pods/", "/k8s/api/v1/namespaces/default/pods"):
        status, unread = await _chunked(path, token, 50, 1024)
        assert status == 413, path
        assert unread > 40, "the application stopped reading at the limit"
    assert (await _call("PUT", "/api/debug-flags/", [*token, (b"content-length", b"999999")]))[0] == 413


@pytest.mark.django_db(transaction=True)
async def test_control_characters_in_a_filter_are_a_400(start_engine) -> None:
    keys = await sync_to_async(_setup)(start_engine)
    token = [(b"authorization", f"Token {keys['operator']}".encode())]
    for path in ("/api/audit/?user=a%00b", "/api/pods/?namespace=%01", "/apis/v1/nodes/node-a?x=%00"):
        status, body = await _call("GET", path, token)
        assert status == 400, (path, body)
        assert "control character" in json.loads(body)["detail"]
