"""The Celery app: broker and results on Redis in production, in memory when embedded."""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "schedconsole.settings")

app = Celery("schedconsole")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["schedconsole.engine"])
