"""Login, groups and tokens."""

from django.apps import AppConfig


class AccountsConfig(AppConfig):
    """Login, groups and tokens."""

    name = "schedconsole.accounts"
    label = "accounts"
    default_auto_field = "django.db.models.BigAutoField"
