"""Template filters for the dashboard: resource amounts as people write them."""

from __future__ import annotations

from django import template

from schedconsole.engine.bridge.common import format_amount

register = template.Library()


@register.filter
def amount(value: object, resource: str) -> str:
    """A resource amount as a Quantity reads (`scheduler.api.quantity.format_amount`): cpu as
    cores or `m`; memory in the binary suffix that divides it (`512Mi`, `1536Mi`, `16283420Ki`),
    else decimal (`100M`), so a request shows as it was written; an amount no suffix divides (an
    estimate) rounded to Mi or a tenth of a Gi; counts as they are."""
    if isinstance(value, str) and value.isdigit():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool):
        return "" if value is None else str(value)
    if resource == "cpu" or resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-"):
        text = format_amount(resource, value)
        if resource != "cpu" and text.isdigit() and value >= 1 << 20:
            # No suffix divides it (an estimate, a scaled usage): rounded, as people read it.
            return f"{value / (1 << 30):.1f}Gi" if value >= 1 << 30 else f"{value / (1 << 20):.0f}Mi"
        return text
    return str(value)


@register.filter
def plain(value: object) -> str:
    """A dict or list as people read it (`usageThresholds: cpu 65, memory 95`), never a Python repr."""
    if isinstance(value, dict):
        parts = []
        for key, item in value.items():
            if isinstance(item, dict):
                parts.append(f"{key}: " + ", ".join(f"{k} {plain(v)}" for k, v in item.items()))
            else:
                parts.append(f"{key} {plain(item)}")
        return "; ".join(parts)
    if isinstance(value, list | tuple):
        return ", ".join(plain(v) for v in value)
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@register.filter
def pretty(value: object) -> str:
    """A JSON value as indented JSON text (for a <pre>), never a Python repr."""
    import json

    return json.dumps(value, indent=1, sort_keys=True, default=str)
