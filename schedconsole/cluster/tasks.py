"""Celery tasks of the simulated cluster, run by the task worker (`celery -A schedconsole worker`)."""

from __future__ import annotations

from typing import Any

from celery import shared_task

from schedconsole.cluster.imports import import_text


@shared_task(name="schedconsole.cluster.import")
def import_file(text: str, source: str) -> dict[str, Any]:
    """Parse and create a kubectl file's objects (all or none); errors come back as data."""
    return import_text(text, source)


@shared_task(name="schedconsole.cluster.job")
def run_job(job_id: int, text: str = "") -> None:
    """Run a console job (an import, a benchmark), updating its progress row as it goes."""
    from schedconsole.cluster.jobs import run

    run(job_id, text)
