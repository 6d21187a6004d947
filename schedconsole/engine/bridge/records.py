"""Attempt records as the console keeps and shows them: the history's row, the live view's part
and its websocket message."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from schedconsole.history.compact import group_failures
from scheduler.frameworkext.publisher import attempt_message
from scheduler.records import AttemptRecord, record_head

Record = AttemptRecord


# ----- records ----------------------------------------------------------------------------------
def record_row(record: AttemptRecord, score_nodes: int, filter_nodes: int) -> dict[str, Any]:
    """An attempt as the history stores it: the attempt record (docs/architecture.md, "The attempt record"), with the scores as a compact table
    (`scoreTable`: the plugins, their weights, then one row `[node, weighted total, [normalized score per plugin]]`
    for each of the `score_nodes` highest totals) and the filter failures of up to `filter_nodes`
    nodes as `filterGroups` (`history.compact`: one group per plugin, code and reasons, its nodes as
    name ranges) instead of the record's per-node `filter`, which `attempt_json` rebuilds."""
    fo = record.filter_outcome
    if record.pre_filter_statuses or (fo is not None and len(fo.failed_positions)):
        groups, dropped = group_failures(record.failure_rows(), filter_nodes)
    else:  # every node passed (most attempts): nothing to group
        groups, dropped = [], 0
    entry: dict[str, Any] = {
        **record_head(record),
        "filterGroups": groups,
        "uid": record.uid,
        "at": record.at,
        "feasibleNodes": record.feasible_nodes,
        "numAllNodes": record.num_all_nodes,
        "timings": record.timings,
    }
    if dropped:
        entry["filterTruncated"] = dropped
    so = record.score_outcome
    entry["scoredNodes"] = len(so.positions) if so is not None and so.plugins else 0
    if so is not None and so.plugins and score_nodes > 0:
        cols = so.order()[:score_nodes]  # the top-N log sorted them already
        names = record.names
        rows = [
            [names[pos], total, scores]
            for pos, total, scores in zip(
                so.positions[cols].tolist(), so.totals[cols].tolist(), so.matrix[:, cols].T.tolist(), strict=True
            )
        ]
        entry["scoreTable"] = {"plugins": list(so.plugins), "weights": [int(w) for w in so.weights], "rows": rows}
    return entry


def score_table(entry: dict[str, Any]) -> tuple[dict[str, dict[str, int]], dict[str, int]]:
    """`scores` and `totals` (the attempt record's shapes) from a stored entry's score table."""
    table = entry.get("scoreTable") or {"plugins": [], "rows": []}
    plugins = table["plugins"]
    scores = {node: dict(zip(plugins, values, strict=True)) for node, _, values in table["rows"]}
    totals = {node: total for node, total, _ in table["rows"]}
    return scores, totals


@dataclass(slots=True, eq=False)
class LiveRecord:
    """What the live view sends of an attempt, without the attempt's per-node arrays. Websocket
    clients' buffers hold hundreds of attempts at a time; holding the full records (their score and
    filter arrays) made the engine itself slower: keeping the last 300 cost it 5-13% per pod, in
    memory it could no longer reuse while warm."""

    at: float
    pod: str
    profile: str
    outcome: str
    node: str | None
    feasible_nodes: int
    timings: dict[str, float]
    plugin_timings: dict[str, dict[str, float]] | None
    # The top-N rows (N = debugTopNScores): as `attempt_message` sends them when `weighting` is None,
    # else the history row's `[node, total, values]` with (plugins, weights) to build them from.
    # Built when sent: with many clients most attempts are coalesced away, and this runs on the
    # engine's thread.
    rows: list[Any]
    weighting: tuple[list[str], Any] | None
    filter: dict[str, dict[str, Any]] | None  # every node's failure, when debugFilterFailure was on

    @property
    def debug_filter_failure(self) -> bool:
        """Whether debugFilterFailure was on for the attempt."""
        return self.filter is not None

    def debug_rows(self) -> list[dict[str, Any]]:
        """The top-N rows."""
        if self.weighting is None:
            return self.rows
        plugins, weights = self.weighting
        return [
            {"node": node, "total": total, "plugins": {p: v * w for p, v, w in zip(plugins, values, weights, strict=True)}}
            for node, total, values in self.rows
        ]

    def filter_failures(self) -> dict[str, dict[str, Any]]:
        """Every node's failure (debugFilterFailure), else nothing."""
        return self.filter or {}


def live_record(record: AttemptRecord, row: dict[str, Any] | None = None) -> LiveRecord:
    """The live view's part of a record. The top-N rows come from the history row's score table
    (`record_row`, the same columns in the same order) when it holds enough of them, else from the
    record's arrays."""
    n = record.debug_top_n
    rows: list[Any] = []
    weighting = None
    so = record.score_outcome
    if n > 0 and so is not None and so.plugins:
        table = row.get("scoreTable") if row is not None else None
        if table is not None and len(table["rows"]) >= min(n, len(so.positions)):
            rows, weighting = table["rows"][:n], (table["plugins"], so.weights)
        else:
            rows = record.debug_rows()
    failures = record.filter_failures() if record.debug_filter_failure else None
    return LiveRecord(
        record.at,
        record.pod,
        record.profile,
        record.outcome,
        record.node,
        record.feasible_nodes,
        record.timings,
        record.plugin_timings,
        rows,
        weighting,
        failures,
    )


def live_message(record: AttemptRecord | LiveRecord) -> dict[str, Any]:
    """The websocket message of one attempt (docs/architecture.md, "The live message"), with the milliseconds each
    extension point took (`timings`) for the live page's latency column, and in attempts timed per
    plugin (every `Engine.plugin_timing_every`th) each plugin's per extension point (`pluginTimings`)."""
    message = attempt_message(record)
    message["timings"] = {point: round(seconds * 1000, 3) for point, seconds in record.timings.items()}
    if record.plugin_timings:  # a sampled attempt: milliseconds per plugin and extension point
        message["pluginTimings"] = {
            plugin: {point: round(seconds * 1000, 3) for point, seconds in points.items()}
            for plugin, points in record.plugin_timings.items()
        }
    return message


def record_key(record: AttemptRecord) -> tuple[str, int, float]:
    """A record's identity across its first publication and later updates."""
    return (record.uid, record.attempt, record.at)
