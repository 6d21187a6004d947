"""Replays (`schedconsole.replay`): start one, follow it, read its outcomes side by side."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from schedconsole.api import replay_serializers as R
from schedconsole.api import serializers as S
from schedconsole.api.base import PAGE_PARAMETERS, ConsoleAPIView, audit, page
from schedconsole.engine.bridge import BadInput
from schedconsole.replay import bodies, services
from schedconsole.replay.models import Replay


class ReplayList(ConsoleAPIView):
    """GET the replays, newest first; POST starts one (202): a window of the console's change log
    (or the openb trace) replayed under each candidate in scratch engines on the task workers."""

    @extend_schema(
        operation_id="replays_list", parameters=PAGE_PARAMETERS, responses=S.paged(R.ReplayRowSerializer, "PaginatedReplayList")
    )
    def get(self, request: Request) -> Response:
        """A page of replays."""
        return page(request, [bodies.replay_row(r) for r in Replay.objects.prefetch_related("candidates")[:500]], self)

    @extend_schema(request=R.ReplayBodySerializer, responses={202: R.ReplaySerializer})
    def post(self, request: Request) -> Response:
        """Check, store and start the replay."""
        try:
            replay = services.create(request.data, getattr(request.user, "username", "") or "")
        except BadInput as exc:
            raise ValidationError({exc.field: [exc.message]}) from exc
        audit(request, "replay.start", f"replay {replay.pk}", after=replay.params)
        body = bodies.replay_json(replay)
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": body["url"]})


class ReplayDetail(ConsoleAPIView):
    """GET one replay: progress, candidates with summary and digest, pods placed differently."""

    @extend_schema(responses=R.ReplaySerializer)
    def get(self, request: Request, pk: int) -> Response:
        """The replay or 404."""
        return Response(bodies.replay_json(get_object_or_404(Replay, pk=pk)))
