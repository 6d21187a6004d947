"""Quantities as apimachinery parses them (cases from resource/quantity_test.go)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from scheduler.api.quantity import QuantityError, milli_value, parse_quantity, value


@pytest.mark.parametrize(
    ("text", "exact", "milli", "units"),
    [
        ("100m", Fraction(1, 10), 100, 1),
        ("1", Fraction(1), 1000, 1),
        ("0.5", Fraction(1, 2), 500, 1),
        ("1.5", Fraction(3, 2), 1500, 2),
        ("1Ki", Fraction(1024), 1024000, 1024),
        ("1Gi", Fraction(2**30), 2**30 * 1000, 2**30),
        ("500Mi", Fraction(500 * 2**20), 500 * 2**20 * 1000, 500 * 2**20),
        ("1e3", Fraction(1000), 1000000, 1000),
        ("1E3", Fraction(1000), 1000000, 1000),
        ("1e-3", Fraction(1, 1000), 1, 1),
        ("1k", Fraction(1000), 1000000, 1000),
        ("1M", Fraction(10**6), 10**9, 10**6),
        ("12345n", Fraction(12345, 10**9), 1, 1),
        ("1u", Fraction(1, 10**6), 1, 1),
        (".5", Fraction(1, 2), 500, 1),
        ("+2", Fraction(2), 2000, 2),
        (3, Fraction(3), 3000, 3),
        (0.25, Fraction(1, 4), 250, 1),
    ],
    ids=lambda v: str(v),
)
def test_parse(text: object, exact: Fraction, milli: int, units: int) -> None:
    assert parse_quantity(text) == exact
    assert milli_value(text) == milli
    assert value(text) == units


@pytest.mark.parametrize("text", ["", "abc", "1.2.3", "1Kb", "Gi", "1 Gi", "--1", True, None, [1]], ids=repr)
def test_invalid(text: object) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(text)
