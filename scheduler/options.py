"""Command-line values shared by `simulate`, `bench` and the API server's standalone front: the usage
error (exit 2), the attempt limit, `--api-latency`, and the peak memory the commands report."""

from __future__ import annotations

import resource

from scheduler.api.duration import parse_duration

EXIT_BAD_INPUT = 2


class UsageError(ValueError):
    """Bad command-line input; exits 2 with the message."""


ATTEMPTS_PER_POD = 100
"""Default --max-attempts: this many per pod (plus MIN_ATTEMPTS), a backstop behind the no-progress rule."""
MIN_ATTEMPTS = 1000


def check_max_attempts(value: int | None, pods: int) -> int:
    """The attempt limit: the flag's value (at least 1) or the default for this many pods."""
    if value is None:
        return MIN_ATTEMPTS + ATTEMPTS_PER_POD * pods
    if value < 1:
        raise UsageError(f"--max-attempts: invalid value {value}; must be 1 or more")
    return value


def api_latency_seconds(text: str) -> float:
    """`--api-latency`: a Go duration (2ms, 500us) as seconds; exits 2 on anything else."""
    nanos = parse_duration(text)
    if nanos is None or nanos < 0:
        raise UsageError(f"--api-latency: invalid value {text!r}; must be a duration such as 2ms or 500us")
    return nanos / 1e9


def peak_rss_mb() -> float:
    """The process's peak resident set size in MiB."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
