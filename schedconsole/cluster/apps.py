"""The simulated cluster's objects and bindings."""

from django.apps import AppConfig


class ClusterConfig(AppConfig):
    """The simulated cluster's objects and bindings."""

    name = "schedconsole.cluster"
    label = "cluster"
    default_auto_field = "django.db.models.BigAutoField"
