"""Nodes with requested and allocatable per resource."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from schedconsole.api.base import ConsoleAPIView, engine, page


class NodeList(ConsoleAPIView):
    """Every node of the cluster the engine schedules."""

    @extend_schema(operation_id="nodes_list",
        parameters=[OpenApiParameter("zone", str, description="topology.kubernetes.io/zone"), OpenApiParameter("name", str, description="substring")],
        responses=OpenApiTypes.OBJECT,
    )
    def get(self, request: Request) -> Response:
        """A page of nodes."""
        rows = engine("nodes")
        zone, name = request.query_params.get("zone"), request.query_params.get("name")
        if zone:
            rows = [r for r in rows if r["labels"].get("topology.kubernetes.io/zone") == zone]
        if name:
            rows = [r for r in rows if name in r["name"]]
        return page(request, rows, self)


class NodeDetail(ConsoleAPIView):
    """One node, with Koordinator's NodeInfo document."""

    @extend_schema(responses=OpenApiTypes.OBJECT)
    def get(self, request: Request, name: str) -> Response:
        """The node or 404."""
        return Response(engine("node", {"name": name}))
