"""Helpers on the documents the API serves: times as RFC 3339, metadata with its versions, integers
from queries, and the comparisons updates make (an object unchanged, a pod spec but for images)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from scheduler.api.fields import format_time
from scheduler.apiserver.resources import (
    StatusError,
)


@lru_cache(maxsize=4096)
def doc_time(seconds: float) -> str:
    """`format_time`, remembered: the same few start times are rendered for every watch event."""
    return format_time(seconds)


def doc_meta(meta: Any, namespaced: bool) -> dict[str, Any]:
    """An object's name (and namespace), labels and uid as a document's metadata."""
    out: dict[str, Any] = {"name": meta.name}
    if namespaced:
        out["namespace"] = meta.namespace
    if meta.labels:
        out["labels"] = dict(meta.labels)
    # parse_meta's stand-in for a document without a uid is not one: such an object is stored
    # under kind/namespace/name, which persisting it without a uid keeps.
    if meta.uid and meta.uid != (f"uid-{meta.namespace}-{meta.name}" if namespaced else f"uid-{meta.name}"):
        out["uid"] = meta.uid
    return out


def query_int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        raise StatusError(400, "BadRequest", f"expected an integer, got {value!r}") from None


def same_document(current: dict[str, Any], doc: dict[str, Any]) -> bool:
    strip = {k: v for k, v in current["metadata"].items() if k != "resourceVersion"}
    return {**current, "metadata": strip} == {
        **doc,
        "metadata": {k: v for k, v in doc["metadata"].items() if k != "resourceVersion"},
    }


def without_images(spec: dict[str, Any]) -> dict[str, Any]:
    out = dict(spec)
    for key in ("containers", "initContainers"):
        if isinstance(out.get(key), list):
            out[key] = [{k: v for k, v in c.items() if k != "image"} if isinstance(c, dict) else c for c in out[key]]
    return out
