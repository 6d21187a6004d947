"""Scheduling attempts with their score rows; kept for a retention window."""

from __future__ import annotations

from django.db import models


class Attempt(models.Model):
    """One scheduling attempt: DESIGN section 5's `results[]` entry (`detail`), its score rows as a
    table in `detail["scoreTable"]`, and the columns lists are filtered by."""

    at = models.DateTimeField(db_index=True)
    pod = models.CharField(max_length=507)
    uid = models.CharField(max_length=64)
    profile = models.CharField(max_length=253)
    attempt = models.IntegerField()
    outcome = models.CharField(max_length=32)
    node = models.CharField(max_length=253, blank=True, default="")
    nominated_node = models.CharField(max_length=253, blank=True, default="")
    message = models.TextField(blank=True, default="")
    feasible_nodes = models.IntegerField(default=0)
    detail = models.JSONField()

    class Meta:
        indexes = [models.Index(fields=["pod", "at"]), models.Index(fields=["uid", "attempt"])]
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.pod} #{self.attempt} {self.outcome}"
