"""Requests the scheduling thread sends without waiting, and whose answers it reads between cycles.

kube-scheduler binds every pod on a goroutine of its own; a Python thread per binding costs more
than that. A pool thread wakes for the task, takes the scheduler's lock, releases it around the
request, wakes again for the answer and takes the lock back: a dozen thread switches per pod, under
one interpreter lock the scheduling loop needs too. So when a binding cycle has nothing to do but
DefaultBinder's `pods/binding` POST (every PreBind plugin's PreBindPreFlight said Skip), the
scheduling thread sends that request itself on a non-blocking kept-alive connection (`send`) and
reads the answers that have arrived whenever it is between cycles (`poll`), finishing those binding
cycles there. Nothing waits: a binding still overlaps with the cycles that follow it.

Everything else keeps the ordinary path (`Connection.request` on the scheduler's API pool): when no
connection is free or the rate limiter has no token at this moment, `send` declines and the caller
takes that path. An answer that asks for a retry (429, or a 5xx with Retry-After) or a kept-alive
connection the server had closed is handed back as `Retry`, so the caller sends it again through
that path, after the server's delay, as `Connection.request` itself would have. Only the
scheduling thread calls `send`, `poll` and `wait`; connections are opened on a thread of their own
so the scheduling thread never waits for a TCP or TLS handshake.
"""

from __future__ import annotations

import http.client
import logging
import select
import selectors
import ssl
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from scheduler.cluster.errors import Retry
from scheduler.kube.client import RemoteError, remote_error
from scheduler.kube.wire import Answer, dechunk, parse_head, will_close

log = logging.getLogger(__name__)

# Errors of a non-blocking socket with nothing to read or no room to write yet.
_NOT_YET = (BlockingIOError, InterruptedError, ssl.SSLWantReadError, ssl.SSLWantWriteError)


Done = Callable[[Any, BaseException | None], None]
# How long a kept-alive connection may stay idle and still be used without checking that the
# server has not closed it (kube-apiserver closes one after 32 s without a request).
FRESH_SECONDS = 1.0


@dataclass(slots=True)
class _Flight:
    wire: Any  # wire._Wire, its socket non-blocking
    method: str
    path: str
    done: Done
    deadline: float
    reused: bool
    data: bytearray = field(default_factory=bytearray)


@dataclass
class InFlight:
    """The scheduling thread's requests in flight over one `Connection` (see the module docstring)."""

    connection: Any  # client.Connection
    limit: int = 16
    _idle: deque[tuple[Any, bool, float]] = field(default_factory=deque)  # (wire, used before, idle since)
    _flights: dict[int, _Flight] = field(default_factory=dict)
    # Every open connection stays registered (an idle one turning readable was closed by the
    # server), so a request costs no registration calls.
    _selector: selectors.BaseSelector = field(default_factory=selectors.DefaultSelector)
    _registered: set[int] = field(default_factory=set)
    _opening: int = 0
    _open_lock: threading.Lock = field(default_factory=threading.Lock)
    _closed: bool = False

    @property
    def pending(self) -> int:
        """Requests sent whose answer has not been read."""
        return len(self._flights)

    def send(self, method: str, path: str, body: Any, content_type: str, done: Done) -> bool:
        """Send a request now; `done(decoded body, None)` or `done(None, error)` runs from a later
        `poll` (the error is a `RemoteError`, or `Retry`). False when nothing was sent: no
        connection is free yet, or the rate limiter has no token at this moment."""
        if self._closed:
            return False
        taken = self._take()
        if taken is None:
            return False
        wire, reused, _ = taken
        connection = self.connection
        if not connection.limiter.try_acquire():
            self._idle.appendleft(taken)
            return False
        data = body if isinstance(body, bytes) else orjson.dumps(body)
        message = connection._message(method, connection._prefix + path, data, connection._headers(content_type))
        try:
            _send_all(wire.sock, message, connection.timeout)
        except (OSError, ValueError):
            # Nothing usable was sent (a closed kept-alive connection, most likely): the caller
            # takes the ordinary path, which opens a fresh one.
            self._close(wire)
            return False
        connection.requests += 1
        fd = wire.sock.fileno()
        if fd not in self._registered:
            self._selector.register(wire.sock, selectors.EVENT_READ, wire)
            self._registered.add(fd)
        self._flights[fd] = _Flight(wire, method, path, done, time.monotonic() + connection.timeout, reused)
        return True

    def wait(self, timeout: float) -> None:
        """Block until an answer has arrived (or `timeout`); reads nothing (see `poll`)."""
        if self._flights:
            self._selector.select(timeout)
        else:
            time.sleep(timeout)

    def poll(self) -> int:
        """Read what has arrived and run `done` for every complete answer (and every request past
        its timeout); how many finished."""
        if not self._flights:
            return 0
        finished = 0
        for key, _ in self._selector.select(0):
            flight = self._flights.get(key.fd)
            if flight is not None:
                finished += self._read(flight)
            else:  # an idle connection the server closed (or wrote to unasked): not reused
                self._idle = deque(entry for entry in self._idle if entry[0] is not key.data)
                self._close(key.data)
        now = time.monotonic()
        for flight in [f for f in self._flights.values() if f.deadline <= now]:
            self._end(flight, keep=False)
            flight.done(None, self._failure(flight, f"timed out after {self.connection.timeout:g}s"))
            finished += 1
        return finished

    def close(self) -> None:
        """Close every connection; requests in flight are abandoned (their `done` never runs)."""
        self._closed = True
        for flight in list(self._flights.values()):
            self._end(flight, keep=False)
        while self._idle:
            self._close(self._idle.popleft()[0])
        self._selector.close()

    # ----- connections ---------------------------------------------------------------------
    def _take(self) -> tuple[Any, bool, float] | None:
        now = time.monotonic()
        while self._idle:
            entry = self._idle.popleft()
            # A connection idle for less than a second was not closed for idleness (a select
            # call per request saved; a close nonetheless comes back as `Retry`, sent again).
            if now - entry[2] < FRESH_SECONDS or not _closed(entry[0].sock):
                return entry
            # Readable while idle: the server closed it (kube-apiserver closes a connection on
            # which no request starts within 32 s, a kept-alive one after 90 s), or wrote to it
            # unasked. Not used again.
            self._close(entry[0])
        with self._open_lock:
            if self._opening + len(self._flights) >= self.limit:
                return None
            self._opening += 1
        threading.Thread(target=self._open, name="api-connect", daemon=True).start()
        return None

    def _open(self) -> None:
        try:
            wire = self.connection._connect(self.connection.timeout)
            wire.sock.setblocking(False)
        except OSError as exc:
            log.warning("a connection for in-flight requests failed: %s", exc)
            return
        finally:
            with self._open_lock:
                self._opening -= 1
        if self._closed:
            wire.close()
            return
        self._idle.append((wire, False, 0.0))  # never used: checked before its first use

    def _end(self, flight: _Flight, keep: bool) -> None:
        del self._flights[flight.wire.sock.fileno()]
        if keep and not self._closed:
            self._idle.append((flight.wire, True, time.monotonic()))
        else:
            self._close(flight.wire)

    def _close(self, wire: Any) -> None:
        fd = wire.sock.fileno()
        if fd in self._registered:
            self._registered.discard(fd)
            self._selector.unregister(wire.sock)
        wire.close()

    # ----- answers -------------------------------------------------------------------------
    def _read(self, flight: _Flight) -> int:
        sock = flight.wire.sock
        try:
            chunk = sock.recv(65536)
            while isinstance(sock, ssl.SSLSocket) and sock.pending():
                chunk += sock.recv(65536)
        except _NOT_YET:
            return 0
        except OSError as exc:
            self._end(flight, keep=False)
            if not flight.data:  # reset before any answer: the request was not taken
                flight.done(None, Retry(0.0, f"the connection failed before answering: {exc}"))
            else:
                flight.done(None, self._failure(flight, str(exc)))
            return 1
        if not chunk:
            return self._closed_by_server(flight)
        flight.data += chunk
        try:
            parsed = parse_answer(bytes(flight.data), flight.method, eof=False)
        except (ValueError, http.client.HTTPException) as exc:
            self._end(flight, keep=False)
            flight.done(None, self._failure(flight, str(exc)))
            return 1
        if parsed is None:
            return 0
        self._answered(flight, *parsed)
        return 1

    def _closed_by_server(self, flight: _Flight) -> int:
        self._end(flight, keep=False)
        if not flight.data:
            # Closed without answering: closed while idle (a kept-alive connection, or one opened
            # ahead and not used within the server's ReadHeaderTimeout) just as the request went
            # out, so it was not read. Sent again (a binding that had been taken after all comes
            # back 409 "already assigned" to the same node, which `KubernetesCluster.bind` counts
            # as bound).
            flight.done(None, Retry(0.0, "the server closed the connection without answering"))
            return 1
        try:
            parsed = parse_answer(bytes(flight.data), flight.method, eof=True)
        except (ValueError, http.client.HTTPException) as exc:
            flight.done(None, self._failure(flight, str(exc)))
            return 1
        assert parsed is not None  # at the end of the stream, an answer or an error
        answer, _ = parsed
        self._dispatch(flight, answer)
        return 1

    def _answered(self, flight: _Flight, answer: Any, used: int) -> None:
        # Bytes beyond the answer were never asked for: that connection is not reused.
        self._end(flight, keep=not answer.will_close and used == len(flight.data))
        self._dispatch(flight, answer)

    def _dispatch(self, flight: _Flight, answer: Any) -> None:
        if answer.status < 400:
            try:
                decoded = orjson.loads(answer.body) if answer.body else None
            except ValueError as exc:
                flight.done(None, self._failure(flight, f"invalid JSON: {exc}"))
                return
            flight.done(decoded, None)
            return
        wait = self.connection._retry_wait(answer.status, answer.headers.get("retry-after"), 0)
        if wait is not None:
            flight.done(None, Retry(wait, f"{answer.status} {answer.reason}"))
            return
        flight.done(None, remote_error(answer.status, answer.reason, answer.body))

    def _failure(self, flight: _Flight, why: str) -> Exception:
        return RemoteError(0, "ServiceUnavailable", f"{flight.method} {flight.path}: {why}")


def _closed(sock: Any) -> bool:
    """Whether an idle connection is closed by the server, or has bytes nobody asked for. A TLS
    connection is readable for records that carry no data too (TLS 1.3 sends session tickets
    after the handshake): reading consumes them and finds nothing."""
    try:
        if not select.select([sock], [], [], 0)[0]:
            return False
        sock.recv(1)
    except _NOT_YET:
        return False
    except (OSError, ValueError):  # reset, or closed here already
        return True
    return True  # b"" (closed) or an unasked byte


def _send_all(sock: Any, data: bytes, timeout: float) -> None:
    """Write all of `data` on a non-blocking socket (a request is small: it fits at once unless
    the kernel's buffer is full, when this waits for room, at most `timeout`)."""
    view = memoryview(data)
    deadline = time.monotonic() + timeout
    while view:
        try:
            sent = sock.send(view)
        except _NOT_YET:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("timed out sending the request") from None
            with selectors.DefaultSelector() as waiting:
                waiting.register(sock, selectors.EVENT_WRITE)
                waiting.select(left)
            continue
        view = view[sent:]


def parse_answer(data: bytes, method: str, eof: bool) -> tuple[Any, int] | None:
    """One HTTP/1.1 answer from the start of `data`: (`Answer`, bytes it took), or None while it
    is incomplete (`eof`: the server has closed, so an incomplete answer is an error, and a body
    without length or chunks ends here)."""
    pos = 0
    while True:
        end = data.find(b"\r\n\r\n", pos)
        if end < 0:
            if eof:
                raise http.client.IncompleteRead(data[pos:])
            if len(data) - pos > 65536:
                raise http.client.HTTPException("an answer's headers longer than 64 KiB")
            return None
        first, *lines = data[pos:end].split(b"\r\n")
        status, reason, headers, version = parse_head(first, lines)
        pos = end + 4
        if not 100 <= status < 200:  # interim answers are skipped
            break
    closes = will_close(headers, version)
    if method == "HEAD" or status in (204, 304):
        return Answer(status, reason, headers, b"", closes), pos
    if "chunked" in headers.get("transfer-encoding", "").lower():
        body, end, finished = dechunk(data, pos)
        if finished:  # then trailer lines, if any, and an empty line
            if data.startswith(b"\r\n", end):
                return Answer(status, reason, headers, body, closes), end + 2
            trailers = data.find(b"\r\n\r\n", end)
            if trailers >= 0:
                return Answer(status, reason, headers, body, closes), trailers + 4
        if eof:
            raise http.client.IncompleteRead(body)
        return None
    if "content-length" in headers:
        length = int(headers["content-length"])
        if len(data) < pos + length:
            if eof:
                raise http.client.IncompleteRead(data[pos:], pos + length - len(data))
            return None
        return Answer(status, reason, headers, data[pos : pos + length], closes), pos + length
    if not eof:
        return None
    return Answer(status, reason, headers, data[pos:], True), len(data)


__all__ = ["InFlight", "Retry", "parse_answer"]
