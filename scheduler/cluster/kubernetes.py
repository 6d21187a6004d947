"""A cluster backend on the `kubernetes` Python client: a real API server behind the simulated
cluster's interface.

The scheduler reads the same dictionaries it reads from `SimulatedCluster`; here informers fill
them: one thread per resource lists, then watches from the list's resourceVersion, relists when
the server says 410 Gone (or the watch fails in a way it cannot resume from), and relists every
`resync_seconds` anyway, diffing the fresh list against the cache so a watch that dropped events
without closing is repaired (client-go's reflector and resync). Changes reach the scheduler as the
same `WatchEvent`s, applied under the scheduler's lock.

Writes go to the API server as kube-scheduler makes them: the `pods/binding` subresource, the
`DisruptionTarget` condition and `nominatedNodeName` as status patches, deletions with a uid
precondition, `events.k8s.io/v1` Events (sent by a broadcaster thread, never by the scheduling
loop), PodGroup and Reservation status updates. Every request passes a token bucket (QPS and
burst, kube-scheduler's `clientConnection`), and 429 (or a 5xx with Retry-After) is retried
after the server's Retry-After, as client-go's rest client does. The scheduler runs binding
cycles and asynchronous preemption on its API pool (see `remote_api`), releasing its lock while a
request is in flight, so a slow API server does not stall scheduling.

The `kubernetes` package is imported only when a connection is made, so the simulated default
does not need it.
"""

from __future__ import annotations

import http.client
import logging
import socket
import ssl
import threading
import time
import uuid
import weakref
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple
from urllib.parse import urlencode, urlsplit

import orjson

from scheduler.api.fields import FieldError, format_time
from scheduler.api.objects import parse_namespace, parse_node, parse_pdb, parse_pod, parse_priority_class
from scheduler.clock import Clock
from scheduler.cluster.simulated import APIError, NotFoundError, SimulatedCluster, WatchEvent, api_error

log = logging.getLogger(__name__)
SHADOWED = "(shadowed)"  # no profile has this name: shadow mode queues nothing
WATCH_BATCH_SECONDS = 0.005


class RateLimiter:
    """A token bucket: `qps` tokens a second, at most `burst` saved (client-go's flowcontrol)."""

    def __init__(self, qps: float, burst: int) -> None:
        self.qps = qps
        self.burst = max(1, burst)
        self._tokens = float(self.burst)
        self._at = time.monotonic()
        self._lock = threading.Lock()

    def try_acquire(self) -> bool:
        """Take a token if one is there now (never sleeps)."""
        if self.qps <= 0:
            return True
        with self._lock:
            now = time.monotonic()
            self._tokens = min(float(self.burst), self._tokens + (now - self._at) * self.qps)
            self._at = now
            if self._tokens < 1.0:
                return False
            self._tokens -= 1.0
            return True

    def acquire(self) -> float:
        """Take a token, sleeping until one is there; returns the seconds waited."""
        if self.qps <= 0:
            return 0.0
        with self._lock:
            now = time.monotonic()
            self._tokens = min(float(self.burst), self._tokens + (now - self._at) * self.qps)
            self._at = now
            self._tokens -= 1.0
            wait = -self._tokens / self.qps if self._tokens < 0 else 0.0
        if wait > 0:
            time.sleep(wait)
        return wait


class RemoteError(APIError):
    """A request the API server refused: its HTTP code and Status reason."""

    def __init__(self, code: int, reason: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason


class _Answer(NamedTuple):
    status: int
    reason: str
    headers: dict[str, str]  # lower-case names
    body: bytes
    will_close: bool


class _Closed(ConnectionError):
    """The server closed a kept-alive connection without answering."""


# Errors of a connection the server (or a proxy) closed: a request on a kept-alive connection
# meeting one of these was not answered, and is sent again once on a fresh connection.
_STALE = (_Closed, BrokenPipeError, ConnectionResetError, ConnectionAbortedError)


class _Wire:
    """One HTTP/1.1 connection for requests: a request is one write, and its answer is read with a
    few lines of parsing (status, headers, a Content-Length or chunked body) instead of
    `http.client`'s response object, whose header parsing (the `email` package) cost more CPU
    than the rest of a binding request."""

    __slots__ = ("__weakref__", "rfile", "sock")

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.rfile = sock.makefile("rb")

    def exchange(self, message: bytes, method: str) -> _Answer:
        """Send one request and read its answer."""
        self.sock.sendall(message)
        status, reason, headers, version = self.read_head()
        closes = will_close(headers, version)
        if method == "HEAD" or status in (204, 304):
            return _Answer(status, reason, headers, b"", closes)
        body, until_close = self.read_body(headers)
        return _Answer(status, reason, headers, body, closes or until_close)

    def read_head(self) -> tuple[int, str, dict[str, str], str]:
        """The answer's status line and headers, past any interim (1xx) answer."""
        status, reason, headers, version = _read_head(self.rfile, _Closed)
        while 100 <= status < 200:  # interim answers (we never send Expect, but a server may)
            status, reason, headers, version = _read_head(self.rfile, _Closed)
        return status, reason, headers, version

    def read_body(self, headers: dict[str, str]) -> tuple[bytes, bool]:
        """A whole body (chunked, of a Content-Length, or up to the close), and whether the
        connection ends with it."""
        if "chunked" in headers.get("transfer-encoding", "").lower():
            return _read_chunked(self.rfile), False
        if "content-length" in headers:
            length = int(headers["content-length"])
            body = self.rfile.read(length)
            if len(body) != length:
                raise http.client.IncompleteRead(body, length - len(body))
            return body, False
        return self.rfile.read(), True

    def body_parts(self, headers: dict[str, str]) -> Iterator[bytes]:
        """A streamed body (a watch) as it arrives: one read of the socket per part, the chunked
        framing undone with a few `find`s. A chunked stream cut before its last chunk raises
        `IncompleteRead` (the watch broke); one that ends properly just ends."""
        chunked = "chunked" in headers.get("transfer-encoding", "").lower()
        left = int(headers["content-length"]) if not chunked and "content-length" in headers else -1
        pending = b""
        while left != 0:
            data = self.rfile.read1(65536)
            if not data:
                if chunked or left > 0:
                    raise http.client.IncompleteRead(pending)
                return
            if not chunked:
                if left > 0:
                    data = data[:left]
                    left -= len(data)
                yield data
                continue
            pending += data
            part, end, finished = _dechunk(pending)
            pending = pending[end:]
            if part:
                yield part
            if finished:
                return

    def close(self) -> None:
        """Close the socket (and the reader over it)."""
        try:
            self.rfile.close()
        finally:
            self.sock.close()


def _read_head(rfile: Any, closed: type[Exception] = http.client.RemoteDisconnected) -> tuple[int, str, dict[str, str], str]:
    """The status line and headers of an answer (names lower-cased)."""
    first = rfile.readline(65537)
    if not first:
        raise closed("the server closed the connection without answering")
    lines: list[bytes] = []
    while True:
        line = rfile.readline(65537)
        if line in (b"\r\n", b"\n", b""):
            break
        lines.append(line)
        if len(lines) > 100:
            raise http.client.HTTPException("got more than 100 headers")
    return parse_head(first, lines)


def parse_head(first: bytes, lines: list[bytes]) -> tuple[int, str, dict[str, str], str]:
    """An answer's status line and header lines as (status, reason, headers with lower-cased
    names, HTTP version)."""
    version, _, rest = first.decode("latin-1").rstrip("\r\n").partition(" ")
    code, _, reason = rest.partition(" ")
    if not version.startswith("HTTP/") or not code.isdigit():
        raise http.client.BadStatusLine(first.decode("latin-1"))
    if len(lines) > 100:
        raise http.client.HTTPException("got more than 100 headers")
    headers: dict[str, str] = {}
    for line in lines:
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(code), reason, headers, version


def _read_chunked(rfile: Any) -> bytes:
    parts: list[bytes] = []
    while True:
        size_line = rfile.readline(65537)
        if not size_line:
            raise http.client.IncompleteRead(b"".join(parts))
        size = int(size_line.split(b";", 1)[0].strip(), 16)
        if size == 0:
            while rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                pass  # trailers
            return b"".join(parts)
        chunk = rfile.read(size)
        if len(chunk) != size:
            raise http.client.IncompleteRead(chunk, size - len(chunk))
        parts.append(chunk)
        rfile.readline(65537)  # the chunk's CRLF


def _dechunk(data: bytes, pos: int = 0) -> tuple[bytes, int, bool]:
    """The payload of the complete chunks in `data` from `pos`, where they end, and whether the
    last (empty) chunk was among them: then they end after its size line, where trailers, if
    any, begin."""
    parts: list[bytes] = []
    while True:
        eol = data.find(b"\r\n", pos)
        if eol < 0:
            if len(data) - pos > 1024:
                raise http.client.HTTPException("a chunk size line longer than 1024 bytes")
            return b"".join(parts), pos, False
        size = int(data[pos:eol].split(b";", 1)[0].strip(), 16)
        if size == 0:
            return b"".join(parts), eol + 2, True
        start = eol + 2
        if len(data) < start + size + 2:
            return b"".join(parts), pos, False
        parts.append(data[start : start + size])
        pos = start + size + 2


def will_close(headers: dict[str, str], version: str) -> bool:
    """Whether the server closes the connection after this answer."""
    connection = headers.get("connection", "").lower()
    return connection == "close" or (version == "HTTP/1.0" and connection != "keep-alive")


@dataclass(slots=True)
class Connection:
    """Requests to one API server, over kept-alive connections (one per thread), and watches, each
    on a connection of its own.

    The `kubernetes` client's configuration (from a kubeconfig or the service account) supplies the
    server, TLS settings and credentials; its generated request machinery is not used: a binding
    or a status patch is a few hundred bytes of JSON, and building it through the client's models,
    urllib3's pool and header dictionaries cost more CPU than the scheduling cycle that decided it,
    CPU taken from the scheduling loop under the same interpreter lock.
    """

    api_client: Any
    limiter: RateLimiter
    max_retries: int = 10
    timeout: float = 30.0
    requests: int = 0
    _local: threading.local = field(default_factory=threading.local)
    _scheme: str = ""
    _netloc: tuple[str, int] = ("", 0)
    _prefix: str = ""
    _ssl: ssl.SSLContext | None = None
    _tunnel: tuple[str, int] | None = None
    _opened: weakref.WeakSet[Any] = field(default_factory=weakref.WeakSet)

    def __post_init__(self) -> None:
        configuration = self.configuration
        url = urlsplit(str(configuration.host))
        self._scheme = url.scheme or "http"
        self._netloc = (url.hostname or "127.0.0.1", url.port or (443 if self._scheme == "https" else 80))
        self._prefix = url.path.rstrip("/")
        if self._scheme == "https":
            self._ssl = _ssl_context(configuration)
        proxy = getattr(configuration, "proxy", None)
        if proxy:
            proxied = urlsplit(str(proxy))
            self._tunnel = self._netloc
            self._netloc = (proxied.hostname or "127.0.0.1", proxied.port or 3128)

    @property
    def configuration(self) -> Any:
        """The `kubernetes.client.Configuration` (an `ApiClient`'s, or one given directly)."""
        return getattr(self.api_client, "configuration", self.api_client)

    @property
    def host(self) -> str:
        """The API server's base URL."""
        return str(self.configuration.host)

    def _headers(self, content_type: str | None) -> dict[str, str]:
        headers = {"Accept": "application/json", "User-Agent": "schedconsole"}
        # auth_settings() runs the configuration's refresh hook (exec plugins, rotated tokens).
        for auth in self.configuration.auth_settings().values():
            if auth.get("in") == "header" and auth.get("value"):
                headers[auth["key"]] = auth["value"]
        if content_type:
            headers["Content-Type"] = content_type
        return headers

    def _connect(self, timeout: float) -> _Wire:
        """A fresh connection for requests (through the proxy's CONNECT tunnel when configured)."""
        host, port = self._netloc
        sock = socket.create_connection((host, port), timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # a request is one write
        server_name = host
        try:
            if self._tunnel is not None:
                target = f"{self._tunnel[0]}:{self._tunnel[1]}"
                sock.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode("latin-1"))
                with sock.makefile("rb") as proxy_reply:
                    status, reason, _, _ = _read_head(proxy_reply)
                if status != 200:
                    raise OSError(f"the proxy refused the tunnel to {target}: {status} {reason}")
                server_name = self._tunnel[0]
            if self._ssl is not None:
                sock = self._ssl.wrap_socket(sock, server_hostname=server_name)
        except BaseException:
            sock.close()
            raise
        wire = _Wire(sock)
        self._opened.add(wire)
        return wire

    def close_kept(self) -> None:
        """Close this thread's kept-alive connection (the others' are theirs)."""
        wire = getattr(self._local, "conn", None)
        self._local.conn = None
        if wire is not None:
            wire.close()

    def close(self) -> None:
        """Close every connection still open (kept-alive ones too: a server shutting down over TLS
        would otherwise wait for each idle client to answer its close)."""
        for conn in list(self._opened):
            conn.close()

    def _roundtrip(self, method: str, url: str, data: bytes | None, headers: dict[str, str], timeout: float) -> _Answer:
        """One request on this thread's kept-alive connection (a fresh one if there is none, or if
        the kept one turns out closed by the server: then the request is sent once more)."""
        message = self._message(method, url, data, headers)
        wire: _Wire | None = getattr(self._local, "conn", None)
        self._local.conn = None  # held until the answer is read
        if wire is not None:
            try:
                wire.sock.settimeout(timeout)
                answer = wire.exchange(message, method)
            except _STALE:
                wire.close()  # the server closed it while idle: send again on a fresh one
            except BaseException:
                wire.close()
                raise
            else:
                self._keep(wire, answer)
                return answer
        wire = self._connect(timeout)
        try:
            answer = wire.exchange(message, method)
        except BaseException:
            wire.close()
            raise
        self._keep(wire, answer)
        return answer

    def _message(self, method: str, url: str, data: bytes | None, headers: dict[str, str]) -> bytes:
        head = [f"{method} {url} HTTP/1.1", self._host_line, *(f"{k}: {v}" for k, v in headers.items())]
        if data is not None or method in ("POST", "PUT", "PATCH"):
            head.append(f"Content-Length: {len(data or b'')}")
        return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + (data or b"")

    def _keep(self, wire: _Wire, answer: _Answer) -> None:
        if answer.will_close:
            wire.close()
        else:
            self._local.conn = wire

    @property
    def _host_line(self) -> str:
        host, port = self._tunnel or self._netloc
        default = 443 if self._scheme == "https" else 80
        return f"Host: {host}" if port == default else f"Host: {host}:{port}"

    def _open_watch(self, path: str, query: dict[str, Any], timeout: float) -> tuple[_Wire, dict[str, str]]:
        """Open a watch on a connection of its own, which it holds while it streams: the wire and
        the answer's headers, once the server accepted it (refusals retried as `request` does)."""
        url = self._prefix + path + "?" + urlencode(query)
        attempt = 0
        while True:
            self.limiter.acquire()
            self.requests += 1
            try:
                wire = self._connect(timeout)
            except OSError as exc:  # refused, timed out
                raise RemoteError(0, "ServiceUnavailable", f"GET {path}: {exc}") from None
            try:
                wire.sock.sendall(self._message("GET", url, None, self._headers(None)))
                status, reason, headers, _ = wire.read_head()
            except (OSError, ValueError, http.client.HTTPException) as exc:  # reset, timed out, garbled
                wire.close()
                raise RemoteError(0, "ServiceUnavailable", f"GET {path}: {exc}") from None
            if status < 400:
                return wire, headers
            try:
                payload, _ = wire.read_body(headers)
            except (OSError, ValueError, http.client.HTTPException):
                payload = b""
            wire.close()
            wait = self._retry_wait(status, headers.get("retry-after"), attempt)
            if wait is None:
                raise _remote_error(status, reason, payload)
            attempt += 1
            time.sleep(wait)

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        query: dict[str, Any] | None = None,
        content_type: str = "application/json",
    ) -> Any:
        """One request; the decoded JSON body (RemoteError on failure). `body` may be encoded already."""
        url = self._prefix + path + ("?" + urlencode(query) if query else "")
        data = body if body is None or isinstance(body, bytes) else orjson.dumps(body)
        attempt = 0
        while True:
            self.limiter.acquire()
            self.requests += 1
            try:
                answer = self._roundtrip(method, url, data, self._headers(content_type if data is not None else None), self.timeout)
            except (OSError, ValueError, http.client.HTTPException) as exc:  # refused, reset, timed out, garbled
                raise RemoteError(0, "ServiceUnavailable", f"{method} {path}: {exc}") from None
            if answer.status < 400:
                return orjson.loads(answer.body) if answer.body else None
            wait = self._retry_wait(answer.status, answer.headers.get("retry-after"), attempt)
            if wait is None:
                raise _remote_error(answer.status, answer.reason, answer.body)
            attempt += 1
            time.sleep(wait)

    def _retry_wait(self, status: int, retry_after: str | None, attempt: int) -> float | None:
        """Seconds to wait before sending a refused request again (429, or a 5xx that says when to
        retry, at most `max_retries` times), or None to give up."""
        if attempt < self.max_retries and (status == 429 or (status >= 500 and retry_after)):
            return _retry_seconds(retry_after)
        return None

    def stream(
        self, path: str, query: dict[str, Any], read_timeout: float, holder: list[Any] | None = None, pause: float = 0.0
    ) -> Iterator[dict[str, Any]]:
        """A watch: its events as they arrive (a stalled stream raises after `read_timeout`). The
        open connection is put in `holder` while it streams, so another thread can end it. With
        `pause`, a read that brought events is followed by that many seconds before the next, so
        a steady stream is taken in batches rather than woken for event by event."""
        wire, headers = self._open_watch(path, {**query, "watch": "true"}, read_timeout)
        if holder is not None:
            holder.append(wire)
        try:
            buffer = b""
            for part in wire.body_parts(headers):
                buffer += part
                if b"\n" not in part:
                    continue
                lines = buffer.split(b"\n")
                buffer = lines.pop()
                for line in lines:
                    if line.strip():
                        yield orjson.loads(line)
                if pause > 0:
                    time.sleep(pause)
            if buffer.strip():
                yield orjson.loads(buffer)
        finally:
            if holder is not None and wire in holder:
                holder.remove(wire)
            wire.close()


def _retry_seconds(retry_after: str | None) -> float:
    """Retry-After in seconds (1 when absent or a date), at most 10."""
    try:
        return min(max(float(retry_after or 1), 0.0), 10.0)
    except ValueError:
        return 1.0


def _ssl_context(configuration: Any) -> ssl.SSLContext:
    """TLS as the configuration says: its CA (or the system's), client certificate, verification."""
    context = ssl.create_default_context(cafile=configuration.ssl_ca_cert or None)
    if not configuration.verify_ssl:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    elif getattr(configuration, "assert_hostname", None) is False:
        context.check_hostname = False
    if configuration.cert_file:
        context.load_cert_chain(configuration.cert_file, configuration.key_file or None)
    return context


def _remote_error(status: int, http_reason: str, payload: bytes) -> RemoteError:
    try:
        body = orjson.loads(payload or b"{}")
    except ValueError:
        body = {}
    if not isinstance(body, dict):
        body = {}
    reason = body.get("reason") or ("NotFound" if status == 404 else "InternalError")
    message = body.get("message") or f"{status} {http_reason}"
    if status == 404:
        return _RemoteNotFound(404, "NotFound", message)
    return RemoteError(int(status or 0), reason, message)


class _RemoteNotFound(RemoteError, NotFoundError):
    """404 from the API server (`apierrors.IsNotFound`)."""


def _not_found(message: str) -> RemoteError:
    return _RemoteNotFound(404, "NotFound", message)


def connect(
    kubeconfig: str | None = None, context: str | None = None, in_cluster: bool = False, qps: float = 50.0, burst: int = 100
) -> Connection:
    """A connection from a kubeconfig file (or the in-cluster service account) with kube-scheduler's
    default client QPS 50 and burst 100."""
    from kubernetes import client, config

    configuration = client.Configuration()
    if in_cluster:
        config.load_incluster_config(client_configuration=configuration)
    else:
        config.load_kube_config(config_file=kubeconfig, context=context, client_configuration=configuration)
    configuration.connection_pool_maxsize = 32
    return Connection(client.ApiClient(configuration), RateLimiter(qps, burst))


@dataclass(frozen=True, slots=True)
class Kind:
    """A resource the backend informs on: kind, list path, and whether a 404 means "not installed"."""

    kind: str
    path: str
    optional: bool = False


KINDS: tuple[Kind, ...] = (
    Kind("Node", "/api/v1/nodes"),
    Kind("Namespace", "/api/v1/namespaces"),
    Kind("PriorityClass", "/apis/scheduling.k8s.io/v1/priorityclasses"),
    Kind("PodDisruptionBudget", "/apis/policy/v1/poddisruptionbudgets"),
    Kind("Pod", "/api/v1/pods"),
    Kind("PodGroup", "/apis/scheduling.sigs.k8s.io/v1alpha1/podgroups", optional=True),
    Kind("Reservation", "/apis/scheduling.koordinator.sh/v1alpha1/reservations", optional=True),
    Kind("NodeMetric", "/apis/slo.koordinator.sh/v1alpha1/nodemetrics", optional=True),
    Kind("NodeResourceTopology", "/apis/topology.node.k8s.io/v1alpha1/noderesourcetopologies", optional=True),
)
EXTENSION_PATHS = {k.kind: k.path for k in KINDS if k.optional}


def _key(doc: dict[str, Any]) -> str:
    meta = doc.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def _rv(doc: dict[str, Any]) -> int:
    try:
        return int((doc.get("metadata") or {}).get("resourceVersion") or 0)
    except ValueError:
        return 0


@dataclass(slots=True)
class Informer:
    """List, then watch from the list's version; relist on 410 and every `resync_seconds`."""

    kind: Kind
    connection: Connection
    apply: Callable[[str, str, dict[str, Any]], None]
    replace: Callable[[str, list[dict[str, Any]]], None]
    resync_seconds: float = 300.0
    watch_seconds: int = 300
    read_timeout: float = 60.0
    # Events are taken from the watch at most this often while they keep coming (see `stream`):
    # each wake-up of this thread takes the interpreter lock from the scheduling loop.
    batch_seconds: float = 0.0
    resource_version: str = ""
    synced: threading.Event = field(default_factory=threading.Event)
    stopped: threading.Event = field(default_factory=threading.Event)
    installed: bool = True
    relists: int = 0
    watches: int = 0
    events: int = 0
    last_event_at: float = 0.0
    _thread: threading.Thread | None = None
    _last_list: float = 0.0
    _streams: list[Any] = field(default_factory=list)

    def list(self) -> None:
        """A full list, replacing the cache's objects of this kind."""
        try:
            listed = self.connection.request("GET", self.kind.path)
        except RemoteError as exc:
            if self.kind.optional and exc.code == 404:
                self.installed = False
                self.synced.set()
                return
            raise
        items = [{**item, "kind": self.kind.kind} for item in listed.get("items") or []]
        self.replace(self.kind.kind, items)
        self.resource_version = str((listed.get("metadata") or {}).get("resourceVersion") or "")
        self.relists += 1
        self._last_list = time.monotonic()
        self.synced.set()

    def list_until_synced(self, timeout: float) -> None:
        """The first list, retried with backoff while the server cannot be reached or answers
        5xx (as an informer waits for its cache to sync); refused requests fail at once."""
        deadline = time.monotonic() + timeout
        delay = 0.2
        while True:
            try:
                self.list()
                return
            except RemoteError as exc:
                if not (exc.code == 0 or exc.code >= 500) or time.monotonic() + delay > deadline:
                    raise
                log.warning("informer %s: first list failed, retrying in %.1fs: %s", self.kind.kind, delay, exc)
                time.sleep(delay)
                delay = min(5.0, delay * 2)

    def start(self) -> None:
        """Watch on a thread (after the first list)."""
        self._thread = threading.Thread(target=self._run, name=f"informer-{self.kind.kind}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop, ending the watch in flight."""
        self.stopped.set()
        for conn in list(self._streams):
            sock = getattr(conn, "sock", None)
            if sock is not None:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def join(self, timeout: float) -> None:
        """Wait for the thread to end."""
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        failures = 0
        while not self.stopped.is_set() and self.installed:
            try:
                if not self.resource_version or time.monotonic() - self._last_list >= self.resync_seconds:
                    self.list()
                    if not self.installed:
                        return
                self._watch()
                failures = 0
            except RemoteError as exc:
                if exc.code == 410:
                    self.resource_version = ""  # too old: relist
                    continue
                failures += 1
                log.warning("informer %s: %s", self.kind.kind, exc)
                self.stopped.wait(min(30.0, 0.2 * 2**failures))
            except Exception as exc:  # a broken stream: resume from the last version seen
                if self.stopped.is_set():
                    return
                failures += 1
                log.warning("informer %s: watch broke: %s", self.kind.kind, exc)
                self.stopped.wait(min(30.0, 0.2 * 2**failures))

    def _watch(self) -> None:
        self.watches += 1
        query = {
            "resourceVersion": self.resource_version,
            "allowWatchBookmarks": "true",
            "timeoutSeconds": str(self.watch_seconds),
        }
        left = max(1.0, self.resync_seconds - (time.monotonic() - self._last_list))
        query["timeoutSeconds"] = str(int(min(self.watch_seconds, left)))
        for event in self.connection.stream(self.kind.path, query, self.read_timeout, self._streams, self.batch_seconds):
            if self.stopped.is_set():
                return
            kind, obj = event.get("type"), event.get("object") or {}
            if kind == "ERROR":
                code = int(obj.get("code") or 500)
                raise RemoteError(code, str(obj.get("reason", "")), str(obj.get("message", "")))
            version = str((obj.get("metadata") or {}).get("resourceVersion") or "")
            if kind != "BOOKMARK":
                obj["kind"] = self.kind.kind  # the decoded event is ours: no copy
                self.apply(self.kind.kind, str(kind), obj)
                self.events += 1
                self.last_event_at = time.time()
            if version:
                self.resource_version = version


@dataclass(slots=True)
class KubernetesCluster(SimulatedCluster):
    """The simulated cluster's interface over a real API server (see the module docstring)."""

    connection: Any = None
    resync_seconds: float = 300.0
    watch_seconds: int = 300
    read_timeout: float = 60.0
    sync_timeout: float = 60.0
    # How often at most each informer takes what its watch delivered while events keep coming
    # (Informer.batch_seconds); a change reaches the scheduler up to this much later.
    watch_batch_seconds: float = WATCH_BATCH_SECONDS
    reporting_instance: str = field(default_factory=lambda: f"schedconsole-{uuid.uuid4().hex[:8]}")
    lock: Any = field(default_factory=threading.RLock)
    informers: list[Informer] = field(default_factory=list)
    versions: dict[tuple[str, str], int] = field(default_factory=dict)
    # Called instead of `fn()` for a request made while the scheduler's lock may be held: the
    # scheduler's hook releases the lock on its API pool (see `Scheduler._api_unlocked`).
    unlocked: Callable[[Callable[[], Any]], Any] = lambda fn: fn()
    # Observers of the raw documents (shadow mode reads where the cluster's scheduler put pods).
    doc_listeners: list[Callable[[str, str, dict[str, Any] | None, dict[str, Any] | None], None]] = field(default_factory=list)
    _events_out: deque[dict[str, Any]] = field(default_factory=deque)
    _events_wake: threading.Event = field(default_factory=threading.Event)
    _broadcaster: threading.Thread | None = None
    _docs: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    # (namespace, name) → uid of the live pods: an Event's `regarding` and a deletion without a
    # uid find their pod without walking every pod.
    _pod_uids: dict[tuple[str, str], str] = field(default_factory=dict)
    _inbox: list[tuple[Any, ...]] = field(default_factory=list)
    _inbox_lock: threading.Lock = field(default_factory=threading.Lock)
    _inbox_posted: bool = False
    post: Callable[[Callable[[], None]], None] = lambda task: task()
    remote_api: bool = True
    # Shadow mode: pending pods are renamed away from every profile (so nothing is queued or bound
    # here) and every write is refused; see cluster/shadow.py.
    shadow: bool = False
    _inflight: Any = None  # cluster/inflight.py's InFlight, made at the first `bind_async`

    @classmethod
    def open(cls, connection: Connection, clock: Clock | None = None, **options: Any) -> KubernetesCluster:
        """List every kind once (the informers' initial sync); `watch_all` starts following."""
        cluster = cls(clock=clock or Clock(), connection=connection, **options)
        cluster.record_events = True
        for kind in KINDS:
            informer = Informer(
                kind,
                connection,
                cluster._receive,
                cluster._receive_list,
                cluster.resync_seconds,
                cluster.watch_seconds,
                cluster.read_timeout,
                cluster.watch_batch_seconds,
            )
            informer.list_until_synced(cluster.sync_timeout)
            cluster.informers.append(informer)
        return cluster

    def attach(self, lock: Any, unlocked: Callable[[Callable[[], Any]], Any], post: Callable[[Callable[[], None]], None]) -> None:
        """Share the scheduler's lock, its unlocking runner for requests, and `post`, which runs a
        task on the scheduling thread between cycles: informers hand their changes over that way
        (parsed on their own thread), so they never wait for the lock the loop holds."""
        self.lock = lock
        self.unlocked = unlocked
        self.post = post

    def _receive(self, kind: str, type_: str, doc: dict[str, Any]) -> None:
        """An informer's event: parse here, apply on the scheduling thread."""
        parsed = None
        if type_ == "MODIFIED" and kind == "Pod":
            parsed = self._pod_status_change(doc)
        if parsed is None and type_ != "DELETED" and kind in ("Pod", "Node"):
            key = _key(doc)
            try:
                parsed = parse_pod(doc, f"pods/{key}") if kind == "Pod" else parse_node(doc, f"nodes/{key}")
            except FieldError as exc:
                log.warning("skipping %s %s: %s", kind, key, exc)
                return
        self._deliver((kind, type_, doc, parsed))

    def _deliver(self, item: tuple[Any, ...]) -> None:
        """Queue an informer's change for the scheduling thread. One task drains everything queued
        by then, so a burst of watch events costs the loop one hand-over, not one per event."""
        with self._inbox_lock:
            self._inbox.append(item)
            if self._inbox_posted:
                return
            self._inbox_posted = True
        self.post(self._drain_inbox)

    def _drain_inbox(self) -> None:
        with self._inbox_lock:
            items = list(self._inbox)
            self._inbox.clear()
            self._inbox_posted = False
        with self.lock:
            for kind, type_, doc, parsed in items:
                if type_ == "LIST":
                    self._replace_all(kind, doc)
                else:
                    self._apply(kind, type_, doc, parsed=parsed)

    def _pod_status_change(self, doc: dict[str, Any]) -> Any:
        """A pod whose update changed only what the scheduler itself changes (nodeName by a
        binding, phase, nomination, conditions): the cached pod with those fields replaced, without
        parsing it again (a binding's update is most of what the pod watch delivers)."""
        meta = doc.get("metadata") or {}
        before = self._docs.get(("Pod", _key(doc)))
        old = self.pods.get(meta.get("uid", ""))
        if before is None or old is None:
            return None
        old_meta = before.get("metadata") or {}
        for field_name in ("labels", "annotations", "deletionTimestamp", "ownerReferences"):
            if meta.get(field_name) != old_meta.get(field_name):
                return None
        spec, old_spec = dict(doc.get("spec") or {}), dict(before.get("spec") or {})
        node = spec.pop("nodeName", "") or ""
        old_spec.pop("nodeName", None)
        if spec != old_spec:
            return None
        status = doc.get("status") or {}
        return old.with_changes(
            node_name=node,
            phase=status.get("phase") or old.phase,
            nominated_node_name=status.get("nominatedNodeName") or "",
            conditions=list(status.get("conditions") or []),
        )

    def _receive_list(self, kind: str, items: list[dict[str, Any]]) -> None:
        """An informer's relist: diffed against the cache on the scheduling thread."""
        self._deliver((kind, "LIST", items, None))

    def watch_all(self) -> None:
        """Start the informers' watches and the event broadcaster."""
        for informer in self.informers:
            if informer.installed:
                informer.start()
        self._broadcaster = threading.Thread(target=self._broadcast, name="event-broadcaster", daemon=True)
        self._broadcaster.start()

    def close(self, timeout: float = 5.0) -> None:
        """Stop the informers and the broadcaster (events queued are sent first)."""
        for informer in self.informers:
            informer.stop()
        self._events_wake.set()
        deadline = time.monotonic() + timeout
        while self._events_out and time.monotonic() < deadline:
            time.sleep(0.02)
        for informer in self.informers:
            informer.join(max(0.0, deadline - time.monotonic()))
        self._broadcaster = None
        if self._inflight is not None:
            self._inflight.close()
        self.connection.close()

    @property
    def synced(self) -> bool:
        """Whether every informer has listed."""
        return all(i.synced.is_set() for i in self.informers)

    # ----- the informers' changes -------------------------------------------------------------
    def _replace_all(self, kind: str, items: list[dict[str, Any]]) -> None:
        """A relist: apply what differs from the cache, delete what the list no longer has."""
        with self.lock:
            fresh = {_key(doc): doc for doc in items}
            for key, doc in fresh.items():
                if self.versions.get((kind, key)) != _rv(doc):
                    self._apply(kind, "MODIFIED" if (kind, key) in self.versions else "ADDED", doc, force=True)
            for known_kind, key in [k for k in self.versions if k[0] == kind]:
                if key not in fresh:
                    self._apply(kind, "DELETED", self._docs.get((known_kind, key)) or _doc_from_key(kind, key), force=True)

    def _apply(self, kind: str, type_: str, doc: dict[str, Any], force: bool = False, parsed: Any = None) -> None:
        key = _key(doc)
        version = _rv(doc)
        with self.lock:
            known = self.versions.get((kind, key))
            if type_ != "DELETED" and known is not None and version <= known and not force:
                return  # already applied (a write's response came first)
            old_doc = self._docs.get((kind, key))
            if type_ == "DELETED":
                if known is None:
                    return
                self.versions.pop((kind, key), None)
                self._docs.pop((kind, key), None)
            else:
                self.versions[(kind, key)] = version
                self._docs[(kind, key)] = doc
            try:
                self._apply_object(kind, type_, doc, key, parsed)
            except FieldError as exc:
                log.warning("skipping %s %s: %s", kind, key, exc)
                return
            for listener in self.doc_listeners:
                listener(kind, type_, old_doc, None if type_ == "DELETED" else doc)

    def _apply_object(self, kind: str, type_: str, doc: dict[str, Any], key: str, parsed: Any = None) -> None:
        namespace, _, name = key.partition("/")
        if kind == "Pod":
            if type_ == "DELETED":
                uid = (doc.get("metadata") or {}).get("uid") or self._uid_of(namespace, name)
                old = self.pods.pop(uid, None) if uid else None
                if old is not None and self._pod_uids.get((old.namespace, old.name)) == uid:
                    del self._pod_uids[(old.namespace, old.name)]
                if old is not None:
                    self.remember_deleted(old)
                    self._emit(WatchEvent("Pod", "DELETED", old, None))
                return
            pod = parsed if parsed is not None else parse_pod(doc, f"pods/{key}")
            if pod.priority is None:
                pod.priority = 0
            if self.shadow and not pod.node_name:
                pod = pod.with_changes(scheduler_name=SHADOWED)
            old = self.pods.get(pod.uid)
            self.pods[pod.uid] = pod
            self._pod_uids[(pod.namespace, pod.name)] = pod.uid
            self._emit(WatchEvent("Pod", "MODIFIED" if old is not None else "ADDED", old, pod))
        elif kind == "Node":
            if type_ == "DELETED":
                self.delete_node(name)
            else:
                self.add_node(parsed if parsed is not None else parse_node(doc, f"nodes/{name}"))
        elif kind == "Namespace":
            if type_ == "DELETED":
                self.namespaces.pop(name, None)
            else:
                self.put_namespace(parse_namespace(doc, f"namespaces/{name}"))
        elif kind == "PriorityClass":
            if type_ == "DELETED":
                self.priority_classes.pop(name, None)
            else:
                self.priority_classes[name] = parse_priority_class(doc, f"priorityclasses/{name}")
        elif kind == "PodDisruptionBudget":
            if type_ == "DELETED":
                self.pdbs.pop(key, None)
            else:
                self.pdbs[key] = parse_pdb(doc, f"poddisruptionbudgets/{key}")
        elif type_ == "DELETED":
            self.delete_object(kind, namespace, name)
        else:
            SimulatedCluster.update_object(self, kind, doc)

    def _uid_of(self, namespace: str, name: str) -> str:
        """The uid of the live pod of that name ("" when there is none)."""
        uid = self._pod_uids.get((namespace, name), "")
        pod = self.pods.get(uid) if uid else None
        return uid if pod is not None and pod.namespace == namespace and pod.name == name else ""

    def fresh_state(self) -> dict[tuple[str, str], int]:
        """What a fresh list of every kind says now (kind and key → resourceVersion), for checking
        that no informer is stale."""
        out: dict[tuple[str, str], int] = {}
        for informer in self.informers:
            if not informer.installed:
                continue
            listed = self.connection.request("GET", informer.kind.path)
            for item in listed.get("items") or []:
                out[(informer.kind.kind, _key(item))] = _rv(item)
        return out

    # ----- writes ------------------------------------------------------------------------------
    def _call(
        self,
        method: str,
        path: str,
        body: Any = None,
        content_type: str = "application/json",
        query: dict[str, Any] | None = None,
    ) -> Any:
        if self.shadow:
            raise APIError(f"shadow mode changes nothing in the cluster ({method} {path} refused)")
        connection = self.connection
        return self.unlocked(lambda: connection.request(method, path, body, query=query, content_type=content_type))

    def _apply_response(self, kind: str, doc: Any) -> None:
        if isinstance(doc, dict) and doc.get("metadata"):
            self._apply(kind, "MODIFIED", {**doc, "kind": kind})

    def bind(self, pod: Any, node: str) -> None:
        """POST the `pods/binding` subresource; the informer then sees the pod bound."""
        self._call("POST", f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}/binding", _binding(pod, node))

    def bind_async(self, pod: Any, node: str, done: Callable[[Any, BaseException | None], None]) -> bool:
        """`bind` without waiting, from the scheduling thread (see cluster/inflight.py): `done`
        runs from a later `poll_async` on that thread. False when it cannot go out now (no free
        connection yet, no rate-limiter token, shadow mode): then `bind` it the ordinary way."""
        if self.shadow:
            return False
        if self._inflight is None:
            from scheduler.cluster.inflight import InFlight

            self._inflight = InFlight(self.connection)
        path = f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}/binding"
        return bool(self._inflight.send("POST", path, _binding(pod, node), "application/json", done))

    @property
    def async_pending(self) -> int:
        """`bind_async` requests whose answer has not been read."""
        return self._inflight.pending if self._inflight is not None else 0

    def poll_async(self) -> int:
        """Read the answers that have arrived and run their `done` (on the calling thread)."""
        return int(self._inflight.poll()) if self._inflight is not None else 0

    def wait_async(self, timeout: float) -> None:
        """Block until an answer has arrived, at most `timeout` (reads nothing)."""
        if self._inflight is not None:
            self._inflight.wait(timeout)

    def delete_pod(self, pod: Any) -> None:
        """DELETE with a uid precondition (a pod of the same name created since is left alone)."""
        body = {"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": {"uid": pod.uid}}
        try:
            self._call("DELETE", f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}", body)
        except RemoteError as exc:
            if exc.code == 409:  # the uid precondition failed: the pod we meant is gone
                raise _not_found(f'pods "{pod.name}" not found') from None
            raise

    def set_nominated_node(self, pod: Any, node: str) -> Any:
        """The status patch kube-scheduler makes (`nominatedNodeName`, null clears it)."""
        patch = {"status": {"nominatedNodeName": node or None}}
        doc = self._call(
            "PATCH", f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}/status", patch, "application/merge-patch+json"
        )
        self._apply_response("Pod", doc)
        return self.pods.get(pod.uid, pod)

    def add_pod_condition(self, pod: Any, condition: dict[str, Any]) -> Any:
        """A strategic-merge status patch of one condition (conditions merge by type)."""
        stamped = {**condition, "lastTransitionTime": format_time(self.clock.now())}
        patch = {"status": {"conditions": [stamped]}}
        doc = self._call(
            "PATCH", f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}/status", patch, "application/strategic-merge-patch+json"
        )
        self._apply_response("Pod", doc)
        return self.pods.get(pod.uid, pod)

    def patch_annotations(self, pod: Any, annotations: dict[str, str | None]) -> Any:
        """A merge patch of metadata.annotations (None removes a key)."""
        doc = self._call(
            "PATCH",
            f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}",
            {"metadata": {"annotations": annotations}},
            "application/merge-patch+json",
        )
        self._apply_response("Pod", doc)
        return self.pods.get(pod.uid, pod)

    def update_object(self, kind: str, doc: dict[str, Any]) -> None:
        """A controller's status update of a PodGroup or Reservation (PUT `.../status`)."""
        base = EXTENSION_PATHS.get(kind)
        if base is None:
            SimulatedCluster.update_object(self, kind, doc)
            return
        meta = doc.get("metadata") or {}
        group_version, _, resource = base.removeprefix("/apis/").rpartition("/")
        ns = meta.get("namespace") or ""
        path = f"/apis/{group_version}/{'namespaces/' + ns + '/' if ns else ''}{resource}/{meta.get('name')}/status"
        body = {**doc, "metadata": {k: v for k, v in meta.items() if k != "resourceVersion"}}
        updated = self._call("PUT", path, body)
        self._apply_response(kind, updated)

    def record(self, type_: str, reason: str, obj: str, message: str) -> None:
        """Queue an `events.k8s.io/v1` Event for the broadcaster (never blocks the caller)."""
        SimulatedCluster.record(self, type_, reason, obj, message)
        if not self.record_events:
            return
        namespace, _, name = obj.rpartition("/")
        namespace = namespace or "default"
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) + f".{int(time.time() * 1e6) % 1000000:06d}Z"
        uid = self._uid_of(namespace, name)
        action = {"Scheduled": "Binding", "FailedScheduling": "Scheduling", "Preempted": "Preempting"}.get(reason, reason)
        self._events_out.append(
            {
                "apiVersion": "events.k8s.io/v1",
                "kind": "Event",
                "metadata": {"name": f"{name}.{uuid.uuid4().hex[:16]}", "namespace": namespace},
                "eventTime": stamp,
                "reportingController": "default-scheduler",
                "reportingInstance": self.reporting_instance,
                "action": action,
                "reason": reason,
                "note": message,
                "type": type_,
                "regarding": {"apiVersion": "v1", "kind": "Pod", "namespace": namespace, "name": name, "uid": uid},
            }
        )
        self._events_wake.set()

    def _broadcast(self) -> None:
        while True:
            stopping = all(i.stopped.is_set() for i in self.informers)
            while self._events_out:
                event = self._events_out.popleft()
                try:
                    self.connection.request(
                        "POST", f"/apis/events.k8s.io/v1/namespaces/{event['metadata']['namespace']}/events", body=event
                    )
                except RemoteError as exc:
                    log.warning("event %s dropped: %s", event["reason"], exc)
            if stopping:
                return
            self._events_wake.wait(0.5)
            self._events_wake.clear()

    def add_pod(self, pod: Any) -> None:
        """Create a pod on the API server (the informer then adds it)."""
        doc = pod.raw
        doc.setdefault("metadata", {}).pop("resourceVersion", None)
        try:
            created = self._call("POST", f"/api/v1/namespaces/{pod.namespace}/pods", doc)
        except RemoteError as exc:
            raise api_error(str(exc), exc.reason) from None
        self._apply("Pod", "ADDED", {**created, "kind": "Pod"})


def _binding(pod: Any, node: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": pod.name, "namespace": pod.namespace, "uid": pod.uid},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node},
    }


def _doc_from_key(kind: str, key: str) -> dict[str, Any]:
    namespace, _, name = key.partition("/")
    return {"kind": kind, "metadata": {"namespace": namespace, "name": name}}


__all__ = ["Connection", "Informer", "KubernetesCluster", "RateLimiter", "RemoteError", "connect"]
