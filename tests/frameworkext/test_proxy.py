"""The plugin factory proxy: the ExtendedHandle, provider detection, once-only mounting across profiles.

Behaviour from koordinator-sh/koordinator pkg/scheduler/frameworkext/framework_extender_factory.go
(PluginFactoryProxy, updatePlugins) and controllers.go (RegisterControllers).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from scheduler.framework.types import CycleState
from scheduler.frameworkext.extender import Extender
from scheduler.frameworkext.handle import ExtendedHandle
from scheduler.frameworkext.proxy import is_proxied, plugin_factory_proxy, with_plugin
from scheduler.frameworkext.services import RouteGroup
from scheduler.plugins.registry import DuplicatePluginError
from tests.support.builders import make_pod
from tests.support.engines import base_registry, config, engine, profile


@dataclass
class Stop:
    name: str
    log: list[str]

    def start(self) -> None:
        self.log.append(f"start {self.name}")

    def stop(self) -> None:
        self.log.append(f"stop {self.name}")


@dataclass
class Everything:
    """A plugin implementing a Filter, both providers and a PreFilter hook."""

    handle: Any
    built: list[str]
    log: list[str] = field(default_factory=list)
    name: str = "Everything"

    def filter(self, state: CycleState, pod: Any, node_info: Any) -> Any:
        from scheduler.framework.types import Status

        return Status()

    def register_endpoints(self, group: RouteGroup) -> None:
        group.get("/profile", lambda r: (200, {"profile": self.handle.profile_name}))

    def new_controllers(self) -> list[Stop]:
        self.built.append(self.handle.profile_name)
        return [Stop("a", self.log), Stop("b", self.log), Stop("a", self.log)]

    def pre_filter_hook(self, handle: Any, state: CycleState, pod: Any) -> tuple[Any, bool]:
        return pod, False


def two_profiles(extender: Extender | None = None) -> tuple[Any, list[Everything], list[str]]:
    made: list[Everything] = []
    built: list[str] = []
    handles: list[Any] = []

    def new(args: Any, handle: Any) -> Everything:
        handles.append(handle)
        plugin = Everything(handle, built)
        made.append(plugin)
        return plugin

    eng = engine(
        config(profile("first", multi=("Everything",)), profile("second", multi=("Everything",))),
        base_registry(),
        extender,
        options=(with_plugin("Everything", new),),
    )
    assert all(isinstance(h, ExtendedHandle) for h in handles)
    return eng, made, built


def test_a_plugin_used_by_two_profiles_is_built_twice_and_mounted_once() -> None:
    eng, made, built = two_profiles()
    ext = eng.extender
    assert len(made) == 2
    assert [p.handle.profile_name for p in made] == ["first", "second"]
    # Routes: one set, bound to the first profile's instance.
    assert ext.services.registered_providers == {"Everything": "first"}
    assert ext.dispatch("GET", "/apis/v1/plugins/Everything/profile").body == {"profile": "first"}
    assert ext.dispatch("GET", "/apis/v1/__services__").body["GET"].count("/apis/v1/plugins/Everything/profile") == 1
    # Controllers: built once, duplicates by name dropped.
    assert built == ["first"]
    assert ext.controllers.controllers() == {"Everything": ["a", "b"]}
    # Hooks: per profile, each with its own instance.
    for plugin, prof in zip(made, ("first", "second"), strict=True):
        hooks = ext.handle_of(prof).hooks.pre_filter
        assert len(hooks) == 1 and hooks[0] is plugin


def test_the_extended_handle_offers_the_engine_and_the_registries() -> None:
    eng, made, _ = two_profiles()
    handle = made[0].handle
    sched = eng.scheduler
    assert handle.snapshot is sched.snapshot
    assert handle.snapshot_shared_lister() is sched.snapshot
    assert handle.cluster() is sched.cluster and handle.client() is sched.cluster
    assert handle.now() == sched.clock.now()
    assert handle.services is eng.extender.services and handle.controllers is eng.extender.controllers
    assert handle.leadership is eng.extender.leadership and handle.flags is eng.extender.flags
    # What the engine's handle offers beyond the Handle protocol is reached through it.
    assert handle.queue is sched.queue and handle.framework is sched.profiles["first"]
    eng.cluster.add_pod(make_pod("x"))
    assert [p.name for p in handle.informer_factory().pods()] == ["x"]
    assert [n.name for n in handle.informer_factory().nodes()] == ["n0", "n1", "n2"]
    eng.cluster.extensions["PodGroup"] = [{"metadata": {"name": "pg"}}]
    assert handle.informer_factory().objects("PodGroup") == [{"metadata": {"name": "pg"}}]


def test_in_tree_factories_are_proxied_too() -> None:
    seen: list[Any] = []
    registry = base_registry()
    registry["Plain"] = lambda args, h: seen.append(h) or type("Plain", (), {"name": "Plain", "filter": lambda *a: None})()
    ext = Extender()
    wrapped = ext.registry(registry)
    assert all(is_proxied(f) for f in wrapped.values())
    assert plugin_factory_proxy(ext, wrapped["Plain"]) is wrapped["Plain"]
    engine(config(profile(multi=("Plain",))), wrapped, ext)
    assert isinstance(seen[0], ExtendedHandle)


def test_with_plugin_refuses_a_taken_name() -> None:
    ext = Extender()
    with pytest.raises(DuplicatePluginError, match="a plugin named Sort already exists"):
        ext.registry(base_registry(), with_plugin("Sort", lambda args, h: None))  # type: ignore[arg-type, return-value]


def test_plain_plugins_register_nothing() -> None:
    class Plain:
        name = "Plain"

        def filter(self, *args: Any) -> Any:
            return None

    registry = base_registry()
    eng = engine(config(profile(multi=("Plain",))), registry, options=(with_plugin("Plain", lambda a, h: Plain()),))
    ext = eng.extender
    assert ext.services.registered_providers == {}
    assert ext.controllers.controllers() == {}
    assert not ext.handle_of("default-scheduler").hooks


def test_extender_hooks_must_be_hooks() -> None:
    with pytest.raises(TypeError, match="implements no phase hook"):
        Extender(hooks=[object()])
