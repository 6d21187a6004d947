"""Candidates of a sweep: configuration documents made from a base one by a grid of plugin weights
and plugin args (every combination), each with a label saying what it changed."""

from __future__ import annotations

import copy
import itertools
from collections.abc import Mapping, Sequence
from typing import Any

MAX_CANDIDATES = 64


class GridError(ValueError):
    """A grid the sweep cannot expand; the message names the key."""


def expand_grid(base: Mapping[str, Any], grid: Mapping[str, Sequence[Any]]) -> list[tuple[str, dict[str, Any]]]:
    """Every combination of `grid`'s values applied to `base` (a KubeSchedulerConfiguration
    document), in key order. Keys: `<Plugin>.weight` (the plugin's score weight, added to the
    profile's `plugins.multiPoint.enabled`), or `<Plugin>.<arg>[.<arg>...]` (a field of the
    plugin's `pluginConfig` args). Every profile of the document gets the change."""
    keys = sorted(grid)
    for key in keys:
        if "." not in key or not key.split(".", 1)[0]:
            raise GridError(f"grid.{key}: expected <Plugin>.weight or <Plugin>.<arg path>")
        values = grid[key]
        if isinstance(values, str | bytes) or not isinstance(values, Sequence) or not values:
            raise GridError(f"grid.{key}: expected a non-empty list of values")
    combos = list(itertools.product(*(grid[k] for k in keys)))
    if len(combos) > MAX_CANDIDATES:
        raise GridError(f"grid: {len(combos)} combinations; at most {MAX_CANDIDATES}")
    out = []
    for values in combos:
        doc = copy.deepcopy(dict(base))
        for key, value in zip(keys, values, strict=True):
            _apply(doc, key, value)
        label = ", ".join(f"{k}={v}" for k, v in zip(keys, values, strict=True)) or "base"
        out.append((label, doc))
    return out


def _profiles(doc: dict[str, Any]) -> list[dict[str, Any]]:
    profiles = doc.get("profiles")
    if not profiles:
        profiles = doc["profiles"] = [{"schedulerName": "default-scheduler"}]
    return [p for p in profiles if isinstance(p, dict)]


def _apply(doc: dict[str, Any], key: str, value: Any) -> None:
    plugin, path = key.split(".", 1)
    for profile in _profiles(doc):
        if path == "weight":
            point = profile.setdefault("plugins", {}).setdefault("multiPoint", {})
            enabled = point.setdefault("enabled", [])
            entry = next((e for e in enabled if isinstance(e, dict) and e.get("name") == plugin), None)
            if entry is None:
                enabled.append({"name": plugin, "weight": value})
            else:
                entry["weight"] = value
            continue
        configs = profile.setdefault("pluginConfig", [])
        entry = next((c for c in configs if isinstance(c, dict) and c.get("name") == plugin), None)
        if entry is None:
            entry = {"name": plugin, "args": {}}
            configs.append(entry)
        args = entry.setdefault("args", {})
        parts = path.split(".")
        for part in parts[:-1]:
            args = args.setdefault(part, {})
        args[parts[-1]] = value
