"""`manage.py sync_cluster start|stop|status`: follow a live cluster into the simulated one."""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from schedconsole.cluster import sync
from schedconsole.engine.client import EngineCallError, call
from schedconsole.profiles.models import AuditEntry


class Command(BaseCommand):
    """Start, stop or show the running engine's continuous sync (see scheduler/cluster/mirror.py)."""

    help = "Mirror a live cluster (kubeconfig or in-cluster service account) into the simulated cluster and keep following it."

    def add_arguments(self, parser: CommandParser) -> None:
        """The action, and where the live cluster is (defaults from the settings)."""
        parser.add_argument("action", choices=("start", "stop", "status"))
        parser.add_argument("--kubeconfig", default=settings.KUBECONFIG)
        parser.add_argument("--context", default=settings.KUBE_CONTEXT)
        parser.add_argument("--in-cluster", action="store_true", default=settings.KUBE_IN_CLUSTER)
        parser.add_argument(
            "--leave-pending", action="store_true", help="mirror every pod unbound, for our engine to place (default: keep the live bindings)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        """Ask the running engine (the sync lives in its process)."""
        action = options["action"]
        payload = {
            "kubeconfig": options["kubeconfig"],
            "context": options["context"],
            "inCluster": options["in_cluster"],
            "keepBindings": not options["leave_pending"],
        }
        try:
            if action == "start":
                result = sync.start(payload, "system")
            elif action == "stop":
                result, why = sync.stop()
                if result is None:  # no engine, or one whose resume failed: none will start it again
                    self.stdout.write(f"the sync was not running ({why}); it will not resume\n")
                    return
            else:
                result = call("sync_status")
        except EngineCallError as exc:
            if exc.status == 503:
                raise CommandError(f"no engine answers ({exc.message}); start the console first (./run.sh)") from exc
            raise CommandError(exc.message) from exc
        if action != "status":
            AuditEntry.objects.create(user="system", action=f"cluster.sync.{action}", target=str(result.get("server")), after=result)
        self.stdout.write(json.dumps(result, indent=2) + "\n" if result is not None else "no sync was started\n")
