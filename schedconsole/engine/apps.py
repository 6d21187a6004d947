"""The engine host: the one door to scheduler/."""

from django.apps import AppConfig


class EngineConfig(AppConfig):
    """The engine host: the one door to scheduler/."""

    name = "schedconsole.engine"
    label = "engine"
    default_auto_field = "django.db.models.BigAutoField"
