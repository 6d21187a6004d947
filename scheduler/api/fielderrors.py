"""Field errors worded as apimachinery's `field.Error` prints them.

Every message keeps upstream's shape `<field>: <Type>: <value>: <detail>` so a user who searches
for the text finds kube-scheduler's documentation and issues.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from scheduler.api.fields import shown


@dataclass(frozen=True, slots=True)
class FieldIssue:
    """One problem at one field path; `text` is the full message, `field` the path alone."""

    field: str
    text: str

    def __str__(self) -> str:
        return self.text


class Stringer:
    """Base of bad values Go prints through their String method, unquoted (a Duration's `10s`)."""

    __slots__ = ()


QUOTE_LIMIT = 120
"""Longest string quoted whole in a message; longer ones are cut (values may be huge)."""


def go_quote(text: str) -> str:
    """A string quoted as Go's `%q` does for printable text (cut to a prefix when long)."""
    if len(text) > QUOTE_LIMIT:
        return json.dumps(text[:QUOTE_LIMIT], ensure_ascii=False)[:-1] + '..."'
    return json.dumps(text, ensure_ascii=False)


def go_value(value: object) -> str:
    """A bad value rendered as `field.Error` renders it: strings quoted, numbers and bools bare."""
    if value is None:
        return "null"
    if isinstance(value, Stringer):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)) and len(value) <= 8 and all(isinstance(v, str) for v in value):
        # Go prints a []string bad value with %#v.
        return "[]string{" + ", ".join(go_quote(v) for v in value) + "}"
    # Go would print a struct with %#v; the JSON of the YAML form is what the user wrote, in
    # full when small. A large value (or a YAML alias bomb) is cut to a short prefix.
    if _small(value):
        text = json.dumps(value, default=str, separators=(",", ":"))
        if len(text) <= 2 * QUOTE_LIMIT:
            return text
    return shown(value)


def _small(value: object, budget: int = 64) -> bool:
    """Whether a decoded value has at most `budget` nodes (counted without expanding it all)."""
    todo = [value]
    while todo:
        budget -= 1
        if budget < 0:
            return False
        current = todo.pop()
        if isinstance(current, dict):
            todo.extend(current.values())
        elif isinstance(current, (list, tuple)):
            todo.extend(current)
    return True


def _issue(path: str, body: str, detail: str = "") -> FieldIssue:
    text = f"{path}: {body}" if path else body
    if detail:
        text += f": {detail}"
    return FieldIssue(path, text)


def invalid(path: str, value: object, detail: str) -> FieldIssue:
    """`field.Invalid`: `<path>: Invalid value: <value>: <detail>`."""
    return _issue(path, f"Invalid value: {go_value(value)}", detail)


def required(path: str, detail: str = "") -> FieldIssue:
    """`field.Required`: `<path>: Required value[: <detail>]`."""
    return _issue(path, "Required value", detail)


def duplicate(path: str, value: object) -> FieldIssue:
    """`field.Duplicate`: `<path>: Duplicate value: <value>`."""
    return _issue(path, f"Duplicate value: {go_value(value)}")


def too_long(path: str, limit: int) -> FieldIssue:
    """`field.TooLong`: `<path>: Too long: may not be more than <limit> bytes` (the value is not shown)."""
    return _issue(path, "Too long", f"may not be more than {limit} bytes")


def forbidden(path: str, detail: str) -> FieldIssue:
    """`field.Forbidden`: `<path>: Forbidden: <detail>`."""
    return _issue(path, "Forbidden", detail)


def not_supported(path: str, value: object, valid: Sequence[str]) -> FieldIssue:
    """`field.NotSupported`: `<path>: Unsupported value: <value>: supported values: "a", "b"`."""
    detail = "supported values: " + ", ".join(go_quote(v) for v in valid) if valid else ""
    return _issue(path, f"Unsupported value: {go_value(value)}", detail)


def json_kind(value: object) -> str:
    """The JSON type name Go's decoder reports for a value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def type_error(path: str, value: object, expected: str) -> FieldIssue:
    """A value of the wrong JSON type, worded after Go's `cannot unmarshal X into Y`."""
    shown = json_kind(value)
    if isinstance(value, (str, int, float)):
        shown += f" {go_value(value)}"
    return _issue(path, f"cannot unmarshal {shown} into {expected}")


def unknown_field(path: str) -> FieldIssue:
    """A field the schema does not have, worded as strict decoding reports it."""
    return FieldIssue(path, f"unknown field {go_quote(path)}")


def aggregate(messages: Sequence[str]) -> str:
    """Join messages as `utilerrors.Aggregate` does: duplicates dropped, `[a, b]` when several."""
    unique = list(dict.fromkeys(messages))
    if len(unique) == 1:
        return unique[0]
    return "[" + ", ".join(unique) + "]"
