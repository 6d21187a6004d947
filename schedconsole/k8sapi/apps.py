from django.apps import AppConfig


class K8sApiConfig(AppConfig):
    """The Kubernetes-compatible API for the simulated cluster under /k8s."""

    name = "schedconsole.k8sapi"
    label = "k8sapi"
