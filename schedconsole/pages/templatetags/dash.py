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
    if resource == "cpu":  # as Kubernetes writes a quantity: whole cores, else millicores (never 0.5)
        return f"{value // 1000}" if value % 1000 == 0 else f"{value}m"
    if resource in ("memory", "ephemeral-storage"):
        if value >= 1 << 30:
            return f"{value / (1 << 30):.1f}Gi"
        return f"{value / (1 << 20):.0f}Mi"
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
