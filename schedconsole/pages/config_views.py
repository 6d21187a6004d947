"""Pages that change the scheduler: profile versions (edit, validate, diff, apply, roll back) and
LoadAware thresholds (preview, then apply). Changes go through `profiles.services`, audited."""

from __future__ import annotations

import json
from typing import Any

import yaml
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from schedconsole.accounts.permissions import is_operator
from schedconsole.engine import bridge
from schedconsole.engine import operations as ops
from schedconsole.engine.client import EngineCallError, call
from schedconsole.profiles import services
from schedconsole.profiles.models import AuditEntry, PluginArgsChange, ProfileVersion

LOADAWARE = "LoadAwareScheduling"


def _yaml(document: Any) -> str:
    return yaml.safe_dump(document, sort_keys=False)


def _operator(request: HttpRequest) -> None:
    if not is_operator(request.user):
        raise PermissionDenied("you need the operator role to change profiles")


def profiles(request: HttpRequest) -> HttpResponse:
    """Versions, newest first; the editor holds the chosen (or active) version."""
    versions = list(ProfileVersion.objects.select_related("author")[:100])
    active = next((v for v in versions if v.active), None) or ProfileVersion.objects.filter(active=True).first()
    chosen = active
    if request.GET.get("version"):
        chosen = get_object_or_404(ProfileVersion, version=request.GET["version"])
    active_text = _yaml(active.document) if active else ""
    # After a refused Apply the editor holds what was refused, with why and the comment given.
    refused = request.session.pop("profile_refused", None) or {}
    text = refused.get("text") or (_yaml(chosen.document) if chosen else _yaml(bridge.default_config_document()))
    context = {
        "versions": versions,
        "active": active,
        "chosen": chosen,
        "text": text,
        "refused": refused.get("message", ""),
        "comment": refused.get("comment", ""),
        "active_text": active_text,
        "diff": services.diff_lines(active_text, text),
        "is_operator": is_operator(request.user),
    }
    return render(request, "pages/profiles.html", context)


@require_POST
def profile_diff(request: HttpRequest) -> JsonResponse:
    """The editor's text against the active version, as (kind, line) pairs."""
    active = ProfileVersion.objects.filter(active=True).first()
    return JsonResponse({"lines": services.diff_lines(_yaml(active.document) if active else "", request.POST.get("text", ""))})


@require_POST
def profile_apply(request: HttpRequest) -> HttpResponse:
    """Store the editor's text as a new version and activate it (whole or not at all)."""
    _operator(request)
    text = request.POST.get("text", "")
    comment = request.POST.get("comment", "")
    try:
        version = services.create(services.text_document(text), request.user, comment)
        services.activate(version, request.user)
    except (bridge.BadInput, EngineCallError) as exc:
        why = f"{exc.field + ': ' if exc.field else ''}{exc.message}"
        messages.error(request, f"Not applied: {why}")
        request.session["profile_refused"] = {"text": text, "comment": comment, "message": why}
        return redirect("profiles")
    messages.success(request, f"Version {version.version} is active.")
    return redirect("profiles")


@require_POST
def profile_activate(request: HttpRequest, version: int) -> HttpResponse:
    """Roll back (or forward): make an existing version the running one."""
    _operator(request)
    target = get_object_or_404(ProfileVersion, version=version)
    try:
        services.activate(target, request.user)
    except (bridge.BadInput, EngineCallError) as exc:
        messages.error(request, f"Version {version} was not activated: {getattr(exc, 'message', exc)}")
        return redirect("profiles")
    messages.success(request, f"Version {version} is active.")
    return redirect("profiles")


def thresholds(request: HttpRequest) -> HttpResponse:
    """Sliders for LoadAware thresholds and weights per profile, previewed before applying."""
    running = call(ops.GetPluginArgs())
    active = ProfileVersion.objects.filter(active=True).first()
    document = active.document if active else bridge.default_config_document()
    configured: dict[str, Any] = {}
    for entry in document.get("profiles") or []:
        name = entry.get("schedulerName", "default-scheduler")
        args = next((c.get("args") for c in entry.get("pluginConfig") or [] if c.get("name") == LOADAWARE), None)
        configured[name] = args or {}
    panels = []
    for profile, plugins in running.items():
        args = plugins.get(LOADAWARE)
        if args is None:
            continue
        panels.append(
            {
                "profile": profile,
                "thresholds": [(r, args["usageThresholds"].get(r, 0)) for r in ("cpu", "memory")],
                "weights": [(r, args["resourceWeights"].get(r, 0)) for r in ("cpu", "memory")],
                "dominant": args["dominantResourceWeight"],
                "configured": json.dumps(configured.get(profile, {})),
            }
        )
    changes = PluginArgsChange.objects.filter(plugin=LOADAWARE).select_related("version", "author").order_by("-id")[:10]
    audit = AuditEntry.objects.filter(action="plugin-args.apply", target=LOADAWARE)[:10]
    context = {"panels": panels, "changes": changes, "audit": audit, "is_operator": is_operator(request.user)}
    return render(request, "pages/thresholds.html", context)


def audit(request: HttpRequest) -> HttpResponse:
    """Every change, newest first (the API's `/api/audit/` as a page), filtered by action or user."""
    from schedconsole.pages.views import PAGE_SIZE, int_param, pager_context

    entries = AuditEntry.objects.all()
    action, user = request.GET.get("action", ""), request.GET.get("user", "")
    if action:
        entries = entries.filter(action=action)
    if user:
        entries = entries.filter(user=user)
    offset = int_param(request, "offset")
    context = {
        "entries": list(entries[offset : offset + PAGE_SIZE]),
        "pager": pager_context(request, entries.count(), offset, PAGE_SIZE),
        "actions": list(AuditEntry.objects.order_by().values_list("action", flat=True).distinct()),
        "action": action,
        "user_filter": user,
        "is_operator": is_operator(request.user),
    }
    return render(request, "pages/audit.html", context)
