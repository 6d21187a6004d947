"""Small profiles, plugins and engines for the frameworkext tests."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from scheduler.api.objects import Pod
from scheduler.clock import VirtualClock
from scheduler.cluster.simulated import SimulatedCluster
from scheduler.config.types import PluginRef, Plugins, PluginSet, Profile, SchedulerConfiguration
from scheduler.framework.interface import PluginFactory
from scheduler.framework.types import CycleState, QueuedPodInfo, Status
from scheduler.frameworkext.extender import Extender
from scheduler.scheduler import Scheduler
from tests.builders import make_node

START = 1767225600.0


class Sort:
    """QueueSort by priority, then arrival."""

    name = "Sort"

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        pa, pb = a.pod.effective_priority, b.pod.effective_priority
        return pa > pb or (pa == pb and a.timestamp < b.timestamp)


@dataclass
class Binder:
    """Binds through the cluster backend the handle offers."""

    handle: Any
    name: str = "Binder"

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        self.handle.cluster().bind(pod, node_name)
        return Status()


def base_registry() -> dict[str, PluginFactory]:
    """QueueSort and Bind, the two points every profile needs."""
    return {"Sort": lambda args, h: Sort(), "Binder": lambda args, h: Binder(h)}


def refs(*names: str | tuple[str, int]) -> PluginSet:
    """A PluginSet enabling these plugins (a tuple gives a weight)."""
    return PluginSet(tuple(PluginRef(n) if isinstance(n, str) else PluginRef(*n) for n in names))


def profile(name: str = "default-scheduler", multi: tuple[str | tuple[str, int], ...] = (), **points: PluginSet) -> Profile:
    """A profile with Sort, Binder, multiPoint plugins and explicit point sets."""
    plugins = Plugins(queue_sort=refs("Sort"), bind=refs("Binder"), multi_point=refs(*multi), **points)
    return Profile(name, None, plugins, {})


def config(*profiles: Profile) -> SchedulerConfiguration:
    """A configuration holding these profiles."""
    return SchedulerConfiguration(tuple(profiles), None, 1, 10, 16, "test")


@dataclass
class Engine:
    """A scheduler with its extender bound, as the integrated engine will build it."""

    scheduler: Scheduler
    extender: Extender
    cluster: SimulatedCluster
    records: list[Any] = field(default_factory=list)


def engine(
    cfg: SchedulerConfiguration,
    registry: Mapping[str, PluginFactory],
    extender: Extender | None = None,
    nodes: list[Any] | None = None,
    pods: list[Pod] | None = None,
    options: tuple[Callable[..., None], ...] = (),
) -> Engine:
    """Build and start a Scheduler whose registry is proxied and whose extender is bound."""
    ext = extender or Extender()
    clock = VirtualClock(START)
    cluster = SimulatedCluster(clock=clock)
    for node in nodes if nodes is not None else [make_node(f"n{i}") for i in range(3)]:
        cluster.nodes[node.name] = node
    for pod in pods or []:
        cluster.pods[pod.uid] = pod
    wrapped = ext.registry(registry, *options)
    if "extender" in inspect.signature(Scheduler).parameters:
        sched = Scheduler(cfg, cluster, clock, wrapped, seed=1, extender=ext)  # type: ignore[call-arg]
    else:
        # Until the Scheduler carries the integration lines, do what they will do.
        sched = Scheduler(cfg, cluster, clock, wrapped, seed=1)
        ext.bind(sched)
        sched.listeners.append(ext.publish)
    sched.start()
    ext.run()  # idempotent: an integrated start() has already run it
    return Engine(sched, ext, cluster)
