"""The client of a real API server: `Connection` (kept-alive HTTP/1.1 over the `kubernetes`
package's configuration), requests and watch streams, a token bucket per client (QPS and burst,
kube-scheduler's `clientConnection`), 429 and a 5xx with Retry-After retried after the server's
Retry-After as client-go's rest client does, and the API's refusals as `RemoteError`.

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
import weakref
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode, urlsplit

import orjson

from scheduler.cluster.errors import APIError, NotFoundError
from scheduler.kube.wire import STALE, Answer, Wire, read_response_head

log = logging.getLogger(__name__)


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

    def _connect(self, timeout: float) -> Wire:
        """A fresh connection for requests (through the proxy's CONNECT tunnel when configured)."""
        host, port = self._netloc
        sock = socket.create_connection((host, port), timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # a request is one write
        _keepalive(sock)
        server_name = host
        try:
            if self._tunnel is not None:
                target = f"{self._tunnel[0]}:{self._tunnel[1]}"
                sock.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode("latin-1"))
                with sock.makefile("rb") as proxy_reply:
                    status, reason, _, _ = read_response_head(proxy_reply)
                if status != 200:
                    raise OSError(f"the proxy refused the tunnel to {target}: {status} {reason}")
                server_name = self._tunnel[0]
            if self._ssl is not None:
                sock = self._ssl.wrap_socket(sock, server_hostname=server_name)
        except BaseException:
            sock.close()
            raise
        wire = Wire(sock)
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

    @property
    def resent(self) -> bool:
        """Whether this thread's last request was sent twice (its kept-alive connection closed
        without answering the first time)."""
        return bool(getattr(self._local, "resent", False))

    def _roundtrip(self, method: str, url: str, data: bytes | None, headers: dict[str, str], timeout: float) -> Answer:
        """One request on this thread's kept-alive connection (a fresh one if there is none, or if
        the kept one turns out closed by the server: then the request is sent once more)."""
        message = self._message(method, url, data, headers)
        wire: Wire | None = getattr(self._local, "conn", None)
        self._local.conn = None  # held until the answer is read
        self._local.resent = False
        if wire is not None:
            try:
                wire.sock.settimeout(timeout)
                answer = wire.exchange(message, method)
            except STALE:
                wire.close()  # the server closed it while idle: send again on a fresh one
                self._local.resent = True
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

    def _keep(self, wire: Wire, answer: Answer) -> None:
        if answer.will_close:
            wire.close()
        else:
            self._local.conn = wire

    @property
    def _host_line(self) -> str:
        host, port = self._tunnel or self._netloc
        default = 443 if self._scheme == "https" else 80
        return f"Host: {host}" if port == default else f"Host: {host}:{port}"

    def _open_watch(self, path: str, query: dict[str, Any], timeout: float) -> tuple[Wire, dict[str, str]]:
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
                raise remote_error(status, reason, payload)
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
                answer = self._roundtrip(
                    method, url, data, self._headers(content_type if data is not None else None), self.timeout
                )
            except (OSError, ValueError, http.client.HTTPException) as exc:  # refused, reset, timed out, garbled
                raise RemoteError(0, "ServiceUnavailable", f"{method} {path}: {exc}") from None
            if answer.status < 400:
                return orjson.loads(answer.body) if answer.body else None
            wait = self._retry_wait(answer.status, answer.headers.get("retry-after"), attempt)
            if wait is None:
                raise remote_error(answer.status, answer.reason, answer.body)
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


def _keepalive(sock: socket.socket) -> None:
    """TCP keepalive as Go's dialer sets it (probes after 30 s idle): a peer gone without a word
    (a host down, a dropped route) ends a quiet watch within about a minute."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    for name, value in (("TCP_KEEPIDLE", 30), ("TCP_KEEPINTVL", 10), ("TCP_KEEPCNT", 3)):
        option = getattr(socket, name, None)
        if option is not None:
            sock.setsockopt(socket.IPPROTO_TCP, option, value)


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


def remote_error(status: int, http_reason: str, payload: bytes) -> RemoteError:
    """The RemoteError for an answer that is not a success, with the reason and message of its Status body."""
    try:
        body = orjson.loads(payload or b"{}")
    except ValueError:
        body = {}
    if not isinstance(body, dict):
        body = {}
    reason = body.get("reason") or ("NotFound" if status == 404 else "InternalError")
    message = body.get("message") or f"{status} {http_reason}"
    if status == 404:
        return RemoteNotFound(404, "NotFound", message)
    return RemoteError(int(status or 0), reason, message)


class RemoteNotFound(RemoteError, NotFoundError):
    """404 from the API server (`apierrors.IsNotFound`)."""


def not_found(message: str) -> RemoteError:
    """A 404 NotFound, as the API server would have answered it."""
    return RemoteNotFound(404, "NotFound", message)


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


__all__ = ["Connection", "RateLimiter", "RemoteError", "connect"]
