"""What every API view shares: the engine call with errors as DRF responses, the upload limit, auditing."""

from __future__ import annotations

from typing import Any, TypeVar

from django.conf import settings
from drf_spectacular.utils import OpenApiParameter
from rest_framework import status
from rest_framework.exceptions import APIException, NotFound, ValidationError
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from schedconsole.engine.bridge import LIST_LIMIT_MAX
from schedconsole.engine.bridge.answers import NodeList, PodList
from schedconsole.engine.client import EngineCallError, call
from schedconsole.engine.operations import Operation
from schedconsole.profiles.models import AuditEntry

T = TypeVar("T")


class EngineUnavailableError(APIException):
    """503: no engine answers."""

    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_detail = "the engine is not running"


class EngineTimeoutError(APIException):
    """504: the engine did not answer in time."""

    status_code = status.HTTP_504_GATEWAY_TIMEOUT
    default_detail = "the engine did not answer in time"


class NotStoredError(APIException):
    """500: the database refused the change (it was not stored; the detail names it and why)."""

    status_code = status.HTTP_500_INTERNAL_SERVER_ERROR
    default_detail = "the change was not stored"


def engine(op: Operation[T], field: str = "non_field_errors") -> T:
    """Call the engine; its refusals become DRF errors (400 field-keyed, 404, 500, 503, 504)."""
    try:
        return call(op)
    except EngineCallError as exc:
        if exc.status == 400:
            raise ValidationError({exc.field or field: [exc.message]}) from exc
        if exc.status == 404:
            raise NotFound(exc.message) from exc
        if exc.status == 504:
            raise EngineTimeoutError(exc.message) from exc
        if exc.status == 500:
            raise NotStoredError(exc.message) from exc
        raise EngineUnavailableError(exc.message) from exc


def audit(request: Request, action: str, target: str, before: Any = None, after: Any = None) -> None:
    """Keep a change: who, what, before and after."""
    user = getattr(request.user, "username", "") or ""
    AuditEntry.objects.create(user=user, action=action, target=target, before=before, after=after)


class BodyTooLargeError(APIException):
    """413: a body over SCHEDCONSOLE_UPLOAD_MAX_BYTES."""

    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "the body is over the upload limit"


class ConsoleAPIView(APIView):
    """An API view that refuses bodies over the upload limit before reading them (the ASGI
    application also counts bodies sent without a length: `schedconsole.limits.BodyLimit`)."""

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        """Check the size, then authenticate and authorize as usual."""
        super().initial(request, *args, **kwargs)
        length = request.META.get("CONTENT_LENGTH") or "0"
        try:
            size = int(length)
        except ValueError:
            size = 0
        if size > settings.UPLOAD_MAX_BYTES:
            raise BodyTooLargeError(
                f"the body is {size} bytes, over the limit of {settings.UPLOAD_MAX_BYTES} bytes (SCHEDCONSOLE_UPLOAD_MAX_BYTES)"
            )


PAGE_PARAMETERS = [
    OpenApiParameter("limit", int, description=f"rows per page (default {api_settings.PAGE_SIZE}, at most {LIST_LIMIT_MAX})"),
    OpenApiParameter("offset", int, description="rows skipped"),
]


class ListPagination(LimitOffsetPagination):
    """DRF's limit/offset paging (`PAGE_SIZE` rows by default) with a largest page."""

    max_limit = LIST_LIMIT_MAX


def window(request: Request) -> tuple[int, int]:
    """The `offset` and `limit` a list request asks for (bad values fall back as DRF's do)."""
    paginator = ListPagination()
    limit = paginator.get_limit(request) or api_settings.PAGE_SIZE
    assert limit is not None  # settings.REST_FRAMEWORK sets PAGE_SIZE
    return paginator.get_offset(request), limit


def engine_page(request: Request, result: NodeList | PodList) -> Response:
    """DRF's paged list body from a page the engine cut (`{"count", "results"}`): only the page
    crosses from the engine, never the whole list."""
    paginator = ListPagination()
    paginator.request = request
    paginator.offset, paginator.limit = window(request)
    paginator.count = result["count"]
    return paginator.get_paginated_response(result["results"])


def page(request: Request, rows: list[Any], view: APIView) -> Response:
    """DRF's paged list body `{"count", "next", "previous", "results"}` (the default paginator's)."""
    paginator = ListPagination()
    items = paginator.paginate_queryset(rows, request, view=view)
    return paginator.get_paginated_response(items)
