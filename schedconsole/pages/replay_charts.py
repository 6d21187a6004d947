"""The replay page's charts: pure functions from candidates' outcomes to Plotly figures (drawn as
SVG by `svg.render`; tests read the traces)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go

SERIES = {
    "cpu": ("CPU requested / allocatable (%)", 100.0),
    "pending": ("Pending pods", 1.0),
    "fragmentation": ("Fragmentation: free CPU the median pending pod cannot use (%)", 100.0),
    "gpu_fragmentation": ("GPU fragmentation: free GPUs the median GPU pod cannot use (%)", 100.0),
    "nodes_used": ("Nodes used", 1.0),
}


def _hours(at: float, start: float) -> str:
    return f"+{(at - start) / 3600:.1f}h"


def sample_series(candidates: Sequence[tuple[str, Sequence[Mapping[str, Any]]]], field: str, start: float) -> go.Figure:
    """One line per candidate of a sampled quantity over the window (hours from its start), on one scale."""
    title, scale = SERIES[field]
    fig = go.Figure(layout={"title": {"text": title}, "meta": {"sharedY": True}})
    for label, samples in candidates:
        xs = [_hours(float(s["at"]), start) for s in samples]
        ys = [round(float(s[field]) * scale, 3) if s.get(field) is not None else None for s in samples]
        fig.add_trace(go.Scatter(x=xs, y=ys, name=label, mode="lines+markers"))
    return fig


def pending_histogram(candidates: Sequence[tuple[str, Mapping[str, Any]]]) -> go.Figure:
    """Pods per waiting-time bucket and candidate (one bar each; buckets no candidate used are left out)."""
    labels, values = [], []
    edges = list(candidates[0][1]["pendingHistogram"]["edges"]) if candidates else []
    for i, edge in enumerate(edges):
        counts = [int(summary["pendingHistogram"]["counts"][i]) for _, summary in candidates]
        if not any(counts):
            continue
        for (label, _), count in zip(candidates, counts, strict=True):
            labels.append(f"≥ {_span(edge)} · {label}")
            values.append(count)
    trace = go.Bar(x=values, y=labels, orientation="h", text=[str(v) for v in values])
    return go.Figure(trace, layout={"title": {"text": "Time pending from arrival to binding: pods per bucket"}})


def _span(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:g}h"
    if seconds >= 60:
        return f"{seconds / 60:g}m"
    return f"{seconds:g}s"


def figure_bars(candidates: Sequence[tuple[str, Mapping[str, Any]]], pick: str, title: str) -> go.Figure:
    """One horizontal bar per candidate of one summary figure (a dotted path: `pendingSeconds.p90`)."""
    labels, values = [], []
    for label, summary in candidates:
        value: Any = summary
        for part in pick.split("."):
            value = value.get(part) if isinstance(value, Mapping) else None
        labels.append(label)
        values.append(float(value or 0))
    return go.Figure(
        go.Bar(x=values, y=labels, orientation="h", text=[f"{v:g}" for v in values]), layout={"title": {"text": title}}
    )
