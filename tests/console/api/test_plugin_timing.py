"""`/api/plugin-timing/` and the live message's `pluginTimings` (each plugin's milliseconds beside its score)."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async

from schedconsole.engine import operations as ops
from tests.console.conftest import SMALL_CLUSTER, TWO_PROFILES, pod
from tests.console.live.test_live import ORIGIN, _connect, _session_cookie


def test_get_and_set_the_sampling(engine, api, viewer_api) -> None:
    assert api.get("/api/plugin-timing/").json() == {"every": 10}  # SCHEDCONSOLE_PLUGIN_TIMING_EVERY's default
    assert api.put("/api/plugin-timing/", {"every": 1}, format="json").json() == {"every": 1}
    assert api.get("/api/plugin-timing/").json() == {"every": 1}
    bad = api.put("/api/plugin-timing/", {"every": -2}, format="json")
    assert bad.status_code == 400 and "-2" in bad.json()["every"][0]
    assert api.put("/api/plugin-timing/", {}, format="json").status_code == 400
    assert viewer_api.put("/api/plugin-timing/", {"every": 0}, format="json").status_code == 403
    assert api.get("/api/audit/").json()["results"][0]["action"] == "plugin-timing.set"


@pytest.mark.django_db(transaction=True)
async def test_a_timed_attempt_streams_each_plugins_milliseconds(start_engine) -> None:
    host = await sync_to_async(start_engine)(SMALL_CLUSTER, TWO_PROFILES, live=True)
    run = sync_to_async(host.call, thread_sensitive=False)
    assert await run(ops.PluginTiming(every=1)) == {"every": 1}
    cookie = await sync_to_async(_session_cookie)()
    ws, connected = await _connect([ORIGIN, (b"cookie", cookie)])
    assert connected and (await ws.receive_json_from(timeout=5))["type"] == "hello"
    await run(ops.Create(documents=[pod("timed")], source="t"))
    message = await ws.receive_json_from(timeout=5)
    assert message["pod"] == "default/timed" and message["outcome"] == "Scheduled"
    fit = message["pluginTimings"]["NodeResourcesFit"]
    assert {"Filter", "Score"} <= set(fit) and all(ms >= 0 for ms in fit.values())
    assert set(message["scores"][0]["plugins"]) <= set(message["pluginTimings"])  # a time beside every score
    await ws.disconnect()
