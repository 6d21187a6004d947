"""Attempt history: per pod, and one attempt with its filter and score detail."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from schedconsole.api import serializers as S
from schedconsole.api.base import ConsoleAPIView
from schedconsole.engine.bridge import score_table
from schedconsole.history.compact import expand_groups
from schedconsole.history.models import Attempt


def attempt_json(attempt: Attempt, full: bool) -> dict[str, Any]:
    """The attempt record (docs/architecture.md, "The attempt record") plus `id` and `at`."""
    detail = dict(attempt.detail)
    out = {
        "id": attempt.id,
        "at": attempt.at.isoformat().replace("+00:00", "Z"),
        "pod": attempt.pod,
        "profile": attempt.profile,
        "attempt": attempt.attempt,
        "outcome": attempt.outcome,
        "node": attempt.node or None,
        "nominatedNode": attempt.nominated_node or None,
        "victims": detail.get("victims", []),
        "message": attempt.message,
        "feasibleNodes": attempt.feasible_nodes,
    }
    if full:
        for key in ("filter", "filterGroups", "filterTruncated", "numAllNodes", "scoredNodes", "timings"):
            if key in detail:
                out[key] = detail[key]
        if "filterGroups" in detail:  # kept compact (history.compact); the record's shape rebuilt
            out["filter"] = expand_groups(detail["filterGroups"])
        out["scores"], out["totals"] = score_table(detail)
    return out


class PodAttempts(ConsoleAPIView):
    """A pod's attempts, newest first."""

    @extend_schema(responses=S.paged(S.AttemptSerializer, "PaginatedAttemptList"))
    def get(self, request: Request, namespace: str, name: str) -> Response:
        """A page of attempts."""
        from schedconsole.api.base import page

        rows = [attempt_json(a, full=False) for a in Attempt.objects.filter(pod=f"{namespace}/{name}").order_by("-id")[:1000]]
        return page(request, rows, self)


class AttemptDetail(ConsoleAPIView):
    """One attempt with every node's filter result and score."""

    @extend_schema(responses=S.AttemptSerializer)
    def get(self, request: Request, pk: int) -> Response:
        """The attempt or 404."""
        return Response(attempt_json(get_object_or_404(Attempt, pk=pk), full=True))
