"""Replays through the console: the change log the store keeps, POST and GET /api/replays/ on the
embedded local process pool, the digest equal to an inline run's, bad bodies, cancel on /jobs/."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from schedconsole.engine.host import EngineHost
from schedconsole.engine.operations import ReplayPartRun
from schedconsole.history.models import ObjectChange
from schedconsole.replay import services
from schedconsole.replay.models import ReplayPart
from schedconsole.replay.services import part_spec
from tests.console.conftest import pod, settle
from tests.support.traces import MOST_ALLOCATED, need_openb
from tests.support.waits import wait_for


def finished(api: APIClient, pk: int, timeout: float = 120.0) -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        body: dict[str, Any] = api.get(f"/api/replays/{pk}/").json()
        return body if body["state"] in ("done", "failed", "cancelled") else None

    return wait_for(done, timeout, 0.2, what=f"replay {pk} to end")


def test_change_log_and_replay_side_by_side(api: APIClient, engine: EngineHost, settings: Any) -> None:
    settings.REPLAY_WORKERS = 2
    for i in range(6):
        assert api.post("/api/pods/", pod(f"web-{i}", cpu="500m"), format="json").status_code == 201
    settle(engine)
    assert api.delete("/api/pods/default/web-0/").status_code in (200, 204)
    settle(engine)
    log = list(ObjectChange.objects.values_list("action", "kind", "name"))
    assert ("add", "Node", "node-a") in log and ("add", "Pod", "web-3") in log
    assert ("delete", "Pod", "web-0") in log and sum(1 for a, k, _ in log if a == "bind") == 6

    body = {
        "source": "history",
        "window": {"end": "2100-01-01T00:00:00Z", "start": "2000-01-01T00:00:00Z"},
        "candidates": [{"version": 1}, {"document": MOST_ALLOCATED, "label": "bin-packing"}],
        "samples": 4,
    }
    started = api.post("/api/replays/", body, format="json")
    assert started.status_code == 202, started.json()
    replay = finished(api, started.json()["id"])
    assert replay["state"] == "done", replay
    spread, packed = replay["candidates"]
    assert (spread["label"], packed["label"]) == ("v1", "bin-packing")
    assert spread["summary"]["placed"] == packed["summary"]["placed"] == 6
    assert spread["summary"]["nodesUsed"]["peak"] > packed["summary"]["nodesUsed"]["peak"]
    assert replay["recorded"] == {"pods": 6, "placed": 6}
    vs = {(d["a"], d["b"]): d for d in replay["differences"]}
    assert vs[("v1", "bin-packing")]["count"] > 0
    recorded = vs[("recorded", "bin-packing")]
    assert all(row["aAttempt"] for row in recorded["pods"])  # each links to its decision record
    # The same part inline (as a task worker runs it) gives the same digest as the pool did.
    part = ReplayPart.objects.select_related("candidate__replay").get(candidate__index=1)
    from schedconsole.engine.bridge import replay as bridge_replay

    inline = bridge_replay.merged([ReplayPartRun(part_spec(part)).execute()["outcome"]])
    assert inline["digest"] == packed["digest"]
    job = api.get(f"/api/jobs/{replay['job']}/").json()
    assert (job["kind"], job["state"], job["done"], job["total"]) == ("replay", "done", 2, 2)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"source": "yesterday", "candidates": [{"document": "default"}]}, "source"),
        ({"candidates": []}, "candidates"),
        ({"candidates": [{"version": 99}]}, "candidates[0].version"),
        ({"candidates": [{"document": {"kind": "KubeSchedulerConfiguration"}}]}, "candidates[0].document"),
        ({"candidates": [{"document": "default"}], "segments": 0}, "segments"),
        ({"candidates": [{"document": "default"}], "window": {"start": "soon"}}, "window.start"),
        ({"candidates": [{"document": "default"}], "window": {"start": 20, "end": 10}}, "window.end"),
        ({"grid": {"values": {"weight": [1]}}}, "grid"),
        ({"candidates": [{"version": "abc"}]}, "candidates[0].version"),
        ({"grid": {"base": "x", "values": {"A.weight": [1]}}}, "grid.base"),
        ({"candidates": [{"document": "default"}], "window": {"start": 1e20}}, "window.start"),
        ({"candidates": [{"document": 7}]}, "candidates[0].document"),
        ({"candidates": "all"}, "candidates"),
        ([], "body"),
    ],
    ids=[
        "source",
        "no-candidates",
        "version",
        "document",
        "segments",
        "start",
        "window-order",
        "grid",
        "version-text",
        "grid-base",
        "far-future",
        "document-number",
        "candidates-text",
        "not-an-object",
    ],
)
def test_bad_bodies_name_the_field(api: APIClient, body: dict[str, Any], field: str) -> None:
    answer = api.post("/api/replays/", body, format="json")
    assert answer.status_code == 400 and field in answer.json(), answer.json()


def test_viewer_may_read_but_not_start(viewer_api: APIClient) -> None:
    assert viewer_api.get("/api/replays/").status_code == 200
    assert viewer_api.post("/api/replays/", {"candidates": [{"document": "default"}]}, format="json").status_code == 403


def test_cancel_a_long_replay(api: APIClient, settings: Any) -> None:
    settings.REPLAY_OPENB_DATA = str(need_openb())
    settings.REPLAY_WORKERS = 1
    body = {"source": "openb", "candidates": [{"document": "default"}, {"document": MOST_ALLOCATED}], "segments": 2}
    started = api.post("/api/replays/", body, format="json").json()
    cancelled = api.post(f"/api/jobs/{started['job']}/cancel/")
    assert cancelled.status_code == 200 and cancelled.json()["state"] == "cancelled"
    replay = finished(api, started["id"], timeout=60)
    assert replay["state"] == "cancelled"
    assert api.post(f"/api/jobs/{started['job']}/cancel/").status_code == 409
    states = set(ReplayPart.objects.values_list("state", flat=True))
    wait_for(lambda: not ReplayPart.objects.filter(state="running").exists(), 60, 0.2, what="running parts to stop")
    assert states <= {"cancelled", "running", "queued"}


def test_pods_gone_before_the_window_are_not_loaded(api: APIClient, engine: EngineHost) -> None:
    for i in range(3):
        api.post("/api/pods/", pod(f"old-{i}", cpu="100m"), format="json")
    settle(engine)
    api.delete("/api/pods/default/old-0/")
    settle(engine)
    from datetime import UTC, datetime

    now = datetime.now(tz=UTC).timestamp()
    replay = services.create({"window": {"start": now + 1, "end": now + 2}, "candidates": [{"document": "default"}]}, "olga")
    spec = part_spec(ReplayPart.objects.select_related("candidate__replay").get(candidate__replay=replay))
    names = {c["name"] for c in spec["changes"]}
    assert "old-0" not in names and {"old-1", "old-2", "node-a"} <= names
