"""Attempt records: one per scheduling attempt, keeping arrays until an output asks for dicts."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from scheduler.framework.feasible import FilterOutcome
from scheduler.framework.runtime import ScoreOutcome
from scheduler.options import UsageError


@dataclass(slots=True, eq=False)
class AttemptRecord:
    """What one scheduling attempt did and why."""

    at: float
    pod: str
    uid: str
    profile: str
    attempt: int
    outcome: str
    node: str | None = None
    nominated_node: str | None = None
    victims: list[str] = field(default_factory=list)
    message: str = ""
    num_all_nodes: int = 0
    feasible_nodes: int = 0
    evaluated_nodes: int = 0
    timings: dict[str, float] = field(default_factory=dict)
    names: list[str] = field(default_factory=list)
    filter_outcome: FilterOutcome | None = None
    score_outcome: ScoreOutcome | None = None
    pre_filter_statuses: dict[str, Any] | None = None
    # The reason given to nodes a PreFilter result left out of Filter ("" when none were).
    absent_reason: str = ""
    # The node OpportunisticBatching offered from the previous pod's list ("" when none): taken,
    # it was filtered alone and not scored.
    node_hint: str = ""
    # Set when debugFilterFailure was on for this attempt: outputs include every node's failure.
    debug_filter_failure: bool = False
    # Seconds per plugin and extension point, when the attempt was timed per plugin (sampled).
    plugin_timings: dict[str, dict[str, float]] | None = None

    def filter_failures(self) -> dict[str, dict[str, Any]]:
        """Every node that failed a filter: its first failing plugin, code and reasons."""
        out: dict[str, dict[str, Any]] = {}
        if self.pre_filter_statuses:
            out.update(self.pre_filter_statuses)
        fo = self.filter_outcome
        if fo is None:
            return out
        reasons = fo.all_reasons()
        names = self.names
        for i, (pos, code) in enumerate(zip(fo.failed_positions.tolist(), fo.failed_codes.tolist(), strict=True)):
            out[names[pos]] = {
                "plugin": fo.failed_plugins[i],
                "code": _CODE_NAMES.get(code, str(code)),
                "reasons": list(reasons[i]),
            }
        return out

    def failure_rows(self) -> Iterator[tuple[str, str, str, tuple[str, ...]]]:
        """(node, first failing plugin, code, reasons) of every node that failed a filter, as
        `filter_failures` holds them but without building a dict per node."""
        if self.pre_filter_statuses:
            yield from ((n, f["plugin"], f["code"], tuple(f["reasons"])) for n, f in self.filter_failures().items())
            return
        fo = self.filter_outcome
        if fo is None:
            return
        names = self.names
        codes = [_CODE_NAMES.get(c, str(c)) for c in range(7)]
        for pos, code, plugin, reasons in zip(
            fo.failed_positions.tolist(), fo.failed_codes.tolist(), fo.failed_plugins, fo.all_reasons(), strict=True
        ):
            yield names[pos], plugin, codes[code] if 0 <= code < 7 else str(code), tuple(reasons)

    def scores(self, top: int | None = None) -> dict[str, dict[str, int]]:
        """Normalized score per node and plugin (before weights), optionally the top-N nodes only."""
        so = self.score_outcome
        if so is None or not so.plugins:
            return {}
        cols = self._columns(top)
        return {self.names[int(so.positions[j])]: {p: int(so.matrix[r, j]) for r, p in enumerate(so.plugins)} for j in cols}

    def totals(self, top: int | None = None) -> dict[str, int]:
        """Weighted total per node, optionally the top-N nodes only."""
        so = self.score_outcome
        if so is None or not so.plugins:
            return {}
        return {self.names[int(so.positions[j])]: int(so.totals[j]) for j in self._columns(top)}

    def _columns(self, top: int | None) -> list[int]:
        so = self.score_outcome
        assert so is not None
        if top is None:
            return list(range(len(so.positions)))
        # Highest total first; ties keep evaluation order, as a stable sort does.
        return so.top_columns(top)

    def top_rows(self, n: int) -> list[dict[str, Any]]:
        """The top-N rows of weighted per-plugin scores, sorted by total descending."""
        so = self.score_outcome
        if so is None:
            return []
        return so.top_rows(self.names, n)

    @property
    def debug_top_n(self) -> int:
        """debugTopNScores when this attempt was scored (0: off, or no Score ran)."""
        so = self.score_outcome
        return so.debug_top_n if so is not None else 0

    def debug_rows(self) -> list[dict[str, Any]]:
        """The top-N rows for N = debugTopNScores at the time of the attempt (none when 0)."""
        return self.top_rows(self.debug_top_n)


@dataclass(slots=True)
class ScoresSpec:
    """How much of scores/totals to print: all, none or the top N nodes."""

    mode: str
    top: int = 0

    @classmethod
    def parse(cls, text: str) -> ScoresSpec:
        """Parse `all`, `none` or `top:N`."""
        if text in ("all", "none"):
            return cls(text)
        if text.startswith("top:"):
            try:
                n = int(text[4:])
            except ValueError:
                n = -1
            if n > 0:
                return cls("top", n)
        raise UsageError(f"--scores: invalid value {text!r}; valid: all, none, top:N with N > 0")


def record_head(record: AttemptRecord) -> dict[str, Any]:
    """What every form of an attempt begins with: the pod, profile, attempt, outcome, node, nominated
    node, victims and message (docs/architecture.md, "The attempt record")."""
    return {
        "pod": record.pod,
        "profile": record.profile,
        "attempt": record.attempt,
        "outcome": record.outcome,
        "node": record.node,
        "nominatedNode": record.nominated_node,
        "victims": list(record.victims),
        "message": record.message,
    }


def record_json(record: AttemptRecord, scores: ScoresSpec) -> dict[str, Any]:
    """One attempt as docs/architecture.md, "The attempt record" writes it: `simulate`'s results, shadow
    mode's score rows and the console's advice read the same."""
    top = scores.top if scores.mode == "top" else None
    out = {
        **record_head(record),
        "filter": record.filter_failures(),
        "scores": {} if scores.mode == "none" else record.scores(top),
        "totals": {} if scores.mode == "none" else record.totals(top),
    }
    if record.node_hint:
        out["nodeHint"] = record.node_hint
    return out


_CODE_NAMES = {
    0: "Success",
    1: "Error",
    2: "Unschedulable",
    3: "UnschedulableAndUnresolvable",
    4: "Wait",
    5: "Skip",
    6: "Pending",
}
