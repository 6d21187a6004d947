"""The lean ASGI path for Koordinator's routes: same answers as the Django views, no middleware."""

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
    headers = [(b"host", b"127.0.0.1:8000"), *headers]
    response = await HttpCommunicator(application, method, path, body=body, headers=headers).get_response(timeout=10)
    return response["status"], response["body"]


@pytest.mark.django_db(transaction=True)
async def test_fast_path(start_engine) -> None:
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
    assert status == 400 and "ALLOWED_HOSTS" in json.loads(body)["message"]
    # A session write goes through Django, which refuses it without a CSRF token.
    op_cookie = [(b"cookie", f"sessionid={keys['op_session']}".encode())]
    status, body = await _call("PUT", "/debug/flags/s", op_cookie, b"2")
    assert status == 403 and "CSRF" in json.loads(body)["message"]
