"""PodInfo and NodeInfo: the per-pod and per-node views plugins read (`framework.NodeInfo`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from scheduler.api.affinity import PodAffinityTerm, WeightedPodAffinityTerm
from scheduler.api.objects import CPU, EPHEMERAL_STORAGE, MEMORY, Node, Pod

if TYPE_CHECKING:
    from scheduler.framework.snapshot import Snapshot


def is_scalar_resource(name: str) -> bool:
    """Whether a resource name is tracked as a scalar resource (`schedutil.IsScalarResourceName`).

    Extended resources (a domain other than kubernetes.io), hugepages-*, prefixed native
    resources (*kubernetes.io/*) and attachable-volumes-* are; bare unknown names are not.
    """
    if name.startswith(("hugepages-", "attachable-volumes-")):
        return True
    if "kubernetes.io/" in name:
        return True
    return "/" in name and not name.startswith("requests.")


@dataclass(slots=True)
class Resource:
    """Resource amounts as `framework.Resource` keeps them."""

    milli_cpu: int = 0
    memory: int = 0
    ephemeral_storage: int = 0
    allowed_pod_number: int = 0
    scalar_resources: dict[str, int] = field(default_factory=dict)

    @classmethod
    def from_list(cls, amounts: Mapping[str, int], pods: int = 0) -> Resource:
        """Build from a resource list (cpu in millicores)."""
        return cls(
            milli_cpu=amounts.get(CPU, 0),
            memory=amounts.get(MEMORY, 0),
            ephemeral_storage=amounts.get(EPHEMERAL_STORAGE, 0),
            allowed_pod_number=pods,
            scalar_resources={k: v for k, v in amounts.items() if is_scalar_resource(k)},
        )

    def to_json(self) -> dict[str, object]:
        """The JSON shape Koordinator's node service writes."""
        return {
            "MilliCPU": self.milli_cpu,
            "Memory": self.memory,
            "EphemeralStorage": self.ephemeral_storage,
            "AllowedPodNumber": self.allowed_pod_number,
            "ScalarResources": dict(self.scalar_resources) or None,
        }


@dataclass(frozen=True, slots=True)
class ProtocolPort:
    """A host port in use: (ip, protocol, port)."""

    host_ip: str
    protocol: str
    port: int


@dataclass(frozen=True, slots=True)
class _Derived:
    """A pod's amounts as `_account` adds them, and its host-port keys."""

    pod: Pod
    milli_cpu: int
    memory: int
    ephemeral_storage: int
    scalars: tuple[tuple[str, int], ...]
    nonzero_cpu: int
    nonzero_memory: int
    ports: tuple[ProtocolPort, ...]

    @classmethod
    def of(cls, pod: Pod) -> _Derived:
        """Derive from a pod."""
        requests = pod.requests
        return cls(
            pod,
            requests.get(CPU, 0),
            requests.get(MEMORY, 0),
            requests.get(EPHEMERAL_STORAGE, 0),
            tuple((name, amount) for name, amount in requests.items() if is_scalar_resource(name)),
            pod.nonzero_cpu,
            pod.nonzero_memory,
            tuple(ProtocolPort(port.host_ip or "0.0.0.0", port.protocol, port.host_port) for port in pod.host_ports),
        )


PodAmounts = _Derived
"""What a pod adds to a node's totals (`PodInfo.derived()`), for code that keeps its own totals."""


@dataclass(slots=True, eq=False)
class PodInfo:
    """A pod with its affinity terms unpacked once (`framework.PodInfo`)."""

    pod: Pod
    required_affinity_terms: tuple[PodAffinityTerm, ...] = ()
    required_anti_affinity_terms: tuple[PodAffinityTerm, ...] = ()
    preferred_affinity_terms: tuple[WeightedPodAffinityTerm, ...] = ()
    preferred_anti_affinity_terms: tuple[WeightedPodAffinityTerm, ...] = ()
    # What NodeInfo bookkeeping needs from the pod, derived once (rebuilt if `pod` is replaced).
    _derived: _Derived | None = field(default=None, repr=False, compare=False)

    def derived(self) -> _Derived:
        """The pod's request amounts and host-port keys, computed once per pod object."""
        d = self._derived
        if d is None or d.pod is not self.pod:
            d = self._derived = _Derived.of(self.pod)
        return d

    @classmethod
    def of(cls, pod: Pod) -> PodInfo:
        """Unpack a pod's affinity."""
        aff = pod.affinity
        if aff is None:
            return cls(pod)
        return cls(pod, aff.pod_required, aff.anti_required, aff.pod_preferred, aff.anti_preferred)

    @property
    def has_affinity(self) -> bool:
        """Whether the pod has any pod affinity or anti-affinity term."""
        return bool(
            self.required_affinity_terms
            or self.required_anti_affinity_terms
            or self.preferred_affinity_terms
            or self.preferred_anti_affinity_terms
        )


def term_matches(term: PodAffinityTerm, pod: Pod, namespace_labels: Mapping[str, str] | None) -> bool:
    """`AffinityTerm.Matches`: the pod's namespace is selected and its labels match."""
    if pod.namespace in term.namespaces or (
        term.namespace_selector is not None and namespace_labels is not None and term.namespace_selector.matches(namespace_labels)
    ):
        return term.selector.matches(pod.labels)
    return False


class NodeInfo:
    """One node's state. Resource totals are read from the snapshot's arrays, never copied."""

    __slots__ = (
        "_detached",
        "_position",
        "_snapshot",
        "generation",
        "node",
        "pods",
        "pods_with_affinity",
        "pods_with_required_anti_affinity",
        "used_ports",
    )

    def __init__(self, node: Node, snapshot: Snapshot | None = None, position: int = -1) -> None:
        self.node = node
        self.pods: list[PodInfo] = []
        self.pods_with_affinity: list[PodInfo] = []
        self.pods_with_required_anti_affinity: list[PodInfo] = []
        self.used_ports: dict[ProtocolPort, int] = {}
        self.generation = 0
        self._snapshot = snapshot
        self._position = position
        # A clone keeps its own totals, since it no longer matches the snapshot's row.
        self._detached: dict[str, Resource] | None = None

    @property
    def name(self) -> str:
        """The node's name."""
        return self.node.name

    @property
    def position(self) -> int:
        """The node's row in the snapshot's arrays."""
        return self._position

    def attach(self, snapshot: Snapshot, position: int) -> None:
        """Bind this NodeInfo to its row in a snapshot."""
        self._snapshot = snapshot
        self._position = position

    def _row(self, which: str) -> Resource:
        if self._detached is not None:
            return self._detached[which]
        snap = self._snapshot
        if snap is None:
            raise RuntimeError(f"NodeInfo {self.node.name} is not attached to a snapshot")
        return snap.resource_of(self._position, which)

    @property
    def allocatable(self) -> Resource:
        """The node's allocatable resources and pod number."""
        return self._row("allocatable")

    @property
    def requested(self) -> Resource:
        """The sum of requests of the pods on the node."""
        return self._row("requested")

    @property
    def nonzero_requested(self) -> Resource:
        """The sum of non-zero (defaulted) cpu and memory requests of the pods on the node."""
        return self._row("nonzero")

    def clone(self) -> NodeInfo:
        """A detached copy with its own pod lists and resource totals (for dry runs)."""
        twin = NodeInfo(self.node, self._snapshot, self._position)
        twin.pods = list(self.pods)
        twin.pods_with_affinity = list(self.pods_with_affinity)
        twin.pods_with_required_anti_affinity = list(self.pods_with_required_anti_affinity)
        twin.used_ports = dict(self.used_ports)
        twin.generation = self.generation
        if self._detached is None and self._snapshot is not None:
            twin._detached = self._snapshot.detached_resources(self._position)
        else:
            twin._detached = {
                "allocatable": self.allocatable,
                "requested": _copy_resource(self.requested),
                "nonzero": _copy_resource(self.nonzero_requested),
            }
        return twin

    def add_pod(self, info: PodInfo) -> None:
        """Record a pod on this node (the snapshot's arrays are updated by the snapshot)."""
        d = info.derived()
        if self._detached is not None:
            _account(self._detached, d, 1)
        self.pods.append(info)
        if info.has_affinity:
            self.pods_with_affinity.append(info)
        if info.required_anti_affinity_terms:
            self.pods_with_required_anti_affinity.append(info)
        if d.ports:
            used = self.used_ports
            for key in d.ports:
                used[key] = used.get(key, 0) + 1
        self.generation += 1

    def remove_pod(self, pod: Pod) -> PodInfo | None:
        """Forget a pod by uid; returns its PodInfo or None when it was not here."""
        uid = pod.meta.uid
        pods = self.pods
        for i, info in enumerate(pods):
            if info.pod.meta.uid == uid:
                del pods[i]
                break
        else:
            return None
        d = info.derived()
        if self._detached is not None:
            _account(self._detached, d, -1)
        if self.pods_with_affinity:
            self.pods_with_affinity = [p for p in self.pods_with_affinity if p.pod.meta.uid != uid]
        if self.pods_with_required_anti_affinity:
            self.pods_with_required_anti_affinity = [p for p in self.pods_with_required_anti_affinity if p.pod.meta.uid != uid]
        if d.ports:
            used = self.used_ports
            for key in d.ports:
                left = used.get(key, 0) - 1
                if left > 0:
                    used[key] = left
                else:
                    used.pop(key, None)
        self.generation += 1
        return info

    def ports_conflict(self, ports: list[ProtocolPort]) -> bool:
        """Whether any wanted host port clashes with a used one (`HostPortInfo.CheckConflict`)."""
        for want in ports:
            for used in self.used_ports:
                if used.port != want.port or used.protocol != want.protocol:
                    continue
                if want.host_ip == "0.0.0.0" or used.host_ip == "0.0.0.0" or used.host_ip == want.host_ip:
                    return True
        return False


def _copy_resource(res: Resource) -> Resource:
    return Resource(res.milli_cpu, res.memory, res.ephemeral_storage, res.allowed_pod_number, dict(res.scalar_resources))


def _account(totals: dict[str, Resource], d: _Derived, sign: int) -> None:
    req = totals["requested"]
    if sign > 0:
        req.milli_cpu += d.milli_cpu
        req.memory += d.memory
        req.ephemeral_storage += d.ephemeral_storage
    else:
        req.milli_cpu -= d.milli_cpu
        req.memory -= d.memory
        req.ephemeral_storage -= d.ephemeral_storage
    if d.scalars:
        scalar = req.scalar_resources
        for name, amount in d.scalars:
            scalar[name] = scalar.get(name, 0) + sign * amount
    nonzero = totals["nonzero"]
    nonzero.milli_cpu += sign * d.nonzero_cpu
    nonzero.memory += sign * d.nonzero_memory
