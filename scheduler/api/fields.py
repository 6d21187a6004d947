"""Typed reads from decoded YAML/JSON with the field path kept for error messages."""

from __future__ import annotations

import reprlib
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any, NoReturn

SHOWN_LIMIT = 80
"""Longest rendering of a bad value in a message: values can be huge (or alias bombs)."""

_REPR = reprlib.Repr()
_REPR.maxlevel = 3
_REPR.maxdict = 4
_REPR.maxlist = 4
_REPR.maxtuple = 4
_REPR.maxstring = SHOWN_LIMIT
_REPR.maxother = SHOWN_LIMIT
_REPR.maxlong = 40


def shown(value: Any, limit: int = SHOWN_LIMIT) -> str:
    """A value as messages show it: its repr, cut to a short prefix without expanding it whole."""
    text = _REPR.repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class FieldError(ValueError):
    """A value at a named field path that is missing, of the wrong type or invalid."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path
        self.detail = message


def fail(path: str, message: str) -> NoReturn:
    """Raise a FieldError for `path`."""
    raise FieldError(path, message)


def join(path: str, key: str | int) -> str:
    """Extend a field path with a key or list index."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def mapping(value: Any, path: str) -> dict[str, Any]:
    """The value as a mapping; null is an empty mapping."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        fail(path, f"expected an object, got {type(value).__name__} {shown(value)}")
    return value


def sequence(value: Any, path: str) -> list[Any]:
    """The value as a list; null is an empty list."""
    if value is None:
        return []
    if not isinstance(value, list):
        fail(path, f"expected a list, got {type(value).__name__} {shown(value)}")
    return value


def string(value: Any, path: str, default: str = "") -> str:
    """The value as a string; null is the default."""
    if value is None:
        return default
    if not isinstance(value, str):
        fail(path, f"expected a string, got {type(value).__name__} {shown(value)}")
    return value


def integer(value: Any, path: str, default: int | None = None) -> int | None:
    """The value as an integer; null is the default."""
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        fail(path, f"expected an integer, got {type(value).__name__} {shown(value)}")
    return value


def boolean(value: Any, path: str, default: bool = False) -> bool:
    """The value as a boolean; null is the default."""
    if value is None:
        return default
    if not isinstance(value, bool):
        fail(path, f"expected true or false, got {shown(value)}")
    return value


def string_map(value: Any, path: str) -> dict[str, str]:
    """A map of strings to strings, such as labels or annotations."""
    out: dict[str, str] = {}
    for key, item in mapping(value, path).items():
        if not isinstance(key, str):
            fail(path, f"keys must be strings, got {shown(key)}")
        if not isinstance(item, str):
            fail(join(path, key), f"expected a string, got {type(item).__name__} {shown(item)}")
        out[key] = item
    return out


# ----- Reads of one field of a mapping -----------------------------------------------------
# The loader reads millions of fields from large files: these take the mapping, the key and
# the mapping's path, and build the field's path (`join(path, key)`) only when the value is
# bad, then report it through the functions above, so messages are the same as theirs.


def field_map(data: dict[str, Any], key: str, path: str) -> dict[str, Any]:
    """`mapping(data.get(key), join(path, key))`."""
    value = data.get(key)
    if value is None:
        return {}
    if type(value) is dict:
        return value
    return mapping(value, join(path, key))


def field_list(data: dict[str, Any], key: str, path: str) -> list[Any]:
    """`sequence(data.get(key), join(path, key))`."""
    value = data.get(key)
    if value is None:
        return []
    if type(value) is list:
        return value
    return sequence(value, join(path, key))


def field_str(data: dict[str, Any], key: str, path: str, default: str = "") -> str:
    """`string(data.get(key), join(path, key), default)`."""
    value = data.get(key)
    if type(value) is str:
        return value
    if value is None:
        return default
    return string(value, join(path, key), default)


def field_int(data: dict[str, Any], key: str, path: str, default: int | None = None) -> int | None:
    """`integer(data.get(key), join(path, key), default)`."""
    value = data.get(key)
    if type(value) is int:
        return value
    if value is None:
        return default
    return integer(value, join(path, key), default)


def field_bool(data: dict[str, Any], key: str, path: str, default: bool = False) -> bool:
    """`boolean(data.get(key), join(path, key), default)`."""
    value = data.get(key)
    if type(value) is bool:
        return value
    if value is None:
        return default
    return boolean(value, join(path, key), default)


def field_string_map(data: dict[str, Any], key: str, path: str) -> dict[str, str]:
    """`string_map(data.get(key), join(path, key))`."""
    value = data.get(key)
    if value is None:
        return {}
    if type(value) is dict:
        for name, item in value.items():
            if type(name) is not str or type(item) is not str:
                break
        else:
            return dict(value)
    return string_map(value, join(path, key))


def field_time(data: dict[str, Any], key: str, path: str) -> float | None:
    """`timestamp(data.get(key), join(path, key))`."""
    value = data.get(key)
    if value is None:
        return None
    if type(value) is str:
        seconds = _seconds(value)
        if seconds is not None:
            return seconds
    return timestamp(value, join(path, key))


def timestamp(value: Any, path: str) -> float | None:
    """An RFC 3339 time as seconds since the epoch; null stays None."""
    if value is None:
        return None
    if isinstance(value, datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=UTC)
        return moment.timestamp()
    if not isinstance(value, str):
        fail(path, f"expected an RFC 3339 time such as 2026-01-01T00:00:00Z, got {shown(value)}")
    return parse_time(value, path)


def parse_time(text: str, path: str) -> float:
    """Parse an RFC 3339 time string into seconds since the epoch."""
    seconds = _seconds(text)
    if seconds is None:
        fail(path, f"expected an RFC 3339 time such as 2026-01-01T00:00:00Z, got {shown(text)}")
    return seconds


@lru_cache(maxsize=1024)
def _seconds(text: str) -> float | None:
    # Objects read from one file share a few creation times.
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def format_time(seconds: float) -> str:
    """Render seconds since the epoch as RFC 3339 in UTC, as the API server writes times."""
    return datetime.fromtimestamp(seconds, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
