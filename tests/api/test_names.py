"""Qualified names, label values and Go durations with apimachinery's rules and wording."""

from __future__ import annotations

import pytest

from scheduler.api.duration import format_duration, parse_duration
from scheduler.api.names import is_extended_resource_name, is_qualified_name, is_valid_label_value

REGEX_DETAIL = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
    "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)

# Cases after apimachinery pkg/util/validation/validation_test.go (TestIsQualifiedName).
QUALIFIED_NAME_CASES = [
    ("simple", "simple", []),
    ("prefixed", "example.com/MyName", []),
    ("underscore and dots", "1.2.3_4-5", []),
    ("empty", "", ["name part must be non-empty", "name part " + REGEX_DETAIL]),
    ("leading dash", "-x", ["name part " + REGEX_DETAIL]),
    ("empty prefix", "/x", ["prefix part must be non-empty"]),
    (
        "bad prefix",
        "Example.com/x",
        [
            (
                "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
                "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
            )
        ],
    ),
    ("too long", "a" * 64, ["name part must be no more than 63 bytes"]),
]


@pytest.mark.parametrize(("value", "errors"), [c[1:] for c in QUALIFIED_NAME_CASES], ids=[c[0] for c in QUALIFIED_NAME_CASES])
def test_is_qualified_name(value: str, errors: list[str]) -> None:
    assert is_qualified_name(value) == errors


@pytest.mark.parametrize(("value", "ok"), [("", True), ("a_b", True), ("-a", False), ("a" * 64, False)])
def test_is_valid_label_value(value: str, ok: bool) -> None:
    assert (not is_valid_label_value(value)) is ok


@pytest.mark.parametrize(
    ("name", "extended"),
    [("example.com/gpu", True), ("cpu", False), ("kubernetes.io/foo", False), ("requests.foo/bar", False)],
)
def test_is_extended_resource_name(name: str, extended: bool) -> None:
    assert is_extended_resource_name(name) is extended


DURATION_CASES = [
    ("0", 0, "0s"),
    ("10s", 10 * 10**9, "10s"),
    ("1m30s", 90 * 10**9, "1m30s"),
    ("1.5h", 5400 * 10**9, "1h30m0s"),
    ("100ms", 100 * 10**6, "100ms"),
    ("-2s", -2 * 10**9, "-2s"),
    ("1500us", 1_500_000, "1.5ms"),
]


@pytest.mark.parametrize(("text", "nanoseconds", "printed"), DURATION_CASES, ids=[c[0] for c in DURATION_CASES])
def test_go_durations(text: str, nanoseconds: int, printed: str) -> None:
    assert parse_duration(text) == nanoseconds
    assert format_duration(nanoseconds) == printed


@pytest.mark.parametrize("text", ["", "15", "1x", "s", "1s2", "--1s"])
def test_bad_durations_do_not_parse(text: str) -> None:
    assert parse_duration(text) is None
