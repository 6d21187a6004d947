"""The Celery app: broker and results on Redis in production, in memory when embedded.

`celery -A schedconsole worker -Q engine` is an engine worker (see `engine/worker.py`);
`celery -A schedconsole worker` runs the other tasks (imports, history pruning).
"""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "schedconsole.settings")

app = Celery("schedconsole")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["schedconsole.engine", "schedconsole.cluster", "schedconsole.replay"])


def _add_engine_step() -> None:
    from schedconsole.engine.worker import EngineStep

    app.steps["worker"].add(EngineStep)


_add_engine_step()
