"""The dashboard's figures (their traces) and their SVG drawing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from schedconsole.pages import charts, svg


@pytest.mark.parametrize(
    ("count", "columns", "want"),
    [(0, 4, []), (3, 4, [(0, 1), (1, 2), (2, 3)]), (10, 4, [(0, 3), (3, 6), (6, 9), (9, 10)]), (5000, 120, None)],
    ids=["empty", "fewer-than-columns", "uneven", "5000-nodes"],
)
def test_bins(count, columns, want) -> None:
    runs = charts.bins(count, columns)
    if want is not None:
        assert runs == want
    assert len(runs) <= columns
    assert sum(b - a for a, b in runs) == count


def test_utilization_heatmap_shows_the_fullest_node_of_each_bin() -> None:
    names = [f"n{i}" for i in range(4)]
    fig = charts.utilization_heatmap(
        names, {"cpu": [0.1, 0.5, 0.25, 1.0], "memory": [0, 0, 0, 0], "pods": [0.01, 0.02, 0.03, 0.04]}
    )
    (trace,) = fig.data
    assert trace.type == "heatmap"
    assert list(trace.y) == ["CPU", "memory", "pods"]
    assert list(trace.z[0]) == [10.0, 50.0, 25.0, 100.0]
    big = charts.utilization_heatmap([f"n{i}" for i in range(1000)], {"cpu": [i / 1000 for i in range(1000)]})
    assert len(big.data[0].z[0]) == 112  # 1000 nodes in runs of 9
    assert big.data[0].z[0][-1] == 99.9  # the last bin's fullest node
    assert big.data[0].x[0] == "n0 … n8"


def test_loadaware_heatmap_is_usage_minus_threshold_and_skips_unreported_nodes() -> None:
    fig = charts.loadaware_heatmap(["a", "b", "c"], {"cpu": [75, 25, -1]}, {"cpu": 65})
    (trace,) = fig.data
    assert list(trace.z[0]) == [10, -40, None]
    assert trace.y[0] == "CPU (threshold 65%)"
    assert trace.zmid == 0


def test_counts_bar() -> None:
    (trace,) = charts.counts_bar({"active": 2, "unschedulable": 7}, "Pending").data
    assert trace.orientation == "h" and list(trace.y) == ["active", "unschedulable"] and list(trace.x) == [2, 7]


def test_throughput_and_latency_buckets_by_minute() -> None:
    t0 = datetime(2026, 1, 1, 12, 0, 5, tzinfo=UTC)
    rows = [
        (t0, "Scheduled", 0.002),
        (t0 + timedelta(seconds=10), "Unschedulable", 0.010),
        (t0 + timedelta(seconds=20), "Scheduled", 0.004),
        (t0 + timedelta(minutes=1), "Scheduled", 0.001),
    ]
    fig = charts.throughput_and_latency(rows)
    bars, line = fig.data
    assert list(bars.x) == ["12:00", "12:01"] and list(bars.y) == [2, 1]
    assert list(line.y) == [4.0, 1.0]  # medians of [2, 10, 4] and [1] ms
    assert line.yaxis == "y2"


def test_score_bars_stack_one_trace_per_plugin() -> None:
    rows = [
        {"node": "a", "total": 300, "plugins": {"Fit": 100, "Taint": 200}},
        {"node": "b", "total": 150, "plugins": {"Fit": 50, "Taint": 100}},
    ]
    fig = charts.score_bars(rows)
    assert fig.layout.barmode == "stack"
    assert [t.name for t in fig.data] == ["Fit", "Taint"]
    assert list(fig.data[0].x) == [100, 50] and list(fig.data[1].y) == ["a", "b"]


def test_svg_draws_each_kind_escaped() -> None:
    heat = svg.render(charts.utilization_heatmap(["<n>"], {"cpu": [0.5]}))
    assert heat.startswith("<svg") and "heatmap" in heat and "&lt;n&gt;" in heat and "<n>" not in heat
    assert heat.count("<rect") == 1 + 11  # the cell, and the colour scale's eleven steps
    assert "% of allocatable requested" in heat and ">0%<" in heat and ">100%<" in heat  # it had no scale
    bars = svg.render(charts.score_bars([{"node": "a", "total": 3, "plugins": {"X": 1, "Y": 2}}]), width=500)
    assert 'viewBox="0 0 500' in bars and bars.count("<rect") == 2 + 2  # two segments, two legend swatches
    series = svg.render(charts.throughput_and_latency([(datetime(2026, 1, 1, tzinfo=UTC), "Scheduled", 0.001)]))
    assert "<polyline" in series
    assert 'class="unit">ms</text>' in series and 'class="unit">pods</text>' in series  # the latency axis had no unit
    empty = svg.render(charts.throughput_and_latency([]))
    assert "no attempts in the history yet" in empty
    assert "nothing to show" in svg.render(charts.counts_bar({}, "Pending"))
    assert "<script" not in heat + bars + series
