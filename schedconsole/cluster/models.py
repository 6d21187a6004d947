"""The simulated cluster's objects and bindings, as the engine stores them."""

from __future__ import annotations

from django.db import models


class ClusterObject(models.Model):
    """One Kubernetes object of the simulated cluster: its document and the fields the engine changes."""

    kind = models.CharField(max_length=64)
    namespace = models.CharField(max_length=253, blank=True, default="")
    name = models.CharField(max_length=253)
    uid = models.CharField(max_length=64, unique=True)
    document = models.JSONField()
    node_name = models.CharField(max_length=253, blank=True, default="")
    deleted = models.BooleanField(default=False)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [models.Index(fields=["kind", "namespace", "name"]), models.Index(fields=["node_name"])]

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace + '/' if self.namespace else ''}{self.name}"


class Binding(models.Model):
    """A pod bound to a node; stored before the engine acknowledges the binding."""

    pod_uid = models.CharField(max_length=64, db_index=True)
    pod = models.CharField(max_length=507)
    node = models.CharField(max_length=253)
    at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.pod} -> {self.node}"


class Job(models.Model):
    """A long task started from the console (an import, a benchmark) and its progress: the page polls
    it while a task worker (or, embedded, a thread) updates it."""

    kind = models.CharField(max_length=16)
    state = models.CharField(max_length=16, default="queued")
    phase = models.CharField(max_length=64, blank=True, default="")
    done = models.IntegerField(default=0)
    total = models.IntegerField(default=0)
    params = models.JSONField(default=dict)
    result = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True, default="")
    user = models.CharField(max_length=150, blank=True, default="")
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"{self.kind} #{self.pk} {self.state}"


class ClusterSync(models.Model):
    """The continuous sync an operator asked for (one row): while `running`, an engine that starts
    (a restart, a new leader) starts the sync again with the same options, and `mirrored` (what the
    sync had copied, saved as it goes) lets it remove what the live cluster deleted meanwhile."""

    running = models.BooleanField(default=False)
    kubeconfig = models.CharField(max_length=1024, blank=True, default="")
    context = models.CharField(max_length=253, blank=True, default="")
    in_cluster = models.BooleanField(default=False)
    keep_bindings = models.BooleanField(default=True)
    started_by = models.CharField(max_length=150, blank=True, default="")
    started_at = models.DateTimeField(null=True, blank=True)
    stopped_at = models.DateTimeField(null=True, blank=True)
    # [kind, namespace, name, live resourceVersion] of each mirrored object, as last saved.
    mirrored = models.JSONField(default=list)
    saved_at = models.DateTimeField(null=True, blank=True)
    resumed_at = models.DateTimeField(null=True, blank=True)
    resume_error = models.TextField(blank=True, default="")

    def __str__(self) -> str:
        return f"cluster sync ({'running' if self.running else 'stopped'})"
