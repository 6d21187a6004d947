"""Koordinator's framework extensions: extended handle, plugin factory proxy, REST services,
plugin controllers, phase hooks, debug scores and attempt-record subscribers.

Knows nothing of Django: the console mounts what `Extender.dispatch` answers and reads what
`Extender.records` publishes.
"""

from scheduler.frameworkext.controllers import Controller, ControllerProvider, ControllerRegistry, Leadership
from scheduler.frameworkext.debug import DebugFlags, FlagError, render_markdown
from scheduler.frameworkext.extender import Extender
from scheduler.frameworkext.handle import ExtendedHandle, InformerFactory
from scheduler.frameworkext.hooks import FilterPhaseHook, HookError, PhaseHooks, PreFilterPhaseHook, ScorePhaseHook
from scheduler.frameworkext.proxy import Option, plugin_factory_proxy, with_plugin
from scheduler.frameworkext.publisher import Missed, Publisher, Subscription, attempt_message, record_filter
from scheduler.frameworkext.services import APIServiceProvider, Request, Response, RouteGroup, ServiceTable, error_message

__all__ = [
    "APIServiceProvider",
    "Controller",
    "ControllerProvider",
    "ControllerRegistry",
    "DebugFlags",
    "ExtendedHandle",
    "Extender",
    "FilterPhaseHook",
    "FlagError",
    "HookError",
    "InformerFactory",
    "Leadership",
    "Missed",
    "Option",
    "PhaseHooks",
    "PreFilterPhaseHook",
    "Publisher",
    "Request",
    "Response",
    "RouteGroup",
    "ScorePhaseHook",
    "ServiceTable",
    "Subscription",
    "attempt_message",
    "error_message",
    "plugin_factory_proxy",
    "record_filter",
    "render_markdown",
    "with_plugin",
]
