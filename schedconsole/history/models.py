"""Scheduling attempts with their score rows; kept for a retention window."""

from __future__ import annotations

from django.db import models


class Attempt(models.Model):
    """One scheduling attempt: its attempt record (docs/architecture.md, "The attempt record") in `detail`, its score rows as a
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


class ObjectChange(models.Model):
    """The log of object changes a replay reads (docs/replay.md): a pod created (its document) or
    deleted, a node added or replaced (its document) or deleted, a pod bound (`node`), in the order
    the store committed them. Written by the store in the same transaction as the change itself."""

    at = models.DateTimeField(db_index=True)
    action = models.CharField(max_length=8)
    kind = models.CharField(max_length=16)
    namespace = models.CharField(max_length=253, blank=True, default="")
    name = models.CharField(max_length=253)
    uid = models.CharField(max_length=64, blank=True, default="")
    node = models.CharField(max_length=253, blank=True, default="")
    document = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return (
            f"{self.at:%Y-%m-%dT%H:%M:%S} {self.action} {self.kind} {self.namespace + '/' if self.namespace else ''}{self.name}"
        )
