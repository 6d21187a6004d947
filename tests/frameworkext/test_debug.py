"""Debug flags, their routes, and the top-N score table.

Cases from koordinator-sh/koordinator pkg/scheduler/frameworkext/debug_test.go
(TestDebugScoresSetter, TestDebugFiltersSetter, TestDebugScores) and kube's
staging/src/k8s.io/apiserver/pkg/server/routes/flags.go (StringFlagPutHandler replies).
"""

from __future__ import annotations

import logging

import numpy as np
import pytest

from scheduler.framework.runtime import ScoreOutcome
from scheduler.framework.types import CycleState, Status
from scheduler.frameworkext.debug import DebugFlags, FlagError, render_markdown
from scheduler.frameworkext.extender import Extender
from scheduler.frameworkext.publisher import attempt_message
from tests.support.builders import make_node, make_pod
from tests.support.engines import base_registry, config, engine, profile, refs

# debug_test.go TestDebugScores: plugin -> node -> score (already weighted: PodTopologySpread 2 x 100).
KOORD_SCORES = {
    "ImageLocality": {
        "cn-hangzhou.10.0.4.50": 0,
        "cn-hangzhou.10.0.4.51": 0,
        "cn-hangzhou.10.0.4.19": 0,
        "cn-hangzhou.10.0.4.18": 0,
    },
    "InterPodAffinity": {
        "cn-hangzhou.10.0.4.50": 0,
        "cn-hangzhou.10.0.4.51": 0,
        "cn-hangzhou.10.0.4.19": 0,
        "cn-hangzhou.10.0.4.18": 0,
    },
    "LoadAwareScheduling": {
        "cn-hangzhou.10.0.4.50": 85,
        "cn-hangzhou.10.0.4.51": 87,
        "cn-hangzhou.10.0.4.19": 55,
        "cn-hangzhou.10.0.4.18": 15,
    },
    "NodeAffinity": {
        "cn-hangzhou.10.0.4.50": 0,
        "cn-hangzhou.10.0.4.51": 0,
        "cn-hangzhou.10.0.4.19": 0,
        "cn-hangzhou.10.0.4.18": 0,
    },
    "NodeNUMAResource": {
        "cn-hangzhou.10.0.4.50": 0,
        "cn-hangzhou.10.0.4.51": 0,
        "cn-hangzhou.10.0.4.19": 0,
        "cn-hangzhou.10.0.4.18": 0,
    },
    "NodeResourcesBalancedAllocation": {
        "cn-hangzhou.10.0.4.50": 96,
        "cn-hangzhou.10.0.4.51": 96,
        "cn-hangzhou.10.0.4.19": 95,
        "cn-hangzhou.10.0.4.18": 90,
    },
    "NodeResourcesFit": {
        "cn-hangzhou.10.0.4.50": 93,
        "cn-hangzhou.10.0.4.51": 94,
        "cn-hangzhou.10.0.4.19": 91,
        "cn-hangzhou.10.0.4.18": 82,
    },
    "PodTopologySpread": {
        "cn-hangzhou.10.0.4.50": 200,
        "cn-hangzhou.10.0.4.51": 200,
        "cn-hangzhou.10.0.4.19": 200,
        "cn-hangzhou.10.0.4.18": 200,
    },
    "Reservation": {
        "cn-hangzhou.10.0.4.50": 0,
        "cn-hangzhou.10.0.4.51": 0,
        "cn-hangzhou.10.0.4.19": 0,
        "cn-hangzhou.10.0.4.18": 0,
    },
    "TaintToleration": {
        "cn-hangzhou.10.0.4.50": 100,
        "cn-hangzhou.10.0.4.51": 100,
        "cn-hangzhou.10.0.4.19": 100,
        "cn-hangzhou.10.0.4.18": 100,
    },
}
KOORD_NODES = ["cn-hangzhou.10.0.4.50", "cn-hangzhou.10.0.4.51", "cn-hangzhou.10.0.4.19", "cn-hangzhou.10.0.4.18"]

# debug_test.go TestDebugScores expectedResult, byte for byte.
KOORD_EXPECTED = """\
| # | Pod | Node | Score | ImageLocality | InterPodAffinity | LoadAwareScheduling | NodeAffinity | NodeNUMAResource | NodeResourcesBalancedAllocation | NodeResourcesFit | PodTopologySpread | Reservation | TaintToleration |
| --- | --- | --- | ---:| ---:| ---:| ---:| ---:| ---:| ---:| ---:| ---:| ---:| ---:|
| 0 | default/curlimage-545745d8f8-rngp7 | cn-hangzhou.10.0.4.51 | 577 | 0 | 0 | 87 | 0 | 0 | 96 | 94 | 200 | 0 | 100 |
| 1 | default/curlimage-545745d8f8-rngp7 | cn-hangzhou.10.0.4.50 | 574 | 0 | 0 | 85 | 0 | 0 | 96 | 93 | 200 | 0 | 100 |
| 2 | default/curlimage-545745d8f8-rngp7 | cn-hangzhou.10.0.4.19 | 541 | 0 | 0 | 55 | 0 | 0 | 95 | 91 | 200 | 0 | 100 |
| 3 | default/curlimage-545745d8f8-rngp7 | cn-hangzhou.10.0.4.18 | 487 | 0 | 0 | 15 | 0 | 0 | 90 | 82 | 200 | 0 | 100 |"""


def koord_outcome() -> ScoreOutcome:
    """The debug_test.go scores as the runtime's arrays: normalized scores and weights."""
    plugins = sorted(KOORD_SCORES)
    weights = [2 if p == "PodTopologySpread" else 1 for p in plugins]
    matrix = np.array(
        [[KOORD_SCORES[p][n] // w for n in KOORD_NODES] for p, w in zip(plugins, weights, strict=True)], dtype=np.int64
    )
    totals = (matrix * np.array(weights)[:, None]).sum(axis=0)
    return ScoreOutcome(np.arange(4, dtype=np.int64), plugins, weights, matrix, totals)


def test_debug_scores_table_matches_koordinator_exactly() -> None:
    outcome = koord_outcome()
    rows = outcome.top_rows(KOORD_NODES, 4)
    assert render_markdown("default/curlimage-545745d8f8-rngp7", rows, outcome.plugins) == KOORD_EXPECTED


def test_debug_scores_keeps_only_the_top_n() -> None:
    outcome = koord_outcome()
    rows = outcome.top_rows(KOORD_NODES, 2)
    assert [r["node"] for r in rows] == ["cn-hangzhou.10.0.4.51", "cn-hangzhou.10.0.4.50"]
    table = render_markdown("default/curlimage-545745d8f8-rngp7", rows, outcome.plugins)
    assert table.splitlines() == KOORD_EXPECTED.splitlines()[:4]


def test_score_order_is_sorted_once_for_the_log_and_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """The top-N log's rows, `top_columns` and the history's score table (`record_row`) share one
    stable sort of the totals: ties keep evaluation order."""
    totals = np.array([5, 7, 7, 1], dtype=np.int64)
    outcome = ScoreOutcome(np.arange(4, dtype=np.int64), ["A"], [1], totals[None, :].copy(), totals)
    calls: list[int] = []
    argsort = np.argsort
    monkeypatch.setattr(np, "argsort", lambda *a, **k: calls.append(1) or argsort(*a, **k))
    assert [r["node"] for r in outcome.top_rows(["n0", "n1", "n2", "n3"], 3)] == ["n1", "n2", "n0"]
    assert outcome.top_columns(None) == [1, 2, 0, 3]
    assert outcome.top_columns(2) == [1, 2]
    assert calls == [1]


def test_render_markdown_escapes_pipes_and_has_nothing_for_no_rows() -> None:
    assert render_markdown("p", [], ["A"]) == ""
    assert render_markdown("p", [{"node": "n", "total": 0, "plugins": {}}], []).splitlines() == [
        "| # | Pod | Node | Score |",
        "| --- | --- | --- | ---:|",
        "| 0 | p | n | 0 |",
    ]
    rows = [{"node": "a|b", "total": 3, "plugins": {"A": 3}}]
    assert render_markdown("ns/p", rows, ["A"]).splitlines()[2] == "| 0 | ns/p | a\\|b | 3 | 3 |"


# TestDebugScoresSetter, plus Go Atoi's other refusals.
SCORES_SETTER_CASES = [
    ("123", False, 123, "successfully set debugTopNScores to 123"),
    ("11.22", True, 0, 'failed set debugTopNScores 11.22: strconv.Atoi: parsing "11.22": invalid syntax'),
    ("0", False, 0, "successfully set debugTopNScores to 0"),
    ("+7", False, 7, "successfully set debugTopNScores to +7"),
    ("1_000", True, 0, 'failed set debugTopNScores 1_000: strconv.Atoi: parsing "1_000": invalid syntax'),
    ("", True, 0, 'failed set debugTopNScores : strconv.Atoi: parsing "": invalid syntax'),
    ("-1", True, 0, "failed set debugTopNScores -1: must be 0 or more"),
]


@pytest.mark.parametrize(
    ("value", "fails", "want", "reply"), SCORES_SETTER_CASES, ids=[c[0] or "empty" for c in SCORES_SETTER_CASES]
)
def test_debug_scores_setter(value: str, fails: bool, want: int, reply: str) -> None:
    flags = DebugFlags()
    if fails:
        with pytest.raises(FlagError) as info:
            flags.set_top_n(value)
        assert str(info.value) == reply
    else:
        assert flags.set_top_n(value) == reply
    assert flags.top_n == want


# TestDebugFiltersSetter, plus the other spellings strconv.ParseBool accepts.
FILTERS_SETTER_CASES = [
    ("true", False, True),
    ("11.22", True, False),
    ("1", False, True),
    ("F", False, False),
    ("yes", True, False),
]


@pytest.mark.parametrize(("value", "fails", "want"), FILTERS_SETTER_CASES, ids=[c[0] for c in FILTERS_SETTER_CASES])
def test_debug_filters_setter(value: str, fails: bool, want: bool) -> None:
    flags = DebugFlags()
    if fails:
        with pytest.raises(FlagError, match=f"failed set debugFilterFailure {value}: strconv.ParseBool"):
            flags.set_filter_failure(value)
    else:
        assert flags.set_filter_failure(value) == f"successfully set debugFilterFailure to {value}"
    assert flags.filter_failure is want


FLAG_ROUTE_CASES = [
    ("PUT", "/debug/flags/s", b"100", 200, "successfully set debugTopNScores to 100"),
    ("POST", "/debug/flags/s", b"5", 200, "successfully set debugTopNScores to 5"),
    ("PUT", "/debug/flags/s", b"abc", 400, 'failed set debugTopNScores abc: strconv.Atoi: parsing "abc": invalid syntax'),
    ("GET", "/debug/flags/s", b"", 406, "unsupported http method"),
    ("DELETE", "/debug/flags/s", b"", 406, "unsupported http method"),
    ("PUT", "/debug/flags/f", b"true", 200, "successfully set debugFilterFailure to true"),
    ("POST", "/debug/flags/f", b"false", 200, "successfully set debugFilterFailure to false"),
    (
        "PUT",
        "/debug/flags/f",
        b"maybe",
        400,
        'failed set debugFilterFailure maybe: strconv.ParseBool: parsing "maybe": invalid syntax',
    ),
    ("GET", "/debug/flags/f", b"", 406, "unsupported http method"),
]


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "reply"), FLAG_ROUTE_CASES, ids=[f"{c[0]} {c[1]} {c[2]!r}" for c in FLAG_ROUTE_CASES]
)
def test_flag_routes_reply_in_plain_text(method: str, path: str, body: bytes, status: int, reply: str) -> None:
    ext = Extender()
    ext.leadership.release()  # the flag routes are not behind the leader gate
    response = ext.dispatch(method, path, body)
    assert (response.status, response.body) == (status, reply)
    assert response.content_type == "text/plain"
    assert response.content() == (reply + "\n").encode()


def test_flag_routes_change_the_engine_flags() -> None:
    ext = Extender()
    ext.dispatch("PUT", "/debug/flags/s", b"100")
    ext.dispatch("PUT", "/debug/flags/f", b"true")
    assert (ext.flags.top_n, ext.flags.filter_failure) == (100, True)
    assert "/debug/flags/s" not in str(ext.dispatch("GET", "/apis/v1/__services__").body)


# ----- end to end: rows after Score, the log line, records ------------------------------------------
class Table:
    """A per-node Score plugin from a table."""

    def __init__(self, name: str, table: dict[str, int]) -> None:
        self.name = name
        self.table = table

    def score(self, state: CycleState, pod: object, node_info: object) -> tuple[int, Status]:
        return self.table[node_info.name], Status()  # type: ignore[attr-defined]

    def score_extensions(self) -> None:
        return None


def scored_engine(top_n: int) -> tuple[Extender, list[object]]:
    registry = base_registry()
    registry["A"] = lambda args, h: Table("A", {"n0": 10, "n1": 30, "n2": 20})
    registry["B"] = lambda args, h: Table("B", {"n0": 5, "n1": 0, "n2": 40})
    ext = Extender(debug_top_n=top_n)
    sub = ext.records.subscribe()
    eng = engine(
        config(profile(score=refs(("A", 1), ("B", 2)))),
        registry,
        ext,
        nodes=[make_node(f"n{i}") for i in range(3)],
        pods=[make_pod("p", cpu="100m")],
    )
    eng.scheduler.run()
    return ext, sub.drain()


def test_rows_after_score_follow_debug_top_n(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="scheduler.frameworkext.debug"):
        _, records = scored_engine(2)
    (record,) = records
    assert record.debug_top_n == 2  # type: ignore[attr-defined]
    assert record.debug_rows() == [  # type: ignore[attr-defined]
        {"node": "n2", "total": 100, "plugins": {"A": 20, "B": 80}},
        {"node": "n1", "total": 30, "plugins": {"A": 30, "B": 0}},
    ]
    message = attempt_message(record)  # type: ignore[arg-type]
    assert message["scores"][0] == {"node": "n2", "total": 100, "plugins": {"A": 20, "B": 80}}
    assert message["feasibleNodes"] == 3 and message["node"] == "n2" and message["type"] == "attempt"
    expected = (
        "Top2 scores for Pod: default/p, feasibleNodes: 3, plugins:[A B]\n"
        "| # | Pod | Node | Score | A | B |\n"
        "| --- | --- | --- | ---:| ---:| ---:|\n"
        "| 0 | default/p | n2 | 100 | 20 | 80 |\n"
        "| 1 | default/p | n1 | 30 | 30 | 0 |"
    )
    assert [r.getMessage() for r in caplog.records] == [expected]


def test_no_rows_and_no_log_when_n_is_zero(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="scheduler.frameworkext.debug"):
        _, records = scored_engine(0)
    (record,) = records
    assert record.debug_rows() == []  # type: ignore[attr-defined]
    assert attempt_message(record)["scores"] == []  # type: ignore[arg-type]
    assert caplog.records == []


def test_filter_failures_are_logged_and_streamed_when_asked(caplog: pytest.LogCaptureFixture) -> None:
    registry = base_registry()

    class NoN0:
        name = "NoN0"

        def filter(self, state: CycleState, pod: object, node_info: object) -> Status:
            return Status(2, ("not n0",)) if node_info.name == "n0" else Status()  # type: ignore[arg-type, attr-defined]

    registry["NoN0"] = lambda args, h: NoN0()
    ext = Extender(debug_filter_failure=True)
    sub = ext.records.subscribe()
    with caplog.at_level(logging.INFO, logger="scheduler.frameworkext.debug"):
        eng = engine(config(profile(filter=refs("NoN0"))), registry, ext, pods=[make_pod("p")])
        eng.scheduler.run()
    (record,) = sub.drain()
    message = attempt_message(record)  # type: ignore[arg-type]
    assert message["filter"] == {"n0": {"plugin": "NoN0", "code": "Unschedulable", "reasons": ["not n0"]}}
    assert [r.getMessage() for r in caplog.records] == [
        'Failed to filter for Pod "default/p" on Node "n0", failedPlugin: NoN0, reason: not n0'
    ]
