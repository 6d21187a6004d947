"""A replay, its candidates and the parts (one scratch engine each) its sweep is cut into."""

from __future__ import annotations

from django.db import models

from schedconsole.cluster.models import Job


class Replay(models.Model):
    """One sweep: a window of a trace (openb, or the console's change log) replayed under each
    candidate; `params` as the request gave them (checked), `job` the progress on /jobs/."""

    created = models.DateTimeField(auto_now_add=True)
    user = models.CharField(max_length=150, blank=True, default="")
    params = models.JSONField(default=dict)
    state = models.CharField(max_length=16, default="queued")
    job = models.ForeignKey(Job, null=True, blank=True, on_delete=models.SET_NULL)
    recorded = models.JSONField(null=True, blank=True)
    """The recorded run's placements within the window (change-log replays): {pod: node}."""

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"replay #{self.pk} {self.state}"


class ReplayCandidate(models.Model):
    """One configuration of the sweep; its merged outcome once every part is done."""

    replay = models.ForeignKey(Replay, on_delete=models.CASCADE, related_name="candidates")
    index = models.IntegerField()
    label = models.CharField(max_length=500)
    version = models.IntegerField(null=True, blank=True)
    document = models.JSONField()
    state = models.CharField(max_length=16, default="queued")
    summary = models.JSONField(null=True, blank=True)
    digest = models.CharField(max_length=32, blank=True, default="")
    outcome = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["replay", "index"]

    def __str__(self) -> str:
        return f"replay #{self.replay_id} candidate {self.index} ({self.label})"


class ReplayPart(models.Model):
    """One task: a candidate's segment of the window, replayed in one scratch engine."""

    candidate = models.ForeignKey(ReplayCandidate, on_delete=models.CASCADE, related_name="parts")
    segment = models.IntegerField()
    state = models.CharField(max_length=16, default="queued")
    outcome = models.JSONField(null=True, blank=True)
    seconds = models.FloatField(default=0.0)
    worker = models.CharField(max_length=200, blank=True, default="")
    error = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["candidate", "segment"]

    def __str__(self) -> str:
        return f"{self.candidate} segment {self.segment} {self.state}"
