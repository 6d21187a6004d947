"""Debug scores and filter failures (Koordinator's `debug.go`).

`debugTopNScores` (N) and `debugFilterFailure` are set by `--debug-scores N` at start and at
run time by the `/debug/flags/s` and `/debug/flags/f` routes (and klog's verbosity by `/debug/flags/v`), with the replies and errors of
Koordinator's setters behind kube's `StringFlagPutHandler` (PUT, and POST as the proposal's curl
uses; any other method 406 `unsupported http method`).

After Score, with N > 0, the runtime marks the ScoreOutcome with N; the top-N rows (weighted
per-plugin scores, total descending) are built from its arrays only when something reads them:
the log line below (when INFO is enabled for this logger), an attempt record's output, or the
console's stream. The table is go-pretty's `RenderMarkdown`, byte for byte:

    | # | Pod | Node | Score | ImageLocality | ... |
    | --- | --- | --- | ---:| ---:| ... |
    | 0 | default/curlimage-545745d8f8-rngp7 | cn-hangzhou.10.0.4.51 | 577 | 0 | ... |
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scheduler.frameworkext.services import Handler, Request

log = logging.getLogger(__name__)

_GO_INT = re.compile(r"[+-]?[0-9]+")
_GO_TRUE = ("1", "t", "T", "TRUE", "true", "True")
_GO_FALSE = ("0", "f", "F", "FALSE", "false", "False")
_INT64_MAX = 2**63 - 1


class FlagError(ValueError):
    """A debug flag value that does not parse; the route answers 400 with this text."""


def _go_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


@dataclass(slots=True)
class DebugFlags:
    """The two debug switches, shared by every profile of an engine."""

    top_n: int = 0
    filter_failure: bool = False
    verbosity: int = 0

    def set_top_n(self, value: str) -> str:
        """`DebugScoresSetter`: parse N (Go's Atoi) and set it; the reply text."""
        text = value.strip()
        if not _GO_INT.fullmatch(text):
            raise FlagError(f"failed set debugTopNScores {value}: strconv.Atoi: parsing {_go_quote(text)}: invalid syntax")
        number = int(text)
        if abs(number) > _INT64_MAX:
            raise FlagError(f"failed set debugTopNScores {value}: strconv.Atoi: parsing {_go_quote(text)}: value out of range")
        # Upstream accepts a negative N (and then never prints); refusing it tells the caller.
        if number < 0:
            raise FlagError(f"failed set debugTopNScores {value}: must be 0 or more")
        self.top_n = number
        return f"successfully set debugTopNScores to {text}"

    def set_filter_failure(self, value: str) -> str:
        """`DebugFiltersSetter`: parse a Go bool and set it; the reply text."""
        text = value.strip()
        if text in _GO_TRUE:
            self.filter_failure = True
        elif text in _GO_FALSE:
            self.filter_failure = False
        else:
            raise FlagError(
                f"failed set debugFilterFailure {value}: strconv.ParseBool: parsing {_go_quote(text)}: invalid syntax"
            )
        return f"successfully set debugFilterFailure to {text}"

    def set_verbosity(self, value: str) -> str:
        """kube's `GlogSetter` (`/debug/flags/v`): klog's verbosity, here the `scheduler` loggers'
        level (V >= 4 DEBUG, 1-3 INFO, 0 WARNING); the reply text."""
        text = value.strip()
        if not _GO_INT.fullmatch(text) or not -(2**31) <= int(text) < 2**31:
            reason = "invalid syntax" if not _GO_INT.fullmatch(text) else "value out of range"
            raise FlagError(f"failed set klog.logging.verbosity {value}: strconv.ParseInt: parsing {_go_quote(text)}: {reason}")
        self.verbosity = int(text)
        level = logging.DEBUG if self.verbosity >= 4 else logging.INFO if self.verbosity >= 1 else logging.WARNING
        logging.getLogger("scheduler").setLevel(level)
        return f"successfully set klog.logging.verbosity to {text}"


def flag_handler(setter: Any) -> Handler:
    """A route handler setting one flag from the request body (kube's `StringFlagPutHandler`)."""

    def handle(request: Request) -> tuple[int, Any]:
        if request.method not in ("PUT", "POST"):
            return 406, "unsupported http method"
        try:
            return 200, str(setter(request.text()))
        except FlagError as exc:
            return 400, str(exc)

    return handle


# ----- the top-N table ------------------------------------------------------------------------
def render_markdown(pod: str, rows: Sequence[Mapping[str, Any]], plugins: Sequence[str]) -> str:
    """The top-N rows as go-pretty renders them in markdown (no trailing newline).

    Rows are `{"node", "total", "plugins": {name: weighted score}}`; the row number, pod and node
    are text (left, `---`), the score columns numbers (right, `---:`), as go-pretty aligns them.
    """
    if not rows:
        return ""
    header = ["#", "Pod", "Node", "Score", *plugins]
    lines = ["| " + " | ".join(_escape(c) for c in header) + " |"]
    lines.append("|" + "|".join(" --- " if c < 3 else " ---:" for c in range(len(header))) + "|")
    pod_cell = _escape(pod)
    for i, row in enumerate(rows):
        scores = row["plugins"]
        numbers = "".join([f" {scores[p]} |" for p in plugins])
        lines.append(f"| {i} | {pod_cell} | {_escape(str(row['node']))} | {row['total']} |{numbers}")
    return "\n".join(lines)


def _escape(cell: str) -> str:
    """go-pretty's markdown cell escaping: `|` escaped, newlines as <br/>."""
    if "|" in cell or "\n" in cell:
        return cell.replace("|", "\\|").replace("\n", "<br/>")
    return cell


def log_top_scores(pod: str, rows: Sequence[Mapping[str, Any]], plugins: Sequence[str], top_n: int, feasible: int) -> None:
    """Log the table as Koordinator does (`Top%d scores for Pod: ...`), only when INFO is on."""
    if rows and log.isEnabledFor(logging.INFO):
        log.info(
            "Top%d scores for Pod: %s, feasibleNodes: %d, plugins:[%s]\n%s",
            top_n,
            pod,
            feasible,
            " ".join(plugins),
            render_markdown(pod, rows, plugins),
        )


def log_filter_failures(pod: str, failures: Mapping[str, Mapping[str, Any]]) -> None:
    """One line per node that failed Filter, in Koordinator's wording, when INFO is on."""
    if not log.isEnabledFor(logging.INFO):
        return
    for node, fail in failures.items():
        log.info(
            'Failed to filter for Pod "%s" on Node "%s", failedPlugin: %s, reason: %s',
            pod,
            node,
            fail["plugin"],
            ", ".join(fail["reasons"]),
        )


__all__ = ["DebugFlags", "FlagError", "flag_handler", "log_filter_failures", "log_top_scores", "render_markdown"]
