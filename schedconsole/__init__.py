"""schedconsole: the Django console that hosts the scheduling engine."""

from schedconsole.celery import app as celery_app

__all__ = ["celery_app"]
