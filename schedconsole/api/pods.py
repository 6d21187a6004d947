"""Pods: list with filters, create (JSON or YAML), detail, delete; bulk import."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from schedconsole.api import serializers as S
from schedconsole.api.base import (
    PAGE_PARAMETERS,
    ConsoleAPIView,
    EngineTimeoutError,
    EngineUnavailableError,
    audit,
    engine,
    engine_page,
    window,
)
from schedconsole.api.parsers import RawTextParser
from schedconsole.cluster.imports import run_import
from schedconsole.engine import operations as ops
from schedconsole.engine.bridge import answers, with_defaults

FILTERS = ("namespace", "phase", "node", "profile")


class PodList(ConsoleAPIView):
    """Pods of the simulated cluster."""

    @extend_schema(
        operation_id="pods_list",
        parameters=[*(OpenApiParameter(f, str) for f in FILTERS), *PAGE_PARAMETERS],
        responses=S.paged(S.typed(answers.PodRow), "PaginatedPodList"),
    )
    def get(self, request: Request) -> Response:
        """A page of pods (`limit`, `offset`), filtered by namespace, phase, node and profile; cut by the engine."""
        offset, limit = window(request)
        query = {key: request.query_params.get(key, "") for key in FILTERS}
        return engine_page(request, engine(ops.ListPods(**query, offset=offset, limit=limit)))

    @extend_schema(request=S.PodBodySerializer, responses={201: S.typed(answers.PodDetail)})
    def post(self, request: Request) -> Response:
        """Create one pod from a Pod document (JSON or YAML)."""
        doc = request.data
        if not isinstance(doc, dict):
            raise ValidationError({"body": [f"expected a Pod object, got {type(doc).__name__}"]})
        if doc.get("kind") != "Pod":
            raise ValidationError({"kind": [f"expected kind Pod, got {doc.get('kind')!r}"]})
        doc = with_defaults(doc, "Pod")
        engine(ops.Create(documents=[doc], source="body"), field="body")
        meta = doc["metadata"]
        audit(request, "pod.create", f"{meta['namespace']}/{meta['name']}", after=doc)
        return Response(engine(ops.GetPod(namespace=meta["namespace"], name=meta["name"])), status=status.HTTP_201_CREATED)


class PodDetail(ConsoleAPIView):
    """One pod."""

    @extend_schema(responses=S.typed(answers.PodDetail))
    def get(self, request: Request, namespace: str, name: str) -> Response:
        """The pod with its current document."""
        return Response(engine(ops.GetPod(namespace=namespace, name=name)))

    @extend_schema(request=S.PodBodySerializer, responses=S.typed(answers.PodDetail))
    def put(self, request: Request, namespace: str, name: str) -> Response:
        """Replace the pod with an edited document (JSON or YAML; simulated mode). A pod's spec cannot
        change in place, so, as `kubectl replace --force` does, the pod is deleted and the edited one
        created: a new uid, scheduled again unless it names its node."""
        before = engine(ops.GetPod(namespace=namespace, name=name))["manifest"]
        after = engine(ops.ReplacePod(namespace=namespace, name=name, document=request.data), field="body")
        audit(request, "pod.replace", f"{namespace}/{name}", before=before, after=after)
        return Response(engine(ops.GetPod(namespace=namespace, name=name)))

    @extend_schema(responses={200: S.PodDocumentSerializer})
    def delete(self, request: Request, namespace: str, name: str) -> Response:
        """Delete the pod."""
        last = engine(ops.DeletePod(namespace=namespace, name=name))
        audit(request, "pod.delete", f"{namespace}/{name}", before=last)
        return Response(last)


def _upload_text(request: Request) -> tuple[str, str]:
    if request.content_type.startswith("multipart/"):
        upload = request.FILES.get("file")
        if upload is None:
            raise ValidationError({"file": ["expected a file field named 'file'"]})
        return upload.read().decode("utf-8", errors="replace"), upload.name or "file"
    body: Any = request.data  # RawTextParser: the text as sent
    return (body if isinstance(body, str) else ""), "body"


class Import(ConsoleAPIView):
    """A kubectl YAML/JSON file of any kinds the engine reads; all or nothing."""

    parser_classes = (MultiPartParser, RawTextParser)  # other bodies are read raw: several documents, any kinds

    @extend_schema(
        request={
            "application/yaml": OpenApiTypes.STR,
            "application/json": OpenApiTypes.STR,
            "multipart/form-data": S.ImportBodySerializer,
        },
        responses={201: S.typed(answers.Created), 202: S.StartedJobSerializer},
    )
    def post(self, request: Request) -> Response:
        """Create every object in the file, or none. With `?background=true` the import runs as a
        job: 202 at once with the job to follow (`/api/jobs/<id>/`: documents parsed, prepared,
        applied of the total)."""
        text, source = _upload_text(request)
        if request.query_params.get("background") in ("true", "1"):
            from schedconsole.api.jobs import started
            from schedconsole.cluster import jobs

            if not text.strip():
                raise ValidationError({"file": [f"{source}: no objects passed to import"]})
            job = jobs.start("import", {"source": source, "bytes": len(text)}, getattr(request.user, "username", "") or "", text)
            audit(request, "cluster.import", source, after={"job": job.pk})
            return started(request, job)
        answer = run_import(text, source)
        error = answer.get("error")
        if error:
            if error["status"] == 400:
                raise ValidationError({error.get("field") or "file": [error["message"]]})
            if error["status"] == 404:
                raise NotFound(error["message"])
            if error["status"] == 504:
                raise EngineTimeoutError(error["message"])
            raise EngineUnavailableError(error["message"])
        result = answer["ok"]
        audit(request, "cluster.import", source, after=result)
        return Response(result, status=status.HTTP_201_CREATED)
