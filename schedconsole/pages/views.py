"""Page views: live scores, overview, pending pods, one pod, nodes, one node, one attempt.

Views only translate: the engine answers through `call` (paged there, never the whole cluster),
history comes from the database, charts from `charts` drawn by `svg`.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Mapping
from typing import Any, TypeVar
from urllib.parse import urlencode

import yaml
from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from schedconsole.accounts.permissions import is_operator
from schedconsole.api.attempts import attempt_json
from schedconsole.engine import operations as ops
from schedconsole.engine.client import EngineCallError, call
from schedconsole.history import compact
from schedconsole.history.models import Attempt
from schedconsole.pages import charts, svg

PAGE_SIZE = 50
QUEUES = ("active", "backoff", "unschedulable", "gated")
T = TypeVar("T")


def _engine(op: ops.Operation[T]) -> T:
    """An engine answer for a page; 404 for what does not exist, else the error is shown."""
    try:
        return call(op)
    except EngineCallError as exc:
        if exc.status == 404:
            raise Http404(exc.message) from exc
        raise


def page(request: HttpRequest, template: str, context: Mapping[str, Any]) -> HttpResponse:
    """Render a page; every page's header shows the user's role."""
    return render(request, template, {**context, "is_operator": is_operator(request.user)})


def int_param(request: HttpRequest, name: str, default: int = 0) -> int:
    """A whole-number query parameter, 0 or more; `default` when it is not a number."""
    try:
        return max(0, int(request.GET.get(name, default)))
    except ValueError:
        return default


def pager_context(request: HttpRequest, count: int, offset: int, limit: int) -> dict[str, Any]:
    """Links to the previous and next page keeping the other query parameters."""
    params = {k: v for k, v in request.GET.items() if k != "offset"}

    def link(at: int) -> str:
        return "?" + urlencode({**params, "offset": at})

    return {
        "count": count,
        "first": offset + 1 if count else 0,
        "last": min(offset + limit, count),
        "previous": link(max(0, offset - limit)) if offset > 0 else None,
        "next": link(offset + limit) if offset + limit < count else None,
    }


def live(request: HttpRequest) -> HttpResponse:
    """The live score table; rows arrive over `/ws/scores/`."""
    context: dict[str, Any] = {
        "is_operator": is_operator(request.user),
        "profiles": [],
        "flags": {"debugTopNScores": 0},
        "timing": {"every": 0},
    }
    try:
        context["profiles"] = call(ops.GetStats())["profiles"]
        context["flags"] = call(ops.GetDebugFlags())
        context["timing"] = call(ops.PluginTiming())
    except EngineCallError as exc:
        context["engine_error"] = exc.message
    choices = [(1, "every attempt"), (10, "1 in 10 attempts"), (100, "1 in 100 attempts"), (0, "off")]
    if context["timing"]["every"] not in dict(choices):
        choices.insert(0, (context["timing"]["every"], f"1 in {context['timing']['every']} attempts"))
    context["timing_choices"] = choices
    context["recent"] = recent_messages(int(context["flags"]["debugTopNScores"]))
    return render(request, "pages/live.html", context)


def recent_messages(top: int, count: int = 50) -> list[dict[str, Any]]:
    """The newest stored attempts as the live websocket sends attempts (oldest first), so the table
    starts with what happened before the page opened; score rows are the stored normalized ones."""
    rows = Attempt.objects.order_by("-id").values("at", "pod", "profile", "outcome", "node", "feasible_nodes", "detail")[:count]
    out = []
    for row in reversed(list(rows)):
        table = (row["detail"] or {}).get("scoreTable") or {"plugins": [], "rows": []}
        scores = [
            {"node": node, "total": total, "plugins": dict(zip(table["plugins"], values, strict=True))}
            for node, total, values in table["rows"][:top]
        ]
        out.append(
            {
                "type": "attempt",
                "at": row["at"].isoformat().replace("+00:00", "Z"),
                "pod": row["pod"],
                "profile": row["profile"],
                "outcome": row["outcome"],
                "node": row["node"] or None,
                "feasibleNodes": row["feasible_nodes"],
                "scores": scores,
                "stored": True,
            }
        )
    return out


def attempt(request: HttpRequest, pk: int) -> HttpResponse:
    """One attempt: every scored node per plugin, every node that failed a filter (its permanent link)."""
    data = attempt_json(get_object_or_404(Attempt, pk=pk), full=True)
    totals: dict[str, int] = data.get("totals", {})
    scores: dict[str, dict[str, int]] = data.get("scores", {})
    plugins = sorted({p for per in scores.values() for p in per})
    rows = [
        {"node": n, "total": totals[n], "cells": [scores.get(n, {}).get(p, "") for p in plugins]}
        for n in sorted(totals, key=lambda n: -totals[n])
    ]
    context = {
        "attempt": data,
        "plugins": plugins,
        "score_rows": rows,
        "filter_groups": filter_groups(data),
        "is_operator": is_operator(request.user),
    }
    return render(request, "pages/attempt.html", context)


def filter_groups(data: dict[str, Any]) -> list[dict[str, Any]]:
    """An attempt's filter failures for people: one row per plugin, code and reasons, with how many
    nodes and which (as name ranges). Rows stored before the compact form are grouped here."""
    groups = data.get("filterGroups")
    if groups is None:
        rows = ((node, f["plugin"], f["code"], tuple(f["reasons"])) for node, f in sorted(data.get("filter", {}).items()))
        groups, _ = compact.group_failures(rows, len(data.get("filter", {})))
    return [{**g, "names": compact.describe_names(g["nodes"], limit=40)} for g in groups]


_recent: dict[str, Any] = {"last_id": 0, "rows": deque(maxlen=3000)}
_recent_lock = threading.Lock()


def recent_attempts(limit: int = 3000) -> list[tuple[Any, str, float]]:
    """(at, outcome, seconds) of the newest `limit` attempts, for the throughput chart. Reading an
    attempt's timings parses its whole stored row, so each process keeps what it has read and asks
    the database only for attempts newer than those."""
    with _recent_lock:
        rows: deque[tuple[Any, str, float]] = _recent["rows"]
        newest = Attempt.objects.order_by("-id").values_list("id", flat=True).first() or 0
        if newest < _recent["last_id"]:  # history pruned or replaced: start over
            rows.clear()
            _recent["last_id"] = 0
        fresh = (
            Attempt.objects.filter(id__gt=_recent["last_id"])
            .order_by("-id")
            .values_list("id", "at", "outcome", "detail__timings")[:limit]
        )
        got = list(fresh)[::-1]
        if len(got) == limit:
            rows.clear()
        for pk, at, outcome, timings in got:
            rows.append((at, outcome, sum((timings or {}).values())))
            _recent["last_id"] = pk
        return list(rows)[-limit:]


def overview(request: HttpRequest) -> HttpResponse:
    """Utilization heatmaps, pending pods by queue and by first rejecting plugin, throughput and
    latency, preemptions in flight, gangs waiting."""
    data = _engine(ops.GetOverview())
    figures = {
        "utilization": svg.render(charts.utilization_heatmap(data["nodes"], data["utilization"])),
        "queue": svg.render(charts.counts_bar(data["queue"], "Pending pods by queue"), width=520),
        "plugins": svg.render(charts.counts_bar(data["pendingByPlugin"], "Pending pods by first rejecting plugin"), width=520),
        "throughput": svg.render(charts.throughput_and_latency(recent_attempts())),
    }
    loadaware = [
        {"profile": p, "figure": svg.render(charts.loadaware_heatmap(data["nodes"], la["percent"], la["thresholds"])), **la}
        for p, la in data["loadaware"].items()
    ]
    context = {"data": data, "figures": figures, "loadaware": loadaware, "is_operator": is_operator(request.user)}
    template = "pages/overview_body.html" if request.GET.get("fragment") else "pages/overview.html"
    return page(request, template, context)


def pods(request: HttpRequest) -> HttpResponse:
    """Pending pods, one page at a time, filtered by queue and name."""
    queue = request.GET.get("queue", "")
    query = request.GET.get("q", "").strip()
    offset = int_param(request, "offset")
    data = _engine(ops.GetPendingPage(queue=queue if queue in QUEUES else "", q=query, offset=offset, limit=PAGE_SIZE))
    context = {
        "rows": data["results"],
        "pager": pager_context(request, data["count"], offset, PAGE_SIZE),
        "queue": queue,
        "q": query,
        "queues": QUEUES,
    }
    return page(request, "pages/pods.html", context)


def pod(request: HttpRequest, namespace: str, name: str) -> HttpResponse:
    """One pod: why it waits (or where it went), its attempts, score bars, what-if and compare."""
    why = _engine(ops.Explain(namespace=namespace, name=name))
    key = f"{namespace}/{name}"
    history = list(
        Attempt.objects.filter(pod=key)
        .order_by("-id")
        .values("id", "at", "attempt", "outcome", "node", "nominated_node", "profile", "message")[:50]
    )
    if why["evaluation"] is not None:
        rows, scores_title = why["evaluation"]["topRows"], "Top nodes now (weighted score per plugin)"
    else:
        rows, scores_title = (
            decision_rows(key),
            "Top nodes when it was scheduled (normalized score per plugin, from its decision record)",
        )
    context = {
        "why": why,
        "history": history,
        "scores": svg.render(charts.score_bars(rows), width=760) if rows else None,
        "scores_title": scores_title,
        "manifest_yaml": yaml.safe_dump(why["manifest"], sort_keys=False),
        "simulator_yaml": written_annotations(why["manifest"])
        or (simulator_annotations(history[0]["id"], why["filterPlugins"]) if history else ""),
        "simulator_written": bool(written_annotations(why["manifest"])),
        "editable": settings.CLUSTER_MODE == "simulated",
        "profiles": call(ops.GetStats())["profiles"],
        "is_operator": is_operator(request.user),
    }
    return page(request, "pages/pod.html", context)


SIMULATOR = "kube-scheduler-simulator.sigs.k8s.io"


def written_annotations(manifest: Mapping[str, Any]) -> str:
    """The result annotations the engine wrote on the pod (its latest attempt; the history left out),
    as YAML; "" when it wrote none (SCHEDCONSOLE_RESULT_ANNOTATIONS off, a live cluster)."""
    annotations = (manifest.get("metadata") or {}).get("annotations") or {}
    written = {
        k: v for k, v in sorted(annotations.items()) if k.startswith(SIMULATOR + "/") and k != f"{SIMULATOR}/result-history"
    }
    if not written:
        return ""
    return yaml.safe_dump({"metadata": {"annotations": written}}, sort_keys=False, width=1 << 16)


def simulator_annotations(attempt_id: int, filter_plugins: list[str]) -> str:
    """An attempt's result as kube-scheduler-simulator writes it on the pod (its annotation keys,
    JSON values, scores as strings), as YAML: the selected node, each failing node's first failing
    filter with the plugins before it "passed" (`filter_plugins`: the profile's Filter plugins now;
    nodes that passed every filter read "passed" for each where the record kept them), the kept
    nodes' normalized scores per plugin (`score-result`) and each of those times the plugin's
    weight (`finalscore-result`, node → plugin → weighted score, as the simulator's resultstore
    keeps it; attempts stored before the weights were kept have none)."""
    attempt = Attempt.objects.get(pk=attempt_id)
    data = attempt_json(attempt, full=True)
    filters: dict[str, dict[str, str]] = {}
    for n, f in data.get("filter", {}).items():
        plugin = f["plugin"]
        ran = filter_plugins[: filter_plugins.index(plugin)] if plugin in filter_plugins else []
        filters[n] = {**dict.fromkeys(ran, "passed"), plugin: "; ".join(f["reasons"]) or f["code"]}
    passed = dict.fromkeys(filter_plugins or ["(every filter)"], "passed")
    for node in data.get("totals", {}):
        filters.setdefault(node, dict(passed))
    if data.get("node"):
        filters.setdefault(data["node"], dict(passed))
    scores = {n: {p: str(v) for p, v in per.items()} for n, per in data.get("scores", {}).items()}
    annotations = {
        f"{SIMULATOR}/selected-node": data.get("node") or "",
        f"{SIMULATOR}/filter-result": json.dumps(filters, sort_keys=True),
        f"{SIMULATOR}/score-result": json.dumps(scores, sort_keys=True),
    }
    table = (attempt.detail or {}).get("scoreTable") or {}
    if "weights" in table or not table.get("plugins"):
        weight = dict(zip(table.get("plugins", []), table.get("weights", []), strict=True))
        final = {n: {p: str(v * weight[p]) for p, v in per.items()} for n, per in data.get("scores", {}).items()}
        annotations[f"{SIMULATOR}/finalscore-result"] = json.dumps(final, sort_keys=True)
    return yaml.safe_dump({"metadata": {"annotations": annotations}}, sort_keys=False, width=1 << 16)


def decision_rows(pod_key: str, top: int = 10) -> list[dict[str, Any]]:
    """The score rows of the pod's latest attempt that placed it, best first (empty if none kept)."""
    last = Attempt.objects.filter(pod=pod_key, outcome="Scheduled").order_by("-id").first()
    if last is None:
        return []
    table = (last.detail or {}).get("scoreTable") or {"plugins": [], "rows": []}
    plugins = table["plugins"]
    return [
        {"node": node, "total": total, "plugins": dict(zip(plugins, values, strict=True))}
        for node, total, values in table["rows"][:top]
    ]


def nodes(request: HttpRequest) -> HttpResponse:
    """Nodes with allocation bars: filtered, sorted and paged by the engine."""
    query = request.GET.get("q", "").strip()
    sort = request.GET.get("sort", "name")
    offset = int_param(request, "offset")
    try:
        data = call(ops.GetNodesPage(q=query, sort=sort, offset=offset, limit=PAGE_SIZE))
    except EngineCallError as exc:
        if exc.status != 400:
            raise
        sort, error = "name", exc.message
        data = call(ops.GetNodesPage(q=query, sort=sort, offset=offset, limit=PAGE_SIZE))
    else:
        error = ""
    sorts = [
        (key, label)
        for key, label in (
            ("name", "name"),
            ("-cpu", "CPU ↓"),
            ("cpu", "CPU ↑"),
            ("-memory", "memory ↓"),
            ("memory", "memory ↑"),
            ("-pods", "pods ↓"),
        )
    ]
    context = {
        "rows": data["results"],
        "pager": pager_context(request, data["count"], offset, PAGE_SIZE),
        "q": query,
        "sort": sort,
        "sorts": sorts,
        "error": error,
    }
    return page(request, "pages/nodes.html", context)


def node(request: HttpRequest, name: str) -> HttpResponse:
    """One node: NodeInfo, pods, NUMA CPUs, LoadAware estimate, reservations."""
    data = _engine(ops.GetNodePage(name=name))
    numa = (data["routes"].get("numa") or {}) if data["routes"] else {}
    context = {
        "node": data,
        "numa": numa,
        "cpu_topology": data["routes"].get("cpuTopology"),
        "reservations": data["routes"].get("reservations"),
        "node_yaml": yaml.safe_dump(data["nodeInfo"]["node"], sort_keys=False),
        "editable": settings.CLUSTER_MODE == "simulated",
    }
    return page(request, "pages/node.html", context)
