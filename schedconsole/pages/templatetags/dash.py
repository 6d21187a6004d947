"""Template filters for the dashboard: resource amounts as people write them."""

from __future__ import annotations

from django import template

register = template.Library()


@register.filter
def amount(value: object, resource: str) -> str:
    """cpu millicores as cores or `m`, bytes as Gi/Mi, counts as they are."""
    if isinstance(value, str) and value.isdigit():
        value = int(value)
    if not isinstance(value, int):
        return "" if value is None else str(value)
    if resource == "cpu":
        return f"{value / 1000:g}" if value % 100 == 0 else f"{value}m"
    if resource in ("memory", "ephemeral-storage"):
        if value >= 1 << 30:
            return f"{value / (1 << 30):.1f}Gi"
        return f"{value / (1 << 20):.0f}Mi"
    return str(value)
