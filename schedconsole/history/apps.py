"""Scheduling attempts and their score rows."""

from django.apps import AppConfig


class HistoryConfig(AppConfig):
    """Scheduling attempts and their score rows."""

    name = "schedconsole.history"
    label = "history"
    default_auto_field = "django.db.models.BigAutoField"
