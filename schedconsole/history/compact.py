"""Filter failures as the history keeps them: grouped by (plugin, code, reasons), node names as ranges.

At 5000 nodes an unschedulable attempt usually fails every node for one or two reasons; keeping a
dict per node cost ~230 KB an attempt. A group keeps its reasons once and its nodes as name series:
`node-00000` ... `node-04999` is `["node-", 5, "0-4999"]` (prefix, digits, ranges), and a name with
no number at its end is kept as it is. Pure functions, no Django: the bridge encodes, pages decode.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator
from typing import Any

_NUMBERED = re.compile(r"^(.*?)(\d+)$", re.S)

NameItem = str | list[Any]
"""A literal node name, or `[prefix, digits, "a-b,c,..."]`: every `prefix + str(n).zfill(digits)`."""


def encode_names(names: Iterable[str]) -> list[NameItem]:
    """Node names as literal names and numbered series with ranges (order: series as first met)."""
    series: dict[tuple[str, int], list[int]] = {}
    items: list[NameItem] = []
    for name in names:
        parsed = _parse(name)
        if parsed is None:
            items.append(name)
            continue
        key, number = parsed
        numbers = series.get(key)
        if numbers is None:
            series[key] = [number]
        else:
            numbers.append(number)
    for (prefix, width), numbers in series.items():
        if len(numbers) == 1:
            items.append(prefix + str(numbers[0]).zfill(width))
            continue
        items.append([prefix, width, _ranges(sorted(numbers))])
    return items


@functools.lru_cache(maxsize=1 << 16)
def _parse(name: str) -> tuple[tuple[str, int], int] | None:
    """((prefix, digits), number) of a name ending in a number; cached: the same node names recur
    in every attempt."""
    m = _NUMBERED.match(name)
    if m is None:
        return None
    digits = m.group(2)
    # The number written back with this many digits gives the same name (zero padding kept).
    return (m.group(1), len(digits)), int(digits)


def _ranges(numbers: list[int]) -> str:
    parts: list[str] = []
    start = prev = numbers[0]
    for n in numbers[1:]:
        if n == prev + 1:
            prev = n
            continue
        parts.append(str(start) if start == prev else f"{start}-{prev}")
        start = prev = n
    parts.append(str(start) if start == prev else f"{start}-{prev}")
    return ",".join(parts)


def decode_names(items: Iterable[NameItem]) -> Iterator[str]:
    """Every node name of `encode_names`' items."""
    for item in items:
        if isinstance(item, str):
            yield item
            continue
        prefix, width, ranges = item
        for part in str(ranges).split(","):
            lo, _, hi = part.partition("-")
            for n in range(int(lo), int(hi or lo) + 1):
                yield prefix + str(n).zfill(int(width))


def describe_names(items: Iterable[NameItem], limit: int = 12) -> str:
    """The names for people: `node-00000 … node-00099, node-00105, web-a` (at most `limit` pieces)."""
    pieces: list[str] = []
    total = 0
    for item in items:
        if isinstance(item, str):
            total += 1
            if len(pieces) < limit:
                pieces.append(item)
            continue
        prefix, width, ranges = item
        for part in str(ranges).split(","):
            total += 1
            if len(pieces) >= limit:
                continue
            lo, _, hi = part.partition("-")
            first = prefix + lo.zfill(int(width))
            pieces.append(first if not hi else f"{first} … {prefix + hi.zfill(int(width))}")
    more = total - len(pieces)
    return ", ".join(pieces) + (f" and {more} more ranges" if more > 0 else "")


def group_failures(failures: Iterable[tuple[str, str, str, tuple[str, ...]]], limit: int) -> tuple[list[dict[str, Any]], int]:
    """(node, plugin, code, reasons) rows as groups `{"plugin", "code", "reasons", "count", "nodes"}`,
    largest first, keeping the first `limit` nodes; also how many nodes were not kept."""
    grouped: dict[tuple[str, str, tuple[str, ...]], list[str]] = {}
    dropped = 0
    kept = 0
    for node, plugin, code, reasons in failures:
        if kept >= limit:
            dropped += 1
            continue
        kept += 1
        key = (plugin, code, reasons)
        names = grouped.get(key)
        if names is None:
            grouped[key] = [node]
        else:
            names.append(node)
    groups: list[dict[str, Any]] = [
        {"plugin": plugin, "code": code, "reasons": list(reasons), "count": len(names), "nodes": encode_names(names)}
        for (plugin, code, reasons), names in grouped.items()
    ]
    groups.sort(key=lambda g: -int(g["count"]))
    return groups, dropped


def expand_groups(groups: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The attempt record's `filter` (node -> first failing plugin, code, reasons) from the groups
    (docs/architecture.md, "The attempt record")."""
    out: dict[str, dict[str, Any]] = {}
    for g in groups:
        failure = {"plugin": g["plugin"], "code": g["code"], "reasons": list(g["reasons"])}
        for node in decode_names(g["nodes"]):
            out[node] = dict(failure)
    return out
