"""The REST API."""

from django.apps import AppConfig


class ApiConfig(AppConfig):
    """The REST API."""

    name = "schedconsole.api"
    label = "consoleapi"
    default_auto_field = "django.db.models.BigAutoField"
