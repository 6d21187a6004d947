"""Plugin REST services: a route table independent of any web framework (Koordinator's `services`).

A route is a method, a path pattern (`/apis/v1/plugins/Coscheduling/gang/:namespace/:name`; a
`:name` segment matches one path segment, a final `*name` segment the rest of the path) and a
handler that takes a `Request` and returns `(status, body)`. A `str` body is served as
text/plain (the debug-flag replies, as kube's `writePlainText`), anything else as JSON.

`ServiceTable.dispatch` is what a web layer calls: paths under `/apis/v1/` answer 503
`{"message": "the instance is not leader"}` when this instance does not lead, unknown paths
404, a known path with another method 405, and every handler runs under the engine's lock so
it reads live state, never a copy. Plugins get a `RouteGroup` rooted at
`/apis/v1/plugins/<Name>` and mount their routes on it once, whatever the number of profiles.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable
from urllib.parse import unquote

from scheduler.framework.nodeinfo import NodeInfo, Resource

SERVICES_BASE = "/apis/v1/"
PLUGIN_SERVICES_BASE = SERVICES_BASE + "plugins"
ANY_METHOD = "*"
NOT_LEADER = "the instance is not leader"

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Request:
    """One call of a route: method, concrete path, the `:params` it bound, body and query."""

    method: str
    path: str
    params: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""
    query: Mapping[str, str] = field(default_factory=dict)

    def text(self) -> str:
        """The body decoded as UTF-8."""
        return self.body.decode("utf-8", errors="replace")


Handler = Callable[[Request], tuple[int, Any]]
"""A route handler: `(status, body)`; a str body is plain text, anything else JSON."""


@dataclass(frozen=True, slots=True)
class Response:
    """What `dispatch` answers: the status, the body and extra headers."""

    status: int
    body: Any
    headers: Mapping[str, str] = field(default_factory=dict)

    @property
    def content_type(self) -> str:
        """text/plain for text bodies, application/json otherwise."""
        return "text/plain" if isinstance(self.body, str) else "application/json"

    def content(self) -> bytes:
        """The bytes to send; plain text ends with a newline, as Go's `fmt.Fprintln` writes it."""
        if isinstance(self.body, str):
            return (self.body + "\n").encode()
        return json.dumps(self.body).encode()


def error_message(status: int, message: str) -> tuple[int, dict[str, str]]:
    """An error reply in Koordinator's shape, `{"message": ...}` (`ResponseErrorMessage`)."""
    return status, {"message": message}


@runtime_checkable
class APIServiceProvider(Protocol):
    """A plugin exposing REST routes under `/apis/v1/plugins/<Name>/`."""

    name: str

    def register_endpoints(self, group: RouteGroup) -> None:
        """Mount the plugin's routes on `group` (called once per plugin name)."""
        ...


@dataclass(frozen=True, slots=True)
class Route:
    """A registered route."""

    method: str
    path: str
    handler: Handler
    listed: bool
    segments: tuple[str, ...]


def join_paths(base: str, relative: str) -> str:
    """Join two path pieces with exactly one slash between them (gin's `joinPaths`)."""
    if not relative:
        return base or "/"
    joined = base.rstrip("/") + "/" + relative.lstrip("/")
    return joined if joined.startswith("/") else "/" + joined


def _split(path: str) -> tuple[str, ...]:
    trimmed = path.strip("/")
    return tuple(trimmed.split("/")) if trimmed else ()


class RouteGroup:
    """Routes sharing a path prefix (gin's `RouterGroup`), as handed to plugins."""

    def __init__(self, table: ServiceTable, prefix: str) -> None:
        self.table = table
        self.prefix = prefix

    def group(self, relative: str) -> RouteGroup:
        """A sub-group under this one."""
        return RouteGroup(self.table, join_paths(self.prefix, relative))

    def handle(self, method: str, relative: str, handler: Handler, listed: bool = True) -> None:
        """Register a handler for a method and a path relative to this group."""
        self.table.add(method, join_paths(self.prefix, relative), handler, listed)

    def get(self, relative: str, handler: Handler) -> None:
        """Register a GET route."""
        self.handle("GET", relative, handler)

    def post(self, relative: str, handler: Handler) -> None:
        """Register a POST route."""
        self.handle("POST", relative, handler)

    def put(self, relative: str, handler: Handler) -> None:
        """Register a PUT route."""
        self.handle("PUT", relative, handler)

    def delete(self, relative: str, handler: Handler) -> None:
        """Register a DELETE route."""
        self.handle("DELETE", relative, handler)


class ServiceTable:
    """Every route of this engine, the leader gate, and dispatch under the engine's lock."""

    def __init__(self, is_leader: Callable[[], bool] = lambda: True, lock: threading.RLock | None = None) -> None:
        self._routes: list[Route] = []
        self._is_leader = is_leader
        self._lock = lock
        self._mutex = threading.Lock()
        self.registered_providers: dict[str, str] = {}

    # ----- registration ---------------------------------------------------------------------
    def add(self, method: str, path: str, handler: Handler, listed: bool = True) -> None:
        """Register a route; the same method and pattern twice is a programming error."""
        method = method.upper()
        segments = _split(path)
        for i, seg in enumerate(segments):
            if seg.startswith("*") and i != len(segments) - 1:
                raise ValueError(f"route {path!r}: a catch-all segment {seg!r} must be the last one")
            if seg in (":", "*"):
                raise ValueError(f"route {path!r}: a parameter needs a name")
        canonical = "/" + "/".join(segments)
        with self._mutex:
            shape = _shape(segments)
            for route in self._routes:
                if route.method == method and _shape(route.segments) == shape:
                    raise ValueError(f"route {method} {canonical!r} conflicts with {route.method} {route.path!r}")
            self._routes.append(Route(method, canonical, handler, listed, segments))

    def group(self, prefix: str) -> RouteGroup:
        """A route group rooted at `prefix`."""
        return RouteGroup(self, prefix)

    def register_plugin_service(self, plugin: object, profile: str) -> bool:
        """Mount a provider's routes under `/apis/v1/plugins/<Name>`, once per plugin name.

        Returns whether routes were mounted now (False for non-providers and for a name already
        mounted by another profile, as Koordinator's `RegisterPluginService` skips duplicates).
        """
        register = getattr(plugin, "register_endpoints", None)
        if not callable(register):
            return False
        name = str(getattr(plugin, "name", type(plugin).__name__))
        with self._mutex:
            if name in self.registered_providers:
                log.info(
                    "service provider already registered, skipping duplicate registration provider=%s profile=%s", name, profile
                )
                return False
            before = len(self._routes)
        try:
            register(self.group(PLUGIN_SERVICES_BASE).group(name))
        except Exception:
            # A half-mounted provider would serve some routes and not others: take them all back.
            with self._mutex:
                del self._routes[before:]
            raise
        with self._mutex:
            self.registered_providers[name] = profile
        return True

    # ----- reading -------------------------------------------------------------------------
    def routes(self) -> list[Route]:
        """The registered routes, in registration order."""
        with self._mutex:
            return list(self._routes)

    def listing(self) -> dict[str, list[str]]:
        """Listed routes as `{method: sorted paths}` (the `__services__` reply)."""
        out: dict[str, list[str]] = {}
        for route in self.routes():
            if route.listed and route.method != ANY_METHOD:
                out.setdefault(route.method, []).append(route.path)
        return {method: sorted(paths) for method, paths in sorted(out.items())}

    def match(self, method: str, path: str) -> tuple[Route | None, dict[str, str], list[str]]:
        """The best route for method and path, its params, and the methods the path allows.

        Static segments win over `:params`, which win over a catch-all, segment by segment from
        the left, as gin's tree prefers them.
        """
        method = method.upper()
        parts = tuple(unquote(p) for p in _split(path))
        best: tuple[tuple[int, ...], Route, dict[str, str]] | None = None
        allowed: set[str] = set()
        for route in self.routes():
            bound = _bind(route.segments, parts)
            if bound is None:
                continue
            allowed.add(route.method)
            if route.method not in (method, ANY_METHOD):
                continue
            rank = _rank(route.segments)
            if best is None or rank < best[0]:
                best = (rank, route, bound)
        if best is None:
            return None, {}, sorted(allowed)
        return best[1], best[2], sorted(allowed)

    # ----- serving -------------------------------------------------------------------------
    def dispatch(self, method: str, path: str, body: bytes = b"", query: Mapping[str, str] | None = None) -> Response:
        """Answer one request: leader gate, routing, then the handler under the engine's lock."""
        if (path == SERVICES_BASE.rstrip("/") or path.startswith(SERVICES_BASE)) and not self._is_leader():
            return Response(503, {"message": NOT_LEADER})
        route, params, allowed = self.match(method, path)
        if route is None:
            if allowed:
                return Response(405, {"message": "405 method not allowed"}, {"Allow": ", ".join(allowed)})
            return Response(404, {"message": "404 page not found"})
        request = Request(method.upper(), path, params, body, dict(query or {}))
        guard: AbstractContextManager[Any] = self._lock if self._lock is not None else nullcontext()
        try:
            with guard:
                result = route.handler(request)
        except Exception as exc:  # a failing handler is a 500 for that request only
            log.exception("service handler %s %s failed", route.method, route.path)
            return Response(500, {"message": f"internal error: {exc}"})
        if not (isinstance(result, tuple) and len(result) == 2 and isinstance(result[0], int)):
            return Response(500, {"message": f"handler of {route.method} {route.path} returned {result!r}, not (status, body)"})
        return Response(result[0], result[1])


def _shape(segments: tuple[str, ...]) -> tuple[str, ...]:
    """A pattern with parameter names erased: two routes of one shape can never be told apart."""
    return tuple(":" if s.startswith(":") else "*" if s.startswith("*") else s for s in segments)


def _rank(segments: tuple[str, ...]) -> tuple[int, ...]:
    return tuple(2 if s.startswith("*") else 1 if s.startswith(":") else 0 for s in segments)


def _bind(pattern: tuple[str, ...], parts: tuple[str, ...]) -> dict[str, str] | None:
    params: dict[str, str] = {}
    for i, seg in enumerate(pattern):
        if seg.startswith("*"):
            params[seg[1:]] = "/" + "/".join(parts[i:])
            return params
        if i >= len(parts):
            return None
        if seg.startswith(":"):
            if not parts[i]:
                return None
            params[seg[1:]] = parts[i]
        elif seg != parts[i]:
            return None
    return params if len(parts) == len(pattern) else None


# ----- the NodeInfo service -------------------------------------------------------------------
def node_info_json(info: NodeInfo, image_nodes: Mapping[str, tuple[int, int]]) -> dict[str, Any]:
    """A node's NodeInfo as Koordinator's `/apis/v1/nodes/:nodeName` writes it (`convertNodeInfo`).

    `image_nodes` maps an image name to (size, number of nodes holding it) across the cluster.
    """
    allocatable = info.allocatable
    requested = info.requested
    remaining_scalars = dict(allocatable.scalar_resources)
    for name, amount in requested.scalar_resources.items():
        remaining_scalars[name] = remaining_scalars.get(name, 0) - amount
    remaining = Resource(
        milli_cpu=allocatable.milli_cpu - requested.milli_cpu,
        memory=allocatable.memory - requested.memory,
        ephemeral_storage=allocatable.ephemeral_storage - requested.ephemeral_storage,
        allowed_pod_number=allocatable.allowed_pod_number - requested.allowed_pod_number,
        scalar_resources=remaining_scalars,
    )
    used_ports: dict[str, list[dict[str, Any]]] = {}
    for port in info.used_ports:
        used_ports.setdefault(port.host_ip, []).append({"Protocol": port.protocol, "Port": port.port})
    image_states: dict[str, dict[str, int]] = {}
    for image in info.node.images:
        for name in image.names:
            size, holders = image_nodes.get(name, (image.size_bytes, 1))
            image_states.setdefault(name, {"Size": size, "NumNodes": holders})
    out: dict[str, Any] = {
        "node": info.node.raw,
        "pods": [{"Pod": pod_json(p.pod)} for p in info.pods],
        "requested": requested.to_json(),
        "nonZeroRequested": info.nonzero_requested.to_json(),
        "allocatable": allocatable.to_json(),
        "remaining": remaining.to_json(),
        "usedPorts": used_ports,
        "imageStates": image_states,
        "generation": info.generation,
    }
    # Present only when non-empty, as the upstream struct's omitempty fields are.
    if info.pods_with_affinity:
        out["podsWithAffinity"] = [{"Pod": pod_json(p.pod)} for p in info.pods_with_affinity]
    if info.pods_with_required_anti_affinity:
        out["podsWithRequiredAntiAffinity"] = [{"Pod": pod_json(p.pod)} for p in info.pods_with_required_anti_affinity]
    return out


def pod_json(pod: Any) -> dict[str, Any]:
    """The pod's document with the fields the scheduler changes (node, phase, nomination) current."""
    doc = dict(pod.raw)
    spec = dict(doc.get("spec") or {})
    status = dict(doc.get("status") or {})
    if pod.node_name:
        spec["nodeName"] = pod.node_name
    if pod.phase:
        status["phase"] = pod.phase
    if pod.nominated_node_name:
        status["nominatedNodeName"] = pod.nominated_node_name
    doc["spec"] = spec
    doc["status"] = status
    return doc


__all__ = [
    "ANY_METHOD",
    "NOT_LEADER",
    "PLUGIN_SERVICES_BASE",
    "SERVICES_BASE",
    "APIServiceProvider",
    "Handler",
    "Request",
    "Response",
    "Route",
    "RouteGroup",
    "ServiceTable",
    "error_message",
    "join_paths",
    "node_info_json",
    "pod_json",
]
