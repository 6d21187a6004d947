"""Koordinator's routes and `/debug/flags/*` in the OpenAPI schema.

They are served by async Django views (`koord.py`) that pass each call to the engine's route
table; drf-spectacular describes DRF views only, so each route is described here by a DRF view that
is never routed: the schema is generated over `urlpatterns` below (the console API's patterns and
these), through `schema_generator.ConsoleSchemaGenerator`.
"""

from __future__ import annotations

from typing import Any

from django.urls import include, path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from schedconsole.api.serializers import Object

TAG = ["koordinator"]


class MessageSerializer(serializers.Serializer[Any]):
    """Koordinator's error body."""

    message = serializers.CharField()


NOT_FOUND = OpenApiResponse(MessageSerializer, description="no such object, or the plugin is not in any profile")


class ResourceSerializer(serializers.Serializer[Any]):
    """Koordinator's resource amounts (CPU in millicores, memory and storage in bytes)."""

    MilliCPU = serializers.IntegerField()
    Memory = serializers.IntegerField()
    EphemeralStorage = serializers.IntegerField()
    AllowedPodNumber = serializers.IntegerField()
    ScalarResources = serializers.DictField(child=serializers.IntegerField(), allow_null=True, required=False)


class NodeInfoSerializer(serializers.Serializer[Any]):
    """A node's NodeInfo as kube-scheduler's framework keeps it."""

    node = Object()
    pods = serializers.ListField(child=Object())
    requested = ResourceSerializer()
    nonZeroRequested = ResourceSerializer()
    allocatable = ResourceSerializer()
    remaining = ResourceSerializer(required=False)
    usedPorts = serializers.JSONField(allow_null=True)
    imageStates = serializers.JSONField(allow_null=True)
    generation = serializers.IntegerField()


class GangSummarySerializer(serializers.Serializer[Any]):
    """Coscheduling's GangSummary."""

    name = serializers.CharField()
    waitTime = serializers.IntegerField(help_text="nanoseconds")
    createTime = serializers.CharField()
    mode = serializers.ChoiceField(["Strict", "NonStrict"])
    gangMatchPolicy = serializers.CharField(
        help_text="once-satisfied, only-waiting or waiting-and-running: when the gang counts as satisfied"
    )
    minRequiredNumber = serializers.IntegerField()
    totalChildrenNum = serializers.IntegerField()
    gangGroup = serializers.ListField(child=serializers.CharField())
    children = serializers.DictField()
    pendingChildren = serializers.DictField()
    waitingForBindChildren = serializers.DictField()
    boundChildren = serializers.DictField()
    onceResourceSatisfied = serializers.BooleanField()
    gangGroupInfo = serializers.DictField(
        help_text="the gang's GangGroupInfo with Go's field names: Initialized, GangGroupId, GangGroup, "
        "OnceResourceSatisfied, WaitingGangIDs, RepresentativePodKey, BindingMemberPods"
    )
    gangFrom = serializers.CharField()
    hasGangInit = serializers.BooleanField()


def _doc(summary: str, response: Any) -> dict[str, Any]:
    return {"summary": summary, "tags": TAG, "responses": {200: response, 404: NOT_FOUND}}


class Services(APIView):
    """Every route the plugins mounted, by method."""

    @extend_schema(**_doc("Routes by method", dict[str, list[str]]))
    def get(self, request: Request) -> Response:
        """Documented only."""
        raise NotImplementedError


class NodeInfo(APIView):
    """One node's NodeInfo."""

    @extend_schema(**_doc("A node's NodeInfo", NodeInfoSerializer))
    def get(self, request: Request, nodeName: str) -> Response:
        """Documented only."""
        raise NotImplementedError


class Gangs(APIView):
    """Every gang Coscheduling holds."""

    @extend_schema(
        **_doc(
            "Gangs by namespace/name", {"type": "object", "additionalProperties": {"$ref": "#/components/schemas/GangSummary"}}
        )
    )
    def get(self, request: Request) -> Response:
        """Documented only."""
        raise NotImplementedError


class Gang(APIView):
    """One gang."""

    @extend_schema(**_doc("A gang", GangSummarySerializer))
    def get(self, request: Request, namespace: str, name: str) -> Response:
        """Documented only."""
        raise NotImplementedError


class LoadAwareArgs(APIView):
    """LoadAwareScheduling's args as it runs them."""

    @extend_schema(**_doc("LoadAware args", dict[str, Any]))
    def get(self, request: Request) -> Response:
        """Documented only."""
        raise NotImplementedError


class LoadAwareNode(APIView):
    """The pods LoadAware counts on a node, with when each was counted."""

    @extend_schema(**_doc("LoadAware's view of a node", dict[str, Any]))
    def get(self, request: Request, nodeName: str) -> Response:
        """Documented only."""
        raise NotImplementedError


class NumaNode(APIView):
    """NodeNUMAResource's NodeResponse: topology options, NUMA resources, CPUs available and allocated."""

    @extend_schema(**_doc("A node's NUMA resources", dict[str, Any]))
    def get(self, request: Request, nodeName: str) -> Response:
        """Documented only."""
        raise NotImplementedError


class NodeReservations(APIView):
    """The reservations on a node."""

    @extend_schema(**_doc("Reservations on a node", list[dict[str, Any]]))
    def get(self, request: Request, nodeName: str) -> Response:
        """Documented only."""
        raise NotImplementedError


class ReservationIndex(APIView):
    """Reservation's owner selector index."""

    @extend_schema(**_doc("Reservation selector index", dict[str, Any]))
    def get(self, request: Request) -> Response:
        """Documented only."""
        raise NotImplementedError


FLAG_TEXT = {"text/plain": OpenApiTypes.STR}
FLAG = [
    OpenApiParameter(
        "flag",
        str,
        OpenApiParameter.PATH,
        enum=["s", "f", "v"],
        description="s: debugTopNScores (N), f: debugFilterFailure (true|false), v: log verbosity (klog's V)",
    )
]


def _flag(method: str) -> dict[str, Any]:
    return {
        "summary": f"Set a debug flag ({method})",
        "tags": TAG,
        "parameters": FLAG,
        "request": FLAG_TEXT,
        "responses": {
            (200, "text/plain"): OpenApiResponse(OpenApiTypes.STR, description="successfully set debugTopNScores to N"),
            (400, "text/plain"): OpenApiResponse(OpenApiTypes.STR, description="a bad value"),
        },
        "examples": [OpenApiExample("top 5", value="5", request_only=True)],
    }


class DebugFlag(APIView):
    """Koordinator's debug flags: `s` (debugTopNScores, body N) and `f` (debugFilterFailure, body true|false)."""

    @extend_schema(**_flag("PUT"))
    def put(self, request: Request, flag: str) -> Response:
        """Documented only."""
        raise NotImplementedError

    @extend_schema(**_flag("POST"))
    def post(self, request: Request, flag: str) -> Response:
        """Documented only."""
        raise NotImplementedError

    @extend_schema(
        summary="Other methods are refused",
        tags=TAG,
        parameters=FLAG,
        responses={(406, "text/plain"): OpenApiResponse(OpenApiTypes.STR, description="unsupported http method")},
    )
    def get(self, request: Request, flag: str) -> Response:
        """Documented only."""
        raise NotImplementedError


PLUGINS = "apis/v1/plugins"
koordinator_patterns = [
    path("apis/v1/__services__", Services.as_view()),
    path("apis/v1/nodes/<str:nodeName>", NodeInfo.as_view()),
    path(f"{PLUGINS}/Coscheduling/gangs", Gangs.as_view()),
    path(f"{PLUGINS}/Coscheduling/gang/<str:namespace>/<str:name>", Gang.as_view()),
    path(f"{PLUGINS}/LoadAwareScheduling/args", LoadAwareArgs.as_view()),
    path(f"{PLUGINS}/LoadAwareScheduling/node/<str:nodeName>", LoadAwareNode.as_view()),
    path(f"{PLUGINS}/NodeNUMAResource/nodes/<str:nodeName>", NumaNode.as_view()),
    path(f"{PLUGINS}/Reservation/nodeReservations/<str:nodeName>", NodeReservations.as_view()),
    path(f"{PLUGINS}/Reservation/reservationSelectorIndex", ReservationIndex.as_view()),
    path("debug/flags/<str:flag>", DebugFlag.as_view()),
]

urlpatterns = [path("api/", include("schedconsole.api.urls")), *koordinator_patterns]
