"""Replay: start a sweep over a recorded window, follow it, read its outcomes side by side."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404

from schedconsole.pages import replay_charts, svg
from schedconsole.pages.views import PAGE_SIZE, int_param, page, pager_context
from schedconsole.profiles.models import ProfileVersion
from schedconsole.replay.bodies import replay_json, replay_row
from schedconsole.replay.models import Replay

FIGURES = (
    ("pods", "pods arrived"),
    ("placed", "placed"),
    ("unschedulable", "unschedulable at the end"),
    ("deletedPending", "deleted while pending"),
    ("attempts", "attempts"),
    ("preemptions", "preemptions"),
    ("victims", "victims"),
    ("pendingSeconds.p50", "pending p50 (s)"),
    ("pendingSeconds.p90", "pending p90 (s)"),
    ("pendingSeconds.p99", "pending p99 (s)"),
    ("pendingSeconds.max", "pending max (s)"),
    ("nodesUsed.peak", "nodes used, peak"),
    ("nodesUsed.end", "nodes used, end"),
    ("fragmentation.mean", "fragmentation, mean"),
    ("gpuFragmentation.mean", "GPU fragmentation, mean"),
)


def _pick(summary: dict[str, Any] | None, path: str) -> Any:
    value: Any = summary
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    if isinstance(value, float):
        return round(value, 4)
    return "—" if value is None else value


def replays_page(request: HttpRequest) -> HttpResponse:
    """The form to start a replay, and the replays newest first."""
    offset = int_param(request, "offset")
    found = Replay.objects.prefetch_related("candidates")
    rows = [replay_row(r) for r in found[offset : offset + PAGE_SIZE]]
    versions = list(ProfileVersion.objects.order_by("-version").values("version", "comment", "active")[:50])
    context = {
        "replays": rows,
        "pager": pager_context(request, found.count(), offset, PAGE_SIZE),
        "versions": versions,
        "openb": settings.REPLAY_OPENB_DATA,
    }
    return page(request, "pages/replays.html", context)


def replay_page(request: HttpRequest, pk: int) -> HttpResponse:
    """One replay: its progress, its candidates side by side, charts, the pods placed differently."""
    replay = get_object_or_404(Replay, pk=pk)
    body = replay_json(replay, limit=50)
    done = [c for c in replay.candidates.all() if c.state == "done" and c.summary is not None]
    table = [(label, [_pick(c["summary"], path) for c in body["candidates"]]) for path, label in FIGURES]
    charts: list[Any] = []
    if done:
        start = float(body["params"].get("start", (done[0].outcome or {}).get("start", 0.0)))
        series = [(c.label, (c.outcome or {}).get("samples") or []) for c in done]
        summaries = [(c.label, c.summary or {}) for c in done]
        fields = ["cpu", "pending", "fragmentation", "nodes_used"]
        if any(s.get("gpu_fragmentation") is not None for _, samples in series for s in samples):
            fields.append("gpu_fragmentation")
        charts = [svg.render(replay_charts.sample_series(series, f, start)) for f in fields]
        charts.append(svg.render(replay_charts.pending_histogram(summaries)))
        charts.append(svg.render(replay_charts.figure_bars(summaries, "nodesUsed.peak", "Nodes used at the peak")))
    job = None
    if replay.job is not None:
        from schedconsole.cluster.jobs import job_json

        job = job_json(replay.job)
    balance = [(c.label, (c.summary or {}).get("balance") or {}) for c in done]
    context = {"replay": body, "table": table, "charts": charts, "job": job, "balance": balance}
    return page(request, "pages/replay.html", context)
