"""Websockets: live attempts."""

from django.apps import AppConfig


class LiveConfig(AppConfig):
    """Websockets: live attempts."""

    name = "schedconsole.live"
    label = "live"
    default_auto_field = "django.db.models.BigAutoField"
