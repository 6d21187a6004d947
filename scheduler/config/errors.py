"""The errors of decoding and validating a configuration: the decode log, plugin args that did not
decode, and the ConfigError naming the file, the field and the value (field errors themselves are
`scheduler.api.fielderrors`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from scheduler.api.fielderrors import FieldIssue, aggregate


@dataclass
class DecodeLog:
    """Problems found while decoding: unknown fields (strict decoding) and wrongly typed values."""

    unknown: list[FieldIssue] = field(default_factory=list)
    errors: list[FieldIssue] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.unknown or self.errors)

    def extend(self, other: DecodeLog) -> None:
        """Add another log's problems to this one."""
        self.unknown.extend(other.unknown)
        self.errors.extend(other.errors)

    def issues(self) -> list[FieldIssue]:
        """Every problem, unknown fields first."""
        return self.unknown + self.errors

    def message(self) -> str:
        """The log as one message, unknown fields grouped as upstream's strict decoding error."""
        parts = []
        if self.unknown:
            parts.append("strict decoding error: " + ", ".join(i.text for i in self.unknown))
        parts.extend(i.text for i in self.errors)
        return aggregate(parts)


class ArgsDecodeError(ValueError):
    """Plugin args that could not be decoded; carries the DecodeLog."""

    def __init__(self, log: DecodeLog) -> None:
        super().__init__(log.message())
        self.log = log


class ConfigError(ValueError):
    """A scheduler configuration that cannot be used; names the file, the field and the value."""

    def __init__(self, source: str, issues: Sequence[FieldIssue], message: str | None = None) -> None:
        self.source = source
        self.issues = tuple(issues)
        self.field = self.issues[0].field if self.issues else ""
        self.message = message if message is not None else aggregate([i.text for i in self.issues])
        super().__init__(f"{source}: {self.message}" if source else self.message)
