"""Draw the dashboard's Plotly figures as inline SVG on the server.

plotly.js weighs 4 MB, four times the budget of a whole page; the figures the dashboard builds use
three trace types (heatmap, bar, scatter lines), which this draws from the figure's JSON with
hover text as SVG <title> elements. Output is escaped; no script.
"""

from __future__ import annotations

from html import escape
from typing import Any

import plotly.graph_objects as go
from django.utils.safestring import SafeString, mark_safe

PALETTE = (
    "#2456d6",
    "#e07b00",
    "#17803d",
    "#b42318",
    "#7a4cc2",
    "#0f8a8a",
    "#a15c07",
    "#5b6475",
    "#c2185b",
    "#3f7d20",
    "#8e6c00",
    "#0d5ea6",
)
WIDTH = 900
LEFT = 170


def _color_blues(v: float) -> str:
    """White (0) to deep blue (100)."""
    t = max(0.0, min(1.0, v / 100))
    r, g, b = (int(247 - t * (247 - 8)), int(251 - t * (251 - 48)), int(255 - t * (255 - 107)))
    return f"rgb({r},{g},{b})"


def _color_diverging(v: float, lo: float, hi: float) -> str:
    """Blue below zero, white at zero, red above."""
    if v <= 0:
        t = min(1.0, v / lo) if lo else 0.0
        return f"rgb({int(255 - t * 222)},{int(255 - t * 153)},{int(255 - t * 83)})"
    t = min(1.0, v / hi) if hi else 0.0
    return f"rgb({int(255 - t * 77)},{int(255 - t * 231)},{int(255 - t * 212)})"


def _title(fig: dict[str, Any]) -> str:
    text = ((fig.get("layout") or {}).get("title") or {}).get("text") or ""
    return f'<text x="4" y="14" class="chart-title">{escape(text)}</text>' if text else ""


def _heatmap(fig: dict[str, Any], trace: dict[str, Any], width: int) -> str:
    z, xs, ys = trace["z"], list(trace["x"]), list(trace["y"])
    cols = max(1, len(xs))
    cell_w = (width - LEFT - 10) / cols
    cell_h = 26
    height = 30 + cell_h * len(ys) + 10 + 34
    diverging = trace.get("zmid") is not None
    lo, hi = float(trace.get("zmin") or 0), float(trace.get("zmax") or 100)
    parts = [_title(fig)]
    for r, label in enumerate(ys):
        y = 24 + r * cell_h
        parts.append(f'<text x="{LEFT - 6}" y="{y + cell_h / 2 + 4:.1f}" text-anchor="end">{escape(str(label))}</text>')
        for c, value in enumerate(z[r]):
            x = LEFT + c * cell_w
            if value is None:
                fill, shown = "#eceef2", "no metric"
            else:
                fill = _color_diverging(float(value), lo, hi) if diverging else _color_blues(float(value))
                shown = f"{value:+g}" if diverging else f"{value:g}%"
            parts.append(
                f'<rect x="{x:.1f}" y="{y}" width="{max(cell_w - 0.5, 0.5):.1f}" height="{cell_h - 2}" fill="{fill}">'
                f"<title>{escape(str(xs[c]))} · {escape(str(label))}: {escape(shown)}</title></rect>"
            )
    parts.append(_colour_scale(trace, lo, hi, diverging, 30 + cell_h * len(ys) + 6))
    return _svg(width, height, "".join(parts), "heatmap")


def _colour_scale(trace: dict[str, Any], lo: float, hi: float, diverging: bool, y: float) -> str:
    """The heatmap's colour scale: ten steps from its lowest to its highest value, labelled."""
    title = str(((trace.get("colorbar") or {}).get("title") or {}).get("text") or "")
    low = lo if diverging else 0.0
    parts = [f'<g class="colour-scale"><text x="{LEFT - 6}" y="{y + 11}" text-anchor="end">{escape(title)}</text>']
    steps, w = 10, 22
    for i in range(steps + 1):
        v = low + (hi - low) * i / steps
        fill = _color_diverging(v, lo, hi) if diverging else _color_blues(v)
        parts.append(
            f'<rect x="{LEFT + i * w}" y="{y}" width="{w}" height="12" fill="{fill}" stroke="#dfe3ea" stroke-width="0.5"/>'
        )
    for i in (0, steps // 2, steps):
        v = low + (hi - low) * i / steps
        shown = f"{v:+g}" if diverging and v else f"{v:g}{'' if diverging else '%'}"
        parts.append(f'<text x="{LEFT + i * w + w / 2}" y="{y + 25}" text-anchor="middle">{escape(shown)}</text>')
    parts.append("</g>")
    return "".join(parts)


def _bars_horizontal(fig: dict[str, Any], traces: list[dict[str, Any]], width: int) -> str:
    ys = list(traces[0]["y"])
    totals = [sum(float(t["x"][i] or 0) for t in traces) for i in range(len(ys))]
    top = max([*totals, 1.0])
    bar_h = 20
    legend = len(traces) > 1
    height = 30 + bar_h * len(ys) + (24 if legend else 0) + 10
    scale = (width - LEFT - 60) / top
    parts = [_title(fig)]
    for i, label in enumerate(ys):
        y = 24 + i * bar_h
        parts.append(f'<text x="{LEFT - 6}" y="{y + 14}" text-anchor="end">{escape(str(label))}</text>')
        x = float(LEFT)
        for k, t in enumerate(traces):
            value = float(t["x"][i] or 0)
            w = value * scale
            name = t.get("name") or ""
            parts.append(
                f'<rect x="{x:.1f}" y="{y + 2}" width="{w:.1f}" height="{bar_h - 4}" fill="{PALETTE[k % len(PALETTE)]}">'
                f"<title>{escape(str(label))}{' · ' + escape(name) if name else ''}: {value:g}</title></rect>"
            )
            x += w
        parts.append(f'<text x="{x + 4:.1f}" y="{y + 14}">{totals[i]:g}</text>')
    if legend:
        parts.append(_legend(traces, 30 + bar_h * len(ys)))
    return _svg(width, height, "".join(parts), "bars")


def _legend(traces: list[dict[str, Any]], y: float) -> str:
    parts, x = [], 8.0
    for k, t in enumerate(traces):
        name = str(t.get("name") or "")
        parts.append(
            f'<rect x="{x:.0f}" y="{y:.0f}" width="10" height="10" fill="{PALETTE[k % len(PALETTE)]}"/>'
            f'<text x="{x + 14:.0f}" y="{y + 9:.0f}">{escape(name)}</text>'
        )
        x += 24 + 6.5 * len(name)
    return "".join(parts)


def _time_series(fig: dict[str, Any], traces: list[dict[str, Any]], width: int) -> str:
    xs = list(traces[0]["x"]) if traces else []
    height, top_pad, bottom = 220, 26, 40
    plot_h = height - top_pad - bottom
    left, right = 50, width - 50
    parts = [_title(fig)]
    if not xs:
        parts.append(f'<text x="{left}" y="{top_pad + 20}" class="muted">no attempts in the history yet</text>')
        return _svg(width, height, "".join(parts), "series")
    step = (right - left) / max(1, len(xs))
    layout = fig.get("layout") or {}
    # One scale for every trace (candidates compared on one quantity) when the figure asks for it.
    shared = bool((layout.get("meta") or {}).get("sharedY"))
    common = max([1e-9, *(float(v or 0) for t in traces for v in t["y"])])
    for k, t in enumerate(traces):
        ys = [float(v or 0) for v in t["y"]]
        peak = common if shared else max([*ys, 1.0])
        color = PALETTE[k % len(PALETTE)]
        axis_x = left - 6 if k == 0 else right + 6
        axis = layout.get("yaxis2" if t.get("yaxis") == "y2" else "yaxis") or {}
        unit = str((axis.get("title") or {}).get("text") or "")
        anchor = "end" if k == 0 else "start"
        if not shared or k == 0:  # a shared scale is labelled once
            parts.append(f'<text x="{axis_x}" y="{top_pad + 8}" text-anchor="{anchor}" fill="{color}">{peak:g}</text>')
            if unit:  # the axis's unit under its top value
                parts.append(
                    f'<text x="{axis_x}" y="{top_pad + 22}" text-anchor="{anchor}" fill="{color}" class="unit">{escape(unit)}</text>'
                )
            parts.append(f'<text x="{axis_x}" y="{top_pad + plot_h}" text-anchor="{anchor}" fill="{color}">0</text>')
        if t.get("type") == "bar":
            for i, v in enumerate(ys):
                h = plot_h * v / peak
                parts.append(
                    f'<rect x="{left + i * step + 1:.1f}" y="{top_pad + plot_h - h:.1f}" width="{max(step - 2, 1):.1f}" height="{h:.1f}" '
                    f'fill="{color}" opacity="0.55"><title>{escape(str(xs[i]))}: {v:g} {escape(str(t.get("name") or ""))}</title></rect>'
                )
        else:
            points = " ".join(
                f"{left + (i + 0.5) * step:.1f},{top_pad + plot_h - plot_h * v / peak:.1f}" for i, v in enumerate(ys)
            )
            parts.append(f'<polyline points="{points}" fill="none" stroke="{color}" stroke-width="2"/>')
            for i, v in enumerate(ys):
                parts.append(
                    f'<circle cx="{left + (i + 0.5) * step:.1f}" cy="{top_pad + plot_h - plot_h * v / peak:.1f}" r="2.5" fill="{color}">'
                    f"<title>{escape(str(xs[i]))}: {v:g} {escape(str(t.get('name') or ''))}</title></circle>"
                )
    every = max(1, len(xs) // 12)
    for i in range(0, len(xs), every):
        parts.append(
            f'<text x="{left + (i + 0.5) * step:.1f}" y="{top_pad + plot_h + 14}" text-anchor="middle">{escape(str(xs[i]))}</text>'
        )
    parts.append(_legend(traces, height - 14))
    return _svg(width, height, "".join(parts), "series")


def _svg(width: int, height: float, body: str, kind: str) -> str:
    return (
        f'<svg class="chart {kind}" viewBox="0 0 {width} {height:.0f}" width="100%" role="img" '
        f'xmlns="http://www.w3.org/2000/svg" preserveAspectRatio="xMinYMin meet">{body}</svg>'
    )


def render(figure: go.Figure, width: int = WIDTH) -> SafeString:
    """The figure as an inline SVG element (heatmap, horizontal bars, or a time series), drawn in a
    `width`-unit wide box that scales to its container."""
    fig = figure.to_plotly_json()
    traces = [dict(t) for t in fig.get("data", [])]
    if not traces:
        return mark_safe(_svg(width, 40, _title(fig), "empty"))
    if traces[0].get("type") == "heatmap":
        return mark_safe(_heatmap(fig, traces[0], width))
    if traces[0].get("type") == "bar" and traces[0].get("orientation") == "h":
        if not list(traces[0].get("y") or []):
            return mark_safe(_svg(width, 40, _title(fig) + '<text x="4" y="34">nothing to show</text>', "empty"))
        return mark_safe(_bars_horizontal(fig, traces, width))
    return mark_safe(_time_series(fig, traces, width))
