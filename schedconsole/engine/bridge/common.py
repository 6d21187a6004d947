"""What every part of the bridge shares: the refusals, page bounds, and plugin args as JSON."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# Re-exported: the pages' amount filter writes quantities as the engine does.
from scheduler.api.quantity import format_amount as format_amount

# Deleted pods and scheduler Events a long-running engine keeps (the newest).
HISTORY_LIMIT = 10000
PAGE_LIMIT_MAX = 200  # the pages' largest page
LIST_LIMIT_MAX = 1000  # the REST lists' largest page (`?limit=`)
ZONE_LABEL = "topology.kubernetes.io/zone"


class BadInput(ValueError):
    """Input the engine refuses: `field` names where (DRF's field-keyed 400 body)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


class NotFound(LookupError):
    """The object a request names does not exist."""


def window(offset: int, limit: int | None, count: int) -> tuple[int, int]:
    """A list page's bounds: `limit` None is every row (the engine's own callers), else 1 to LIST_LIMIT_MAX."""
    offset = max(0, int(offset))
    if limit is None:
        return offset, count
    return offset, max(1, min(int(limit), LIST_LIMIT_MAX))


def page_bounds(offset: int, limit: int) -> tuple[int, int]:
    """A page's bounds on the console's pages: offset 0 or more, limit 1 to PAGE_LIMIT_MAX."""
    return max(0, int(offset)), max(1, min(int(limit), PAGE_LIMIT_MAX))


def args_json(args: object) -> Any:
    """Plugin args as JSON (dataclasses walked field by field)."""
    if args is None or isinstance(args, (str, int, float, bool)):
        return args
    if isinstance(args, Mapping):
        return {str(k): args_json(v) for k, v in args.items()}
    if isinstance(args, (list, tuple)):
        return [args_json(v) for v in args]
    slots = getattr(args, "__dataclass_fields__", None)
    if slots:
        return {camel(k): args_json(getattr(args, k)) for k in slots}
    return str(args)


def camel(name: str) -> str:
    """`usage_thresholds` as `usageThresholds`."""
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)
