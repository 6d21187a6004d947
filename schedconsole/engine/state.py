"""What the engine starts from: the active profile version, the stored cluster, the debug flags."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import transaction

from schedconsole.cluster.models import ClusterObject
from schedconsole.engine import bridge, demo
from schedconsole.engine.store import save_documents
from schedconsole.profiles.models import AuditEntry, ProfileVersion


def ensure_state() -> dict[str, Any]:
    """The active configuration document; on an empty database, version 1 (and the demo cluster)."""
    with transaction.atomic():
        active = ProfileVersion.objects.filter(active=True).first()
        if active is None:
            document = demo.config_document() if settings.DEMO_CLUSTER else bridge.default_config_document()
            bridge.check_config(document, "initial profile")
            number = (ProfileVersion.objects.order_by("-version").values_list("version", flat=True).first() or 0) + 1
            active = ProfileVersion.objects.create(
                version=number, document=document, active=True, comment="initial configuration"
            )
            AuditEntry.objects.create(user="system", action="profile.activate", target=f"v{number}", after=document)
        if settings.DEMO_CLUSTER and not ClusterObject.objects.exists():
            docs = demo.cluster_documents()
            save_documents(docs)
            AuditEntry.objects.create(user="system", action="cluster.import", target="demo cluster", after={"objects": len(docs)})
    return dict(active.document)


def initial_flags() -> tuple[int, bool]:
    """The debug flags as last set (kept across restarts), else the settings' defaults."""
    last = AuditEntry.objects.filter(action="debug-flags.set").order_by("-id").first()
    if last is not None and isinstance(last.after, dict):
        return int(last.after.get("debugTopNScores", 0)), bool(last.after.get("debugFilterFailure", False))
    return settings.DEBUG_TOP_N_SCORES, False
