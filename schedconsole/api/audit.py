"""The audit log: every change, who made it, before and after."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from schedconsole.api import serializers as S
from schedconsole.api.base import ConsoleAPIView, page
from schedconsole.profiles.models import AuditEntry


class AuditList(ConsoleAPIView):
    """Newest first; filter by `action` or `user`."""

    @extend_schema(
        parameters=[OpenApiParameter("action", str), OpenApiParameter("user", str)],
        responses=S.paged(S.AuditEntrySerializer, "PaginatedAuditEntryList"),
    )
    def get(self, request: Request) -> Response:
        """A page of audit entries."""
        entries = AuditEntry.objects.all()
        if request.query_params.get("action"):
            entries = entries.filter(action=request.query_params["action"])
        if request.query_params.get("user"):
            entries = entries.filter(user=request.query_params["user"])
        rows = [
            {
                "id": e.id,
                "at": e.at.isoformat().replace("+00:00", "Z"),
                "user": e.user,
                "action": e.action,
                "target": e.target,
                "before": e.before,
                "after": e.after,
            }
            for e in entries[:5000]
        ]
        return page(request, rows, self)
