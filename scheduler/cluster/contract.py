"""The backend contract: what the Scheduler asks of a cluster, whichever backend holds it.

`Cluster` is what every backend offers the scheduling loop (the informers' lists and watch, the
status writes a failed attempt makes, Events). A backend behind a real API server is also a
`RemoteCluster` (it says so with `remote_api = True`): the scheduler shares its lock with it and
runs its requests on the API pool; one that can send a binding without waiting for its answer is
an `AsyncBinder` too. `SimulatedCluster` (cluster/simulated.py) and `KubernetesCluster`
(kube/backend.py) satisfy them; mypy checks both where they are handed to `Scheduler`. Plugins
reach the backend's listers and writes through `Handle.cluster()`, typed `PluginCluster` (with the
storage listers of `StorageLister`), so mypy checks what plugins call on it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from scheduler.api.objects import Namespace, Node, Pod, PodDisruptionBudget
from scheduler.api.storage import CSIDriver, CSINode, PersistentVolume, PersistentVolumeClaim, StorageClass
from scheduler.api.workloads import SelectingObject
from scheduler.cluster.events import WatchEvent


class ErrorSink(Protocol):
    """Told an error of a backend's background work: where it happened, and the error."""

    def __call__(self, source: str, error: BaseException, /) -> None:
        """Count or log it; never raise."""
        ...


class Cluster(Protocol):
    """What the scheduling loop reads from and writes to a cluster backend."""

    api_wait: Callable[[float], None] | None
    """Set by the scheduler when API calls take wall-clock time: how a call waits (lock released)."""

    @property
    def namespaces(self) -> Mapping[str, Namespace]:
        """The namespaces by name."""
        ...

    def list_nodes(self) -> list[Node]:
        """Every node (the node informer's initial list)."""
        ...

    def list_pods(self) -> list[Pod]:
        """Every live pod (the pod informer's initial list, before its field selector)."""
        ...

    def get_pod(self, uid: str) -> Pod | None:
        """A live pod by uid."""
        ...

    def namespace_labels(self, name: str) -> dict[str, str]:
        """A namespace's labels (with the automatic kubernetes.io/metadata.name)."""
        ...

    def watch(self, handler: Callable[[WatchEvent], None]) -> None:
        """Deliver every later change to `handler`, in order."""
        ...

    def record(self, type_: str, reason: str, obj: str, message: str) -> None:
        """Record a Kubernetes Event (Scheduled, FailedScheduling, ...) about `obj` (namespace/name)."""
        ...

    def add_pod_condition(self, pod: Pod, condition: dict[str, Any]) -> Pod:
        """Patch a status condition of the pod (replacing one of the same type); the new pod."""
        ...

    def set_nominated_node(self, pod: Pod, node: str) -> Pod:
        """Patch status.nominatedNodeName ('' clears it); the new pod."""
        ...


class StorageLister(Protocol):
    """The storage objects the volume plugins read, and VolumeBinding's PreBind writes."""

    def get_persistent_volume(self, name: str) -> PersistentVolume | None:
        """A PersistentVolume by name."""
        ...

    def get_persistent_volume_claim(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        """A PersistentVolumeClaim by namespace and name."""
        ...

    def list_persistent_volumes(self) -> list[PersistentVolume]:
        """Every PersistentVolume."""
        ...

    def get_storage_class(self, name: str) -> StorageClass | None:
        """A StorageClass by name."""
        ...

    def get_csi_node(self, name: str) -> CSINode | None:
        """The CSINode of a node."""
        ...

    def get_csi_driver(self, name: str) -> CSIDriver | None:
        """A CSIDriver by name."""
        ...

    def bind_pod_volumes(self, pod: Pod, pvs: list[PersistentVolume], claims: list[PersistentVolumeClaim]) -> None:
        """PVs with their claimRef and claims with a selected node (VolumeBinding's PreBind)."""
        ...


class PluginCluster(Cluster, StorageLister, Protocol):
    """What plugins reach through `Handle.cluster()`: the loop's contract plus the writes plugins
    make (binding, eviction, annotation and custom-resource updates) and the objects of kinds
    the engine does not model (`extensions`: NodeMetric, PodGroup, Reservation, ... by kind).
    `SimulatedCluster` and `KubernetesCluster` satisfy it (mypy checks both where they are handed
    to `Scheduler`); plugins tolerate handles whose cluster lacks the listers (tests' fakes)."""

    extensions: dict[str, list[dict[str, Any]]]
    """The documents of kinds the engine keeps as documents, by kind."""

    def bind(self, pod: Pod, node: str) -> None:
        """Bind the pod to the node (the binding subresource)."""
        ...

    def delete_pod(self, pod: Pod) -> None:
        """Delete the pod (a preemption victim, a gang member given up)."""
        ...

    def patch_annotations(self, pod: Pod, annotations: dict[str, str | None]) -> Pod:
        """Merge-patch metadata.annotations (None removes a key); the new pod."""
        ...

    def update_object(self, kind: str, doc: dict[str, Any]) -> None:
        """Replace an `extensions` object (a PodGroup's or Reservation's status)."""
        ...

    def replace_pod(self, uid: str, **changes: Any) -> Pod:
        """Replace fields of a live pod, as a controller's update does (a reserve pod's requests)."""
        ...

    def list_pdbs(self, namespace: str | None = None) -> list[PodDisruptionBudget]:
        """PodDisruptionBudgets, of one namespace or all (preemption's victims)."""
        ...

    def list_services(self, namespace: str) -> list[SelectingObject]:
        """Services of the namespace (PodTopologySpread's default constraints)."""
        ...

    def list_replication_controllers(self, namespace: str) -> list[SelectingObject]:
        """ReplicationControllers of the namespace."""
        ...

    def list_replica_sets(self, namespace: str) -> list[SelectingObject]:
        """ReplicaSets of the namespace."""
        ...

    def list_stateful_sets(self, namespace: str) -> list[SelectingObject]:
        """StatefulSets of the namespace."""
        ...


class FaultServing(Protocol):
    """A backend with injected faults (the simulated one's `faults` plan): it carries out a
    decision the plan made for a call (waits, then raises the error)."""

    faults: Any

    def serve(self, decision: Any, wait: bool = True) -> None:
        """Wait the decision's delay (unless the caller waited already), then raise its error."""
        ...


class RemoteCluster(Cluster, Protocol):
    """A backend behind a real API server: its informers apply changes under the scheduler's lock,
    its requests release that lock, and failed attempts write the PodScheduled condition."""

    remote_api: bool
    on_error: ErrorSink
    """Told every error of background work (an informer's handler, an Event's write)."""

    def attach(self, lock: Any, unlocked: Callable[[Callable[[], Any]], Any], post: Callable[[Callable[[], None]], None]) -> None:
        """Share the scheduler's lock, its runner for requests made without it, and `post`, which
        runs a task on the scheduling thread between cycles."""
        ...

    def set_nominated_node(self, pod: Pod, node: str, condition: dict[str, Any] | None = None) -> Pod:
        """The nomination patch, carrying the pod's PodScheduled=False condition when given."""
        ...

    def scheduling_condition(self, pod: Pod, reason: str, message: str) -> dict[str, Any] | None:
        """The PodScheduled=False condition to write for a failed attempt, or None for none."""
        ...


class AsyncBinder(Protocol):
    """A backend that sends a binding from the scheduling thread and reads its answer later."""

    @property
    def async_pending(self) -> int:
        """Bindings sent whose answer has not been read."""
        ...

    def bind_async(self, pod: Pod, node: str, done: Callable[[Any, BaseException | None], None]) -> bool:
        """Send the binding; `done` runs from a later `poll_async`. False: bind the ordinary way."""
        ...

    def poll_async(self) -> int:
        """Read the answers that have arrived and run their `done`; how many."""
        ...

    def wait_async(self, timeout: float) -> None:
        """Block until an answer has arrived, at most `timeout` seconds."""
        ...


__all__ = ["AsyncBinder", "Cluster", "ErrorSink", "RemoteCluster"]
