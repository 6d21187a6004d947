"""The plugin factory proxy and `with_plugin` (Koordinator's `PluginFactoryProxy` / `WithPlugin`).

Every factory of the registry, in-tree and out-of-tree, is wrapped: the wrapped factory gives
the plugin the profile's ExtendedHandle instead of the bare framework handle, and once the
plugin is built it is checked for the provider interfaces: `register_endpoints` (REST routes,
mounted once per plugin name however many profiles build it), `new_controllers` (kept once per
plugin name, run while leading) and the phase hooks (added to that profile's chains).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from scheduler.framework.interface import DuplicatePluginError, Handle, Plugin, PluginFactory

if TYPE_CHECKING:
    from scheduler.frameworkext.extender import Extender

Option = Callable[["Extender", dict[str, PluginFactory]], None]
"""Changes a registry being built (`app.Option`): `with_plugin` is the one most callers need."""

_PROXIED = "__frameworkext_proxied__"


def is_proxied(factory: PluginFactory) -> bool:
    """Whether a factory is already wrapped by a plugin factory proxy."""
    return bool(getattr(factory, _PROXIED, False))


def plugin_factory_proxy(extender: Extender, factory: PluginFactory) -> PluginFactory:
    """Wrap a factory so its plugin gets the ExtendedHandle and its providers are registered."""
    if is_proxied(factory):
        return factory

    def proxied(args: Any, handle: Handle) -> Plugin:
        extended = extender.extended_handle(handle)
        plugin = factory(args, extended)
        extender.update_plugins(plugin, extended)
        return plugin

    setattr(proxied, _PROXIED, True)
    proxied.__name__ = getattr(factory, "__name__", "factory")
    proxied.__doc__ = factory.__doc__
    proxied.__wrapped__ = factory  # type: ignore[attr-defined]
    return proxied


def with_plugin(name: str, factory: PluginFactory) -> Option:
    """Register an out-of-tree plugin by name; the name must not be taken."""

    def option(extender: Extender, registry: dict[str, PluginFactory]) -> None:
        if name in registry:
            raise DuplicatePluginError(f"a plugin named {name} already exists")
        registry[name] = plugin_factory_proxy(extender, factory)

    return option


__all__ = ["Option", "is_proxied", "plugin_factory_proxy", "with_plugin"]
