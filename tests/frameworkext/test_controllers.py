"""Plugin controllers start when this instance becomes leader and stop cleanly when it stops leading.

`--controller-plugins` cases from koordinator-sh/koordinator pkg/scheduler/frameworkext/controllers.go
(isControllerPluginEnabled) and controllers_test.go.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from scheduler.frameworkext.controllers import ControllerRegistry, Leadership, controller_plugin_enabled
from scheduler.frameworkext.extender import Extender


@dataclass
class Ctrl:
    name: str
    log: list[str]
    fail_start: bool = False
    fail_stop: bool = False

    def start(self) -> None:
        if self.fail_start:
            raise RuntimeError("cannot start")
        self.log.append(f"start {self.name}")

    def stop(self) -> None:
        self.log.append(f"stop {self.name}")
        if self.fail_stop:
            raise RuntimeError("cannot stop")


@dataclass
class Provider:
    name: str
    controllers: list[Ctrl]
    calls: int = 0
    fail: bool = False

    def new_controllers(self) -> list[Ctrl]:
        self.calls += 1
        if self.fail:
            raise RuntimeError("no controllers today")
        return self.controllers


ENABLED_CASES = [
    (("*",), "Reservation", True),
    (("Reservation",), "Reservation", True),
    (("Reservation",), "Coscheduling", False),
    (("*", "-Reservation"), "Reservation", False),
    (("*", "-Reservation"), "Coscheduling", True),
    (("-Reservation", "*"), "Reservation", False),
    ((), "Reservation", False),
]


@pytest.mark.parametrize(
    ("enabled", "plugin", "want"), ENABLED_CASES, ids=[f"{','.join(c[0]) or 'none'}-{c[1]}" for c in ENABLED_CASES]
)
def test_controller_plugins_flag(enabled: tuple[str, ...], plugin: str, want: bool) -> None:
    assert controller_plugin_enabled(plugin, enabled) is want


def test_controllers_follow_leadership_changes() -> None:
    log: list[str] = []
    ext = Extender(leader=False)
    ext.controllers.register(Provider("P", [Ctrl("a", log), Ctrl("b", log)]), "default-scheduler")
    ext.run()
    assert log == []  # running, but not leading
    ext.leadership.acquire()
    assert log == ["start a", "start b"] and ext.controllers.running == ["a", "b"]
    ext.leadership.acquire()  # no change, no second start
    ext.leadership.release()
    assert log[2:] == ["stop b", "stop a"] and ext.controllers.running == []
    ext.leadership.acquire()
    assert log[4:] == ["start a", "start b"]
    ext.stop()
    assert log[6:] == ["stop b", "stop a"]


def test_a_leader_starts_its_controllers_when_the_engine_runs() -> None:
    log: list[str] = []
    ext = Extender(leader=True)
    ext.controllers.register(Provider("P", [Ctrl("a", log)]), "p")
    assert log == []  # not before the engine has loaded the cluster
    ext.run()
    assert log == ["start a"]


def test_controllers_are_built_once_per_plugin_name() -> None:
    log: list[str] = []
    registry = ControllerRegistry()
    first = Provider("P", [Ctrl("a", log), Ctrl("a", log)])
    second = Provider("P", [Ctrl("z", log)])
    assert registry.register(first, "one") == ["a"]
    assert registry.register(second, "two") == []
    assert (first.calls, second.calls) == (1, 0)
    assert registry.controllers() == {"P": ["a"]}


def test_disabled_controller_plugins_are_not_started() -> None:
    log: list[str] = []
    registry = ControllerRegistry(enabled=("*", "-Q"))
    registry.register(Provider("P", [Ctrl("p", log)]), "x")
    registry.register(Provider("Q", [Ctrl("q", log)]), "x")
    registry.start()
    assert log == ["start p"]


def test_failures_are_contained_and_kept() -> None:
    log: list[str] = []
    registry = ControllerRegistry()
    assert registry.register(Provider("Broken", [], fail=True), "x") == []
    registry.register(Provider("P", [Ctrl("bad", log, fail_start=True), Ctrl("ok", log, fail_stop=True), Ctrl("last", log)]), "x")
    registry.start()
    assert registry.running == ["ok", "last"]
    registry.stop()
    assert log == ["start ok", "start last", "stop last", "stop ok"]
    assert registry.running == []
    assert registry.errors == [
        "plugin Broken: building controllers: no controllers today",
        "controller bad: start: cannot start",
        "controller ok: stop: cannot stop",
    ]


def test_leadership_observers_hear_changes_in_order() -> None:
    heard: list[bool] = []
    lead = Leadership()
    lead.subscribe(heard.append)
    lead.subscribe(lambda leader: (_ for _ in ()).throw(RuntimeError("x")))  # a failing observer
    lead.acquire()
    lead.release()
    lead.release()
    assert heard == [True, False]
    assert lead.is_leader is False
