"""Replays of recorded windows under candidate configurations."""

from django.apps import AppConfig


class ReplayConfig(AppConfig):
    """Replays of recorded windows under candidate configurations."""

    name = "schedconsole.replay"
    label = "replay"
    default_auto_field = "django.db.models.BigAutoField"
