"""`manage.py runconsole`: the embedded default — migrate, admin user, engine thread, uvicorn on 127.0.0.1.

uvicorn is the one ASGI server, here and in production (Dockerfile): measured against daphne on
this console, the polled Koordinator route answered 2.3x the requests at a p95 8x lower, and the
live view's 200 websocket clients cost the engine no more (see the commit that chose it).
"""

from __future__ import annotations

import os
import secrets
import signal
import sys
from collections.abc import Callable
from typing import Any

import uvicorn
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

# Seconds open requests (watches, streams) get to end after the console is told to stop.
SHUTDOWN_GRACE_SECONDS = 5


def ensure_admin(stdout: Any) -> None:
    """Create `admin` (operator) on first run; print a generated password once."""
    users = get_user_model()
    if users.objects.filter(username="admin").exists():
        return
    password = os.getenv("SCHEDCONSOLE_ADMIN_PASSWORD") or ""
    generated = not password
    if generated:
        password = secrets.token_urlsafe(12)
    user = users.objects.create_superuser("admin", "", password)
    user.groups.add(Group.objects.get_or_create(name="operator")[0])
    if generated:
        stdout.write(f"User: admin\nPassword: {password}\n")
        stdout.flush()


class Command(BaseCommand):
    """Serve the console with the engine in this process."""

    help = "Start the console on 127.0.0.1:PORT with the engine embedded (migrates and creates the admin user first)."

    def add_arguments(self, parser: CommandParser) -> None:
        """--port (default $PORT or 8000), --host."""
        parser.add_argument("--port", type=int, default=int(os.getenv("PORT") or 8000))
        parser.add_argument("--host", default="127.0.0.1")

    def handle(self, *args: Any, **options: Any) -> None:
        """Run until interrupted."""
        if not settings.EMBEDDED:
            raise CommandError(
                "runconsole runs the embedded default; with REDIS_URL set, run the web server (the Dockerfile's uvicorn command) and the celery workers (see docs/production.md)"
            )
        from schedconsole.asgi import application
        from schedconsole.engine.demo import Trickle
        from schedconsole.engine.host import get_host
        from schedconsole.engine.operations import keep_out_of_full_collections

        call_command("migrate", interactive=False, verbosity=0)
        ensure_admin(self.stdout)
        # Web and engine share this process and its interpreter lock (see settings.SWITCH_INTERVAL_MS).
        sys.setswitchinterval(settings.SWITCH_INTERVAL_MS / 1000)
        host = get_host()
        host.start()
        # The cluster just loaded is long-lived: keep the cyclic collector from rescanning it on
        # every full collection (those pauses were the tail of request latency).
        keep_out_of_full_collections()
        trickle = (
            Trickle(settings.DEMO_TRICKLE_PODS_PER_SECOND)
            if settings.DEMO_CLUSTER and settings.DEMO_TRICKLE_PODS_PER_SECOND > 0
            else None
        )
        if trickle is not None:
            trickle.start()
        port, address = options["port"], options["host"]

        scheme = "https" if settings.TLS_CERT_FILE else "http"

        def ready() -> None:
            # docs/architecture.md, "Processes": once listening, e.g. "Console: http://127.0.0.1:8000/".
            self.stdout.write(f"Console: {scheme}://{address}:{port}/\n")
            self.stdout.flush()

        # uvicorn ends on SIGTERM and then raises the signal again with the handler it found in
        # place: the default one would kill the process before the engine stops (a cluster-mode
        # console kept its Lease, and the store its last writes). This one unwinds through here.
        signal.signal(signal.SIGTERM, _exit_cleanly)
        try:
            serve(application, address, port, ready)
        finally:
            if trickle is not None:
                trickle.stop()
            host.stop(run_pending=True)
            sys.stdout.flush()


def _exit_cleanly(signum: int, frame: Any) -> None:
    raise SystemExit(0)


def serve(application: Any, address: str, port: int, ready: Callable[[], None]) -> None:
    """Serve the ASGI app with uvicorn until interrupted; call `ready` once listening."""

    class ReadyServer(uvicorn.Server):
        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets)
            if self.started:
                ready()

    # The same options as the production command (Dockerfile's CMD). No permessage-deflate:
    # compressing every small frame cost more CPU than all else the live view does. On SIGTERM or
    # Ctrl-C uvicorn waits for open requests to end; a `/k8s` watch lasts its timeoutSeconds
    # (minutes from kubectl), so after a short grace they are ended.
    config = uvicorn.Config(
        application,
        host=address,
        port=port,
        lifespan="off",
        log_level="warning",
        ws="websockets-sansio",
        http="httptools",
        ws_per_message_deflate=False,
        timeout_graceful_shutdown=SHUTDOWN_GRACE_SECONDS,
    )
    if settings.TLS_CERT_FILE:
        # kubectl sends a bearer token only over TLS: /k8s with `--token` needs https.
        config.ssl_certfile, config.ssl_keyfile = settings.TLS_CERT_FILE, settings.TLS_KEY_FILE
    ReadyServer(config).run()
