"""A replay as the API answers it and the page shows it: candidates side by side, progress, and the
pods placed differently (the first candidate against each other one, and the recorded run against
each candidate), each with both decisions."""

from __future__ import annotations

from typing import Any

from schedconsole.engine.bridge import replay as bridge_replay
from schedconsole.replay.models import Replay, ReplayCandidate
from schedconsole.replay.services import DIFF_LIMIT, attempt_links


def _iso(value: Any) -> str:
    return str(value.isoformat().replace("+00:00", "Z"))


def candidate_json(candidate: ReplayCandidate) -> dict[str, Any]:
    """One candidate: what it is, its parts' progress, its summary and digest once merged."""
    parts = list(candidate.parts.all())
    return {
        "index": candidate.index,
        "label": candidate.label,
        "version": candidate.version,
        "state": candidate.state,
        "digest": candidate.digest,
        "summary": candidate.summary,
        "parts": {
            "done": sum(1 for p in parts if p.state == "done"),
            "total": len(parts),
            "seconds": round(sum(p.seconds for p in parts), 3),
            "workers": sorted({p.worker for p in parts if p.worker}),
        },
        "document": candidate.document,
    }


def replay_json(replay: Replay, limit: int = DIFF_LIMIT) -> dict[str, Any]:
    """The replay with its candidates and, for merged ones, the pods placed differently."""
    candidates = list(replay.candidates.all())
    differences: list[dict[str, Any]] = []
    done = [c for c in candidates if c.state == "done" and c.outcome is not None]
    if done and done[0].index == 0:
        for other in done[1:]:
            diff = bridge_replay.differences(done[0].outcome or {}, other.outcome or {}, limit)
            differences.append({"a": done[0].label, "b": other.label, **diff})
    if replay.recorded is not None:
        params = replay.params
        recorded = bridge_replay.recorded_outcome(replay.recorded, "history", params["start"], params["end"])
        for candidate in done:
            diff = bridge_replay.differences(recorded, candidate.outcome or {}, limit)
            links = attempt_links([row["pod"] for row in diff["pods"]])
            for row in diff["pods"]:
                row["aAttempt"] = links.get(row["pod"])
            differences.append({"a": "recorded", "b": candidate.label, **diff})
    placed = sum(1 for node in (replay.recorded or {}).values() if node)
    return {
        "id": replay.pk,
        "state": replay.state,
        "created": _iso(replay.created),
        "user": replay.user,
        "params": replay.params,
        "job": replay.job_id,
        "url": f"/api/replays/{replay.pk}/",
        "page": f"/replay/{replay.pk}/",
        "recorded": {"pods": len(replay.recorded), "placed": placed} if replay.recorded is not None else None,
        "candidates": [candidate_json(c) for c in candidates],
        "differences": differences,
    }


def replay_row(replay: Replay) -> dict[str, Any]:
    """A replay in a list: no outcomes."""
    candidates = list(replay.candidates.all())
    return {
        "id": replay.pk,
        "state": replay.state,
        "created": _iso(replay.created),
        "user": replay.user,
        "source": replay.params.get("source", ""),
        "job": replay.job_id,
        "page": f"/replay/{replay.pk}/",
        "candidates": [{"label": c.label, "state": c.state, "digest": c.digest} for c in candidates],
    }
