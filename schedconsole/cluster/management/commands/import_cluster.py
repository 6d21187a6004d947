"""`manage.py import_cluster`: copy a live cluster into the simulated one, once."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from schedconsole.cluster.models import ClusterObject
from schedconsole.engine import operations as ops
from schedconsole.engine.bridge import BadInput, live_documents, load_objects
from schedconsole.engine.client import EngineCallError, call
from schedconsole.engine.store import save_documents
from schedconsole.profiles.models import AuditEntry


class Command(BaseCommand):
    """List every kind the engine reads from a live cluster and add it to the simulated cluster."""

    help = "Import a live cluster (kubeconfig or in-cluster service account) into the simulated cluster."

    def add_arguments(self, parser: CommandParser) -> None:
        """--kubeconfig, --context, --in-cluster (defaults from the settings)."""
        parser.add_argument("--kubeconfig", default=settings.KUBECONFIG)
        parser.add_argument("--context", default=settings.KUBE_CONTEXT)
        parser.add_argument("--in-cluster", action="store_true", default=settings.KUBE_IN_CLUSTER)

    def handle(self, *args: Any, **options: Any) -> None:
        """Through the running engine when one answers, else straight into the database (the
        engine loads it at its next start)."""
        try:
            docs = live_documents(options["kubeconfig"], options["context"], options["in_cluster"])
            load_objects(docs, "live cluster")  # refuse the whole import if any object is unreadable
        except BadInput as exc:
            raise CommandError(exc.message) from exc
        result: Mapping[str, object]
        try:
            result = call(ops.Create(documents=docs, source="live cluster"))
            where = "the running engine"
        except EngineCallError as exc:
            if exc.status != 503:
                raise CommandError(exc.message) from exc
            known = set(ClusterObject.objects.filter(deleted=False).values_list("kind", "namespace", "name"))
            fresh = [
                d
                for d in docs
                if (d["kind"], d["metadata"].get("namespace", "") or "", d["metadata"].get("name", "")) not in known
            ]
            save_documents(fresh)
            result = {"created": len(fresh), "skipped": len(docs) - len(fresh)}
            where = "the database (the engine loads it at its next start)"
        AuditEntry.objects.create(user="system", action="cluster.import", target="live cluster", after=result)
        self.stdout.write(f"imported into {where}: {result}\n")
