"""Informers on a real API server, as client-go's reflector runs them: list, then watch from the
list's resourceVersion; relist on 410 Gone (or a watch that cannot resume) and every
`resync_seconds` anyway, so a watch that dropped events without closing is repaired."""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from scheduler.kube.client import Connection, RemoteError

log = logging.getLogger(__name__)
# How long past its timeoutSeconds a watch may stay silent before it counts as stalled.
WATCH_READ_MARGIN_SECONDS = 30


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
    # GenericWorkload (alpha in v1.35): 404 until the API server serves scheduling.k8s.io/v1alpha1.
    Kind("Workload", "/apis/scheduling.k8s.io/v1alpha1/workloads", optional=True),
)
EXTENSION_PATHS = {k.kind: k.path for k in KINDS if k.optional}


def doc_key(doc: dict[str, Any]) -> str:
    """An object's `namespace/name` (`/name` for a cluster-scoped one)."""
    meta = doc.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def doc_version(doc: dict[str, Any]) -> int:
    """An object's resourceVersion as a number (0 when it has none)."""
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
    # How often an optional kind that is not served (no CRD) is looked for again.
    install_poll_seconds: float = 10.0
    relists: int = 0
    # Watches that ended in an error other than 410 Gone (refused, reset, timed out), and 410s.
    broken: int = 0
    expired: int = 0
    watches: int = 0
    events: int = 0
    last_event_at: float = 0.0
    _thread: threading.Thread | None = None
    _last_list: float = 0.0
    _streams: list[Any] = field(default_factory=list)

    def list(self) -> None:
        """A full list, replacing the cache's objects of this kind. An optional kind the server
        does not serve (its CRD is not installed) is marked not installed, and emptied if it was."""
        try:
            listed = self.connection.request("GET", self.kind.path)
        except RemoteError as exc:
            if self.kind.optional and exc.code == 404:
                if self.installed and self.relists:
                    self.replace(self.kind.kind, [])  # the CRD was deleted: so are its objects
                self.installed = False
                self.resource_version = ""
                self.synced.set()
                return
            raise
        if not self.installed:
            log.info("informer %s: the resource is served now", self.kind.kind)
        self.installed = True
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
        while not self.stopped.is_set():
            try:
                if not self.installed:
                    # A custom resource whose CRD is not installed (yet): look again from time to
                    # time, so a CRD installed after start is picked up.
                    if self.stopped.wait(self.install_poll_seconds):
                        return
                    self.list()
                    continue
                if not self.resource_version or time.monotonic() - self._last_list >= self.resync_seconds:
                    self.list()
                    if not self.installed:
                        continue
                self._watch()
                failures = 0
            except RemoteError as exc:
                if exc.code == 410:
                    self.expired += 1
                    self.resource_version = ""  # too old: relist
                    continue
                if exc.code == 404 and self.kind.optional:
                    self.resource_version = ""  # the CRD went away: the list says so
                failures += 1
                self.broken += 1
                log.warning("informer %s: %s", self.kind.kind, exc)
                self.stopped.wait(min(30.0, 0.2 * 2**failures))
            except Exception as exc:  # a broken stream: resume from the last version seen
                if self.stopped.is_set():
                    return
                failures += 1
                self.broken += 1
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
        seconds = int(min(self.watch_seconds, left))
        query["timeoutSeconds"] = str(seconds)
        # The server ends the watch after `seconds` (and sends bookmarks meanwhile): a quiet watch
        # is not a stalled one until well past that. A dead peer is found by TCP keepalive.
        read_timeout = max(self.read_timeout, seconds + WATCH_READ_MARGIN_SECONDS)
        for event in self.connection.stream(self.kind.path, query, read_timeout, self._streams, self.batch_seconds):
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


__all__ = ["KINDS", "Informer", "Kind"]
