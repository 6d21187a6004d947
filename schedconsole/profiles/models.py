"""Profile versions (whole KubeSchedulerConfiguration documents), plugin args changes, the audit log."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class ProfileVersion(models.Model):
    """One version of the scheduler configuration; exactly one is active."""

    version = models.PositiveIntegerField(unique=True)
    document = models.JSONField()
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created = models.DateTimeField(auto_now_add=True)
    comment = models.TextField(blank=True, default="")
    active = models.BooleanField(default=False)

    class Meta:
        ordering = ["-version"]
        constraints = [
            models.UniqueConstraint(fields=["active"], condition=models.Q(active=True), name="one_active_profile_version")
        ]

    def __str__(self) -> str:
        return f"v{self.version}{' (active)' if self.active else ''}"


class PluginArgsChange(models.Model):
    """A live change of one plugin's args in one profile."""

    plugin = models.CharField(max_length=128)
    profile = models.CharField(max_length=253)
    before = models.JSONField(null=True)
    after = models.JSONField()
    version = models.ForeignKey(ProfileVersion, on_delete=models.PROTECT)
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.profile}/{self.plugin} -> v{self.version_id}"


class AuditEntry(models.Model):
    """Every change: who, when, what, before and after."""

    at = models.DateTimeField(auto_now_add=True, db_index=True)
    user = models.CharField(max_length=150, blank=True, default="")
    action = models.CharField(max_length=64)
    target = models.CharField(max_length=512, blank=True, default="")
    before = models.JSONField(null=True)
    after = models.JSONField(null=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M:%S} {self.user} {self.action} {self.target}"
