"""What-if for one pod spec, and the same pod under two profiles; nothing changes."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from schedconsole.accounts.permissions import ViewerMayPost
from schedconsole.api import serializers as S
from schedconsole.api.base import ConsoleAPIView, engine
from schedconsole.engine import operations as ops


def _body(data: object) -> dict[str, Any]:
    """The body: an object with a `pod`, or a 400 naming the field."""
    if not isinstance(data, dict) or "pod" not in data:
        raise ValidationError({"pod": ['expected {"pod": {Pod}, ...}']})
    return data


class WhatIf(ConsoleAPIView):
    """The full scheduling cycle for one pod on the current cluster."""

    permission_classes = (ViewerMayPost,)

    @extend_schema(request=S.WhatIfBodySerializer, responses=S.EntrySerializer)
    def post(self, request: Request) -> Response:
        """Body `{"pod": Pod, "profile"?: name}` → a `results[]` entry."""
        data = _body(request.data)
        return Response(engine(ops.WhatIf(pod=data["pod"], profile=data.get("profile")), field="pod"))


def _two_profiles(data: object) -> list[str]:
    """The body's `profiles`: exactly two names, or a 400 naming the field."""
    profiles = data.get("profiles") if isinstance(data, dict) else None
    if not isinstance(profiles, list) or len(profiles) != 2 or not all(isinstance(p, str) for p in profiles):
        raise ValidationError({"profiles": [f"expected two profile names, got {profiles!r}"[:200]]})
    return profiles


class Compare(ConsoleAPIView):
    """One pod under two profiles, with per-node and per-plugin deltas."""

    permission_classes = (ViewerMayPost,)

    @extend_schema(request=S.CompareBodySerializer, responses=S.ComparisonSerializer)
    def post(self, request: Request) -> Response:
        """Body `{"pod": Pod, "profiles": [a, b]}`."""
        profiles = _two_profiles(request.data)
        data = _body(request.data)
        return Response(engine(ops.Compare(pod=data["pod"], profiles=profiles), field="pod"))


class WhatIfDiff(ConsoleAPIView):
    """What-if for an edited spec beside the original one, cut to what a page shows."""

    permission_classes = (ViewerMayPost,)

    @extend_schema(request=S.WhatIfDiffBodySerializer, responses=S.WhatIfDiffSerializer)
    def post(self, request: Request) -> Response:
        """Body `{"pod": Pod, "original"?: Pod, "profile"?: name}` → `{"result", "base", "diff"}`."""
        data = _body(request.data)
        op = ops.WhatIfDiff(pod=data["pod"], original=data.get("original"), profile=data.get("profile") or None)
        return Response(engine(op, field="pod"))


class CompareSummary(ConsoleAPIView):
    """Two profiles on one pod, cut to the nodes either ranks in its top 10."""

    permission_classes = (ViewerMayPost,)

    @extend_schema(request=S.CompareBodySerializer, responses=S.CompareSummarySerializer)
    def post(self, request: Request) -> Response:
        """Body `{"pod": Pod, "profiles": [a, b]}` → both trimmed entries and per-node rows."""
        profiles = _two_profiles(request.data)
        data = _body(request.data)
        return Response(engine(ops.CompareSummary(pod=data["pod"], profiles=profiles), field="pod"))
