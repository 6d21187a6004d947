"""One unit of a sweep as plain data: which trace, which window and segment, which configuration.

`run_spec` is what a worker process runs: it loads the trace (once per process for openb: the
CSVs are read and parsed on the first task and kept), cuts the window and the segment, replays it
under the candidate's configuration and returns the outcome as JSON. It takes and returns plain
values only, so the same call runs in a Celery worker, in a local process pool, or inline.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from scheduler.api.loader import objects_from_documents
from scheduler.config.loader import parse_config
from scheduler.replay.outcome import RunOutcome
from scheduler.replay.run import replay
from scheduler.replay.trace import Trace, openb_trace, trace_from_changes


@lru_cache(maxsize=4)
def _openb(data: str, nodes: int | None, pods: int | None) -> Trace:
    return openb_trace(Path(data), nodes, pods)


def load_trace(spec: Mapping[str, Any]) -> Trace:
    """The whole trace a spec names: `{"source": "openb", "data", "nodes"?, "pods"?}` or
    `{"source": "history", "changes": [...], "base": [documents], "start", "end"}`."""
    source = spec.get("source")
    if source == "openb":
        return _openb(str(spec["data"]), spec.get("nodes"), spec.get("pods"))
    if source == "history":
        base = objects_from_documents(("base", i, doc) for i, doc in enumerate(spec.get("base") or []))
        return trace_from_changes(spec.get("changes") or [], float(spec["start"]), float(spec["end"]), base)
    raise ValueError(f"source: unknown trace source {source!r}; known: openb, history")


def part_trace(spec: Mapping[str, Any]) -> Trace:
    """The window and segment of the trace this part replays."""
    trace = load_trace(spec)
    start = float(spec.get("start", trace.start))
    end = float(spec.get("end", trace.end))
    window = trace.window(start, end) if (start, end) != (trace.start, trace.end) else trace
    segments = int(spec.get("segments", 1))
    return window.segments(segments)[int(spec.get("segment", 0))] if segments > 1 else window


def run_spec(spec: Mapping[str, Any], cancelled: Callable[[], bool] | None = None) -> dict[str, Any]:
    """Replay one part; `{"outcome": RunOutcome JSON, "seconds": wall seconds, "pid": worker
    process}`. A spec's `cancelFile`, when it exists, stops the run (ReplayCancelled)."""
    started = time.perf_counter()
    trace = part_trace(spec)
    config = parse_config(spec["document"], str(spec.get("label") or "candidate"))
    flag = spec.get("cancelFile")
    if cancelled is None and flag:
        cancel_path = Path(str(flag))

        def cancelled() -> bool:
            return cancel_path.exists()

    outcome: RunOutcome = replay(
        trace, config, seed=int(spec.get("seed", 1)), samples=int(spec.get("samples", 48)), cancelled=cancelled
    )
    return {"outcome": outcome.to_json(), "seconds": round(time.perf_counter() - started, 3), "pid": os.getpid()}
