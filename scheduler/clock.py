"""Clocks: the wall clock, and a virtual one that simulation advances without sleeping."""

from __future__ import annotations

import time
from collections.abc import Callable


class Clock:
    """Wall-clock time in seconds since the epoch."""

    virtual = False

    def now(self) -> float:
        """The current time."""
        return time.time()

    def advance_to(self, moment: float) -> None:
        """Only a virtual clock can be moved; the wall clock moves by itself."""
        raise RuntimeError("the wall clock cannot be advanced")


class VirtualClock(Clock):
    """A clock that stands still until advanced: backoff and Permit waits cost no real time."""

    virtual = True

    def __init__(self, start: float) -> None:
        self._now = start
        # Called with the new time after every move (simulated agents that act on a cadence).
        self.listeners: list[Callable[[float], None]] = []

    def now(self) -> float:
        """The current virtual time."""
        return self._now

    def advance_to(self, moment: float) -> None:
        """Move forward to `moment` (never backwards)."""
        if moment > self._now:
            self._now = moment
            self._moved()

    def advance(self, seconds: float) -> None:
        """Move forward by `seconds`."""
        if seconds > 0:
            self._now += seconds
            self._moved()

    def _moved(self) -> None:
        for listener in list(self.listeners):
            listener(self._now)
