"""Replays for the console: parts run inline (a Celery worker) or on a local process pool
(embedded), candidates checked and expanded from grids, outcomes merged, summarised and compared.

The scratch engine of a part never touches the hosted one: `scheduler.replay.spec.run_spec` builds
its own cluster, clock and scheduler from the part's spec (plain JSON) and returns its outcome.
"""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any

from schedconsole.engine.bridge.common import BadInput
from schedconsole.engine.bridge.documents import check_config
from scheduler.replay import (
    GridError,
    ReplayCancelled,
    RunOutcome,
    TraceInputError,
    digest,
    expand_grid,
    merge,
    placement_diff,
    summary,
)
from scheduler.replay.spec import run_spec

Cancelled = ReplayCancelled


def run_part(spec: Mapping[str, Any], cancelled: Callable[[], bool] | None = None) -> dict[str, Any]:
    """One part in this process (a task worker): see `scheduler.replay.spec.run_spec`. Bad input
    (a trace row, a configuration) becomes BadInput naming it."""
    try:
        return run_spec(spec, cancelled)
    except (TraceInputError, ValueError) as exc:
        raise BadInput("source", str(exc)) from exc


class LocalPool:
    """Embedded: parts on a pool of worker processes of this machine (spawned, so they share no
    thread or lock with the console; each loads its trace once and keeps it)."""

    def __init__(self) -> None:
        self._pool: ProcessPoolExecutor | None = None
        self._size = 0
        self._lock = threading.Lock()

    def submit(self, spec: Mapping[str, Any], workers: int) -> Future[dict[str, Any]]:
        """Queue one part; the future holds `run_spec`'s answer."""
        with self._lock:
            if self._pool is None or self._size != workers:
                if self._pool is not None:
                    self._pool.shutdown(wait=False)
                self._pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"))
                self._size = workers
            return self._pool.submit(run_spec, dict(spec))

    def shutdown(self) -> None:
        """Stop the workers (queued parts are dropped)."""
        with self._lock:
            if self._pool is not None:
                self._pool.shutdown(wait=False, cancel_futures=True)
                self._pool = None


local_pool = LocalPool()


def check_candidate(document: Any, field: str) -> None:
    """A candidate's configuration must be valid (kube-scheduler's wording, via the engine's check)."""
    try:
        check_config(document)
    except BadInput as exc:
        raise BadInput(field, exc.message) from exc


def grid_candidates(base: Mapping[str, Any], grid: Mapping[str, Sequence[Any]]) -> list[tuple[str, dict[str, Any]]]:
    """Every combination of a grid applied to a base configuration, each checked."""
    try:
        found = expand_grid(base, grid)
    except GridError as exc:
        raise BadInput("grid", str(exc)) from exc
    for i, (_, doc) in enumerate(found):
        check_candidate(doc, f"grid[{i}]")
    return found


def merged(parts: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A candidate's parts (outcome JSON, in segment order) as one outcome, with its summary and digest."""
    outcome = merge([RunOutcome.from_json(dict(p)) for p in parts])
    return {"outcome": outcome.to_json(), "summary": summary(outcome), "digest": digest(outcome)}


def differences(a: Mapping[str, Any], b: Mapping[str, Any], limit: int = 100) -> dict[str, Any]:
    """Pods two merged outcomes placed differently: how many and the first `limit` with both decisions."""
    count, rows = placement_diff(RunOutcome.from_json(dict(a)), RunOutcome.from_json(dict(b)), limit)
    return {"count": count, "pods": rows}


def recorded_outcome(placements: Mapping[str, str], source: str, start: float, end: float) -> dict[str, Any]:
    """The recorded run as an outcome holding only where each pod went (for the comparison)."""
    outcome = RunOutcome(source, start, end, placements=dict(placements))
    outcome.arrived = len(placements)
    outcome.placed = sum(1 for n in placements.values() if n)
    return outcome.to_json()


def samples_of(outcome: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The outcome's samples (time series for the charts)."""
    return list(outcome.get("samples") or [])
