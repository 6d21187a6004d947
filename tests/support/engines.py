"""Schedulers with a Koordinator extender over a simulated cluster, and the small profiles they run."""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from scheduler.api.objects import Pod
from scheduler.clock import VirtualClock
from scheduler.cluster.simulated import SimulatedCluster
from scheduler.config.types import PluginRef, Plugins, PluginSet, Profile, SchedulerConfiguration
from scheduler.framework.interface import PluginFactory
from scheduler.frameworkext.extender import Extender
from scheduler.scheduler import Scheduler
from tests.support.builders import make_node
from tests.support.fakes import Binder, Sort

START = 1767225600.0


def base_registry() -> dict[str, PluginFactory]:
    """QueueSort and Bind, the two points every profile needs."""
    return {"Sort": lambda args, h: Sort(), "Binder": lambda args, h: Binder(handle=h)}


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


class RemoteEngine:
    """The `kubernetes` backend and a scheduler over it, driven on a thread as the console's engine
    thread drives it; `stop` fails the test when the loop died."""

    def __init__(
        self,
        connection: Any,
        config: Mapping[str, Any] | None = None,
        registry: Mapping[str, PluginFactory] | None = None,
        **options: Any,
    ) -> None:
        from scheduler.clock import Clock
        from scheduler.config.loader import parse_config
        from scheduler.kube.backend import KubernetesCluster
        from scheduler.plugins.registry import new_registry

        self.cluster = KubernetesCluster.open(connection, Clock(), **options)
        document = config if config is not None else {**REMOTE_PROFILE}
        self.scheduler = Scheduler(
            parse_config(dict(document), "test"),
            self.cluster,
            self.cluster.clock,
            dict(registry) if registry is not None else new_registry(),
            seed=1,
            keep_records=True,
        )
        self.scheduler.start()
        self.cluster.watch_all()
        self._stop = threading.Event()
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._loop, name="engine", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        try:
            while not self._stop.is_set():
                if not self.scheduler.step():
                    self.scheduler.flush_queues()
                    self._stop.wait(0.01)
        except BaseException as exc:
            self.error = exc
            raise

    @property
    def alive(self) -> bool:
        """Whether the scheduling loop still runs."""
        return self._thread.is_alive()

    def stop(self) -> None:
        """Stop the loop, the API pool and the informers; fail if the loop had died."""
        self._stop.set()
        self._thread.join(10)
        self.scheduler.shutdown()
        self.cluster.close()
        assert self.error is None, f"the scheduling loop died: {self.error!r}"


def cache_matches(cluster: Any) -> bool:
    """Whether a `KubernetesCluster`'s cache holds what a fresh list of every kind says (kind, key
    and resourceVersion): no informer is stale."""
    fresh = cluster.fresh_state()
    with cluster.lock:
        installed = {i.kind.kind for i in cluster.informers if i.installed}
        cached = {k: v for k, v in cluster.versions.items() if k[0] in installed}
    return bool(cached == fresh)


REMOTE_PROFILE: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{"schedulerName": "remote-scheduler"}],
}
