"""Strict, typed reads from a decoded YAML/JSON object, as kube-scheduler's strict decoder does.

An ObjectReader hands out one field at a time; whatever the caller never asked for is an
unknown field. Wrong types are recorded rather than raised so one run reports them all.
"""

from __future__ import annotations

from scheduler.api.duration import parse_duration
from scheduler.api.fielderrors import FieldIssue, type_error, unknown_field
from scheduler.api.fields import join
from scheduler.config.errors import DecodeLog

INT_RANGES = {32: (-(2**31), 2**31 - 1), 64: (-(2**63), 2**63 - 1)}


class ObjectReader:
    """Reads one decoded object field by field, logging wrong types and, on finish, unknown fields."""

    def __init__(self, data: object, path: str, log: DecodeLog) -> None:
        self.path = path
        self.log = log
        self._seen: set[str] = set()
        self._data: dict[object, object] = {}
        if isinstance(data, dict):
            self._data = data
        elif data is not None:
            log.errors.append(type_error(path, data, "object"))

    def where(self, key: str) -> str:
        """The field path of a key of this object."""
        return join(self.path, key)

    def has(self, key: str) -> bool:
        """Whether the key is present with a non-null value."""
        return self._data.get(key) is not None

    def raw(self, key: str) -> object:
        """The value as decoded, unchecked; null and absent are None."""
        self._seen.add(key)
        return self._data.get(key)

    def _typed(self, key: str, kinds: tuple[type, ...], expected: str) -> object:
        value = self.raw(key)
        if value is None:
            return None
        if isinstance(value, bool) and bool not in kinds:
            self.log.errors.append(type_error(self.where(key), value, expected))
            return None
        if not isinstance(value, kinds):
            self.log.errors.append(type_error(self.where(key), value, expected))
            return None
        return value

    def string(self, key: str) -> str | None:
        """A string field."""
        value = self._typed(key, (str,), "string")
        return value if isinstance(value, str) else None

    def integer(self, key: str, bits: int = 32) -> int | None:
        """An int32 or int64 field; out-of-range numbers are type errors as in Go."""
        value = self._typed(key, (int,), f"int{bits}")
        if not isinstance(value, int):
            return None
        low, high = INT_RANGES[bits]
        if not low <= value <= high:
            self.log.errors.append(type_error(self.where(key), value, f"int{bits}"))
            return None
        return value

    def number(self, key: str) -> float | None:
        """A float field (integers accepted)."""
        value = self._typed(key, (int, float), "float")
        return float(value) if isinstance(value, (int, float)) else None

    def boolean(self, key: str) -> bool | None:
        """A boolean field."""
        value = self._typed(key, (bool,), "bool")
        return value if isinstance(value, bool) else None

    def duration(self, key: str) -> int | None:
        """A metav1.Duration field (`10s`, `1m30s`) in nanoseconds."""
        text = self.string(key)
        if text is None:
            return None
        parsed = parse_duration(text)
        if parsed is None:
            self.log.errors.append(FieldIssue(self.where(key), f'{self.where(key)}: time: invalid duration "{text}"'))
        return parsed

    def items(self, key: str) -> list[object]:
        """A list field; null is empty."""
        value = self._typed(key, (list,), "array")
        return value if isinstance(value, list) else []

    def strings(self, key: str) -> tuple[str, ...]:
        """A list of strings."""
        out = []
        for i, item in enumerate(self.items(key)):
            if isinstance(item, str):
                out.append(item)
            else:
                self.log.errors.append(type_error(join(self.where(key), i), item, "string"))
        return tuple(out)

    def child(self, key: str) -> ObjectReader:
        """A reader for a nested object field (an absent object reads as empty)."""
        return ObjectReader(self.raw(key), self.where(key), self.log)

    def children(self, key: str) -> list[ObjectReader]:
        """Readers for each object of a list field."""
        path = self.where(key)
        return [ObjectReader(item, join(path, i), self.log) for i, item in enumerate(self.items(key))]

    def finish(self) -> None:
        """Log every field of the object that was never read, in document order."""
        for key in self._data:
            if key not in self._seen:
                self.log.unknown.append(unknown_field(self.where(str(key))))
