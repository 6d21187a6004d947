"""Quantities as apimachinery parses them (cases from resource/quantity_test.go)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from scheduler.api.quantity import QuantityError, format_amount, format_resources, milli_value, parse_quantity, value


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


@pytest.mark.parametrize(
    ("resource", "text", "shown"),
    [
        ("memory", "512Mi", "512Mi"),
        ("memory", "100M", "100M"),
        ("memory", "1.5Gi", "1536Mi"),  # Quantity.String() of a BinarySI 1.5Gi
        ("memory", "2Gi", "2Gi"),
        ("memory", "16283420Ki", "16283420Ki"),
        ("memory", "1000", "1k"),
        ("memory", "0", "0"),
        ("ephemeral-storage", "10Gi", "10Gi"),
        ("hugepages-2Mi", "4Mi", "4Mi"),
        ("cpu", "1500m", "1500m"),
        ("cpu", "2", "2"),
        ("nvidia.com/gpu", "2", "2"),
    ],
)
def test_format_amount_reads_back_as_written(resource: str, text: str, shown: str) -> None:
    """An amount (cpu in millicores, others in units) as apimachinery's Quantity.String() writes
    the quantity it came from: binary suffixes for a memory-like multiple of 1024, decimal SI else."""
    amount = milli_value(text) if resource == "cpu" else value(text)
    assert format_amount(resource, amount) == shown
    assert format_resources({resource: amount, "a": 0}) == {"a": "0", resource: shown}
