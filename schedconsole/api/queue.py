"""Pending pods by queue, with why each waits."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from schedconsole.api.base import ConsoleAPIView, engine


class Queue(ConsoleAPIView):
    """`active`, `backoff`, `unschedulable`, `gated`."""

    @extend_schema(responses=OpenApiTypes.OBJECT)
    def get(self, request: Request) -> Response:
        """The scheduling queue now."""
        return Response(engine("queue"))
