"""Filter over the snapshot (kube-scheduler's findNodesThatPassFilters): a walk of the candidate rows
in evaluation order until enough are feasible, batch filters on chunks and per-node filters on the
nodes upstream's walk would visit, and its outcome: the feasible rows and every failure, whose
reasons are built only when asked for."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from scheduler.api.objects import Pod
from scheduler.framework.nodeinfo import NodeInfo
from scheduler.framework.snapshot import Snapshot
from scheduler.framework.types import (
    Code,
    CycleState,
    Status,
    error,
)


@dataclass(slots=True)
class FilterOutcome:
    """What Filter found: the feasible rows (in evaluation order) and every explicit failure."""

    feasible: npt.NDArray[np.int64]
    processed: int
    failed_positions: npt.NDArray[np.int64]
    failed_codes: npt.NDArray[np.int8]
    plugin_names: list[str]
    """The Filter plugins that ran, indexed by `failed_plugin_index`."""
    failed_plugin_index: npt.NDArray[np.int64]
    """Per failure, its first failing plugin's index in `plugin_names` (-1: see `plugin_overrides`)."""
    reasons_of: Callable[[int], tuple[str, ...]]
    error: Status | None = None
    bulk_reasons: Callable[[], list[tuple[str, ...]]] | None = None
    plugin_overrides: dict[int, str] = field(default_factory=dict)
    """Failures judged one by one (nominated pods, hooks): failure index -> the failing plugin."""
    counts: Callable[[], dict[str, int]] | None = None
    _reasons: list[tuple[str, ...]] | None = None
    _failed_plugins: list[str] | None = None

    @property
    def failed_plugins(self) -> list[str]:
        """Per failure, the plugin that failed it (built on first use)."""
        if self._failed_plugins is None:
            names = self.plugin_names
            out = [names[k] if k >= 0 else "" for k in self.failed_plugin_index.tolist()]
            for j, plugin in self.plugin_overrides.items():
                out[j] = plugin
            self._failed_plugins = out
        return self._failed_plugins

    def rejectors(self) -> set[str]:
        """The distinct plugins that failed some node."""
        found = {self.plugin_names[int(k)] for k in np.unique(self.failed_plugin_index).tolist() if k >= 0}
        found.update(self.plugin_overrides.values())
        return found

    def reason_counts(self) -> dict[str, int]:
        """How many failed nodes gave each reason (the FailedScheduling histogram)."""
        if self.counts is not None and self._reasons is None:
            return self.counts()
        out: dict[str, int] = {}
        for node_reasons in self.all_reasons():
            for reason in node_reasons:
                out[reason] = out.get(reason, 0) + 1
        return out

    def all_reasons(self) -> list[tuple[str, ...]]:
        """Reasons of every failure, aligned with failed_positions (computed once)."""
        if self._reasons is None:
            if self.bulk_reasons is not None:
                self._reasons = self.bulk_reasons()
            else:
                self._reasons = [self.reasons_of(i) for i in range(len(self.failed_positions))]
        return self._reasons

    def statuses(self, snapshot: Snapshot) -> dict[str, Status]:
        """Per failed node, its first failing plugin's status (built on demand)."""
        reasons = self.all_reasons()
        plugins = self.failed_plugins
        return {
            snapshot.names[int(pos)]: Status(Code(int(self.failed_codes[i])), reasons[i], plugins[i])
            for i, pos in enumerate(self.failed_positions)
        }


def key_groups(keys: npt.NDArray[np.int64], entries: npt.NDArray[np.int64]) -> list[tuple[int, int]]:
    """(one entry, how many entries) per distinct key; equal keys promise equal reasons, so any
    entry of a key stands for all of them."""
    if len(keys) and int(keys.min()) >= 0 and int(keys.max()) < 4096:
        # Small keys (bits of a few reasons): counted by bincount, no sort.
        num = np.bincount(keys)
        some = np.empty(len(num), dtype=np.int64)
        some[keys] = entries
        present = np.flatnonzero(num)
        return list(zip(some[present].tolist(), num[present].tolist(), strict=True))
    _, first, count = np.unique(keys, return_index=True, return_counts=True)
    return [(int(entries[f]), int(c)) for f, c in zip(first.tolist(), count.tolist(), strict=True)]


def _chunks(count: int, first: int) -> Iterator[tuple[int, int]]:
    """[lo, hi) bounds covering range(count): `first` long, then doubling."""
    lo, size = 0, max(1, first)
    while lo < count:
        hi = min(count, lo + size)
        yield lo, hi
        lo, size = hi, size * 2


def took(timing: dict[str, dict[str, float]], plugin: str, point: str, started: float) -> None:
    """Add the seconds since `started` to the plugin's time at the extension point."""
    per = timing.get(plugin)
    if per is None:
        per = timing[plugin] = {}
    per[point] = per.get(point, 0.0) + time.perf_counter() - started


def guard(call: Callable[..., Status], *args: Any) -> Status:
    """Run a plugin method; an exception or a non-Status answer becomes an Error status."""
    try:
        status = call(*args)
    except Exception as exc:
        return error(exc)
    if not isinstance(status, Status):
        return error(f"plugin returned {status!r} instead of a Status")
    return status


def quoted(name: str) -> str:
    """A name as Go's `%q` prints it: upstream's plugin errors quote the plugin's name so."""
    return json.dumps(name, ensure_ascii=False)


class FilterFailed(Exception):
    """A Filter plugin (or FilterPhaseHook) that errored: the walk stops and the cycle ends with an
    Error. `wrapped`: the message names the plugin already (a per-node status of
    `run_filter_plugins`)."""

    def __init__(self, plugin: str, exc: BaseException, wrapped: bool = False) -> None:
        super().__init__(plugin)
        self.plugin = plugin
        self.exc = exc
        self.wrapped = wrapped


class FeasibleWalk:
    """One Filter pass over `candidates` (rows, in evaluation order) until `num_to_find` are feasible.

    Batch filters judge a chunk of candidates at once; per-node filters run only on the nodes
    kube-scheduler would have visited, in order, so the feasible set, the visited count and each
    failure's first failing plugin match a sequential walk exactly. Rows in `override_positions`
    are judged by `per_node_override` instead (nominated pods); so are `hooked` rows (a
    FilterPhaseHook changed their NodeInfo), through `per_node_override` or `hooked_filter`.
    Chunks are walked in order: the first holds a little more than the nodes wanted (`first`),
    each later one doubles, so a large cluster stops early once enough nodes are feasible; the
    chunking changes no verdict, only the work. A plugin error raises `FilterFailed`.
    """

    def __init__(
        self,
        entries: list[Any],
        snapshot: Snapshot,
        state: CycleState,
        pod: Pod,
        candidates: npt.NDArray[np.int64],
        num_to_find: int,
        per_node_override: Callable[[int], Status] | None,
        override_positions: frozenset[int],
        hooked: frozenset[int],
        hooked_filter: Callable[[CycleState, Pod, NodeInfo], Status],
    ) -> None:
        self.entries = entries
        self.snapshot = snapshot
        self.state = state
        self.pod = pod
        self.candidates = candidates
        self.num_to_find = num_to_find
        self.per_node_override = per_node_override
        self.override_positions = override_positions
        self.hooked = hooked
        self.hooked_filter = hooked_filter
        count = len(candidates)
        self.sentinel = len(entries)
        self.fail_at = np.full(count, self.sentinel, dtype=np.int64)
        self.codes = np.zeros(count, dtype=np.int8)
        # Per plugin, the (candidate indexes judged, result) of each chunk, for reasons later.
        self.batch_results: dict[int, list[tuple[npt.NDArray[np.int64], Any]]] = {}
        self.per_node = [k for k, e in enumerate(entries) if not e.batch]
        self.per_node_status: dict[int, Status] = {}
        self.found: list[npt.NDArray[np.int64]] = []
        self.found_count = 0
        self.processed = count

    def run(self, first: int) -> None:
        """Walk the chunks until enough nodes are feasible or every candidate was judged."""
        for lo, hi in _chunks(len(self.candidates), first):
            alive = self._batch_filters(lo, hi)
            if not self.per_node and not self.override_positions and not self.hooked:
                done = self._take(alive)
            elif not self.per_node and not self.hooked and self.per_node_override is not None:
                done = self._take(self._judge_overrides(lo, hi))
            else:
                done = self._walk_per_node(lo, hi)
            if done:
                return

    def _batch_filters(self, lo: int, hi: int) -> npt.NDArray[np.int64]:
        """Every batch Filter on the chunk's rows still alive; returns those that passed them all."""
        alive = np.arange(lo, hi, dtype=np.int64)
        state, pod, snapshot, candidates = self.state, self.pod, self.snapshot, self.candidates
        timing = state.plugin_timings
        for k, entry in enumerate(self.entries):
            if not entry.batch or alive.size == 0:
                continue
            t = time.perf_counter() if timing is not None else 0.0
            try:
                res = entry.plugin.filter_batch(state, pod, snapshot, candidates[alive])
            except Exception as exc:
                raise FilterFailed(entry.name, exc) from exc
            if timing is not None:
                took(timing, entry.name, "Filter", t)
            if res.passed:
                continue
            bad = res.codes != 0
            if bad.any():
                if (res.codes == int(Code.ERROR)).any():
                    idx = int(np.flatnonzero(res.codes == int(Code.ERROR))[0])
                    raise FilterFailed(entry.name, RuntimeError(", ".join(res.reasons(idx))))
                hit = alive[bad]
                self.fail_at[hit] = k
                self.codes[hit] = res.codes[bad]
                self.batch_results.setdefault(k, []).append((alive, res))
                alive = alive[~bad]
        return alive

    def _take(self, feasible_here: npt.NDArray[np.int64]) -> bool:
        """Count a chunk's feasible rows (in order), up to the number still wanted; True when enough."""
        need = self.num_to_find - self.found_count
        if feasible_here.size >= need:
            self.found.append(feasible_here[:need])
            self.found_count += need
            self.processed = int(feasible_here[need - 1]) + 1
            return True
        self.found.append(feasible_here)
        self.found_count += feasible_here.size
        return False

    def _judge_one(self, i: int, status: Status) -> bool:
        """Record row i's per-node verdict; True when feasible."""
        if status.code == Code.ERROR:
            raise FilterFailed(status.plugin or "Filter", status.error or RuntimeError(status.message), wrapped=True)
        if status.success:
            self.fail_at[i] = self.sentinel
            self.codes[i] = 0
            return True
        self.fail_at[i] = -1
        self.codes[i] = int(status.code)
        self.per_node_status[i] = status
        return False

    def _judge_overrides(self, lo: int, hi: int) -> npt.NDArray[np.int64]:
        """Every filter has a batch form and only nominated pods' rows need a per-node verdict:
        judge those in order, each only while the rows before it have not already given enough
        feasible nodes, and take the rest from the batch verdicts. Returns the chunk's feasible rows."""
        assert self.per_node_override is not None
        ok = self.fail_at[lo:hi] == self.sentinel
        chunk_over = np.flatnonzero(np.isin(self.candidates[lo:hi], np.fromiter(self.override_positions, dtype=np.int64)))
        ok[chunk_over] = False
        for rel in chunk_over.tolist():
            if self.found_count + int(np.count_nonzero(ok[:rel])) >= self.num_to_find:
                break
            i = lo + rel
            if self._judge_one(i, self.per_node_override(int(self.candidates[i]))):
                ok[rel] = True
        feasible: npt.NDArray[np.int64] = np.flatnonzero(ok) + lo
        return feasible

    def _walk_per_node(self, lo: int, hi: int) -> bool:
        """The chunk's rows one by one, as upstream's walk: overridden and hooked rows through their
        own filter, the others through the per-node filters before their first batch failure.
        True when enough nodes are feasible."""
        state, pod, candidates, fail_at = self.state, self.pod, self.candidates, self.fail_at
        infos = self.snapshot.node_infos
        timing = state.plugin_timings
        override, override_positions, hooked = self.per_node_override, self.override_positions, self.hooked
        entries, per_node, sentinel = self.entries, self.per_node, self.sentinel
        walked: list[int] = []
        stop = False
        for i in range(lo, hi):
            pos = int(candidates[i])
            if (pos in override_positions and override is not None) or (hooked and pos in hooked):
                # The override (Filter with nominated pods) runs the hooks via run_hooked_filter.
                status = override(pos) if override is not None else self.hooked_filter(state, pod, infos[pos])
                if self._judge_one(i, status):
                    walked.append(i)
            else:
                limit = int(fail_at[i])
                for k in per_node:
                    if k >= limit:
                        break
                    entry = entries[k]
                    t = time.perf_counter() if timing is not None else 0.0
                    status = guard(entry.plugin.filter, state, pod, infos[pos])
                    if timing is not None:
                        took(timing, entry.name, "Filter", t)
                    if status.code == Code.ERROR:
                        raise FilterFailed(entry.name, status.error or RuntimeError(status.message))
                    if not status.success:
                        fail_at[i] = k
                        self.codes[i] = int(status.code)
                        self.per_node_status[i] = status.with_plugin(entry.name)
                        break
                if fail_at[i] == sentinel:
                    walked.append(i)
            if self.found_count + len(walked) >= self.num_to_find:
                self.processed = i + 1
                stop = True
                break
        self.found.append(np.asarray(walked, dtype=np.int64))
        self.found_count += len(walked)
        return stop

    def outcome(self) -> FilterOutcome:
        """The walk's verdicts as a FilterOutcome; failure reasons are built only when asked for."""
        candidates = self.candidates
        feasible_idx = np.concatenate(self.found) if self.found else np.zeros(0, dtype=np.int64)
        failed_idx = np.flatnonzero(self.fail_at[: self.processed] != self.sentinel)
        reasons = _FailureReasons(self.fail_at, failed_idx, self.batch_results, self.per_node_status)
        return FilterOutcome(
            feasible=candidates[feasible_idx],
            processed=self.processed,
            failed_positions=candidates[failed_idx],
            failed_codes=self.codes[failed_idx],
            plugin_names=[e.name for e in self.entries],
            failed_plugin_index=self.fail_at[failed_idx],
            reasons_of=reasons.reasons_of,
            bulk_reasons=reasons.bulk_reasons,
            plugin_overrides=reasons.overrides,
            counts=reasons.counts,
        )


class _FailureReasons:
    """The reasons of a walk's failures, from the batch results and per-node statuses it kept."""

    def __init__(
        self,
        fail_at: npt.NDArray[np.int64],
        failed_idx: npt.NDArray[np.int64],
        batch_results: dict[int, list[tuple[npt.NDArray[np.int64], Any]]],
        per_node_status: dict[int, Status],
    ) -> None:
        self.fail_at = fail_at
        self.failed_idx = failed_idx
        self.batch_results = batch_results
        self.per_node_status = per_node_status
        # Failures judged one by one: their index among the failures, and the plugin that failed them.
        self.overrides: dict[int, str] = {}
        self.per_node_j: list[int] = []
        if per_node_status:
            for j, i in enumerate(failed_idx.tolist()):
                st = per_node_status.get(i)
                if st is not None:
                    self.per_node_j.append(j)
                    self.overrides[j] = st.plugin

    def reasons_of(self, j: int) -> tuple[str, ...]:
        """The reasons of failure j."""
        i = int(self.failed_idx[j])
        if i in self.per_node_status:
            return self.per_node_status[i].reasons
        for judged, res in self.batch_results[int(self.fail_at[i])]:
            at = int(np.searchsorted(judged, i))
            if at < len(judged) and int(judged[at]) == i:
                return tuple(res.reasons(at))
        return ()

    def bulk_reasons(self) -> list[tuple[str, ...]]:
        """The reasons of every failure, one reasons() call per distinct key of each batch chunk."""
        failed_idx, per_node_status = self.failed_idx, self.per_node_status
        out: list[tuple[str, ...]] = [()] * len(failed_idx)
        failed_at = self.fail_at[failed_idx]
        for k, judged_chunks in self.batch_results.items():
            mine = np.flatnonzero(failed_at == k)
            for judged, res in judged_chunks:
                at = np.searchsorted(judged, failed_idx[mine])
                inside = at < len(judged)
                hit = np.zeros(len(mine), dtype=np.bool_)
                hit[inside] = judged[at[inside]] == failed_idx[mine[inside]]
                seen: dict[int, tuple[str, ...]] = {}
                keys = res.keys
                for j, a in zip(mine[hit].tolist(), at[hit].tolist(), strict=True):
                    if keys is None:
                        out[j] = tuple(res.reasons(a))
                        continue
                    key = int(keys[a])
                    if key not in seen:
                        seen[key] = tuple(res.reasons(a))
                    out[j] = seen[key]
        for j, i in enumerate(failed_idx.tolist()):
            if i in per_node_status:
                out[j] = per_node_status[i].reasons
        return out

    def counts(self) -> dict[str, int]:
        """How many failures gave each reason; per batch chunk, failures grouped by reason key."""
        failed_idx = self.failed_idx
        out: dict[str, int] = {}
        failed_at = self.fail_at[failed_idx]
        done = np.zeros(len(failed_idx), dtype=np.bool_)
        for j in self.per_node_j:
            done[j] = True
        for k, judged_chunks in self.batch_results.items():
            mine = np.flatnonzero((failed_at == k) & ~done)
            for judged, res in judged_chunks:
                if mine.size == 0:
                    break
                at = np.searchsorted(judged, failed_idx[mine])
                inside = at < len(judged)
                hit = np.zeros(len(mine), dtype=np.bool_)
                hit[inside] = judged[at[inside]] == failed_idx[mine[inside]]
                ats = at[hit]
                groups = [(int(a), 1) for a in ats.tolist()] if res.keys is None else key_groups(res.keys[ats], ats)
                for a, c in groups:
                    for reason in res.reasons(a):
                        out[reason] = out.get(reason, 0) + c
                mine = mine[~hit]
        for j in self.per_node_j:
            for reason in self.per_node_status[int(failed_idx[j])].reasons:
                out[reason] = out.get(reason, 0) + 1
        return out
