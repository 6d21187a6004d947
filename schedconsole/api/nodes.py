"""Nodes with requested and allocatable per resource."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from schedconsole.api import serializers as S
from schedconsole.api.base import PAGE_PARAMETERS, ConsoleAPIView, audit, engine, engine_page, window
from schedconsole.engine import operations as ops
from schedconsole.engine.bridge import answers


class NodeList(ConsoleAPIView):
    """Every node of the cluster the engine schedules."""

    @extend_schema(
        operation_id="nodes_list",
        parameters=[
            OpenApiParameter("zone", str, description="topology.kubernetes.io/zone"),
            OpenApiParameter("name", str, description="substring"),
            *PAGE_PARAMETERS,
        ],
        responses=S.paged(S.typed(answers.NodeRow), "PaginatedNodeList"),
    )
    def get(self, request: Request) -> Response:
        """A page of nodes (`limit`, `offset`), cut by the engine."""
        offset, limit = window(request)
        params = request.query_params
        nodes = engine(ops.ListNodes(zone=params.get("zone", ""), name=params.get("name", ""), offset=offset, limit=limit))
        return engine_page(request, nodes)


class NodeDetail(ConsoleAPIView):
    """One node, with Koordinator's NodeInfo document."""

    @extend_schema(responses=S.typed(answers.NodeDetail))
    def get(self, request: Request, name: str) -> Response:
        """The node or 404."""
        return Response(engine(ops.GetNode(name=name)))

    @extend_schema(request=S.NodeBodySerializer, responses=S.typed(answers.NodeDetail))
    def put(self, request: Request, name: str) -> Response:
        """Replace the node's document with an edited one (labels, taints, capacity; JSON or YAML;
        simulated mode); its pods stay on it."""
        before = engine(ops.GetNode(name=name))["nodeInfo"].get("node")
        after = engine(ops.ReplaceNode(name=name, document=request.data), field="body")
        audit(request, "node.replace", name, before=before, after=after)
        return Response(engine(ops.GetNode(name=name)))

    @extend_schema(responses={200: S.typed(answers.NodeDeleted)})
    def delete(self, request: Request, name: str) -> Response:
        """Delete the node and the pods bound to it (simulated mode)."""
        gone = engine(ops.DeleteNode(name=name))
        audit(request, "node.delete", name, before=gone["node"], after={"podsDeleted": gone["podsDeleted"]})
        return Response(gone)
