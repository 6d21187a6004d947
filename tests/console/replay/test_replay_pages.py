"""The /replay/ pages: the form and list, one replay side by side with its charts and differences;
the charts' traces."""

from __future__ import annotations

from typing import Any

from django.test import Client
from rest_framework.test import APIClient

from schedconsole.engine.host import EngineHost
from schedconsole.pages import replay_charts
from tests.console.conftest import pod, settle
from tests.console.replay.test_replay_api import finished
from tests.support.traces import MOST_ALLOCATED

SAMPLES = [{"at": 3600.0, "cpu": 0.5, "pending": 2, "fragmentation": 0.25, "nodes_used": 3, "gpu_fragmentation": None}]
SUMMARY = {"pendingHistogram": {"edges": [0.0, 1.0, 10.0], "counts": [4, 0, 1]}, "nodesUsed": {"peak": 3}}


def test_series_share_one_scale_and_name_each_candidate() -> None:
    fig = replay_charts.sample_series([("a", SAMPLES), ("b", SAMPLES)], "cpu", 0.0)
    assert [t.name for t in fig.data] == ["a", "b"] and list(fig.data[0].y) == [50.0] and list(fig.data[0].x) == ["+1.0h"]
    assert fig.layout.meta == {"sharedY": True}


def test_histogram_leaves_out_empty_buckets() -> None:
    fig = replay_charts.pending_histogram([("a", SUMMARY), ("b", SUMMARY)])
    assert list(fig.data[0].y) == ["≥ 0s · a", "≥ 0s · b", "≥ 10s · a", "≥ 10s · b"] and list(fig.data[0].x) == [4, 4, 1, 1]


def test_replay_pages(api: APIClient, engine: EngineHost, operator: Any, settings: Any) -> None:
    for i in range(4):
        api.post("/api/pods/", pod(f"web-{i}", cpu="500m"), format="json")
    settle(engine)
    body = {
        "window": {"start": 0, "end": 4102444800},
        "candidates": [{"version": 1}, {"document": MOST_ALLOCATED, "label": "bin-packing"}],
        "samples": 3,
    }
    replay = finished(api, api.post("/api/replays/", body, format="json").json()["id"])
    browser = Client()
    browser.force_login(operator)
    listing = browser.get("/replay/").content.decode()
    assert (
        'id="replay-form"' in listing
        and f'href="/replay/{replay["id"]}/"' in listing
        and replay["candidates"][1]["digest"] in listing
    )
    page = browser.get(f"/replay/{replay['id']}/").content.decode()
    assert "bin-packing" in page and replay["candidates"][0]["digest"] in page
    assert page.count('<svg class="chart') >= 5 and "Placed differently: recorded → bin-packing" in page
    assert "Apply this version" in page and "/attempts/" in page
    assert browser.get("/replay/999/").status_code == 404
