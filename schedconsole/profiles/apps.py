"""Profile versions, plugin args changes and the audit log."""

from django.apps import AppConfig


class ProfilesConfig(AppConfig):
    """Profile versions, plugin args changes and the audit log."""

    name = "schedconsole.profiles"
    label = "profiles"
    default_auto_field = "django.db.models.BigAutoField"
