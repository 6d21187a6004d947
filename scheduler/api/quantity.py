"""Kubernetes resource quantities (`100m`, `1Gi`, `1e3`, `0.5`), parsed exactly.

The grammar is apimachinery's `resource.Quantity`: a signed decimal number followed by a
binary-SI suffix (Ki..Ei), a decimal-SI suffix (n, u, m, "", k, M, G, T, P, E) or a decimal
exponent (e3, E-2). Values are kept as exact fractions; `milli_value` and `value` round up
as `Quantity.MilliValue()` and `Quantity.Value()` do.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from fractions import Fraction
from functools import lru_cache

from scheduler.api.fields import shown

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
_PATTERN = re.compile(
    r"^(?P<num>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    r"(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?$"
)


class QuantityError(ValueError):
    """A string that is not a Kubernetes quantity."""


def parse_quantity(text: object) -> Fraction:
    """Parse a quantity (string, int or float as YAML gives it) into an exact fraction."""
    if type(text) is str:
        # Files repeat a handful of quantities ("100m", "256Mi") thousands of times.
        return _parse_text(text)
    return _parse(text)


@lru_cache(maxsize=4096)
def _parse_text(text: str) -> Fraction:
    return _parse(text)


def _parse(text: object) -> Fraction:
    if isinstance(text, bool):
        raise QuantityError(f"invalid quantity {shown(text)}: expected a number with an optional suffix")
    if isinstance(text, int):
        return Fraction(text)
    if isinstance(text, float):
        if not math.isfinite(text):
            raise QuantityError(f"invalid quantity {shown(text)}: not a finite number")
        return Fraction(repr(text))
    if not isinstance(text, str):
        raise QuantityError(f"invalid quantity {shown(text)}: expected a string such as '100m' or '1Gi'")
    match = _PATTERN.match(text.strip())
    if match is None or text.strip() == "":
        raise QuantityError(
            f"invalid quantity {shown(text)}: quantities must match the regular expression "
            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
        )
    number = Fraction(match.group("num"))
    suffix = match.group("suffix") or ""
    if suffix in _BINARY:
        return _cap(number * _BINARY[suffix])
    if suffix in _DECIMAL:
        return _cap(number * _DECIMAL[suffix])
    exponent = int(suffix[1:])
    if abs(exponent) > 100:
        raise QuantityError(f"invalid quantity {shown(text)}: exponent out of range")
    return number * Fraction(10) ** exponent


MAX_INT64 = 2**63 - 1


def _cap(amount: Fraction) -> Fraction:
    """apimachinery's ParseQuantity caps SI-suffixed (and bare) quantities at the int64 range."""
    if amount > MAX_INT64:
        return Fraction(MAX_INT64)
    if amount < -MAX_INT64:
        return Fraction(-MAX_INT64)
    return amount


def _ceil(value: Fraction) -> int:
    return -((-value.numerator) // value.denominator)


def milli_value(text: object) -> int:
    """The quantity in thousandths, rounded up (`Quantity.MilliValue()`)."""
    return _ceil(parse_quantity(text) * 1000)


def value(text: object) -> int:
    """The quantity as an integer, rounded up (`Quantity.Value()`)."""
    return _ceil(parse_quantity(text))


def ceil_fraction(amount: Fraction) -> int:
    """Round an exact amount up to an integer, as `Quantity.Value()` does."""
    return _ceil(amount)


def format_milli_cpu(milli: int) -> str:
    """Render millicores the way kubectl prints them (`500m`, `2`)."""
    return f"{milli // 1000}" if milli % 1000 == 0 else f"{milli}m"


_MEMORY_LIKE = ("memory", "ephemeral-storage")


def format_amount(name: str, amount: int) -> str:
    """A Quantity's canonical text: cpu as a milli quantity ("4", "1500m"); memory-like amounts
    in binary suffixes when a multiple of 1024 ("4Gi"), anything else in decimal SI ("2k"). Go
    keeps the format a quantity was written in, so a `4G` request reads back `4G` there and
    `3814697Ki`-style here: write memory in binary suffixes for the same text."""
    if name == "cpu":
        if amount % 1000:
            return f"{amount}m"
        amount //= 1000
        binary = False
    else:
        binary = amount % 1024 == 0 and (name in _MEMORY_LIKE or name.startswith("hugepages-"))
    if amount == 0:
        return "0"
    units = (60, 50, 40, 30, 20, 10) if binary else (18, 15, 12, 9, 6, 3)
    names = ("Ei", "Pi", "Ti", "Gi", "Mi", "Ki") if binary else ("E", "P", "T", "G", "M", "k")
    for power, suffix in zip(units, names, strict=True):
        unit = 2**power if binary else 10**power
        if amount % unit == 0:
            return f"{amount // unit}{suffix}"
    return str(amount)


def format_resources(amounts: Mapping[str, int]) -> dict[str, str]:
    """A ResourceList's JSON form, keys sorted as Go marshals a map."""
    return {k: format_amount(k, v) for k, v in sorted(amounts.items())}
