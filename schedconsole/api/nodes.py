"""Nodes with requested and allocatable per resource."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from schedconsole.api.base import PAGE_PARAMETERS, ConsoleAPIView, engine, engine_page, window


class NodeList(ConsoleAPIView):
    """Every node of the cluster the engine schedules."""

    @extend_schema(operation_id="nodes_list",
        parameters=[OpenApiParameter("zone", str, description="topology.kubernetes.io/zone"), OpenApiParameter("name", str, description="substring"), *PAGE_PARAMETERS],
        responses=OpenApiTypes.OBJECT,
    )
    def get(self, request: Request) -> Response:
        """A page of nodes (`limit`, `offset`), cut by the engine."""
        offset, limit = window(request)
        query = {key: request.query_params.get(key, "") for key in ("zone", "name")}
        return engine_page(request, engine("nodes", {**query, "offset": offset, "limit": limit}))


class NodeDetail(ConsoleAPIView):
    """One node, with Koordinator's NodeInfo document."""

    @extend_schema(responses=OpenApiTypes.OBJECT)
    def get(self, request: Request, name: str) -> Response:
        """The node or 404."""
        return Response(engine("node", {"name": name}))
