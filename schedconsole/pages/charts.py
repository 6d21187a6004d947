"""The dashboard's charts: pure functions from engine and history data to Plotly figures.

Each returns a `plotly.graph_objects.Figure`; tests read its traces. The pages draw them with
`svg.render` (server-side SVG, a few kilobytes) instead of shipping plotly.js (4 MB) to the browser.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import plotly.graph_objects as go

HEATMAP_COLUMNS = 120
RESOURCE_LABELS = {"cpu": "CPU", "memory": "memory", "pods": "pods"}


def bins(count: int, columns: int = HEATMAP_COLUMNS) -> list[tuple[int, int]]:
    """Split `count` nodes (in name order) into at most `columns` runs of consecutive nodes."""
    if count <= 0:
        return []
    size = -(-count // columns)
    return [(start, min(start + size, count)) for start in range(0, count, size)]


def utilization_heatmap(names: Sequence[str], utilization: Mapping[str, Sequence[float]]) -> go.Figure:
    """requested / allocatable per resource (rows) and node (columns, nodes binned by name order
    when there are more than HEATMAP_COLUMNS; a cell shows its fullest node)."""
    runs = bins(len(names))
    resources = [r for r in ("cpu", "memory", "pods") if r in utilization]
    z = [[round(100 * max(utilization[r][a:b]), 1) for a, b in runs] for r in resources]
    labels = [names[a] if b - a == 1 else f"{names[a]} … {names[b - 1]}" for a, b in runs]
    trace = go.Heatmap(
        z=z,
        x=labels,
        y=[RESOURCE_LABELS[r] for r in resources],
        zmin=0,
        zmax=100,
        colorscale="Blues",
        colorbar={"title": {"text": "% of allocatable requested"}},
        hovertemplate="%{x}: %{z}%<extra>%{y}</extra>",
    )
    return go.Figure(trace, layout={"title": {"text": "Requested / allocatable (%)"}})


def loadaware_heatmap(names: Sequence[str], percent: Mapping[str, Sequence[int]], thresholds: Mapping[str, int]) -> go.Figure:
    """LoadAware's estimated usage (%) per resource and node against its threshold: z is usage minus
    threshold (above 0: the filter rejects the node); nodes with no NodeMetric are left out (-1)."""
    runs = bins(len(names))
    resources = list(percent)
    z = []
    for res in resources:
        limit = int(thresholds.get(res, 0) or 0)
        row = []
        for a, b in runs:
            seen = [v for v in percent[res][a:b] if v >= 0]
            row.append(max(seen) - limit if seen and limit else None)
        z.append(row)
    labels = [names[a] if b - a == 1 else f"{names[a]} … {names[b - 1]}" for a, b in runs]
    ylabels = [f"{RESOURCE_LABELS.get(r, r)} (threshold {thresholds.get(r, 0)}%)" for r in resources]
    trace = go.Heatmap(
        z=z,
        x=labels,
        y=ylabels,
        zmid=0,
        zmin=-50,
        zmax=50,
        colorscale="RdBu_r",
        colorbar={"title": {"text": "points from the threshold (above 0: rejected)"}},
        hovertemplate="%{x}: %{z} points from the threshold<extra>%{y}</extra>",
    )
    return go.Figure(trace, layout={"title": {"text": "LoadAware estimated usage minus threshold (points)"}})


def counts_bar(counts: Mapping[str, int], title: str) -> go.Figure:
    """One horizontal bar per key (pending pods by queue, by first rejecting plugin)."""
    keys = list(counts)
    trace = go.Bar(x=[counts[k] for k in keys], y=keys, orientation="h", text=[str(counts[k]) for k in keys])
    return go.Figure(trace, layout={"title": {"text": title}})


def throughput_and_latency(attempts: Sequence[tuple[datetime, str, float]], bucket_seconds: int = 60) -> go.Figure:
    """Scheduled pods per bucket and the median attempt latency (ms) per bucket, over time, from
    (at, outcome, seconds) tuples of the history."""
    buckets: dict[datetime, tuple[int, list[float]]] = {}
    for at, outcome, seconds in attempts:
        start = datetime.fromtimestamp(at.timestamp() // bucket_seconds * bucket_seconds, tz=at.tzinfo)
        scheduled, latencies = buckets.setdefault(start, (0, []))
        buckets[start] = (scheduled + (outcome == "Scheduled"), latencies)
        latencies.append(seconds * 1000)
    xs = sorted(buckets)
    scheduled_counts = [buckets[x][0] for x in xs]
    medians = [round(sorted(buckets[x][1])[len(buckets[x][1]) // 2], 3) for x in xs]
    labels = [x.strftime("%H:%M") for x in xs]
    fig = go.Figure(
        layout={
            "title": {"text": f"Scheduled pods and median attempt latency per {bucket_seconds}s"},
            "yaxis": {"title": {"text": "pods"}},
            "yaxis2": {"title": {"text": "ms"}, "overlaying": "y", "side": "right"},
        }
    )
    fig.add_trace(go.Bar(x=labels, y=scheduled_counts, name="scheduled pods"))
    fig.add_trace(go.Scatter(x=labels, y=medians, name="median latency (ms)", mode="lines+markers", yaxis="y2"))
    return fig


def score_bars(rows: Sequence[Mapping[str, Any]]) -> go.Figure:
    """Stacked per-plugin weighted scores for the top nodes (rows of `AttemptRecord.top_rows`:
    `{"node", "total", "plugins": {plugin: weighted score}}`), best node first."""
    nodes = [str(r["node"]) for r in rows]
    plugins: list[str] = []
    for r in rows:
        for p in r["plugins"]:
            if p not in plugins:
                plugins.append(p)
    fig = go.Figure(layout={"title": {"text": "Weighted score per plugin"}, "barmode": "stack"})
    for plugin in plugins:
        values = [int(r["plugins"].get(plugin, 0)) for r in rows]
        fig.add_trace(go.Bar(x=values, y=nodes, name=plugin, orientation="h"))
    return fig
