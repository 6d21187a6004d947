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
