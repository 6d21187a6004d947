"""History retention."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from schedconsole.history.models import Attempt


def prune() -> int:
    """Delete attempts (with their score rows) older than the retention window, and the oldest beyond
    the maximum count; returns how many attempts went."""
    deleted = 0
    if settings.HISTORY_RETENTION_DAYS > 0:
        cutoff = timezone.now() - timedelta(days=settings.HISTORY_RETENTION_DAYS)
        deleted += Attempt.objects.filter(at__lt=cutoff).delete()[1].get("history.Attempt", 0)
    if settings.HISTORY_MAX_ATTEMPTS > 0:
        newest = Attempt.objects.order_by("-id").values_list("id", flat=True)[
            settings.HISTORY_MAX_ATTEMPTS : settings.HISTORY_MAX_ATTEMPTS + 1
        ]
        boundary = list(newest)
        if boundary:
            deleted += Attempt.objects.filter(id__lte=boundary[0]).delete()[1].get("history.Attempt", 0)
    return deleted
