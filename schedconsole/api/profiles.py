"""Profile versions, validation, activation (roll back = activate an older version), plugin args."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from schedconsole.accounts.permissions import ViewerMayPost
from schedconsole.api import serializers as S
from schedconsole.api.base import ConsoleAPIView, engine, page
from schedconsole.engine import bridge
from schedconsole.engine import operations as ops
from schedconsole.engine.client import EngineCallError
from schedconsole.profiles import services
from schedconsole.profiles.models import ProfileVersion

T = TypeVar("T")


def refusing(fn: Callable[[], T]) -> T:
    """Run a service call; BadInput and engine refusals become field-keyed 400s."""
    try:
        return fn()
    except bridge.BadInput as exc:
        raise ValidationError({exc.field or "document": [exc.message]}) from exc
    except EngineCallError as exc:
        if exc.status == 400:
            raise ValidationError({exc.field or "document": [exc.message]}) from exc
        raise


def version_json(v: ProfileVersion, document: bool = True) -> dict[str, Any]:
    """A profile version as the API shows it."""
    out: dict[str, Any] = {
        "version": v.version,
        "author": v.author.username if v.author else None,
        "created": v.created.isoformat().replace("+00:00", "Z"),
        "comment": v.comment,
        "active": v.active,
    }
    if document:
        out["document"] = v.document
    return out


def _document_and_comment(data: Any) -> tuple[Any, str, bool]:
    """A body is either the configuration itself or `{"document", "comment"?, "activate"?}`."""
    if isinstance(data, dict) and "document" in data:
        return data["document"], str(data.get("comment", "")), bool(data.get("activate", True))
    return data, "", True


class ProfileList(ConsoleAPIView):
    """Every version, newest first; POST stores a new one (and activates it unless told not to)."""

    @extend_schema(operation_id="profiles_list", responses=S.paged(S.ProfileVersionSerializer, "PaginatedProfileVersionList"))
    def get(self, request: Request) -> Response:
        """A page of versions."""
        return page(request, [version_json(v, document=False) for v in ProfileVersion.objects.select_related("author")], self)

    @extend_schema(request=S.PROFILE_BODY, responses={201: S.ProfileVersionSerializer})
    def post(self, request: Request) -> Response:
        """Validate, store, and activate atomically."""
        document, comment, activate = _document_and_comment(request.data)
        version = refusing(lambda: services.create(services_document(document), request.user, comment))
        if activate:
            version = refusing(lambda: services.activate(version, request.user))
        return Response(version_json(version), status=status.HTTP_201_CREATED)


def services_document(document: Any) -> dict[str, Any]:
    """The body as a configuration object, or a 400."""
    if not isinstance(document, dict):
        raise ValidationError({"document": [f"expected a KubeSchedulerConfiguration object, got {type(document).__name__}"]})
    return document


class ProfileDetail(ConsoleAPIView):
    """One version."""

    @extend_schema(responses=S.ProfileVersionSerializer)
    def get(self, request: Request, version: int) -> Response:
        """The version with its document."""
        return Response(version_json(get_object_or_404(ProfileVersion, version=version)))


class ProfileValidate(ConsoleAPIView):
    """Validate a configuration without applying it (reading needs only the viewer role)."""

    permission_classes = (ViewerMayPost,)

    @extend_schema(request=S.PROFILE_BODY, responses=S.ValidSerializer)
    def post(self, request: Request) -> Response:
        """`{"valid": true, "profiles": [...]}` or a 400 naming the field."""
        document, _, _ = _document_and_comment(request.data)
        names = refusing(lambda: services.validate(services_document(document)))
        return Response({"valid": True, "profiles": names})


class ProfileActivate(ConsoleAPIView):
    """Make a version the running one (rolling back is activating an older version)."""

    @extend_schema(request=None, responses=S.ProfileVersionSerializer)
    def post(self, request: Request, version: int) -> Response:
        """Apply atomically: the engine keeps its profiles if this set fails to build."""
        target = get_object_or_404(ProfileVersion, version=version)
        return Response(version_json(refusing(lambda: services.activate(target, request.user))))


class PluginArgs(ConsoleAPIView):
    """Live plugin args per profile."""

    @extend_schema(responses=dict[str, dict[str, dict[str, Any]]])
    def get(self, request: Request) -> Response:
        """Every profile's configured plugin args, as the engine runs them."""
        return Response(engine(ops.GetPluginArgs()))


class PluginArgsDetail(ConsoleAPIView):
    """Change one plugin's args: validate and preview (`?dry_run=true`), or apply as a new version."""

    @extend_schema(
        parameters=[OpenApiParameter("dry_run", bool)],
        request=S.PluginArgsBodySerializer,
        responses=S.PluginArgsChangeSerializer,
    )
    def put(self, request: Request, plugin: str) -> Response:
        """Body `{"args": {...}, "profile"?: name}`."""
        data = request.data
        if not isinstance(data, dict) or "args" not in data:
            raise ValidationError({"args": ['expected {"args": {...}, "profile"?: "name"}']})
        if not isinstance(data["args"], dict):
            raise ValidationError({"args": [f"expected an object, got {type(data['args']).__name__}"]})
        profile = data.get("profile")
        dry_run = request.query_params.get("dry_run", "").lower() in ("1", "true", "yes")
        return Response(refusing(lambda: services.change_plugin_args(plugin, data["args"], profile, request.user, dry_run)))
