"""The engine's fencing token: which leader may still write (docs/production.md, "One leader")."""

from __future__ import annotations

from django.db import models


class EngineLease(models.Model):
    """One row. Each engine that becomes leader increments `token` before it loads the cluster; the
    store writes a batch only while the row still holds its own token, so a leader that was paused
    past its Redis lock's TTL cannot store a binding after its successor has taken over."""

    token = models.BigIntegerField(default=0)
    holder = models.CharField(max_length=255, blank=True, default="")
    acquired = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"lease {self.token} held by {self.holder or 'nobody'}"
