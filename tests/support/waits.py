"""Waiting on a condition instead of sleeping: poll until it holds, fail with what was awaited."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any


def wait_for(
    check: Callable[[], Any],
    timeout: float = 10.0,
    interval: float = 0.05,
    *,
    what: str = "condition",
    ignoring: tuple[type[Exception], ...] = (),
) -> Any:
    """Call `check` until it returns something truthy, and return that.

    An exception of a type in `ignoring` counts as "not yet" (a service coming up or restarting);
    any other propagates. After `timeout` seconds: AssertionError naming `what` and the last answer.
    """
    deadline = time.monotonic() + timeout
    last: Any = None
    while True:
        try:
            last = check()
        except ignoring as exc:
            last = exc
        else:
            if last:
                return last
        if time.monotonic() >= deadline:
            raise AssertionError(f"{what} not met within {timeout}s (last: {last!r})")
        time.sleep(interval)


async def until(check: Callable[[], Any], timeout: float = 5.0, *, what: str = "condition") -> Any:
    """`wait_for` inside an event loop: yields to the loop's other tasks between checks."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not (value := check()):
        if loop.time() >= deadline:
            raise AssertionError(f"{what} not met within {timeout}s")
        await asyncio.sleep(0.001)
    return value
