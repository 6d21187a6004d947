"""`manage.py sync_cluster start|stop|status`: follow a live cluster into the simulated one."""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from schedconsole.cluster import sync
from schedconsole.engine.bridge.answers import SyncStatus
from schedconsole.engine.client import EngineCallError, call
from schedconsole.engine.operations import GetSyncStatus, StartSync
from schedconsole.profiles.models import AuditEntry


class Command(BaseCommand):
    """Start, stop or show the running engine's continuous sync (see scheduler/kube/mirror.py)."""

    help = "Mirror a live cluster (kubeconfig or in-cluster service account) into the simulated cluster and keep following it."

    def add_arguments(self, parser: CommandParser) -> None:
        """The action, and where the live cluster is (defaults from the settings)."""
        parser.add_argument("action", choices=("start", "stop", "status"))
        parser.add_argument("--kubeconfig", default=settings.KUBECONFIG)
        parser.add_argument("--context", default=settings.KUBE_CONTEXT)
        parser.add_argument("--in-cluster", action="store_true", default=settings.KUBE_IN_CLUSTER)
        parser.add_argument(
            "--leave-pending",
            action="store_true",
            help="mirror every pod unbound, for our engine to place (default: keep the live bindings)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        """Ask the running engine (the sync lives in its process)."""
        action = options["action"]
        op = StartSync(
            kubeconfig=options["kubeconfig"],
            context=options["context"],
            in_cluster=options["in_cluster"],
            keep_bindings=not options["leave_pending"],
        )
        result: SyncStatus | None
        try:
            if action == "start":
                result = sync.start(op, "system")
            elif action == "stop":
                result, why = sync.stop()
                if result is None:  # no engine, or one whose resume failed: none will start it again
                    self.stdout.write(f"the sync was not running ({why}); it will not resume\n")
                    return
            else:
                result = call(GetSyncStatus())
        except EngineCallError as exc:
            if exc.status == 503:
                raise CommandError(f"no engine answers ({exc.message}); start the console first (./run.sh)") from exc
            raise CommandError(exc.message) from exc
        if action != "status":
            assert result is not None  # only stopping finds no sync, and returned above
            AuditEntry.objects.create(
                user="system", action=f"cluster.sync.{action}", target=str(result.get("server")), after=result
            )
        self.stdout.write(json.dumps(result, indent=2) + "\n" if result is not None else "no sync was started\n")
