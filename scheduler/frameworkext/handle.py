"""The extended handle every plugin receives (Koordinator's `ExtendedHandle` / `FrameworkExtender`).

It is the profile's framework handle (snapshot, clock, cluster, waiting pods, activate, and
whatever else the engine's handle offers, reached through it) plus: the cluster backend as a
client, informers (listers and watches) for Pods, Nodes and the custom resources plugins read,
the shared snapshot lister, the services and controllers registries, the debug flags, and this
profile's phase hooks. The runtime reaches the hooks and the debug flags through it too.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from scheduler.api.objects import Node, Pod
from scheduler.cluster.contract import PluginCluster
from scheduler.cluster.events import WatchEvent
from scheduler.cluster.informer import pod_informer_view, visible
from scheduler.framework.interface import Handle, WaitingPod
from scheduler.framework.nodeinfo import NodeInfo
from scheduler.framework.snapshot import Snapshot
from scheduler.framework.types import CycleState
from scheduler.frameworkext.controllers import ControllerRegistry, Leadership
from scheduler.frameworkext.debug import DebugFlags, log_top_scores
from scheduler.frameworkext.debug import log as debug_log
from scheduler.frameworkext.hooks import PhaseHooks
from scheduler.frameworkext.services import ServiceTable

if TYPE_CHECKING:
    from scheduler.framework.runtime import ScoreOutcome
    from scheduler.frameworkext.extender import Extender


class InformerFactory:
    """Listers and event handlers over the cluster backend (the informers plugins share)."""

    def __init__(self, cluster: PluginCluster | None) -> None:
        self._cluster = cluster

    def pods(self) -> list[Pod]:
        """Every live pod the scheduler's pod informer lists (none Succeeded or Failed)."""
        return [p for p in self._cluster.list_pods() if visible(p)] if self._cluster is not None else []

    def nodes(self) -> list[Node]:
        """Every node."""
        return list(self._cluster.list_nodes()) if self._cluster is not None else []

    def objects(self, kind: str) -> list[dict[str, Any]]:
        """The documents of a custom resource kind (PodGroup, Reservation, NodeMetric, ...)."""
        extensions = getattr(self._cluster, "extensions", None) or {}
        return list(extensions.get(kind, ()))

    def add_event_handler(self, handler: Callable[[Any], None]) -> None:
        """Call `handler(event)` for every later change the backend reports (pods as the informer sees them)."""
        if self._cluster is None:
            return

        def deliver(event: Any) -> None:
            seen = pod_informer_view(event) if isinstance(event, WatchEvent) else event
            if seen is not None:
                handler(seen)

        self._cluster.watch(deliver)


class ExtendedHandle:
    """A profile's framework handle extended with Koordinator's registries, hooks and flags."""

    def __init__(self, base: Handle, extender: Extender) -> None:
        self.base = base
        self.snapshot: Snapshot = base.snapshot
        self.profile_name: str = base.profile_name
        self.extender = extender
        self.hooks = PhaseHooks()
        # The Filter hook results of the current cycle's walk: (state, pod, id(NodeInfo) ->
        # (NodeInfo, hooked pod, hooked NodeInfo)), so the per-node path does not run them twice.
        self._filter_memo: tuple[CycleState, Pod, dict[int, tuple[NodeInfo, Pod, NodeInfo]]] | None = None

    def __getattr__(self, name: str) -> Any:
        # Everything else the engine's handle offers (queue, scheduler, framework, ...).
        if name == "base":
            raise AttributeError(name)
        return getattr(self.base, name)

    # ----- framework.Handle ---------------------------------------------------------------------
    def now(self) -> float:
        """The scheduler clock."""
        return self.base.now()

    def cluster(self) -> PluginCluster:
        """The cluster backend."""
        return self.base.cluster()

    def waiting_pods(self) -> list[WaitingPod]:
        """Pods held at Permit."""
        return self.base.waiting_pods()

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        """A pod held at Permit, by uid."""
        return self.base.get_waiting_pod(uid)

    def activate(self, pods: list[Pod]) -> None:
        """Move pods to activeQ."""
        self.base.activate(pods)

    # ----- the extensions -----------------------------------------------------------------------
    def client(self) -> PluginCluster:
        """The cluster backend's API (`KoordinatorClientSet`)."""
        return self.base.cluster()

    def informer_factory(self) -> InformerFactory:
        """Listers and watches for Pods, Nodes and custom resources (`KoordinatorSharedInformerFactory`)."""
        return InformerFactory(self.base.cluster())

    def snapshot_shared_lister(self) -> Snapshot:
        """The scheduling snapshot every profile shares."""
        return self.snapshot

    @property
    def services(self) -> ServiceTable:
        """The engine's route table."""
        return self.extender.services

    @property
    def controllers(self) -> ControllerRegistry:
        """The plugin controllers registry."""
        return self.extender.controllers

    @property
    def leadership(self) -> Leadership:
        """Whether this instance leads."""
        return self.extender.leadership

    @property
    def flags(self) -> DebugFlags:
        """The debug flags."""
        return self.extender.flags

    def register_hook(self, hook: object) -> list[str]:
        """Add a phase hook to this profile (after those already registered)."""
        return self.hooks.register(hook)

    # ----- called by the runtime ------------------------------------------------------------------
    def hook_filter_nodes(self, state: CycleState, pod: Pod, candidates: npt.NDArray[np.int64]) -> frozenset[int]:
        """Run the Filter hooks over the candidates; the rows they changed (results kept for the walk)."""
        memo: dict[int, tuple[NodeInfo, Pod, NodeInfo]] = {}
        self._filter_memo = (state, pod, memo)
        changed = self.hooks.hook_filter_nodes(self, state, pod, self.snapshot, candidates)
        infos = self.snapshot.node_infos
        for pos, (new_pod, new_info) in changed.items():
            memo[id(infos[pos])] = (infos[pos], new_pod, new_info)
        return frozenset(changed)

    def filter_hook_result(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[Pod, NodeInfo]:
        """The pod and NodeInfo the Filter plugins see for this node after the Filter hooks."""
        memo = self._filter_memo
        if memo is not None and memo[0] is state and memo[1] is pod:
            hit = memo[2].get(id(node_info))
            if hit is not None and hit[0] is node_info:
                return hit[1], hit[2]
        new_pod, new_info, _ = self.hooks.run_filter(self, state, pod, node_info)
        return new_pod, new_info

    def after_score(self, pod: Pod, outcome: ScoreOutcome) -> None:
        """Log the top-N table when INFO logging is on for the debug logger."""
        if not debug_log.isEnabledFor(logging.INFO):
            return
        top_n = outcome.debug_top_n
        log_top_scores(pod.key, outcome.top_rows(self.snapshot.names, top_n), outcome.plugins, top_n, len(outcome.positions))


__all__ = ["ExtendedHandle", "InformerFactory"]
