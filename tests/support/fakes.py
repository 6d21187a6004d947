"""Fakes for tests: configurable plugins, a plugin handle, and the profiles and registries holding them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from scheduler.api.objects import Pod
from scheduler.config.types import PluginRef, Plugins, PluginSet, Profile
from scheduler.framework.nodeinfo import NodeInfo
from scheduler.framework.snapshot import Snapshot
from scheduler.framework.types import BatchFilterResult, Code, CycleState, PreFilterResult, QueuedPodInfo, Status


class Sort:
    """QueueSort by priority, then time."""

    name = "Sort"

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        pa, pb = a.pod.effective_priority, b.pod.effective_priority
        return pa > pb or (pa == pb and a.timestamp < b.timestamp)


@dataclass
class FailFilter:
    """Fails the named nodes with a code and reason; optionally offers the batch form."""

    name: str
    failing: dict[str, tuple[Code, str]] = field(default_factory=dict)
    calls: list[str] = field(default_factory=list)

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        self.calls.append(node_info.name)
        if node_info.name in self.failing:
            code, reason = self.failing[node_info.name]
            return Status(code, (reason,))
        return Status()


@dataclass
class BatchFailFilter(FailFilter):
    """The same verdicts through filter_batch."""

    def filter_batch(
        self, state: CycleState, pod: Pod, snapshot: Snapshot, positions: npt.NDArray[np.int64]
    ) -> BatchFilterResult:
        names = [snapshot.names[int(p)] for p in positions]
        codes = np.array([int(self.failing[n][0]) if n in self.failing else 0 for n in names], dtype=np.int8)
        return BatchFilterResult(codes, lambda i: (self.failing[names[i]][1],))


@dataclass
class PreFilterOnly:
    """A PreFilter that restricts nodes, skips, or rejects."""

    name: str
    result: PreFilterResult | None = None
    status: Status = field(default_factory=Status)

    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        return self.result, Status(self.status.code, self.status.reasons)

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return Status(Code.UNSCHEDULABLE, (f"{self.name} filter ran",))


@dataclass
class TableScore:
    """Scores from a table; optional normalization by a function."""

    name: str
    table: dict[str, int]
    normalize: Callable[[npt.NDArray[np.int64]], None] | None = None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        return self.table.get(node_info.name, 0), Status()

    def score_extensions(self) -> Any:
        return self if self.normalize is not None else None

    def normalize_score(self, state: CycleState, pod: Pod, scores: npt.NDArray[np.int64]) -> Status:
        assert self.normalize is not None
        self.normalize(scores)
        return Status()


@dataclass
class Binder:
    """Binds through the handle's cluster, or fails when told to."""

    name: str = "Binder"
    handle: Any = None
    fail: bool = False

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        if self.fail:
            return Status(Code.ERROR, ("binding refused",))
        self.handle.cluster().bind(pod, node_name)
        return Status()


@dataclass
class Permit:
    """Waits for `timeout` seconds unless allowed; records the pods it saw."""

    name: str = "Permit"
    timeout: float = 10.0
    seen: list[str] = field(default_factory=list)

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, float]:
        self.seen.append(pod.key)
        return Status(Code.WAIT), self.timeout


def profile(
    name: str = "default-scheduler",
    filters: list[str] = (),  # type: ignore[assignment]
    scores: list[tuple[str, int]] = (),  # type: ignore[assignment]
    pre_filters: list[str] = (),  # type: ignore[assignment]
    permits: list[str] = (),  # type: ignore[assignment]
    multi: list[tuple[str, int]] = (),  # type: ignore[assignment]
    score_disabled: tuple[str, ...] = (),
    percentage: int | None = None,
) -> Profile:
    """A profile naming plugins per extension point (no defaults merged)."""

    def pset(names: list[str] | list[tuple[str, int]], disabled: tuple[str, ...] = ()) -> PluginSet:
        refs = tuple(PluginRef(n) if isinstance(n, str) else PluginRef(*n) for n in names)
        return PluginSet(refs, disabled)

    plugins = Plugins(
        queue_sort=pset(["Sort"]),
        pre_filter=pset(pre_filters),
        filter=pset(filters),
        score=pset(scores, score_disabled),
        permit=pset(permits),
        bind=pset(["Binder"]),
        multi_point=pset(multi),
    )
    return Profile(name, percentage, plugins, {})


def registry(*plugins: Any) -> dict[str, Callable[[Any, Any], Any]]:
    """A registry returning these instances (the binder gets the handle)."""
    out: dict[str, Callable[[Any, Any], Any]] = {"Sort": lambda args, h: Sort()}
    binder = next((p for p in plugins if isinstance(p, Binder)), Binder())

    def make_binder(args: Any, handle: Any) -> Binder:
        binder.handle = handle
        return binder

    out["Binder"] = make_binder
    for plugin in plugins:
        if not isinstance(plugin, Binder):
            out[plugin.name] = (lambda p: lambda args, h: p)(plugin)
    return out


class FakeHandle:
    """The parts of the framework handle plugins use in unit tests."""

    def __init__(self, snapshot: Snapshot, now: float = 1767225600.0, profile_name: str = "default-scheduler") -> None:
        self.snapshot = snapshot
        self.profile_name = profile_name
        self._now = now
        self.activated: list[Pod] = []

    def now(self) -> float:
        return self._now

    def cluster(self) -> Any:
        return None

    def waiting_pods(self) -> list[Any]:
        return []

    def get_waiting_pod(self, uid: str) -> Any:
        return None

    def activate(self, pods: list[Pod]) -> None:
        self.activated.extend(pods)
