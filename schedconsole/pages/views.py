"""Page views: the live score table and one attempt's detail."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from schedconsole.accounts.permissions import is_operator
from schedconsole.api.attempts import attempt_json
from schedconsole.engine.client import EngineCallError, call
from schedconsole.history.models import Attempt


def live(request: HttpRequest) -> HttpResponse:
    """The live score table; rows arrive over `/ws/scores/`."""
    context: dict[str, Any] = {"is_operator": is_operator(request.user), "profiles": [], "flags": {"debugTopNScores": 0}}
    try:
        context["profiles"] = call("stats")["profiles"]
        context["flags"] = call("debug_flags")
    except EngineCallError as exc:
        context["engine_error"] = exc.message
    return render(request, "pages/live.html", context)


def attempt(request: HttpRequest, pk: int) -> HttpResponse:
    """One attempt: every scored node per plugin, every node that failed a filter."""
    data = attempt_json(get_object_or_404(Attempt, pk=pk), full=True)
    totals: dict[str, int] = data.get("totals", {})
    scores: dict[str, dict[str, int]] = data.get("scores", {})
    plugins = sorted({p for per in scores.values() for p in per})
    rows = [{"node": n, "total": totals[n], "cells": [scores.get(n, {}).get(p, "") for p in plugins]} for n in sorted(totals, key=lambda n: -totals[n])]
    context = {
        "attempt": data,
        "plugins": plugins,
        "score_rows": rows,
        "filter_rows": sorted(data.get("filter", {}).items()),
        "is_operator": is_operator(request.user),
    }
    return render(request, "pages/attempt.html", context)
