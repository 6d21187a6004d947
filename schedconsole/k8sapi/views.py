"""The Kubernetes-compatible API under /k8s: discovery, and every verb on the served resources.

Views only translate HTTP to the engine's `k8s` operation (which runs the request on the engine
thread, see `scheduler/apiserver/server.py`) and back; a watch is a stream the view feeds by
asking the engine for the events after the last version it sent.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from collections.abc import AsyncIterator
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.views.decorators.csrf import csrf_exempt

from schedconsole.accounts.authentication import token_identity
from schedconsole.accounts.permissions import OPERATOR, VIEWER, roles
from schedconsole.engine.bridge import BadInput, k8s_resources, k8s_route, parse_body, parse_documents
from schedconsole.engine.bridge.answers import K8sRoute
from schedconsole.engine.client import EngineCallError, acall
from schedconsole.engine.operations import K8sRequest
from schedconsole.k8sapi.tables import table, wants_table

RESOURCES = k8s_resources()
VERSION = {
    "major": "1",
    "minor": "32",
    "gitVersion": "v1.32.0-schedconsole",
    "gitCommit": "",
    "gitTreeState": "clean",
    "buildDate": "2026-01-01T00:00:00Z",
    "goVersion": "python",
    "compiler": "cpython",
    "platform": "linux/amd64",
}
VERBS = {"GET": "get", "POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}


def status(code: int, reason: str, message: str) -> JsonResponse:
    """A `meta/v1 Status` failure response."""
    body = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    return JsonResponse(body, status=code)


async def _user(request: HttpRequest) -> Any:
    """The user of a bearer token (kubectl `--token`) or a DRF `Token` (DRF's token authentication,
    as everywhere), or the session."""
    if request.headers.get("Authorization", "").split(" ", 1)[0].lower() in ("bearer", "token"):
        found, _, _ = await sync_to_async(token_identity)(request)
        return found
    user = await request.auser()
    # Session cookies may only read: a write needs a token (no CSRF token travels with kubectl).
    if user.is_authenticated and request.method in ("GET", "HEAD", "OPTIONS"):
        return user
    return None


async def _authorize(request: HttpRequest, write: bool) -> JsonResponse | None:
    user = await _user(request)
    if user is None:
        return status(401, "Unauthorized", "Unauthorized")
    held = await sync_to_async(roles)(user)
    need = OPERATOR if write else VIEWER
    if need not in held:
        verb = "change" if write else "read"
        return status(403, "Forbidden", f'User "{user.get_username()}" cannot {verb} objects here: it needs the {need} role')
    return None


# ----- discovery ---------------------------------------------------------------------------------
def _resource_list(group: str, version: str) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    for r in RESOURCES:
        if (r["group"], r["version"]) != (group, version):
            continue
        row = {
            "name": r["name"],
            "singularName": r["kind"].lower(),
            "namespaced": r["namespaced"],
            "kind": r["kind"],
            "verbs": r["verbs"],
        }
        if r["shortNames"]:
            row["shortNames"] = r["shortNames"]
        if r["name"] == "pods":
            row["categories"] = ["all"]
        rows.append(row)
        for sub in r["subresources"]:
            kind = "Binding" if sub == "binding" else r["kind"]
            verbs = ["create"] if sub == "binding" else ["get", "patch", "update"]
            rows.append(
                {"name": f"{r['name']}/{sub}", "singularName": "", "namespaced": r["namespaced"], "kind": kind, "verbs": verbs}
            )
    gv = f"{group}/{version}" if group else version
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": rows}


def _groups() -> dict[str, Any]:
    groups: dict[str, list[str]] = {}
    for r in RESOURCES:
        if r["group"]:
            versions = groups.setdefault(r["group"], [])
            if r["version"] not in versions:
                versions.append(r["version"])
    out = []
    for name, versions in groups.items():
        entries = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
        out.append({"name": name, "versions": entries, "preferredVersion": entries[0]})
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": out}


async def discovery(request: HttpRequest, path: str = "") -> HttpResponse:
    """`/version`, `/api`, `/api/v1`, `/apis`, `/apis/<group>[/<version>]`."""
    denied = await _authorize(request, write=False)
    if denied is not None:
        return denied
    parts = [p for p in path.split("/") if p]
    if parts == ["version"]:
        return JsonResponse(VERSION)
    if parts == ["api"]:
        return JsonResponse(
            {
                "kind": "APIVersions",
                "versions": ["v1"],
                "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": ""}],
            }
        )
    if parts == ["api", "v1"]:
        return JsonResponse(_resource_list("", "v1"))
    if parts == ["apis"]:
        return JsonResponse(_groups())
    if len(parts) == 2 and parts[0] == "apis":
        group = next((g for g in _groups()["groups"] if g["name"] == parts[1]), None)
        if group is not None:
            return JsonResponse({"kind": "APIGroup", "apiVersion": "v1", **group})
    if len(parts) == 3 and parts[0] == "apis":
        listed = _resource_list(parts[1], parts[2])
        if listed["resources"]:
            return JsonResponse(listed)
    return status(404, "NotFound", "the server could not find the requested resource")


# ----- resources ---------------------------------------------------------------------------------
def _body(request: HttpRequest) -> Any:
    raw = request.body
    if not raw:
        return None
    # Read with the engine's bounds (nesting depth; for YAML, alias expansion as go-yaml limits it).
    if "yaml" in (request.content_type or ""):
        docs = parse_documents(raw, "body")
        return docs[0] if len(docs) == 1 else docs
    return parse_body(raw, "json")


async def _engine(request: K8sRequest) -> tuple[int, dict[str, Any]]:
    answer = await acall(request)
    return answer["code"], answer["body"]


async def _engine_warned(request: K8sRequest) -> tuple[int, dict[str, Any], list[str]]:
    answer = await acall(request)
    return answer["code"], answer["body"], answer["warnings"]


@csrf_exempt
async def resource(request: HttpRequest, path: str) -> HttpResponseBase:
    """Every verb on a served resource (and its `binding` and `status` subresources)."""
    route = k8s_route(path)
    if route is None:
        return status(404, "NotFound", "the server could not find the requested resource")
    method = request.method or "GET"
    if method not in VERBS:
        return status(405, "MethodNotAllowed", f"the server does not allow this method on the requested resource ({method})")
    denied = await _authorize(request, write=method != "GET")
    if denied is not None:
        return denied
    query = {k: request.GET.get(k, "") for k in request.GET}
    verb = VERBS[method]
    if verb == "get" and not route["name"]:
        verb = "watch" if query.get("watch") in ("true", "1") else "list"
    if verb == "delete" and not route["name"]:
        return status(405, "MethodNotAllowed", "deleting a collection is not supported; delete objects by name")
    if len(request.body) > settings.UPLOAD_MAX_BYTES:
        return status(
            413,
            "RequestEntityTooLarge",
            f"the body is over the limit of {settings.UPLOAD_MAX_BYTES} bytes (SCHEDCONSOLE_UPLOAD_MAX_BYTES)",
        )
    try:
        body = _body(request)
    except BadInput as exc:
        return status(400, "BadRequest", exc.message)
    op = K8sRequest(verb=verb, **route, query=query, body=body, content_type=request.content_type or "")
    try:
        if verb == "watch":
            return await _watch(request, op)
        code, answer, warnings = await _engine_warned(op)
        if code == 201 and (route["subresource"] == "binding" or route["resource"] == "bindings"):
            await _until_bound(route, body)
    except EngineCallError as exc:
        return status(exc.status, "ServiceUnavailable" if exc.status == 503 else "InternalError", exc.message)
    if code < 300 and verb in ("get", "list") and wants_table(request.headers.get("Accept", "")):
        kind = next(
            r["kind"]
            for r in RESOURCES
            if (r["group"], r["version"], r["name"]) == (route["group"], route["version"], route["resource"])
        )
        items = answer["items"] if verb == "list" else [answer]
        meta = (
            answer.get("metadata", {}) if verb == "list" else {"resourceVersion": answer["metadata"].get("resourceVersion", "")}
        )
        list_meta = {k: v for k, v in meta.items() if k in ("resourceVersion", "continue", "remainingItemCount")}
        answer = table(kind, items, list_meta, query.get("includeObject") or "Metadata")
    response = JsonResponse(answer, status=code)
    if warnings and code < 300:
        response["Warning"] = ", ".join("299 - " + json.dumps(w) for w in warnings)
    return response


async def _until_bound(route: K8sRoute, body: Any) -> None:
    """A binding is stored before it shows (the engine's group commit): answer once it shows, as
    the API server answers once etcd has it."""
    name = route["name"] or str(((body or {}).get("metadata") or {}).get("name", ""))
    deadline = time.monotonic() + settings.CONTROL_TIMEOUT_SECONDS
    get = K8sRequest(
        verb="get", group=route["group"], version=route["version"], resource="pods", namespace=route["namespace"], name=name
    )
    while time.monotonic() < deadline:
        code, pod = await _engine(get)
        if code != 200 or (pod.get("spec") or {}).get("nodeName"):
            return
        await asyncio.sleep(0.02)


async def _watch(request: HttpRequest, op: K8sRequest) -> HttpResponseBase:
    query = op.query
    since = query.get("resourceVersion", "")
    use_table = wants_table(request.headers.get("Accept", ""))
    kind = next(r["kind"] for r in RESOURCES if (r["group"], r["version"], r["name"]) == (op.group, op.version, op.resource))
    initial: list[dict[str, Any]] = []
    if since in ("", "0"):
        # "Any version": start with the current objects as ADDED events, then follow.
        code, listed = await _engine(
            dataclasses.replace(op, verb="list", query={k: v for k, v in query.items() if k not in ("limit", "continue")})
        )
        if code != 200:
            return JsonResponse(listed, status=code)
        initial = [{"type": "ADDED", "object": item} for item in listed["items"]]
        since = listed["metadata"]["resourceVersion"]
    timeout = float(query.get("timeoutSeconds") or settings.K8S_WATCH_TIMEOUT_SECONDS)
    bookmarks = query.get("allowWatchBookmarks") in ("true", "1")
    include = query.get("includeObject") or "Metadata"

    def encode(event: dict[str, Any], first: bool) -> bytes:
        if use_table and event["type"] in ("ADDED", "MODIFIED", "DELETED"):
            obj = event["object"]
            event = {
                "type": event["type"],
                "object": table(
                    kind, [obj], {"resourceVersion": obj["metadata"].get("resourceVersion", "")}, include, headers=first
                ),
            }
        return json.dumps(event).encode() + b"\n"

    async def stream() -> AsyncIterator[bytes]:
        rv = since
        first = True
        for event in initial:
            yield encode(event, first)
            first = False
        deadline = time.monotonic() + timeout
        last_bookmark = time.monotonic()
        while time.monotonic() < deadline:
            try:
                code, answer = await _engine(dataclasses.replace(op, query={**query, "resourceVersion": rv}))
            except EngineCallError as exc:
                yield (
                    json.dumps(
                        {"type": "ERROR", "object": status(exc.status, "InternalError", exc.message).content.decode()}
                    ).encode()
                    + b"\n"
                )
                return
            if code != 200:
                yield json.dumps({"type": "ERROR", "object": answer}).encode() + b"\n"
                return
            for event in answer["events"]:
                yield encode(event, first)
                first = False
            rv = answer["resourceVersion"]
            if bookmarks and time.monotonic() - last_bookmark >= settings.K8S_BOOKMARK_SECONDS:
                last_bookmark = time.monotonic()
                group = f"{op.group}/" if op.group else ""
                mark = {"kind": kind, "apiVersion": f"{group}{op.version}", "metadata": {"resourceVersion": rv}}
                yield json.dumps({"type": "BOOKMARK", "object": mark}).encode() + b"\n"
            await asyncio.sleep(settings.K8S_WATCH_POLL_SECONDS)

    response = StreamingHttpResponse(stream(), content_type="application/json")
    response["Cache-Control"] = "no-cache, private"
    return response


def _proto_string(field: int, text: str) -> bytes:
    data = text.encode()
    return bytes([field << 3 | 2, len(data)]) + data


# gnostic's openapi_v2.Document with only `swagger` and `info` (kubectl downloads the v2 document
# in protobuf before it validates; an object kind the document does not describe is not checked on
# the client, and the API checks it as it stores it).
_INFO = _proto_string(1, "schedconsole") + _proto_string(2, VERSION["gitVersion"])
OPENAPI_V2_PB = _proto_string(1, "2.0") + bytes([2 << 3 | 2, len(_INFO)]) + _INFO
OPENAPI_V2_JSON = {
    "swagger": "2.0",
    "info": {"title": "schedconsole", "version": VERSION["gitVersion"]},
    "paths": {},
    "definitions": {},
}


async def openapi(request: HttpRequest, version: str) -> HttpResponse:
    """`/openapi/v2`: a document without schemas (protobuf or JSON, as asked); no v3."""
    denied = await _authorize(request, write=False)
    if denied is not None:
        return denied
    if version != "v2":
        return status(404, "NotFound", "the server could not find the requested resource")
    if "protobuf" in request.headers.get("Accept", ""):
        return HttpResponse(OPENAPI_V2_PB, content_type="application/com.github.proto-openapi.spec.v2.v1.0+protobuf")
    return JsonResponse(OPENAPI_V2_JSON)
