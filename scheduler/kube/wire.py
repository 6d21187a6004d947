"""HTTP/1.1 on a kept-alive socket, as the `kubernetes` backend speaks it: answers read with their
heads parsed once, chunked bodies for watches, and when a connection will close."""

from __future__ import annotations

import http.client
import socket
import ssl
from collections.abc import Iterator
from typing import Any, NamedTuple


class Answer(NamedTuple):
    """One HTTP answer: status, reason phrase, headers and the whole body."""

    status: int
    reason: str
    headers: dict[str, str]  # lower-case names
    body: bytes
    will_close: bool


class _Closed(ConnectionError):
    """The server closed a kept-alive connection without answering."""


# Errors of a connection the server (or a proxy) closed: a request on a kept-alive connection
# meeting one of these was not answered, and is sent again once on a fresh connection.
STALE = (_Closed, BrokenPipeError, ConnectionResetError, ConnectionAbortedError)


# What a read of a non-blocking socket raises when nothing (or only part of a TLS record) is there.
_WOULD_WAIT = (BlockingIOError, InterruptedError, ssl.SSLWantReadError, ssl.SSLWantWriteError)


class Wire:
    """One HTTP/1.1 connection for requests: a request is one write, and its answer is read with a
    few lines of parsing (status, headers, a Content-Length or chunked body) instead of
    `http.client`'s response object, whose header parsing (the `email` package) cost more CPU
    than the rest of a binding request."""

    __slots__ = ("__weakref__", "rfile", "sock")

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.rfile = sock.makefile("rb")

    def exchange(self, message: bytes, method: str) -> Answer:
        """Send one request and read its answer."""
        self.sock.sendall(message)
        status, reason, headers, version = self.read_head()
        closes = will_close(headers, version)
        if method == "HEAD" or status in (204, 304):
            return Answer(status, reason, headers, b"", closes)
        body, until_close = self.read_body(headers)
        return Answer(status, reason, headers, body, closes or until_close)

    def read_head(self) -> tuple[int, str, dict[str, str], str]:
        """The answer's status line and headers, past any interim (1xx) answer."""
        status, reason, headers, version = read_response_head(self.rfile, _Closed)
        while 100 <= status < 200:  # interim answers (we never send Expect, but a server may)
            status, reason, headers, version = read_response_head(self.rfile, _Closed)
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
            data = self._read_available()
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
            part, end, finished = dechunk(pending)
            pending = pending[end:]
            if part:
                yield part
            if finished:
                return

    def _read_available(self, most: int = 1 << 20) -> bytes:
        """One read that waits, then every further one that would not wait (at most `most`
        bytes): a server's stream arrives in writes of a few KiB (kube-apiserver's buffered
        writer, one TLS record each, and a TLS socket's read returns one record), so a backlog of
        watch events read one such piece at a time costs a read, and a pause, per two events."""
        data = self.rfile.read1(65536)  # returns all it holds (at most 8 KiB): it is empty after
        if not data:
            return data
        parts = [data]
        size = len(data)
        sock = self.sock
        timeout = sock.gettimeout()
        sock.settimeout(0.0)
        try:
            while size < most:
                try:
                    more = sock.recv(65536)
                except _WOULD_WAIT:
                    break
                if not more:  # the end of the stream: the next read says so again
                    break
                parts.append(more)
                size += len(more)
        finally:
            sock.settimeout(timeout)
        return b"".join(parts) if len(parts) > 1 else data

    def close(self) -> None:
        """Close the socket (and the reader over it)."""
        try:
            self.rfile.close()
        finally:
            self.sock.close()


def read_response_head(
    rfile: Any, closed: type[Exception] = http.client.RemoteDisconnected
) -> tuple[int, str, dict[str, str], str]:
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


def dechunk(data: bytes, pos: int = 0) -> tuple[bytes, int, bool]:
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
