"""Celery tasks of replays, run by the task workers (`celery -A schedconsole worker`)."""

from __future__ import annotations

import os
import socket

from celery import shared_task


@shared_task(name="schedconsole.replay.part", bind=True, acks_late=True)
def run_part(self: object, part_id: int) -> str:
    """Replay one part (a candidate's segment) in a scratch engine in this worker process and store
    its outcome; the candidate's digest once its last part is in ("" before)."""
    from schedconsole.replay.services import execute

    request = getattr(self, "request", None)
    worker = f"{getattr(request, 'hostname', None) or socket.gethostname()} pid {os.getpid()}"
    return execute(part_id, worker)
