"""Pages for Koordinator's and kube-scheduler's longer stories: gangs, preemptions, and a browser
for every plugin route the engine serves under /apis/v1."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse

from schedconsole.engine.client import call
from schedconsole.history.models import Attempt
from schedconsole.pages.views import PAGE_SIZE, _int, _pager, page


def gangs(request: HttpRequest) -> HttpResponse:
    """Every gang: members by state, which member blocks it and why, Permit timers, gang groups."""
    return page(request, "pages/gangs.html", call("gangs"))


def preemption_story(preemptor: Attempt, later: list[dict[str, Any]]) -> dict[str, Any]:
    """One preemption as a timeline: the nominating attempt, its victims, then the preemptor's
    following attempts (the retry that binds it, or why it still waits)."""
    detail = preemptor.detail or {}
    steps = [{"at": preemptor.at, "what": "nominated", "node": preemptor.nominated_node, "text": preemptor.message, "id": preemptor.id}]
    for victim in detail.get("victims", []):
        steps.append({"at": preemptor.at, "what": "victim deleted", "node": preemptor.nominated_node, "text": victim, "id": preemptor.id})
    for row in later:
        what = {"Scheduled": "bound", "Nominated": "nominated again"}.get(row["outcome"], f"retry: {row['outcome']}")
        steps.append({"at": row["at"], "what": what, "node": row["node"] or row["nominated_node"], "text": row["message"], "id": row["id"]})
    done = any(s["what"] == "bound" for s in steps)
    return {"pod": preemptor.pod, "nominated": preemptor.nominated_node, "victims": detail.get("victims", []), "steps": steps, "done": done}


def preemption(request: HttpRequest) -> HttpResponse:
    """Preemptions newest first, a page at a time, each as its timeline."""
    offset = _int(request, "offset")
    found = Attempt.objects.filter(outcome="Nominated").order_by("-id")
    count = found.count()
    stories = []
    for attempt in found[offset : offset + PAGE_SIZE]:
        later = list(Attempt.objects.filter(uid=attempt.uid, id__gt=attempt.id).order_by("id").values("id", "at", "outcome", "node", "nominated_node", "message")[:10])
        stories.append(preemption_story(attempt, later))
    in_flight = call("nominated")
    context = {"stories": stories, "pager": _pager(request, count, offset, PAGE_SIZE), "in_flight": in_flight["results"], "in_flight_count": in_flight["count"]}
    return page(request, "pages/preemption.html", context)


def plugin_api(request: HttpRequest) -> HttpResponse:
    """Every route of /apis/v1/__services__, callable from the page."""
    import base64
    import json

    answer = call("dispatch", {"method": "GET", "path": "/apis/v1/__services__", "body": "", "query": {}})
    services = json.loads(base64.b64decode(answer["body"])) if answer["status"] == 200 else {}
    routes = [{"method": method, "path": path, "params": [part[1:] for part in path.split("/") if part.startswith(":")]}
              for method, paths in sorted(services.items()) for path in paths]
    return page(request, "pages/plugin_api.html", {"routes": routes})
