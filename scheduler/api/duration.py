"""Go durations: `time.ParseDuration`'s strings (`1m30s`, `100ms`) read, and
`time.Duration.String` written, as Kubernetes objects and configurations carry them."""

from __future__ import annotations

import re

_DURATION_UNITS = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,
    "μs": 1_000,
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60_000_000_000,
    "h": 3_600_000_000_000,
}
_DURATION_PART = re.compile(r"(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


def parse_duration(text: str) -> int | None:
    """Nanoseconds of a Go duration string such as `1m30s` or `100ms`; None if it does not parse."""
    sign = -1 if text.startswith("-") else 1
    body = text[1:] if text[:1] in "+-" else text
    if body == "0":
        return 0
    if not body:
        return None
    total = 0.0
    pos = 0
    for match in _DURATION_PART.finditer(body):
        if match.start() != pos:
            return None
        total += float(match.group(1)) * _DURATION_UNITS[match.group(2)]
        pos = match.end()
    if pos != len(body):
        return None
    return sign * round(total)


def _fraction(value: int, unit: int) -> str:
    whole, rest = divmod(value, unit)
    if not rest:
        return str(whole)
    digits = str(rest).rjust(len(str(unit)) - 1, "0").rstrip("0")
    return f"{whole}.{digits}"


def format_duration(nanoseconds: int) -> str:
    """A duration printed as Go's `time.Duration.String` prints it (`1m30s`, `100ms`, `0s`)."""
    if nanoseconds == 0:
        return "0s"
    size = abs(nanoseconds)
    if size < 1_000:
        text = f"{size}ns"
    elif size < 1_000_000:
        text = _fraction(size, 1_000) + "µs"
    elif size < 1_000_000_000:
        text = _fraction(size, 1_000_000) + "ms"
    else:
        hours, rest = divmod(size, 3_600_000_000_000)
        minutes, rest = divmod(rest, 60_000_000_000)
        text = _fraction(rest, 1_000_000_000) + "s"
        if hours:
            text = f"{hours}h{minutes}m{text}"
        elif minutes:
            text = f"{minutes}m{text}"
    return "-" + text if nanoseconds < 0 else text
