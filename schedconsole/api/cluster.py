"""The cluster the engine schedules: its mode, the API server, leadership, informers, shadow comparison."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from schedconsole.api.base import ConsoleAPIView, engine


class ClusterStatus(ConsoleAPIView):
    """GET `{"mode", "server", "leading", "informers", "shadow"}` (shadow: agreement rate per profile
    and the disagreeing pods with both score rows)."""

    @extend_schema(responses=OpenApiTypes.OBJECT)
    def get(self, request: Request) -> Response:
        """The mode and, in shadow mode, the comparison so far."""
        return Response(engine("cluster_status"))
