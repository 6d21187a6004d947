"""Plugin controllers and leadership (Koordinator's `ControllerProvider` and `ControllersMap`).

A plugin that also keeps a CRD's status in sync (Coscheduling's PodGroup controller) returns
its controllers from `new_controllers()`. They are built once per plugin name, whatever the
number of profiles using the plugin, and run only while this instance leads: `Leadership`
is the switch the engine flips (Kubernetes Lease or Redis lock), and the registry starts the
controllers when it turns on and stops them, cleanly and in reverse order, when it turns off.
`--controller-plugins` semantics are kept: `*` enables all, `Name` one, `-Name` disables one.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from typing import Protocol, runtime_checkable

log = logging.getLogger(__name__)


@runtime_checkable
class Controller(Protocol):
    """A background loop owned by a plugin; runs only on the leader."""

    name: str

    def start(self) -> None:
        """Begin work; must return promptly (run loops in the controller's own thread)."""
        ...

    def stop(self) -> None:
        """Stop work and release what start took; called once per start."""
        ...


@runtime_checkable
class ControllerProvider(Protocol):
    """A plugin that brings controllers."""

    name: str

    def new_controllers(self) -> list[Controller]:
        """The plugin's controllers (built once per plugin name)."""
        ...


def controller_plugin_enabled(plugin: str, enabled: Iterable[str]) -> bool:
    """Whether `--controller-plugins` enables a plugin's controllers (`isControllerPluginEnabled`)."""
    star = False
    for entry in enabled:
        if entry == plugin:
            return True
        if entry == "-" + plugin:
            return False
        if entry == "*":
            star = True
    return star


class Leadership:
    """Whether this instance leads; observers hear every change, in order, one at a time."""

    def __init__(self, leader: bool = False) -> None:
        self._leader = leader
        self._lock = threading.RLock()
        self._observers: list[Callable[[bool], None]] = []

    @property
    def is_leader(self) -> bool:
        """True while this instance leads."""
        return self._leader

    def leading(self) -> bool:
        """The same as `is_leader`, as a callable for gates."""
        return self._leader

    def subscribe(self, observer: Callable[[bool], None]) -> None:
        """Call `observer(is_leader)` on every change."""
        with self._lock:
            self._observers.append(observer)

    def set(self, leader: bool) -> None:
        """Become leader (True) or follower (False); no-op when unchanged."""
        with self._lock:
            if leader == self._leader:
                return
            self._leader = leader
            log.info("leadership changed: leader=%s", leader)
            for observer in list(self._observers):
                try:
                    observer(leader)
                except Exception:  # one observer must not keep the others uninformed
                    log.exception("leadership observer failed")

    def acquire(self) -> None:
        """This instance now leads."""
        self.set(True)

    def release(self) -> None:
        """This instance no longer leads."""
        self.set(False)


def _log_error(source: str, exc: BaseException) -> None:
    log.warning("%s failed: %s", source, exc, exc_info=exc)


class ControllerRegistry:
    """The controllers of every plugin, started while leading and stopped when not."""

    def __init__(self, enabled: Iterable[str] = ("*",)) -> None:
        self.enabled = tuple(enabled)
        self._by_plugin: dict[str, list[Controller]] = {}
        self._running: list[Controller] = []
        self._lock = threading.RLock()
        self.errors: list[str] = []
        # Told of every failure (the engine counts them in its metrics: `Extender.bind`).
        self.on_error: Callable[[str, BaseException], None] = _log_error

    def register(self, plugin: object, profile: str) -> list[str]:
        """Keep a provider's controllers, once per plugin name; returns the names kept now."""
        provider = getattr(plugin, "new_controllers", None)
        if not callable(provider):
            return []
        name = str(getattr(plugin, "name", type(plugin).__name__))
        with self._lock:
            if self._by_plugin.get(name):
                log.info("plugin already built controllers, skip it plugin=%s profile=%s", name, profile)
                return []
            try:
                built = list(provider())
            except Exception as exc:  # as upstream, a failing provider just brings no controllers
                self.errors.append(f"plugin {name}: building controllers: {exc}")
                self.on_error(f"controllers/{name}", exc)
                return []
            kept: list[Controller] = []
            for controller in built:
                if any(c.name == controller.name for c in kept):
                    log.warning("controller: %s already registered", controller.name)
                    continue
                kept.append(controller)
            self._by_plugin[name] = kept
            return [c.name for c in kept]

    def controllers(self) -> dict[str, list[str]]:
        """Plugin name -> its controllers' names."""
        with self._lock:
            return {plugin: [c.name for c in ctrls] for plugin, ctrls in self._by_plugin.items()}

    @property
    def running(self) -> list[str]:
        """Names of the controllers started and not yet stopped."""
        with self._lock:
            return [c.name for c in self._running]

    def start(self) -> None:
        """Start every enabled plugin's controllers (idempotent)."""
        with self._lock:
            if self._running:
                return
            for plugin, ctrls in self._by_plugin.items():
                if not controller_plugin_enabled(plugin, self.enabled):
                    log.info("controller plugin %s is disabled, controllers %s are skipped", plugin, [c.name for c in ctrls])
                    continue
                for controller in ctrls:
                    try:
                        controller.start()
                    except Exception as exc:  # a broken controller must not keep the others down
                        self.errors.append(f"controller {controller.name}: start: {exc}")
                        self.on_error(f"controller/{controller.name}", exc)
                        continue
                    self._running.append(controller)

    def stop(self) -> None:
        """Stop the running controllers, last started first (idempotent)."""
        with self._lock:
            while self._running:
                controller = self._running.pop()
                try:
                    controller.stop()
                except Exception as exc:  # keep stopping the rest
                    self.errors.append(f"controller {controller.name}: stop: {exc}")
                    self.on_error(f"controller/{controller.name}", exc)


__all__ = ["Controller", "ControllerProvider", "ControllerRegistry", "Leadership", "controller_plugin_enabled"]
