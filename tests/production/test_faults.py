"""Faults people meet in production: a web or task process killed mid-request, Redis restarted,
PostgreSQL away for 10 s. Clients get errors, nothing is half-applied, nothing is lost."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from tests.support.stack import Stack, nodes_yaml, pods_yaml
from tests.support.waits import wait_for

pytestmark = pytest.mark.production


def _stored(stack: Stack, prefix: str) -> tuple[int, int]:
    ((stored, bound),) = stack.query(
        f"SELECT COUNT(*), COUNT(*) FILTER (WHERE node_name <> '') FROM cluster_clusterobject WHERE kind = 'Pod' AND name LIKE '{prefix}-%' AND NOT deleted"
    )
    return int(stored), int(bound)


def _in_background(fn: Any) -> tuple[threading.Thread, dict[str, Any]]:
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["answer"] = fn()
        except Exception as exc:
            out["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    return thread, out


def test_kill_9_of_the_web_server_mid_request(stack: Stack) -> None:
    for name in ("web", "engine-a", "tasks"):
        stack.start(name)
    wait_for(lambda: stack.http("GET", "/readyz", auth=False)[0] == 200, 30, 0.1, what="readyz", ignoring=(Exception,))
    # Room for every pod the module creates (up to about 10000, at 110 pods a node).
    status, body = stack.http("POST", "/api/import/", nodes_yaml(120), content_type="application/yaml")
    assert status == 201, body
    thread, out = _in_background(
        lambda: stack.http("POST", "/api/import/", pods_yaml(3000, "d"), content_type="application/yaml")
    )
    time.sleep(0.3)
    stack.procs["web"].kill9()
    thread.join(30)
    assert "error" in out, out  # the client sees the connection die
    stack.start("web")
    # The task worker may have finished the import on its own: all 3000 pods or none, never part.
    stored, _ = wait_for(
        lambda: _stored(stack, "d")[0] in (0, 3000) and _stored(stack, "d"),
        30,
        0.1,
        what="a whole import or none",
        ignoring=(Exception,),
    )
    assert stored in (0, 3000)
    status, body = stack.http("GET", "/api/pods/?limit=1")
    assert status == 200, body


def test_kill_9_of_the_task_worker_mid_request(stack: Stack) -> None:
    thread, out = _in_background(
        lambda: stack.http("POST", "/api/import/", pods_yaml(3000, "w"), content_type="application/yaml")
    )
    time.sleep(0.3)
    stack.procs["tasks"].kill9()
    thread.join(60)
    status, body = out["answer"]
    if status == 201:
        assert body["created"] == {"Pod": 3000}  # it finished before the kill
    else:
        assert status in (503, 504) and "detail" in body, (status, body)  # the worker died with the task
    time.sleep(2)
    assert _stored(stack, "w")[0] in (0, 3000)
    stack.start("tasks")
    status, body = stack.http("POST", "/api/import/", pods_yaml(10, "w2"), content_type="application/yaml")
    assert status == 201 and body["created"] == {"Pod": 10}, body


def test_redis_restarted_mid_run(stack: Stack) -> None:
    ((token_before,),) = stack.query("SELECT token FROM engine_enginelease WHERE id = 1")
    status, body = stack.http("POST", "/api/import/", pods_yaml(1000, "r"), content_type="application/yaml")
    assert status == 201, body
    stack.restart_redis(down=2.0)
    # The engine keeps the pods it has: the same leader (no new token), every pod bound.
    wait_for(
        lambda: _stored(stack, "r") == (1000, 1000), 60, 0.2, what="every pod bound across the restart", ignoring=(Exception,)
    )
    wait_for(lambda: stack.leader() == "engine-a", 20, 0.1, what="the lock taken back", ignoring=(Exception,))
    ((token_after,),) = stack.query("SELECT token FROM engine_enginelease WHERE id = 1")
    assert token_after == token_before
    # It reconnects and goes on: new work flows through the broker again.
    wait_for(
        lambda: stack.http("POST", "/api/import/", pods_yaml(5, "r2"), content_type="application/yaml")[0] == 201,
        60,
        1,
        what="an import after the restart",
        ignoring=(Exception,),
    )
    wait_for(lambda: _stored(stack, "r2") == (5, 5), 30, 0.1, what="new pods bound", ignoring=(Exception,))


def test_postgres_unavailable_for_10_seconds(stack: Stack) -> None:
    status, body = stack.http("POST", "/api/import/", pods_yaml(3000, "g"), content_type="application/yaml")
    assert status == 201, body
    stack.proxy.cut()
    assert _stored(stack, "g")[1] < 3000  # bindings are still being made when the database goes
    try:
        statuses = []
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            status, body = stack.http("GET", "/readyz", auth=False)
            statuses.append(status)
            assert status == 503 and body["checks"]["database"].startswith("failed"), body
            for path in ("/", "/api/pods/?limit=1", "/api/audit/", "/apis/v1/nodes/node-0", "/metrics"):
                status, _ = stack.http("GET", path)
                assert status != 500, path
                if status == 503:
                    assert stack.last_headers.get("Retry-After"), (path, stack.last_headers)
                statuses.append(status)
            time.sleep(0.5)
        assert 503 in statuses
    finally:
        stack.proxy.open()
    wait_for(
        lambda: stack.http("GET", "/readyz", auth=False)[0] == 200, 30, 0.1, what="readyz after the outage", ignoring=(Exception,)
    )
    # Every route is back without a restart (Koordinator's were not, when their connection was kept).
    assert stack.http("GET", "/apis/v1/nodes/node-0")[0] == 200
    assert stack.http("PUT", "/debug/flags/s", "4", content_type="text/plain")[0] == 200
    # No binding lost: every pod bound, each once, in the database.
    seen: list[tuple[int, int]] = []
    try:
        wait_for(
            lambda: seen.append(_stored(stack, "g")) or seen[-1] == (3000, 3000),
            90,
            0.2,
            what="every pod bound and stored",
            ignoring=(Exception,),
        )
    except AssertionError as exc:
        raise AssertionError(f"{exc}; (stored, bound) went {seen[:: max(1, len(seen) // 10)]}") from None
    (bindings,) = stack.query("SELECT COUNT(*), COUNT(DISTINCT pod_uid) FROM cluster_binding WHERE pod LIKE 'default/g-%'")
    assert bindings == (3000, 3000)
