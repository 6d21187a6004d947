"""An in-memory cluster with the operations a scheduler uses, driven by a (virtual) clock.

Its objects and their watch are the store both backends keep (cluster/store.py); here the API
calls a scheduler makes (create, bind, delete, status patches) are played in memory, with
injected faults and latency, the koordlet's NodeMetric reports and the PV controller.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scheduler.api.fields import format_time
from scheduler.api.loader import ClusterObjects
from scheduler.api.objects import Namespace, Pod, parse_namespace
from scheduler.api.reservation import PHASE_AVAILABLE, PHASE_PENDING, parse_reservation
from scheduler.clock import Clock
from scheduler.cluster.contract import Cluster
from scheduler.cluster.errors import APIError, NotFoundError, api_error
from scheduler.cluster.events import WatchEvent
from scheduler.cluster.faults import FaultDecision, FaultInjector
from scheduler.cluster.koordlet import SimulatedKoordlet
from scheduler.cluster.store import ClusterStore


@dataclass(slots=True)
class SimulatedCluster(ClusterStore):
    """An in-memory cluster: the store's objects, with the API calls a scheduler makes played
    here, injected faults, the koordlet's reports and the PV controller."""

    faults: FaultInjector | None = None
    # Called with (pod, node, apply) instead of binding at once: a host that must store a binding
    # before anyone sees it calls `apply` after the write commits (the API server's etcd write).
    bind_sink: Callable[[Pod, str, Callable[[], None]], None] | None = None
    # Wall-clock seconds every API call (bind, status patch, delete) takes, as a remote API
    # server's round trip would; `api_wait` (set by the scheduler) does the waiting.
    api_latency: float = 0.0
    _binding: set[str] = field(default_factory=set)
    koordlet: Any = None

    @classmethod
    def from_objects(cls, objs: ClusterObjects, clock: Clock) -> SimulatedCluster:
        """A cluster holding the loaded objects (pods with a nodeName are bound and Running)."""
        cluster = cls(clock=clock)
        for ns in objs.namespaces:
            cluster.namespaces[ns.name] = ns
        for pc in objs.priority_classes:
            cluster.priority_classes[pc.name] = pc
        for pdb in objs.pdbs:
            cluster.pdbs[f"{pdb.meta.namespace}/{pdb.name}"] = pdb
        for node in objs.nodes:
            cluster.nodes[node.name] = node
        for obj in [*objs.services, *objs.replication_controllers, *objs.replica_sets, *objs.stateful_sets]:
            cluster.selecting.setdefault(obj.kind, {})[f"{obj.namespace}/{obj.name}"] = obj
        for pod in objs.pods:
            if pod.node_name and pod.phase == "Pending":
                pod = pod.with_changes(phase="Running", start_time=pod.start_time or clock.now())
            cluster.pods[pod.uid] = pod
            if pod.namespace not in cluster.namespaces:
                cluster.namespaces[pod.namespace] = _implicit_namespace(pod.namespace)
        for pv in objs.persistent_volumes:
            cluster.persistent_volumes[pv.name] = pv
        for pvc in objs.persistent_volume_claims:
            cluster.persistent_volume_claims[pvc.key] = pvc
        for sc in objs.storage_classes:
            cluster.storage_classes[sc.name] = sc
        for csi_node in objs.csi_nodes:
            cluster.csi_nodes[csi_node.name] = csi_node
        for driver in objs.csi_drivers:
            cluster.csi_drivers[driver.name] = driver
        cluster.csi_storage_capacities = list(objs.csi_storage_capacities)
        cluster.extensions = {k: list(v) for k, v in objs.extensions.items()}
        # A Reservation is scheduled as its reserve pod (Koordinator's `NewReservePod`); an
        # Available one holds its node already, a finished one holds nothing.
        for doc in cluster.extensions.get("Reservation", ()):
            reservation = parse_reservation(doc)
            if reservation.phase in (PHASE_PENDING, PHASE_AVAILABLE) and reservation.reserve_pod.uid not in cluster.pods:
                reserve = reservation.reserve_pod
                if reserve.node_name:
                    reserve = reserve.with_changes(phase="Running", start_time=clock.now())
                cluster.pods[reserve.uid] = reserve
        cluster._start_koordlet()
        return cluster

    def _start_koordlet(self) -> None:
        """Report the NodeMetrics written without a status, now and at each report interval."""
        koordlet = SimulatedKoordlet(self)
        if not koordlet.active:
            return
        self.koordlet = koordlet
        koordlet.sync(self.clock.now())
        listeners = getattr(self.clock, "listeners", None)
        if listeners is not None:
            listeners.append(koordlet.sync)

    def tick(self, now: float) -> None:
        """Let the simulated agents act on a wall clock (a virtual clock calls them when it moves):
        the koordlet renews its NodeMetrics when their report interval has passed."""
        if self.koordlet is not None:
            self.koordlet.sync(now)

    # ----- fault injection ----------------------------------------------------------------
    def _intercept(self, verb: str, pod: Pod) -> None:
        """Apply an injected fault: a delay blocks the caller (virtual time), an error fails the call."""
        if self.api_latency > 0 and verb != "create":
            (self.api_wait or time.sleep)(self.api_latency)
        if self.faults is None:
            return
        decision = self.faults.check(verb, pod.namespace, pod.name)
        if decision is not None:
            self.serve(decision)

    def serve(self, decision: FaultDecision, wait: bool = True) -> None:
        """Carry out a fault decision: wait (unless the caller waited already), then raise its error."""
        if wait and decision.delay > 0:
            if self.clock.virtual:
                self.clock.advance_to(self.clock.now() + decision.delay)
            else:
                time.sleep(decision.delay)
        if decision.error is not None:
            raise api_error(decision.error, decision.reason)

    @property
    def state_generation(self) -> int:
        """Moves when the cluster changes without a watch event (injected faults used up)."""
        return self.faults.generation if self.faults is not None else 0

    def add_pod(self, pod: Pod) -> None:
        """Create a pod."""
        self._intercept("create", pod)
        if pod.uid in self.pods:
            raise api_error(f'pods "{pod.name}" already exists', "AlreadyExists")
        self.pods[pod.uid] = pod
        if pod.namespace not in self.namespaces:
            self.namespaces[pod.namespace] = _implicit_namespace(pod.namespace)
        self._emit(WatchEvent("Pod", "ADDED", None, pod))

    def bind(self, pod: Pod, node: str) -> None:
        """Bind a pod to a node (`pods/binding`); the pod starts Running at once."""
        self._intercept("bind", pod)
        current = self.pods.get(pod.uid)
        if current is None:
            raise NotFoundError(f'pods "{pod.name}" not found')
        if current.node_name:
            raise APIError(f"pod {pod.key} is already assigned to node {current.node_name!r}")
        if node not in self.nodes:
            raise APIError(f"nodes {node!r} not found")
        if self.bind_sink is None:
            self._apply_bind(pod.uid, node)
            return
        if pod.uid in self._binding:
            raise APIError(f"pod {pod.key} is already being bound")
        self._binding.add(pod.uid)
        self.bind_sink(current, node, lambda: self._apply_bind(pod.uid, node))

    def is_binding(self, uid: str) -> bool:
        """Whether the pod's binding was sent and is not yet applied."""
        return uid in self._binding

    def _apply_bind(self, uid: str, node: str) -> None:
        self._binding.discard(uid)
        current = self.pods.get(uid)
        if current is None or current.node_name:
            return
        self._replace(uid, node_name=node, phase="Running", start_time=self.clock.now(), nominated_node_name="")

    def delete_pod(self, pod: Pod) -> None:
        """Delete a pod."""
        self._intercept("delete", pod)
        old = self.pods.pop(pod.uid, None)
        if old is None:
            raise NotFoundError(f'pods "{pod.name}" not found')
        self.remember_deleted(old)
        self._emit(WatchEvent("Pod", "DELETED", old, None))

    def set_nominated_node(self, pod: Pod, node: str) -> Pod:
        """Patch status.nominatedNodeName ('' clears it)."""
        self._intercept("patch", pod)
        if pod.uid not in self.pods:
            raise NotFoundError(f'pods "{pod.name}" not found')
        return self._replace(pod.uid, nominated_node_name=node)

    def add_pod_condition(self, pod: Pod, condition: dict[str, Any]) -> Pod:
        """Patch a status condition (replacing one of the same type)."""
        self._intercept("patch", pod)
        current = self.pods.get(pod.uid)
        if current is None:
            raise NotFoundError(f'pods "{pod.name}" not found')
        stamped = {**condition, "lastTransitionTime": format_time(self.clock.now())}
        conditions = [c for c in current.conditions if c.get("type") != condition.get("type")] + [stamped]
        return self._replace(pod.uid, conditions=conditions)

    def patch_annotations(self, pod: Pod, annotations: dict[str, str | None]) -> Pod:
        """Merge-patch metadata.annotations (None removes a key)."""
        self._intercept("patch", pod)
        current = self.pods.get(pod.uid)
        if current is None:
            raise NotFoundError(f'pods "{pod.name}" not found')
        merged = dict(current.meta.annotations)
        for key, value in annotations.items():
            if value is None:
                merged.pop(key, None)
            else:
                merged[key] = value
        meta = type(current.meta)(**{**{f: getattr(current.meta, f) for f in current.meta.__slots__}, "annotations": merged})
        return self._replace(pod.uid, meta=meta)


def _implicit_namespace(name: str) -> Namespace:
    return parse_namespace({"metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name}}})


if TYPE_CHECKING:
    _KEEPS_THE_CONTRACT: type[Cluster] = SimulatedCluster  # mypy checks it against the Protocol
