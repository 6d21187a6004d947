"""The cluster page: which cluster the engine schedules (the mode), the API server, leadership and
the Lease, the informers, the continuous sync of a live cluster (start and stop it here), and in
shadow mode how often our profile agrees with the cluster's own scheduler."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from schedconsole.accounts.permissions import is_operator
from schedconsole.cluster import sync as sync_intent
from schedconsole.engine.client import EngineCallError, call
from schedconsole.engine.operations import GetClusterStatus, StartSync
from schedconsole.pages.views import page
from schedconsole.profiles.models import AuditEntry


def score_table(disagreement: dict[str, Any]) -> dict[str, Any]:
    """Both placements of one pod as rows of one table under our profile: our node, theirs, then
    the best-scored nodes; one column per score plugin."""
    ours, theirs = disagreement.get("ourRow") or {}, disagreement.get("theirRow") or {}
    rows = [("ours", ours), ("theirs", theirs)]
    rows += [
        ("top", row) for row in disagreement.get("top") or [] if row.get("node") not in (ours.get("node"), theirs.get("node"))
    ]
    plugins = sorted({p for _, row in rows for p in (row.get("plugins") or {})})
    return {
        "plugins": plugins,
        "rows": [
            {
                "who": who,
                "node": row.get("node"),
                "total": row.get("total"),
                "filtered": row.get("filtered"),
                "cells": [(row.get("plugins") or {}).get(p) for p in plugins],
            }
            for who, row in rows
            if row
        ],
    }


def cluster(request: HttpRequest) -> HttpResponse:
    """The mode and everything about the cluster behind it."""
    context: dict[str, Any] = {"status": None, "source": _source(), "intent": sync_intent.intent(), "demo": settings.DEMO_CLUSTER}
    try:
        status = call(GetClusterStatus())
    except EngineCallError as exc:
        context["engine_error"] = exc.message
        return page(request, "pages/cluster.html", context)
    shadow = status.get("shadow")
    if shadow:
        # The real disagreements first, then the pods whose cluster moved between our looks.
        others = list(shadow.get("disagreements") or []) + list(shadow.get("changed") or [])
        context["disagreements"] = [{**d, "table": score_table(d)} for d in others][:20]
    context["status"] = status
    return page(request, "pages/cluster.html", context)


def _source() -> str:
    """Where a sync started here reads from (the settings' kubeconfig or service account)."""
    if settings.KUBE_IN_CLUSTER:
        return "the pod's service account"
    return settings.KUBECONFIG or "the default kubeconfig (~/.kube/config)"


@require_POST
def sync(request: HttpRequest) -> HttpResponse:
    """Start or stop the continuous sync of the live cluster the settings name."""
    if not is_operator(request.user):
        raise PermissionDenied("you need the operator role to start or stop the sync")
    action = request.POST.get("action")
    try:
        if action == "start":
            keep = request.POST.get("bindings", "keep") != "pending"
            op = StartSync(
                kubeconfig=settings.KUBECONFIG,
                context=settings.KUBE_CONTEXT,
                in_cluster=settings.KUBE_IN_CLUSTER,
                keep_bindings=keep,
            )
            result = sync_intent.start(op, request.user.get_username())
            messages.success(
                request,
                f"Sync from {result['server']} started ({'bindings kept' if keep else 'pods left pending for our engine'}).",
            )
        elif action == "stop":
            stopped, why = sync_intent.stop()
            if stopped is None:  # a sync that could not resume after a restart: now none will
                messages.success(request, f"Sync stopped; it will not resume ({why}).")
                AuditEntry.objects.create(
                    user=request.user.get_username(), action="cluster.sync.stop", target="", after={"running": False}
                )
                return redirect("cluster")
            result = stopped
            messages.success(request, "Sync stopped; what it mirrored stays.")
        else:
            messages.error(request, f"unknown action {action!r}; expected start or stop")
            return redirect("cluster")
    except EngineCallError as exc:
        messages.error(request, f"The sync was not {'started' if action == 'start' else 'stopped'}: {exc.message}")
        return redirect("cluster")
    AuditEntry.objects.create(
        user=request.user.get_username(), action=f"cluster.sync.{action}", target=str(result.get("server")), after=result
    )
    return redirect("cluster")
