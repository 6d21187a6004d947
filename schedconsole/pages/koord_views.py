"""Pages for Koordinator's and kube-scheduler's longer stories: gangs, preemptions, and a browser
for every plugin route the engine serves under /apis/v1."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from django.http import HttpRequest, HttpResponse

from schedconsole.engine import operations as ops
from schedconsole.engine.client import call
from schedconsole.pages.views import PAGE_SIZE, int_param, page, pager_context


def gangs(request: HttpRequest) -> HttpResponse:
    """Every gang: members by state, which member blocks it and why, Permit timers, gang groups."""
    return page(request, "pages/gangs.html", call(ops.GetGangs()))


def _clock(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%H:%M:%S.%f")[:-3]


def timeline_rows(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A story's events as rows: an API call's `started` and its `finished` or `error` make one row
    (with how long it took, or "in progress" until it ends); nominations and retries are rows of their own."""
    rows: list[dict[str, Any]] = []
    open_calls: dict[tuple[str, str], dict[str, Any]] = {}
    # By time: a nomination is recorded when its attempt is published, after the patch it made.
    for e in sorted(events, key=lambda e: e["at"]):
        key = (e["call"], e["target"])
        if e["phase"] == "started":
            row = {
                "at": _clock(e["at"]),
                "call": e["call"],
                "target": e["target"],
                "result": "in progress",
                "ms": None,
                "error": "",
                "started": e["at"],
            }
            open_calls[key] = row
            rows.append(row)
            continue
        started = open_calls.pop(key, None)
        if started is not None and e["phase"] in ("finished", "error"):
            started.update(result=e["phase"], error=e["error"], ms=round((e["at"] - started["started"]) * 1000, 1))
            continue
        rows.append(
            {
                "at": _clock(e["at"]),
                "call": e["call"],
                "target": e["target"],
                "result": e["phase"],
                "ms": None,
                "error": e.get("error", ""),
                "victims": e.get("victims"),
            }
        )
    return rows


def preemption(request: HttpRequest) -> HttpResponse:
    """Preemptors waiting now, and each preemption newest first as the engine recorded it happen:
    nominated node, victims, every API call's progress and result, the retries."""
    offset = int_param(request, "offset")
    data = call(ops.GetPreemptionTimeline(offset=offset, limit=PAGE_SIZE))
    stories = [{**s, "rows": timeline_rows(s["events"])} for s in data["results"]]
    in_flight = call(ops.GetNominated())
    context = {
        "stories": stories,
        "pager": pager_context(request, data["count"], offset, PAGE_SIZE),
        "in_flight": in_flight["results"],
        "in_flight_count": in_flight["count"],
    }
    return page(request, "pages/preemption.html", context)


def plugin_api(request: HttpRequest) -> HttpResponse:
    """Every route of /apis/v1/__services__, callable from the page."""
    answer = call(ops.Dispatch(method="GET", path="/apis/v1/__services__"))
    services = json.loads(ops.route_body(answer)) if answer["status"] == 200 else {}
    routes = [
        {"method": method, "path": path, "params": [part[1:] for part in path.split("/") if part.startswith(":")]}
        for method, paths in sorted(services.items())
        for path in paths
    ]
    return page(request, "pages/plugin_api.html", {"routes": routes})
