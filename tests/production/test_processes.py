"""The production wiring end to end: the web server (uvicorn), two engine workers, a task worker, Redis, PostgreSQL."""

from __future__ import annotations

import asyncio
import json

import pytest
import websockets

from tests.support.stack import Stack, nodes_yaml
from tests.support.waits import wait_for

pytestmark = pytest.mark.production


def _bound(stack: Stack, prefix: str) -> int:
    rows = stack.query(
        f"SELECT COUNT(*) FROM cluster_clusterobject WHERE kind = 'Pod' AND name LIKE '{prefix}-%' AND node_name <> '' AND NOT deleted"
    )
    return int(rows[0][0])


def test_pod_created_through_the_api_is_bound_and_its_attempt_reaches_a_websocket(stack: Stack) -> None:
    stack.start("web")
    stack.start("engine-a")
    stack.start("engine-b")
    stack.start("tasks")
    wait_for(lambda: stack.leader() is not None, 20, 0.1, what="a leader", ignoring=(Exception,))
    wait_for(lambda: stack.http("GET", "/readyz", auth=False)[0] == 200, 30, 0.1, what="readyz", ignoring=(Exception,))
    status, body = stack.http("POST", "/api/import/", nodes_yaml(4), content_type="application/yaml")
    assert status == 201, body
    cookie = stack.session_cookie()

    async def watch() -> dict:
        async with websockets.connect(
            f"ws://127.0.0.1:{stack.web_port}/ws/scores/",
            additional_headers={"Cookie": cookie},
            origin=f"http://127.0.0.1:{stack.web_port}",
        ) as ws:
            hello = json.loads(await ws.recv())
            assert hello["type"] == "hello"
            # The hub has joined the group: the engine's next look (before it sends) finds a listener.
            await asyncio.to_thread(wait_for, stack.live_listeners, 10, 0.05, what="the hub in the live group")
            pod = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "web-1", "namespace": "default"},
                "spec": {"containers": [{"name": "c", "image": "app", "resources": {"requests": {"cpu": "200m"}}}]},
            }
            status, body = await asyncio.to_thread(stack.http, "POST", "/api/pods/", pod)
            assert status == 201, body
            while True:
                message = json.loads(await asyncio.wait_for(ws.recv(), 20))
                if message.get("type") == "attempt" and message["pod"] == "default/web-1":
                    return message

    message = asyncio.run(watch())
    assert message["outcome"] == "Scheduled" and message["node"].startswith("node-"), message
    status, pod = stack.http("GET", "/api/pods/default/web-1/")
    assert status == 200 and pod["node"] == message["node"], pod
    rows = stack.query("SELECT pod, node FROM cluster_binding WHERE pod = 'default/web-1'")
    assert rows == [("default/web-1", message["node"])]


def test_a_follower_answers_not_leader_and_the_web_says_so_without_a_leader(stack: Stack) -> None:
    from celery.utils.nodenames import worker_direct

    leader = wait_for(stack.leader, 20, 0.1, what="a leader", ignoring=(Exception,))
    follower = "engine-b" if leader == "engine-a" else "engine-a"
    app = stack.celery()
    answer = app.send_task(
        "schedconsole.engine.control", args=("ping", None, 5), queue=worker_direct(f"{follower}@localhost")
    ).get(timeout=20)
    assert answer == {"error": {"status": 503, "message": "the instance is not leader"}}
    answer = app.send_task("schedconsole.engine.control", args=("ping", None, 5), queue=worker_direct(f"{leader}@localhost")).get(
        timeout=20
    )
    assert answer["ok"]["pong"] is True

    status, body = stack.http("GET", "/apis/v1/__services__")
    assert status == 200 and "/apis/v1/nodes/:nodeName" in body["GET"], body
    # Without any engine, Koordinator's routes and the API say that no instance leads.
    stack.procs["engine-a"].stop()
    stack.procs["engine-b"].stop()
    wait_for(lambda: stack.leader() is None, 10, 0.1, what="the lock given up on warm shutdown", ignoring=(Exception,))
    status, body = stack.http("GET", "/apis/v1/__services__")
    assert (status, body) == (503, {"message": "the instance is not leader"})
    status, body = stack.http("GET", "/readyz", auth=False)
    assert status == 503 and body["checks"]["engine"].startswith("failed"), body
    stack.start("engine-a")
    stack.start("engine-b")
    wait_for(lambda: stack.http("GET", "/apis/v1/__services__")[0] == 200, 20, 0.1, what="a new leader", ignoring=(Exception,))


def test_static_files_come_from_whitenoise_with_hashed_names(stack: Stack) -> None:
    import re
    import urllib.request

    status, page = stack.http("GET", "/accounts/login/", auth=False)
    assert status == 200
    css = re.search(r'href="(/static/console\.[0-9a-f]{12}\.css)"', page)
    assert css, page[:800]
    with urllib.request.urlopen(stack.url + css.group(1), timeout=10) as response:
        assert response.status == 200
        assert "max-age=315360000" in response.headers.get("Cache-Control", "")
        assert b"{" in response.read()
