"""Plugin contracts: one Protocol per extension point, as kube-scheduler's `interface.go`.

A plugin is any object with a `name` attribute implementing one or more of these. The
runtime detects the extension points a plugin implements by its methods. Built-in plugins
may also implement the batch forms (`filter_batch`, `score_batch`) that evaluate many nodes
at once over the snapshot's arrays; the per-node forms stay the reference and tests prove the
two agree. Every method returns a Status; None never means success.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from scheduler.api.objects import Node, Pod
from scheduler.cluster.contract import PluginCluster
from scheduler.framework.nodeinfo import NodeInfo, PodInfo
from scheduler.framework.types import (
    BatchFilterResult,
    ClusterEvent,
    CycleState,
    PreFilterResult,
    QueuedPodInfo,
    Status,
)

if TYPE_CHECKING:
    from scheduler.framework.snapshot import Snapshot


@runtime_checkable
class Plugin(Protocol):
    """Every plugin has a unique name."""

    name: str


@runtime_checkable
class PreEnqueuePlugin(Plugin, Protocol):
    """Runs before a pod enters activeQ; a non-Success status keeps it gated (unschedulable pool)."""

    def pre_enqueue(self, pod: Pod) -> Status:
        """Success admits the pod; Unschedulable/UnschedulableAndUnresolvable gate it."""
        ...


@runtime_checkable
class QueueSortPlugin(Plugin, Protocol):
    """Orders activeQ. Exactly one per profile, identical across profiles."""

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        """Whether a should be popped before b."""
        ...


class PreFilterExtensions(Protocol):
    """Incremental updates of PreFilter state when the dry runs of preemption add or remove pods."""

    def add_pod(self, state: CycleState, pod: Pod, to_add: PodInfo, node_info: NodeInfo) -> Status:
        """Account `to_add` as if it were on node_info."""
        ...

    def remove_pod(self, state: CycleState, pod: Pod, to_remove: PodInfo, node_info: NodeInfo) -> Status:
        """Account `to_remove` as if it were gone from node_info."""
        ...


@runtime_checkable
class PreFilterPlugin(Plugin, Protocol):
    """Runs once per cycle before Filter; may restrict nodes, Skip its Filter, or reject the pod."""

    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        """Success, Skip (its Filter is not run), Unschedulable*/Error (the cycle stops)."""
        ...

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        """AddPod/RemovePod support, or None."""
        ...


@runtime_checkable
class FilterPlugin(Plugin, Protocol):
    """Decides whether the pod can run on one node."""

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Success, Unschedulable, UnschedulableAndUnresolvable or Error."""
        ...


@runtime_checkable
class BatchFilterPlugin(Plugin, Protocol):
    """A FilterPlugin that can also judge many nodes at once (same verdicts as `filter`)."""

    def filter_batch(
        self, state: CycleState, pod: Pod, snapshot: Snapshot, positions: npt.NDArray[np.int64]
    ) -> BatchFilterResult:
        """Codes (and lazily reasons) for the nodes at `positions`."""
        ...


@runtime_checkable
class PostFilterPlugin(Plugin, Protocol):
    """Runs when no node passed Filter (preemption lives here)."""

    def post_filter(self, state: CycleState, pod: Pod, statuses: Callable[[str], Status]) -> tuple[str | None, Status]:
        """Returns the nominated node name (or None) and a status; Success ends PostFilter."""
        ...


@runtime_checkable
class PreScorePlugin(Plugin, Protocol):
    """Runs once before Score over the feasible nodes; Skip drops its Score for this cycle."""

    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status:
        """Success, Skip or Error."""
        ...


class ScoreExtensions(Protocol):
    """NormalizeScore: rescales raw scores to 0..100 in place."""

    def normalize_score(self, state: CycleState, pod: Pod, scores: npt.NDArray[np.int64]) -> Status:
        """Rewrite `scores` (aligned with the scored nodes) into 0..100."""
        ...


@runtime_checkable
class ScorePlugin(Plugin, Protocol):
    """Ranks one feasible node."""

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        """A raw score and Success, or Error."""
        ...

    def score_extensions(self) -> ScoreExtensions | None:
        """NormalizeScore, or None."""
        ...


@runtime_checkable
class BatchScorePlugin(Plugin, Protocol):
    """A ScorePlugin that can also score many nodes at once (same values as `score`)."""

    def score_batch(
        self, state: CycleState, pod: Pod, snapshot: Snapshot, positions: npt.NDArray[np.int64]
    ) -> npt.NDArray[np.int64]:
        """Raw scores aligned with `positions`."""
        ...


@runtime_checkable
class ReservePlugin(Plugin, Protocol):
    """Reserve is told the chosen node; Unreserve undoes it when a later step fails."""

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Success, or a failure that aborts the cycle."""
        ...

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Undo reserve; must be idempotent."""
        ...


@runtime_checkable
class PermitPlugin(Plugin, Protocol):
    """Approves, rejects or delays (Wait with a timeout) the binding of a pod."""

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, float]:
        """Success, Unschedulable/Error (rejected) or Wait with a timeout in seconds."""
        ...


@runtime_checkable
class PreBindPlugin(Plugin, Protocol):
    """Work that must succeed before Bind."""

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Success, or a failure that unreserves and requeues the pod.

        A PreBind plugin may also define `pre_bind_preflight(state, pod, node_name) -> Status`
        (kube-scheduler's PreBindPreFlight): Skip when its PreBind has nothing to do for this pod,
        which lets the binding cycle skip it (see `Framework.run_pre_bind_preflights`).
        """
        ...


@runtime_checkable
class BindPlugin(Plugin, Protocol):
    """Binds a pod to a node; Skip passes to the next bind plugin."""

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Success, Skip, or Error."""
        ...


@runtime_checkable
class PostBindPlugin(Plugin, Protocol):
    """Informational, after a successful bind."""

    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """No return value; failures are not possible at this point."""
        ...


@runtime_checkable
class EnqueueExtensions(Plugin, Protocol):
    """Names the cluster events that may make a pod this plugin rejected schedulable."""

    def events_to_register(self) -> list[ClusterEvent]:
        """The events that move pods rejected by this plugin out of the unschedulable pool."""
        ...


class WaitingPod(Protocol):
    """A pod held at Permit."""

    pod: Pod

    def allow(self, plugin: str) -> None:
        """Approve on behalf of one plugin; the pod is released when every plugin allowed."""
        ...

    def reject(self, plugin: str, message: str) -> None:
        """Reject the pod; it is unreserved and requeued."""
        ...


class Handle(Protocol):
    """What the framework gives every plugin factory (`framework.Handle`)."""

    snapshot: Snapshot
    profile_name: str

    def now(self) -> float:
        """The scheduler clock (virtual in simulation), seconds since the epoch."""
        ...

    def cluster(self) -> PluginCluster:
        """The cluster backend: listers and API calls."""
        ...

    def waiting_pods(self) -> list[WaitingPod]:
        """Pods currently held at Permit."""
        ...

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        """A pod held at Permit, by uid."""
        ...

    def activate(self, pods: list[Pod]) -> None:
        """Move these pods to activeQ if they are waiting in the queue."""
        ...

    def wake_at(self, moment: float) -> None:
        """Wake the loop at `moment` and retry unschedulable pods then: for answers that change
        with time alone (a reservation's or a node metric's expiry). Without it, a run on the
        virtual clock ends once retries could change nothing, before that moment."""
        ...


PluginFactory = Callable[[Any, Handle], Plugin]
"""`new(args, handle) -> plugin`; args is the decoded args object or None."""


class DuplicatePluginError(ValueError):
    """A plugin name registered twice (`Registry.Register`: "a plugin named X already exists")."""


def implemented_points(plugin: object) -> list[str]:
    """The extension points a plugin implements, named as the config's Plugins fields."""
    checks = (
        ("pre_enqueue", "pre_enqueue"),
        ("queue_sort", "less"),
        ("pre_filter", "pre_filter"),
        ("filter", "filter"),
        ("post_filter", "post_filter"),
        ("pre_score", "pre_score"),
        ("score", "score"),
        ("reserve", "reserve"),
        ("permit", "permit"),
        ("pre_bind", "pre_bind"),
        ("bind", "bind"),
        ("post_bind", "post_bind"),
    )
    return [point for point, method in checks if callable(getattr(plugin, method, None))]


__all__ = [
    "BatchFilterPlugin",
    "BatchScorePlugin",
    "BindPlugin",
    "EnqueueExtensions",
    "FilterPlugin",
    "Handle",
    "Node",
    "PermitPlugin",
    "Plugin",
    "PluginFactory",
    "PostBindPlugin",
    "PostFilterPlugin",
    "PreBindPlugin",
    "PreEnqueuePlugin",
    "PreFilterExtensions",
    "PreFilterPlugin",
    "PreScorePlugin",
    "QueueSortPlugin",
    "ReservePlugin",
    "ScoreExtensions",
    "ScorePlugin",
    "WaitingPod",
    "implemented_points",
]
