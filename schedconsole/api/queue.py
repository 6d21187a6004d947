"""Pending pods by queue, with why each waits."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings

from schedconsole.api import serializers as S
from schedconsole.api.base import ConsoleAPIView, engine, window
from schedconsole.engine import operations as ops
from schedconsole.engine.bridge import LIST_LIMIT_MAX, answers


class Queue(ConsoleAPIView):
    """`active`, `backoff`, `unschedulable`, `gated`."""

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "limit", int, description=f"pods listed per queue (default {api_settings.PAGE_SIZE}, at most {LIST_LIMIT_MAX})"
            ),
            OpenApiParameter("offset", int, description="pods skipped in each queue"),
        ],
        responses=S.typed(answers.QueueView),
    )
    def get(self, request: Request) -> Response:
        """The scheduling queue now: per queue a page of its pods, and `counts` (pods in each queue)."""
        offset, limit = window(request)
        return Response(engine(ops.GetQueue(offset=offset, limit=limit)))
