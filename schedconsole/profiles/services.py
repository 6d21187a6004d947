"""Profile versions: validate, create, activate atomically (the engine first, then the database)."""

from __future__ import annotations

import copy
import re
from typing import Any

from django.db import transaction
from django.db.models import Max

from schedconsole.engine import bridge
from schedconsole.engine import operations as ops
from schedconsole.engine.bridge.answers import ThresholdPreview
from schedconsole.engine.client import call
from schedconsole.profiles.models import AuditEntry, PluginArgsChange, ProfileVersion


def validate(document: Any) -> list[str]:
    """The profile names the document would run, or BadInput naming the field."""
    if not isinstance(document, dict):
        raise bridge.BadInput("document", f"expected a KubeSchedulerConfiguration object, got {type(document).__name__}")
    where = unstorable_text(document)
    if where is not None:
        # PostgreSQL stores no NUL and no lone surrogate in JSON (plugin args holding one were a 500).
        raise bridge.BadInput(
            "document", f"{where}: must not contain NUL characters or lone surrogates (the database cannot store them)"
        )
    return bridge.build_check(document)


_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def unstorable_text(value: Any) -> str | None:
    """The path of the first key or string holding text PostgreSQL refuses, or None."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str):
            if _UNSTORABLE.search(item):
                return path or "<root>"
        elif isinstance(item, dict):
            for key, child in item.items():
                if isinstance(key, str) and _UNSTORABLE.search(key):
                    return path or "<root>"
                stack.append((child, f"{path}.{key}" if path else str(key)))
        elif isinstance(item, list):
            stack.extend((child, f"{path}[{i}]") for i, child in enumerate(item))
    return None


def create(document: dict[str, Any], user: Any, comment: str) -> ProfileVersion:
    """Store a validated document as the next version (not active)."""
    validate(document)
    with transaction.atomic():
        number = (ProfileVersion.objects.aggregate(m=Max("version"))["m"] or 0) + 1
        version = ProfileVersion.objects.create(version=number, document=document, author=_user(user), comment=comment)
        AuditEntry.objects.create(user=_name(user), action="profile.create", target=f"v{number}", after=document)
    return version


def activate(version: ProfileVersion, user: Any) -> ProfileVersion:
    """Make `version` the running configuration: the engine swaps profiles whole or not at all,
    and only then does the database mark it active."""
    with transaction.atomic():
        current = ProfileVersion.objects.select_for_update().filter(active=True).first()
        call(ops.ApplyConfig(document=version.document))
        ProfileVersion.objects.filter(active=True).update(active=False)
        ProfileVersion.objects.filter(pk=version.pk).update(active=True)
        AuditEntry.objects.create(
            user=_name(user),
            action="profile.activate",
            target=f"v{version.version}",
            before={"version": current.version} if current else None,
            after={"version": version.version},
        )
    version.refresh_from_db()
    return version


def with_plugin_args(
    document: dict[str, Any], plugin: str, args: Any, profile: str | None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A copy of the document with `plugin`'s args replaced in one profile (or every profile);
    also the args each touched profile had before."""
    out = copy.deepcopy(document)
    profiles = out.setdefault("profiles", [{"schedulerName": "default-scheduler"}])
    names = [p.get("schedulerName", "default-scheduler") for p in profiles]
    if profile is not None and profile not in names:
        raise bridge.BadInput("profile", f"unknown profile {profile!r}; known: {', '.join(names)}")
    before: dict[str, Any] = {}
    for entry, name in zip(profiles, names, strict=True):
        if profile is not None and name != profile:
            continue
        config = entry.setdefault("pluginConfig", [])
        existing = next((c for c in config if c.get("name") == plugin), None)
        before[name] = existing.get("args") if existing else None
        if existing is None:
            config.append({"name": plugin, "args": args})
        else:
            existing["args"] = args
    return out, before


def change_plugin_args(plugin: str, args: Any, profile: str | None, user: Any, dry_run: bool) -> dict[str, Any]:
    """Validate (and unless dry_run, apply as a new active version) one plugin's args."""
    active = ProfileVersion.objects.get(active=True)
    document, before = with_plugin_args(active.document, plugin, args, profile)
    names = validate(document)
    preview = {"plugin": plugin, "profiles": sorted(before), "before": before, "after": args, "document": document, "runs": names}
    if dry_run:
        if plugin == "LoadAwareScheduling" and profile is not None:
            preview["preview"] = threshold_preview(document, profile, recent_pods(profile))
        return {**preview, "dryRun": True}
    version = create(document, user, f"plugin args: {plugin} in {', '.join(sorted(before))}")
    activate(version, user)
    for name, old in before.items():
        PluginArgsChange.objects.create(plugin=plugin, profile=name, before=old, after=args, version=version, author=_user(user))
    AuditEntry.objects.create(
        user=_name(user),
        action="plugin-args.apply",
        target=plugin,
        before=before,
        after={"args": args, "version": version.version},
    )
    return {**preview, "dryRun": False, "version": version.version}


PREVIEW_CHUNK = 10


def threshold_preview(document: dict[str, Any], profile: str, pods: list[str]) -> ThresholdPreview:
    """The engine's threshold preview, asked for PREVIEW_CHUNK pods at a time so the engine
    schedules between the chunks instead of holding its loop for the whole preview."""
    result = call(ops.PreviewThresholds(document=document, profile=profile, pods=pods[:PREVIEW_CHUNK]))
    for start in range(PREVIEW_CHUNK, len(pods), PREVIEW_CHUNK):
        more = call(
            ops.PreviewThresholds(document=document, profile=profile, pods=pods[start : start + PREVIEW_CHUNK], nodes=False)
        )
        result["pods"] += more["pods"]
        result["podsChanged"] += more["podsChanged"]
    return result


def recent_pods(profile: str, limit: int = 100) -> list[str]:
    """The last `limit` distinct pods the profile made an attempt for, newest first."""
    from schedconsole.history.models import Attempt

    seen: dict[str, None] = {}
    for key in Attempt.objects.filter(profile=profile).order_by("-id").values_list("pod", flat=True)[: limit * 5]:
        seen.setdefault(key, None)
        if len(seen) >= limit:
            break
    return list(seen)


def text_document(text: str) -> dict[str, Any]:
    """A configuration typed into the console's editor (YAML or JSON), or BadInput naming the line."""
    docs = bridge.parse_documents(text, "profile")
    if len(docs) != 1 or not isinstance(docs[0], dict):
        raise bridge.BadInput("document", f"expected one KubeSchedulerConfiguration document, got {len(docs)} documents")
    return docs[0]


def diff_lines(before: str, after: str) -> list[tuple[str, str]]:
    """A unified diff of two YAML texts as (kind, line) pairs: kind is "add", "del", "hunk" or ""."""
    import difflib

    out: list[tuple[str, str]] = []
    for line in difflib.unified_diff(before.splitlines(), after.splitlines(), "active", "edited", lineterm="", n=3):
        if line.startswith(("---", "+++")):
            continue
        kind = {"+": "add", "-": "del", "@": "hunk"}.get(line[:1], "")
        out.append((kind, line))
    return out


def _user(user: Any) -> Any:
    return user if user is not None and getattr(user, "is_authenticated", False) else None


def _name(user: Any) -> str:
    return getattr(user, "username", "") or "system"
