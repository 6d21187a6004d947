"""`events.k8s.io/v1` Events as kube-scheduler's broadcaster (client-go `tools/events`) sends them.

Each profile records under its own name: `reportingController` is the profile's schedulerName
and `reportingInstance` `<schedulerName>-<hostname>` (`NewRecorder(scheme, profile.SchedulerName)`).
An Event isomorphic to one sent before (same action, reason, reportingController and regarding
object; the note does not count) within the last six minutes is not sent again: it becomes a
series. The second occurrence patches the first Event with `series: {count: 2,
lastObservedTime}`; later ones only count in memory, and every 30 minutes the series that grew
are patched with their count (`refreshExistingEventSeries`); a series not seen for six minutes is
forgotten (`finishSeries`). A series patch answered 404 (the Event was deleted, or let go after
kube-apiserver's `--event-ttl`) creates the Event again, with its series, as client-go's
`recordEvent` does. Requests go out from the broadcaster's own thread, never from the
scheduling loop. As client-go's `attemptRecording`, a request that reached no server (refused,
reset, timed out) is tried again after about 10 s (jittered by a quarter), up to 12 tries; one the
server answered with an error is not ("Server rejected event (will not retry!)"). Every failure is
logged and counted.
"""

from __future__ import annotations

import logging
import random
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)
SERIES_FINISH_SECONDS = 6 * 60.0  # client-go's finishTime
SERIES_REFRESH_SECONDS = 30 * 60.0  # client-go's refreshTime
MAX_TRIES_PER_EVENT = 12  # client-go's maxTriesPerEvent
RETRY_SECONDS = 10.0  # client-go's defaultSleepDuration
ACTIONS = {"Scheduled": "Binding", "FailedScheduling": "Scheduling", "Preempted": "Preempting"}

Key = tuple[str, str, str, str, str, str]  # action, reason, controller, namespace, name, uid


def micro_time(at: float) -> str:
    """A MicroTime: RFC 3339 with microseconds, UTC."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(at)) + f".{int(at * 1e6) % 1000000:06d}Z"


@dataclass(slots=True)
class _Sent:
    """An Event sent, kept while it may become (or is) a series."""

    namespace: str
    name: str
    count: int = 1
    last_observed: float = 0.0
    patched_count: int = 1
    event: dict[str, Any] = field(default_factory=dict)  # as first sent: created again should a patch find it gone


@dataclass(slots=True)
class EventBroadcaster:
    """Sends Events over `request(method, path, body, content_type)` on a thread of its own."""

    request: Callable[[str, str, Any, str], Any]
    on_error: Callable[[str, BaseException], None] = lambda source, exc: None
    hostname: str = field(default_factory=socket.gethostname)
    clock: Callable[[], float] = time.time
    retry_seconds: float = RETRY_SECONDS
    sent: int = 0
    patched: int = 0
    retried: int = 0
    _cache: dict[Key, _Sent] = field(default_factory=dict)
    recreated: int = 0
    # (verb, path, body, tries, the series' Event for a PATCH else None)
    _out: deque[tuple[str, str, dict[str, Any], int, _Sent | None]] = field(default_factory=deque)
    _later: list[tuple[float, int, str, str, dict[str, Any], _Sent | None]] = field(default_factory=list)  # (due, tries, ...)
    _wake: threading.Event = field(default_factory=threading.Event)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _refreshed_at: float = 0.0
    _maintained_at: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, type_: str, reason: str, regarding: dict[str, str], controller: str, note: str) -> None:
        """Queue an Event about `regarding` (never blocks the caller)."""
        now = self.clock()
        action = ACTIONS.get(reason, reason)
        namespace = regarding.get("namespace") or "default"
        key: Key = (action, reason, controller, namespace, regarding.get("name", ""), regarding.get("uid", ""))
        with self._lock:
            seen = self._cache.get(key)
            if seen is not None and now - seen.last_observed < SERIES_FINISH_SECONDS:
                seen.count += 1
                seen.last_observed = now
                if seen.count == 2:  # a new series: the first Event is patched at once
                    self._queue_series(seen)
                return
            name = f"{regarding.get('name', '')}.{int(now * 1e9):x}"
            event = {
                "apiVersion": "events.k8s.io/v1",
                "kind": "Event",
                "metadata": {"name": name, "namespace": namespace},
                "eventTime": micro_time(now),
                "reportingController": controller,
                "reportingInstance": f"{controller}-{self.hostname}",
                "action": action,
                "reason": reason,
                "note": note,
                "type": type_,
                "regarding": {"apiVersion": "v1", "kind": "Pod", **regarding, "namespace": namespace},
            }
            self._cache[key] = _Sent(namespace, name, 1, now, event=event)
            self._out.append(("POST", f"/apis/events.k8s.io/v1/namespaces/{namespace}/events", event, 0, None))
        self._wake.set()

    def _queue_series(self, seen: _Sent) -> None:
        seen.patched_count = seen.count
        patch = {"series": {"count": seen.count, "lastObservedTime": micro_time(seen.last_observed)}}
        self._out.append(("PATCH", f"/apis/events.k8s.io/v1/namespaces/{seen.namespace}/events/{seen.name}", patch, 0, seen))

    @property
    def pending(self) -> int:
        """Requests queued and not yet sent."""
        return len(self._out)

    @property
    def retrying(self) -> int:
        """Requests that reached no server, waiting to be tried again."""
        return len(self._later)

    def start(self) -> None:
        """Send from a thread of its own."""
        self._refreshed_at = self.clock()
        self._thread = threading.Thread(target=self._run, name="event-broadcaster", daemon=True)
        self._thread.start()

    def stop(self, timeout: float) -> None:
        """Send what is queued (at most `timeout` seconds), then stop."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def _run(self) -> None:
        while True:
            self._due()
            self.flush()
            self._maintain()
            if self._stop.is_set():
                return
            self._wake.wait(0.5)
            self._wake.clear()

    def _due(self) -> None:
        """Queue again the requests whose retry is due."""
        now = time.monotonic()
        due = [entry for entry in self._later if entry[0] <= now]
        if due:
            self._later = [entry for entry in self._later if entry[0] > now]
            self._out.extend((verb, path, body, tries, seen) for _, tries, verb, path, body, seen in due)

    def flush(self) -> None:
        """Send every queued request now (on the calling thread)."""
        while self._out:
            verb, path, body, tries, seen = self._out.popleft()
            content_type = "application/merge-patch+json" if verb == "PATCH" else "application/json"
            tries += 1
            try:
                self.request(verb, path, body, content_type)
            except Exception as exc:  # an API server away or refusing: counted, the rest still go
                if seen is not None and getattr(exc, "code", None) == 404:
                    # The series' Event is gone: create it again, series and all (client-go's
                    # recordEvent falls back to Create when the patch finds no Event).
                    log.info("event %s gone; created again with its series", path)
                    again = {**seen.event, "series": body["series"]}
                    self._out.appendleft(("POST", path.rsplit("/", 1)[0], again, 0, None))
                    self.recreated += 1
                    continue
                self.on_error("events", exc)
                if getattr(exc, "code", None) == 0 and tries < MAX_TRIES_PER_EVENT and not self._stop.is_set():
                    log.warning("event %s %s not written (try %d, again later): %s", verb, path, tries, exc)
                    due = time.monotonic() + self.retry_seconds * random.uniform(1.0, 1.25)
                    self._later.append((due, tries, verb, path, body, seen))
                    self.retried += 1
                else:
                    log.warning("event %s %s dropped: %s", verb, path, exc)
                continue
            if verb == "PATCH":
                self.patched += 1
            else:
                self.sent += 1

    def _maintain(self) -> None:
        """Forget finished series; every 30 minutes, patch the series that grew."""
        now = self.clock()
        if now - self._maintained_at < 30.0:
            return
        self._maintained_at = now
        with self._lock:
            for key in [k for k, s in self._cache.items() if now - s.last_observed >= SERIES_FINISH_SECONDS]:
                del self._cache[key]
            if now - self._refreshed_at >= SERIES_REFRESH_SECONDS:
                self._refreshed_at = now
                for seen in self._cache.values():
                    if seen.count > seen.patched_count:
                        self._queue_series(seen)


__all__ = ["EventBroadcaster", "micro_time"]
