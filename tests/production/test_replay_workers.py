"""Replay on the production wiring: the openb trace (a slice) under the default profile and under
MostAllocated bin-packing, each cut into two segments, on two real `celery worker` processes (queue
replay) over real Redis and PostgreSQL; both workers take parts, and each candidate's digest equals
the one the embedded path (a local process pool) gives for the same replay."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.stack import Stack
from tests.support.traces import MOST_ALLOCATED, OPENB_SLICE, need_openb
from tests.support.waits import wait_for

pytestmark = pytest.mark.production

CANDIDATES = [("default", "default"), ("bin-packing", MOST_ALLOCATED)]
SEGMENTS, SAMPLES = 2, 12


def embedded_digest(document: Any, label: str, data: str) -> str:
    """The same replay's parts on this process's local pool (the embedded path), merged."""
    from schedconsole.engine.bridge import default_config_document
    from schedconsole.engine.bridge import replay as bridge_replay

    doc = default_config_document() if document == "default" else document
    specs = [
        {
            "source": "openb",
            "data": data,
            **OPENB_SLICE,
            "segments": SEGMENTS,
            "segment": s,
            "seed": 1,
            "samples": SAMPLES,
            "document": doc,
            "label": label,
        }
        for s in range(SEGMENTS)
    ]
    futures = [bridge_replay.local_pool.submit(spec, 2) for spec in specs]
    return str(bridge_replay.merged([f.result(timeout=120)["outcome"] for f in futures])["digest"])


def test_openb_side_by_side_on_two_workers_equals_embedded(stack: Stack) -> None:
    data = str(need_openb())
    stack.env["SCHEDCONSOLE_REPLAY_OPENB_DATA"] = data
    stack.start("web")
    stack.start("replay-1")
    stack.start("replay-2")
    body = {
        "source": "openb",
        **OPENB_SLICE,
        "candidates": [{"document": doc, "label": label} for label, doc in CANDIDATES],
        "segments": SEGMENTS,
        "samples": SAMPLES,
    }
    status, started = stack.http("POST", "/api/replays/", body)
    assert status == 202, started

    def ended() -> dict[str, Any] | None:
        answer = stack.http("GET", started["url"])[1]
        return answer if answer["state"] in ("done", "failed", "cancelled") else None

    replay = wait_for(ended, 180, 0.5, what="the replay on two workers")
    assert replay["state"] == "done", (replay, stack.logs())
    spread, packed = replay["candidates"]
    workers = {w.split()[0] for c in replay["candidates"] for w in c["parts"]["workers"]}
    assert workers == {"replay-1@localhost", "replay-2@localhost"}, workers
    # Side by side: the same arrivals, every pod placed by both; bin-packing fills fewer nodes.
    assert spread["summary"]["pods"] == packed["summary"]["pods"] == OPENB_SLICE["pods"]
    assert packed["summary"]["nodesUsed"]["peak"] < spread["summary"]["nodesUsed"]["peak"]
    assert replay["differences"][0]["count"] > 0
    for candidate, (label, doc) in zip(replay["candidates"], CANDIDATES, strict=True):
        assert candidate["digest"] == embedded_digest(doc, label, data), label
    job = stack.http("GET", f"/api/jobs/{replay['job']}/")[1]
    assert (job["state"], job["done"], job["total"]) == ("done", 4, 4)
