"""Koordinator's debug flags: debugTopNScores and debugFilterFailure."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from schedconsole.api import serializers as S
from schedconsole.api.base import ConsoleAPIView, audit, engine
from schedconsole.engine import operations as ops
from schedconsole.engine.bridge import answers


class DebugFlags(ConsoleAPIView):
    """GET the flags; PUT `{"debugTopNScores": N, "debugFilterFailure": bool}` (either key)."""

    @extend_schema(responses=S.typed(answers.DebugFlags))
    def get(self, request: Request) -> Response:
        """The flags as the engine holds them."""
        return Response(engine(ops.GetDebugFlags()))

    @extend_schema(request=S.DebugFlagsBodySerializer, responses=S.typed(answers.DebugFlags))
    def put(self, request: Request) -> Response:
        """Set the flags; the engine confirms the values it now holds."""
        data = request.data
        if not isinstance(data, dict) or not ({"debugTopNScores", "debugFilterFailure"} & set(data)):
            raise ValidationError({"non_field_errors": ['expected {"debugTopNScores"?: N, "debugFilterFailure"?: bool}']})
        unknown = sorted(set(data) - {"debugTopNScores", "debugFilterFailure"})
        if unknown:
            raise ValidationError({unknown[0]: [f"unknown field {unknown[0]!r}"]})
        top_n = data.get("debugTopNScores")
        if top_n is not None and (isinstance(top_n, bool) or not isinstance(top_n, int) or top_n < 0):
            raise ValidationError({"debugTopNScores": [f"invalid value {top_n!r}; expected an integer 0 or more"]})
        failure = data.get("debugFilterFailure")
        if failure is not None and not isinstance(failure, bool):
            raise ValidationError({"debugFilterFailure": [f"invalid value {failure!r}; expected true or false"]})
        before = engine(ops.GetDebugFlags())
        after = engine(ops.SetDebugFlags(top_n=top_n, filter_failure=failure))
        audit(request, "debug-flags.set", "engine", before=before, after=after)
        return Response(after)


class PluginTiming(ConsoleAPIView):
    """GET `{"every": N}`: each plugin is timed in every Nth attempt for the live page (0: never);
    PUT `{"every": N}` sets it (1: every attempt, as when watching a slow plugin)."""

    @extend_schema(responses=S.typed(answers.PluginTiming))
    def get(self, request: Request) -> Response:
        """The sampling as the engine holds it."""
        return Response(engine(ops.PluginTiming()))

    @extend_schema(request=S.PluginTimingBodySerializer, responses=S.typed(answers.PluginTiming))
    def put(self, request: Request) -> Response:
        """Set it; the engine confirms the value it now holds."""
        data = request.data
        if not isinstance(data, dict) or "every" not in data:
            raise ValidationError({"every": ['expected {"every": N} (0: off, 1: every attempt)']})
        before = engine(ops.PluginTiming())
        after = engine(ops.PluginTiming(every=data["every"]), field="every")
        audit(request, "plugin-timing.set", "engine", before=before, after=after)
        return Response(after)
