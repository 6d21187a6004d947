"""Attempt-record subscribers with bounded buffers.

The engine publishes one AttemptRecord per scheduling attempt. Each subscriber owns a bounded
buffer: publishing appends to it and never waits, so a subscriber that reads slowly (a
websocket client on a bad link) cannot slow scheduling. When its buffer is full the oldest
record is dropped and counted; the next read returns `Missed(n)` first, so the subscriber
knows how many it lost and where. Records keep their arrays; building dictionaries
(`attempt_message`) is the reader's work, on the reader's thread.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from scheduler.api.fields import format_time

if TYPE_CHECKING:
    from scheduler.records import AttemptRecord

log = logging.getLogger(__name__)
T = TypeVar("T")
DEFAULT_BUFFER = 64


@dataclass(frozen=True, slots=True)
class Missed:
    """`count` messages were dropped for this subscriber right before the next one."""

    count: int


class Subscription(Generic[T]):
    """One subscriber's bounded buffer; read it from any thread."""

    def __init__(self, publisher: Publisher[T], maxsize: int, accept: Callable[[T], bool] | None) -> None:
        if maxsize < 1:
            raise ValueError(f"subscription buffer size must be at least 1, got {maxsize}")
        self._publisher = publisher
        self._buffer: deque[T] = deque()
        self._maxsize = maxsize
        self._accept = accept
        self._missed = 0
        self.missed_total = 0
        self.closed = False
        self._waiting = 0
        self._cond = threading.Condition(threading.Lock())

    def offer(self, item: T) -> None:
        """Called by the publisher: append without waiting, dropping the oldest when full."""
        if self._accept is not None and not self._accept(item):
            return
        with self._cond:
            if len(self._buffer) >= self._maxsize:
                self._buffer.popleft()
                self._missed += 1
                self.missed_total += 1
            self._buffer.append(item)
            if self._waiting:
                self._cond.notify()

    def get(self, timeout: float | None = None) -> T | Missed | None:
        """The next message (`Missed(n)` first after drops); None on timeout or when closed and empty."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while not self._buffer and not self._missed:
                if self.closed:
                    return None
                if not self._wait(deadline):
                    return None
            if self._missed:
                missed, self._missed = self._missed, 0
                return Missed(missed)
            return self._buffer.popleft()

    def get_batch(self, timeout: float | None = None, linger: float = 0.05) -> list[T | Missed]:
        """Wait for a first message, then `linger` seconds more, and take everything buffered.

        A reader that wakes for every record competes with the scheduling thread for the GIL
        thousands of times a second; lingering makes it wake a few times a second instead.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while not self._buffer and not self._missed:
                if self.closed or not self._wait(deadline):
                    return []
        if linger > 0:
            time.sleep(linger)
        return self.drain()

    def _wait(self, deadline: float | None) -> bool:
        """Wait (lock held) until notified; False once the deadline has passed."""
        remaining = None if deadline is None else deadline - time.monotonic()
        if remaining is not None and remaining <= 0:
            return False
        self._waiting += 1
        try:
            self._cond.wait(remaining)
        finally:
            self._waiting -= 1
        return True

    def drain(self) -> list[T | Missed]:
        """Everything buffered now, without waiting (`Missed` first if records were dropped)."""
        with self._cond:
            out: list[T | Missed] = []
            if self._missed:
                out.append(Missed(self._missed))
                self._missed = 0
            out.extend(self._buffer)
            self._buffer.clear()
            return out

    def __len__(self) -> int:
        return len(self._buffer)

    def __iter__(self) -> Iterator[T | Missed]:
        while True:
            item = self.get()
            if item is None:
                return
            yield item

    def close(self) -> None:
        """Stop receiving; readers blocked in `get` wake up."""
        self._publisher.unsubscribe(self)
        with self._cond:
            self.closed = True
            self._cond.notify_all()


class Publisher(Generic[T]):
    """Fans items out to subscriptions; publishing costs one buffer append per subscriber."""

    def __init__(self) -> None:
        self._subs: tuple[Subscription[T], ...] = ()
        self._lock = threading.Lock()
        self.published = 0

    def subscribe(self, maxsize: int = DEFAULT_BUFFER, accept: Callable[[T], bool] | None = None) -> Subscription[T]:
        """A new subscription; `accept` runs on the scheduling thread, so it must be cheap."""
        sub = Subscription(self, maxsize, accept)
        with self._lock:
            self._subs = (*self._subs, sub)
        return sub

    def unsubscribe(self, sub: Subscription[T]) -> None:
        """Remove a subscription (closing it does this)."""
        with self._lock:
            self._subs = tuple(s for s in self._subs if s is not sub)

    @property
    def subscribers(self) -> int:
        """How many subscriptions are open."""
        return len(self._subs)

    def publish(self, item: T) -> None:
        """Hand `item` to every subscriber without waiting for any."""
        self.published += 1
        # A tuple replaced on (un)subscribe: iterating needs no lock on the hot path.
        for sub in self._subs:
            try:
                sub.offer(item)
            except Exception:  # a subscriber's filter must never break scheduling
                log.exception("subscriber filter failed; record not delivered to it")


def record_filter(
    profile: str | None = None, namespace: str | None = None, pod: str | None = None
) -> Callable[[AttemptRecord], bool]:
    """A cheap `accept` for records: by profile, namespace and pod (`ns/name`), None = any."""

    def accept(record: AttemptRecord) -> bool:
        if profile is not None and record.profile != profile:
            return False
        if namespace is not None and record.pod.split("/", 1)[0] != namespace:
            return False
        return pod is None or record.pod == pod

    return accept


class AttemptView(Protocol):
    """What `attempt_message` reads of an attempt: an AttemptRecord, or a slim copy of one kept
    while a live view's clients may still be sent it."""

    at: float
    profile: str
    pod: str
    outcome: str
    node: str | None
    feasible_nodes: int

    @property
    def debug_filter_failure(self) -> bool:
        """Whether debugFilterFailure was on for the attempt."""

    def debug_rows(self) -> list[dict[str, Any]]:
        """The top-N rows (N = debugTopNScores at the time of the attempt)."""

    def filter_failures(self) -> dict[str, dict[str, Any]]:
        """Every node that failed a filter: its first failing plugin, code and reasons."""


def attempt_message(record: AttemptView) -> dict[str, Any]:
    """The websocket message of one attempt (docs/architecture.md, "The live message"), with its top-N rows."""
    message: dict[str, Any] = {
        "type": "attempt",
        "at": format_time(record.at),
        "profile": record.profile,
        "pod": record.pod,
        "outcome": record.outcome,
        "node": record.node,
        "feasibleNodes": record.feasible_nodes,
        "scores": record.debug_rows(),
    }
    if record.debug_filter_failure:
        message["filter"] = record.filter_failures()
    return message


__all__ = ["DEFAULT_BUFFER", "AttemptView", "Missed", "Publisher", "Subscription", "attempt_message", "record_filter"]
