"""A reset of the simulated cluster to its starting state (kube-scheduler-simulator's reset): the
engine deletes every object and creates the starting ones (the demo cluster with SCHEDCONSOLE_DEMO,
else none); the rows of kinds its watch does not store are marked deleted here."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from django.conf import settings

from schedconsole.cluster.models import ClusterObject
from schedconsole.engine import demo
from schedconsole.engine import operations as ops
from schedconsole.engine.bridge.answers import ResetDone
from schedconsole.engine.client import call


def reset_cluster(run: Callable[[ops.ResetCluster], ResetDone] = call) -> ResetDone:
    """Reset, then forget the stored objects the reset removed that no watch event deleted (the
    engine answers once the objects it created are stored, so every row older than the reset that
    is not one of those is gone)."""
    started = datetime.now(tz=UTC)
    documents = demo.cluster_documents() if settings.DEMO_CLUSTER else []
    done = run(ops.ResetCluster(documents=documents))
    ClusterObject.objects.filter(deleted=False, updated__lt=started).exclude(kind__in=("Pod", "Node")).update(deleted=True)
    return done
