"""The console's pages."""

from django.apps import AppConfig


class PagesConfig(AppConfig):
    """The console's pages."""

    name = "schedconsole.pages"
    label = "pages"
    default_auto_field = "django.db.models.BigAutoField"
