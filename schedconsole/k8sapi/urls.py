"""Routes of the Kubernetes-compatible API (mounted at /k8s/)."""

from django.urls import re_path

from schedconsole.k8sapi import views

urlpatterns = [
    re_path(r"^(?P<path>version|api|api/v1|apis|apis/[^/]+|apis/[^/]+/[^/]+)/?$", views.discovery),
    re_path(r"^openapi/(?P<version>v2|v3)(?:/.*)?$", views.openapi),
    re_path(r"^(?P<path>(?:api|apis)/.+)$", views.resource),
]
