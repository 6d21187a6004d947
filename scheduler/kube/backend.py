"""A cluster backend on the `kubernetes` Python client: a real API server behind the backend
contract (cluster/contract.py).

The scheduler reads the same dictionaries it reads from `SimulatedCluster`, the store both keep
(cluster/store.py); here informers fill them: one thread per resource lists, then watches from the list's resourceVersion, relists when
the server says 410 Gone (or the watch fails in a way it cannot resume from), and relists every
`resync_seconds` anyway, diffing the fresh list against the cache so a watch that dropped events
without closing is repaired (client-go's reflector and resync). Changes reach the scheduler as the
same `WatchEvent`s, applied under the scheduler's lock.

Writes go to the API server as kube-scheduler makes them: the `pods/binding` subresource, the
`DisruptionTarget` condition and `nominatedNodeName` as status patches, deletions with a uid
precondition, `events.k8s.io/v1` Events (sent by a broadcaster thread, never by the scheduling
loop), PodGroup and Reservation status updates. Every request passes a token bucket (QPS and
burst, kube-scheduler's `clientConnection`), and 429 (or a 5xx with Retry-After) is retried
after the server's Retry-After, as client-go's rest client does. The scheduler runs binding
cycles and asynchronous preemption on its API pool (see `remote_api`), releasing its lock while a
request is in flight, so a slow API server does not stall scheduling.

The `kubernetes` package is imported only when a connection is made, so the simulated default
does not need it.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scheduler.api.fields import FieldError, format_time
from scheduler.api.objects import parse_namespace, parse_node, parse_pdb, parse_pod, parse_priority_class
from scheduler.clock import Clock
from scheduler.cluster.contract import AsyncBinder, ErrorSink, RemoteCluster
from scheduler.cluster.errors import APIError, Retry, api_error
from scheduler.cluster.events import WatchEvent
from scheduler.cluster.store import ClusterStore
from scheduler.kube.client import Connection, RemoteError, RemoteNotFound, not_found
from scheduler.kube.events import EventBroadcaster
from scheduler.kube.inflight import InFlight
from scheduler.kube.informer import EXTENSION_PATHS, KINDS, Informer, doc_key, doc_version

log = logging.getLogger(__name__)
SHADOWED = "(shadowed)"  # no profile has this name: shadow mode queues nothing
WATCH_BATCH_SECONDS = 0.005


@dataclass(slots=True)
class KubernetesCluster(ClusterStore):
    """The cluster store over a real API server: informers fill it, writes go to the server (see
    the module docstring)."""

    connection: Any = None
    resync_seconds: float = 300.0
    watch_seconds: int = 300
    read_timeout: float = 60.0
    sync_timeout: float = 60.0
    # How often at most each informer takes what its watch delivered while events keep coming
    # (Informer.batch_seconds); a change reaches the scheduler up to this much later.
    watch_batch_seconds: float = WATCH_BATCH_SECONDS
    install_poll_seconds: float = 10.0
    lock: Any = field(default_factory=threading.RLock)
    informers: list[Informer] = field(default_factory=list)
    versions: dict[tuple[str, str], int] = field(default_factory=dict)
    # Called instead of `fn()` for a request made while the scheduler's lock may be held: the
    # scheduler's hook releases the lock on its API pool (see `Scheduler._api_unlocked`).
    unlocked: Callable[[Callable[[], Any]], Any] = lambda fn: fn()
    # Observers of the raw documents (shadow mode reads where the cluster's scheduler put pods).
    doc_listeners: list[Callable[[str, str, dict[str, Any] | None, dict[str, Any] | None], None]] = field(default_factory=list)
    broadcaster: EventBroadcaster = field(init=False)
    _docs: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    # (namespace, name) → uid of the live pods: an Event's `regarding` and a deletion without a
    # uid find their pod without walking every pod.
    _pod_uids: dict[tuple[str, str], str] = field(default_factory=dict)
    _inbox: list[tuple[Any, ...]] = field(default_factory=list)
    _inbox_lock: threading.Lock = field(default_factory=threading.Lock)
    _inbox_posted: bool = False
    post: Callable[[Callable[[], None]], None] = lambda task: task()
    # Told every error of background work (a watch event's handler, an Event's write): the
    # scheduler counts them (`schedconsole_background_errors_total`).
    on_error: ErrorSink = lambda source, exc: None
    remote_api: bool = True
    # Shadow mode: pending pods are renamed away from every profile (so nothing is queued or bound
    # here) and every write is refused; see cluster/shadow.py.
    shadow: bool = False
    _inflight: Any = None  # cluster/inflight.py's InFlight, made at the first `bind_async`
    # Bindings whose request went out on a connection that closed without answering (pod uid →
    # node): when sent again, "already assigned" to that node means the first one was taken.
    _resent_bindings: dict[str, str] = field(default_factory=dict)
    # Discovery: group version → the resource names it serves (with subresources, `podgroups/status`).
    _subresources: dict[str, set[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.broadcaster = EventBroadcaster(self._event_request, lambda source, exc: self.on_error(source, exc))

    def _event_request(self, verb: str, path: str, body: Any, content_type: str) -> Any:
        return self.connection.request(verb, path, body, content_type=content_type)

    @classmethod
    def open(cls, connection: Connection, clock: Clock | None = None, **options: Any) -> KubernetesCluster:
        """List every kind once (the informers' initial sync); `watch_all` starts following."""
        cluster = cls(clock=clock or Clock(), connection=connection, **options)
        cluster.record_events = True
        for kind in KINDS:
            informer = Informer(
                kind,
                connection,
                cluster._receive,
                cluster._receive_list,
                cluster.resync_seconds,
                cluster.watch_seconds,
                cluster.read_timeout,
                cluster.watch_batch_seconds,
                install_poll_seconds=cluster.install_poll_seconds,
            )
            informer.list_until_synced(cluster.sync_timeout)
            cluster.informers.append(informer)
        return cluster

    def attach(self, lock: Any, unlocked: Callable[[Callable[[], Any]], Any], post: Callable[[Callable[[], None]], None]) -> None:
        """Share the scheduler's lock, its unlocking runner for requests, and `post`, which runs a
        task on the scheduling thread between cycles: informers hand their changes over that way
        (parsed on their own thread), so they never wait for the lock the loop holds."""
        self.lock = lock
        self.unlocked = unlocked
        self.post = post

    def _receive(self, kind: str, type_: str, doc: dict[str, Any]) -> None:
        """An informer's event: parse here, apply on the scheduling thread."""
        parsed = None
        if type_ == "MODIFIED" and kind == "Pod":
            parsed = self._pod_status_change(doc)
        if parsed is None and type_ != "DELETED" and kind in ("Pod", "Node"):
            key = doc_key(doc)
            try:
                parsed = parse_pod(doc, f"pods/{key}") if kind == "Pod" else parse_node(doc, f"nodes/{key}")
            except FieldError as exc:
                log.warning("skipping %s %s: %s", kind, key, exc)
                return
        self._deliver((kind, type_, doc, parsed))

    def _deliver(self, item: tuple[Any, ...]) -> None:
        """Queue an informer's change for the scheduling thread. One task drains everything queued
        by then, so a burst of watch events costs the loop one hand-over, not one per event."""
        with self._inbox_lock:
            self._inbox.append(item)
            if self._inbox_posted:
                return
            self._inbox_posted = True
        self.post(self._drain_inbox)

    def _drain_inbox(self) -> None:
        with self._inbox_lock:
            items = list(self._inbox)
            self._inbox.clear()
            self._inbox_posted = False
        with self.lock:
            for kind, type_, doc, parsed in items:
                try:
                    if type_ == "LIST":
                        self._replace_all(kind, doc)
                    else:
                        self._apply(kind, type_, doc, parsed=parsed)
                except Exception as exc:  # a handler's fault: the others' changes still apply
                    log.exception("applying %s %s failed", type_, kind)
                    self.on_error(f"informer/{kind}", exc)

    def _pod_status_change(self, doc: dict[str, Any]) -> Any:
        """A pod whose update changed only what the scheduler itself changes (nodeName by a
        binding, phase, nomination, conditions): the cached pod with those fields replaced, without
        parsing it again (a binding's update is most of what the pod watch delivers)."""
        meta = doc.get("metadata") or {}
        before = self._docs.get(("Pod", doc_key(doc)))
        old = self.pods.get(meta.get("uid", ""))
        if before is None or old is None:
            return None
        old_meta = before.get("metadata") or {}
        for field_name in ("labels", "annotations", "deletionTimestamp", "ownerReferences"):
            if meta.get(field_name) != old_meta.get(field_name):
                return None
        spec, old_spec = dict(doc.get("spec") or {}), dict(before.get("spec") or {})
        node = spec.pop("nodeName", "") or ""
        old_spec.pop("nodeName", None)
        if spec != old_spec:
            return None
        status = doc.get("status") or {}
        return old.with_changes(
            node_name=node,
            phase=status.get("phase") or old.phase,
            nominated_node_name=status.get("nominatedNodeName") or "",
            conditions=list(status.get("conditions") or []),
        )

    def _receive_list(self, kind: str, items: list[dict[str, Any]]) -> None:
        """An informer's relist: diffed against the cache on the scheduling thread."""
        self._deliver((kind, "LIST", items, None))

    def watch_all(self) -> None:
        """Start the informers' watches and the event broadcaster."""
        for informer in self.informers:
            informer.start()
        self.broadcaster.start()

    def close(self, timeout: float = 5.0) -> None:
        """Stop the informers and the broadcaster (events queued are sent first)."""
        for informer in self.informers:
            informer.stop()
        deadline = time.monotonic() + timeout
        self.broadcaster.stop(timeout)
        for informer in self.informers:
            informer.join(max(0.0, deadline - time.monotonic()))
        if self._inflight is not None:
            self._inflight.close()
        self.connection.close()

    @property
    def synced(self) -> bool:
        """Whether every informer has listed."""
        return all(i.synced.is_set() for i in self.informers)

    # ----- the informers' changes -------------------------------------------------------------
    def _replace_all(self, kind: str, items: list[dict[str, Any]]) -> None:
        """A relist: apply what differs from the cache, delete what the list no longer has."""
        with self.lock:
            fresh = {doc_key(doc): doc for doc in items}
            for key, doc in fresh.items():
                if self.versions.get((kind, key)) != doc_version(doc):
                    self._apply(kind, "MODIFIED" if (kind, key) in self.versions else "ADDED", doc, force=True)
            for known_kind, key in [k for k in self.versions if k[0] == kind]:
                if key not in fresh:
                    self._apply(kind, "DELETED", self._docs.get((known_kind, key)) or _doc_from_key(kind, key), force=True)

    def _apply(self, kind: str, type_: str, doc: dict[str, Any], force: bool = False, parsed: Any = None) -> None:
        key = doc_key(doc)
        version = doc_version(doc)
        with self.lock:
            known = self.versions.get((kind, key))
            if type_ != "DELETED" and known is not None and version <= known and not force:
                return  # already applied (a write's response came first)
            old_doc = self._docs.get((kind, key))
            if type_ == "DELETED":
                if known is None:
                    return
                self.versions.pop((kind, key), None)
                self._docs.pop((kind, key), None)
            else:
                self.versions[(kind, key)] = version
                self._docs[(kind, key)] = doc
            try:
                self._apply_object(kind, type_, doc, key, parsed)
            except FieldError as exc:
                log.warning("skipping %s %s: %s", kind, key, exc)
                return
            for listener in self.doc_listeners:
                listener(kind, type_, old_doc, None if type_ == "DELETED" else doc)

    def _apply_object(self, kind: str, type_: str, doc: dict[str, Any], key: str, parsed: Any = None) -> None:
        namespace, _, name = key.partition("/")
        if kind == "Pod":
            if type_ == "DELETED":
                uid = (doc.get("metadata") or {}).get("uid") or self._uid_of(namespace, name)
                old = self.pods.pop(uid, None) if uid else None
                if old is not None and self._pod_uids.get((old.namespace, old.name)) == uid:
                    del self._pod_uids[(old.namespace, old.name)]
                if old is not None:
                    self.remember_deleted(old)
                    self._emit(WatchEvent("Pod", "DELETED", old, None))
                return
            pod = parsed if parsed is not None else parse_pod(doc, f"pods/{key}")
            if pod.priority is None:
                pod.priority = 0
            if self.shadow and not pod.node_name:
                pod = pod.with_changes(scheduler_name=SHADOWED)
            old = self.pods.get(pod.uid)
            self.pods[pod.uid] = pod
            self._pod_uids[(pod.namespace, pod.name)] = pod.uid
            self._emit(WatchEvent("Pod", "MODIFIED" if old is not None else "ADDED", old, pod))
        elif kind == "Node":
            if type_ == "DELETED":
                self.delete_node(name)
            else:
                self.add_node(parsed if parsed is not None else parse_node(doc, f"nodes/{name}"))
        elif kind == "Namespace":
            if type_ == "DELETED":
                self.namespaces.pop(name, None)
            else:
                self.put_namespace(parse_namespace(doc, f"namespaces/{name}"))
        elif kind == "PriorityClass":
            if type_ == "DELETED":
                self.priority_classes.pop(name, None)
            else:
                self.priority_classes[name] = parse_priority_class(doc, f"priorityclasses/{name}")
        elif kind == "PodDisruptionBudget":
            if type_ == "DELETED":
                self.pdbs.pop(key, None)
            else:
                self.pdbs[key] = parse_pdb(doc, f"poddisruptionbudgets/{key}")
        elif type_ == "DELETED":
            self.delete_object(kind, namespace, name)
        else:
            ClusterStore.update_object(self, kind, doc)

    def _uid_of(self, namespace: str, name: str) -> str:
        """The uid of the live pod of that name ("" when there is none)."""
        uid = self._pod_uids.get((namespace, name), "")
        pod = self.pods.get(uid) if uid else None
        return uid if pod is not None and pod.namespace == namespace and pod.name == name else ""

    def fresh_state(self) -> dict[tuple[str, str], int]:
        """What a fresh list of every kind says now (kind and key → resourceVersion), for checking
        that no informer is stale."""
        out: dict[tuple[str, str], int] = {}
        for informer in self.informers:
            if not informer.installed:
                continue
            listed = self.connection.request("GET", informer.kind.path)
            for item in listed.get("items") or []:
                out[(informer.kind.kind, doc_key(item))] = doc_version(item)
        return out

    # ----- writes ------------------------------------------------------------------------------
    def _call(
        self,
        method: str,
        path: str,
        body: Any = None,
        content_type: str = "application/json",
        query: dict[str, Any] | None = None,
    ) -> Any:
        if self.shadow:
            raise APIError(f"shadow mode changes nothing in the cluster ({method} {path} refused)")
        connection = self.connection
        return self.unlocked(lambda: connection.request(method, path, body, query=query, content_type=content_type))

    def _apply_response(self, kind: str, doc: Any) -> None:
        if isinstance(doc, dict) and doc.get("metadata"):
            self._apply(kind, "MODIFIED", {**doc, "kind": kind})

    def bind(self, pod: Any, node: str) -> None:
        """POST the `pods/binding` subresource; the informer then sees the pod bound. A binding
        sent again (its first request went out on a connection that closed without answering)
        that is refused because the pod is already on that very node was taken the first time:
        bound."""
        path = f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}/binding"
        try:
            self._call("POST", path, _binding(pod, node))
        except RemoteError as exc:
            resent = self._resent_bindings.pop(pod.uid, None) == node or self.connection.resent
            if not (resent and exc.code == 409 and _assigned_to(exc) == node):
                raise
            log.info("binding of %s sent again: already on %s, as asked", pod.key, node)
        self._resent_bindings.pop(pod.uid, None)

    def bind_async(self, pod: Any, node: str, done: Callable[[Any, BaseException | None], None]) -> bool:
        """`bind` without waiting, from the scheduling thread (see cluster/inflight.py): `done`
        runs from a later `poll_async` on that thread. False when it cannot go out now (no free
        connection yet, no rate-limiter token, shadow mode): then `bind` it the ordinary way."""
        if self.shadow:
            return False
        if self._inflight is None:
            self._inflight = InFlight(self.connection)
        path = f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}/binding"

        def answered(body: Any, failure: BaseException | None) -> None:
            if isinstance(failure, Retry):
                self._resent_bindings[pod.uid] = node  # `bind` sends it again
            done(body, failure)

        return bool(self._inflight.send("POST", path, _binding(pod, node), "application/json", answered))

    @property
    def async_pending(self) -> int:
        """`bind_async` requests whose answer has not been read."""
        return self._inflight.pending if self._inflight is not None else 0

    def poll_async(self) -> int:
        """Read the answers that have arrived and run their `done` (on the calling thread)."""
        return int(self._inflight.poll()) if self._inflight is not None else 0

    def wait_async(self, timeout: float) -> None:
        """Block until an answer has arrived, at most `timeout` (reads nothing)."""
        if self._inflight is not None:
            self._inflight.wait(timeout)

    def delete_pod(self, pod: Any) -> None:
        """DELETE with a uid precondition (a pod of the same name created since is left alone)."""
        body = {"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": {"uid": pod.uid}}
        try:
            self._call("DELETE", f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}", body)
        except RemoteError as exc:
            if exc.code == 409:  # the uid precondition failed: the pod we meant is gone
                raise not_found(f'pods "{pod.name}" not found') from None
            raise

    def set_nominated_node(self, pod: Any, node: str, condition: dict[str, Any] | None = None) -> Any:
        """The status patch kube-scheduler makes (`nominatedNodeName`, null clears it), with the
        pod's PodScheduled=False condition when given (one patch, as upstream's)."""
        status: dict[str, Any] = {"nominatedNodeName": node or None}
        content_type = "application/merge-patch+json"
        if condition is not None:
            status["conditions"] = [self._stamped(pod, condition)]
            content_type = "application/strategic-merge-patch+json"  # conditions merge by type
        doc = self._call("PATCH", f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}/status", {"status": status}, content_type)
        self._apply_response("Pod", doc)
        return self.pods.get(pod.uid, pod)

    def add_pod_condition(self, pod: Any, condition: dict[str, Any]) -> Any:
        """A strategic-merge status patch of one condition (conditions merge by type)."""
        patch = {"status": {"conditions": [self._stamped(pod, condition)]}}
        doc = self._call(
            "PATCH", f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}/status", patch, "application/strategic-merge-patch+json"
        )
        self._apply_response("Pod", doc)
        return self.pods.get(pod.uid, pod)

    def scheduling_condition(self, pod: Any, reason: str, message: str) -> dict[str, Any] | None:
        """The PodScheduled=False condition for a failed attempt (reason Unschedulable or
        SchedulerError, the FailedScheduling message), or None when the pod has it already
        (`podutil.UpdatePodCondition`: nothing to write) or in shadow mode (nothing is written)."""
        if self.shadow:
            return None
        condition = {"type": "PodScheduled", "status": "False", "reason": reason, "message": message}
        current = self.pods.get(pod.uid, pod)
        for old in current.conditions or ():
            if old.get("type") == "PodScheduled" and all(old.get(k) == v for k, v in condition.items()):
                return None
        return condition

    def _stamped(self, pod: Any, condition: dict[str, Any]) -> dict[str, Any]:
        """The condition with its times: lastTransitionTime kept while its status stays the same."""
        current = self.pods.get(pod.uid, pod)
        old = next((c for c in current.conditions or () if c.get("type") == condition.get("type")), None)
        if old is not None and old.get("status") == condition.get("status") and old.get("lastTransitionTime"):
            at = old["lastTransitionTime"]
        else:
            at = format_time(self.clock.now())
        stamped = {**condition, "lastProbeTime": None, "lastTransitionTime": at}
        # The pod's generation the condition was written for (PodObservedGenerationTracking, on
        # in 1.35): kube-scheduler sets it on the conditions it writes.
        generation = ((self._docs.get(("Pod", f"{pod.namespace}/{pod.name}")) or {}).get("metadata") or {}).get("generation")
        if generation:
            stamped["observedGeneration"] = generation
        return stamped

    def patch_annotations(self, pod: Any, annotations: dict[str, str | None]) -> Any:
        """A merge patch of metadata.annotations (None removes a key)."""
        doc = self._call(
            "PATCH",
            f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}",
            {"metadata": {"annotations": annotations}},
            "application/merge-patch+json",
        )
        self._apply_response("Pod", doc)
        return self.pods.get(pod.uid, pod)

    def update_object(self, kind: str, doc: dict[str, Any]) -> None:
        """A controller's status update of a PodGroup or Reservation: a PUT carrying the cached
        resourceVersion (409 Conflict when the cache is behind: the informer's newer version then
        asks the controller to sync again), to `.../status` where the CRD declares the status
        subresource and to the object itself where it does not (Koordinator's and
        scheduler-plugins' PodGroup CRD: there `.../status` is 404)."""
        base = EXTENSION_PATHS.get(kind)
        if base is None:
            ClusterStore.update_object(self, kind, doc)
            return
        meta = doc.get("metadata") or {}
        group_version, _, resource = base.removeprefix("/apis/").rpartition("/")
        ns = meta.get("namespace") or ""
        path = f"/apis/{group_version}/{'namespaces/' + ns + '/' if ns else ''}{resource}/{meta.get('name')}"
        body = {**doc, "apiVersion": doc.get("apiVersion") or group_version, "kind": kind}
        for fresh in (False, True):
            if self._status_subresource(group_version, resource, fresh):
                try:
                    updated = self._call("PUT", path + "/status", body)
                except RemoteNotFound:
                    if fresh:
                        raise
                    continue  # the CRD changed since discovery (or the object is gone): look again
            else:
                updated = self._call("PUT", path, body)
                if not fresh and (updated or {}).get("status") != doc.get("status"):
                    continue  # the server kept the old status: the CRD has a status subresource now
            self._apply_response(kind, updated)
            return

    def _status_subresource(self, group_version: str, resource: str, fresh: bool) -> bool:
        """Whether the API server serves `resource/status` in that group version (discovery,
        remembered until `fresh` asks again); True when discovery fails (the PUT then says)."""
        known = self._subresources.get(group_version)
        if known is None or fresh:
            try:
                listed = self._call("GET", f"/apis/{group_version}")
            except RemoteError as exc:
                log.warning("discovery of %s failed: %s", group_version, exc)
                return True
            known = {str(r.get("name")) for r in (listed or {}).get("resources") or []}
            self._subresources[group_version] = known
        return f"{resource}/status" in known

    def record(self, type_: str, reason: str, obj: str, message: str) -> None:
        """Queue an `events.k8s.io/v1` Event for the broadcaster (never blocks the caller), under
        the name of the profile that scheduled the pod (see kube/events.py)."""
        ClusterStore.record(self, type_, reason, obj, message)
        if not self.record_events:
            return
        namespace, _, name = obj.rpartition("/")
        namespace = namespace or "default"
        uid = self._uid_of(namespace, name)
        pod = self.pods.get(uid) if uid else None
        controller = pod.scheduler_name if pod is not None and pod.scheduler_name != SHADOWED else "default-scheduler"
        regarding = {"namespace": namespace, "name": name, "uid": uid}
        self.broadcaster.record(type_, reason, regarding, controller or "default-scheduler", message)

    def add_pod(self, pod: Any) -> None:
        """Create a pod on the API server (the informer then adds it)."""
        doc = pod.raw
        doc.setdefault("metadata", {}).pop("resourceVersion", None)
        try:
            created = self._call("POST", f"/api/v1/namespaces/{pod.namespace}/pods", doc)
        except RemoteError as exc:
            raise api_error(str(exc), exc.reason) from None
        self._apply("Pod", "ADDED", {**created, "kind": "Pod"})


def _binding(pod: Any, node: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": pod.name, "namespace": pod.namespace, "uid": pod.uid},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node},
    }


_ASSIGNED = re.compile(r'is already assigned to node "([^"]*)"')


def _assigned_to(exc: RemoteError) -> str:
    """The node of kube-apiserver's 409 for a binding of a pod bound already ("" if not that)."""
    found = _ASSIGNED.search(str(exc))
    return found.group(1) if found else ""


def _doc_from_key(kind: str, key: str) -> dict[str, Any]:
    namespace, _, name = key.partition("/")
    return {"kind": kind, "metadata": {"namespace": namespace, "name": name}}


__all__ = ["KubernetesCluster"]


if TYPE_CHECKING:
    # mypy checks the backend against the contract the scheduler relies on (`remote_api`).
    _KEEPS_THE_CONTRACT: type[RemoteCluster] = KubernetesCluster
    _BINDS_ASYNC: type[AsyncBinder] = KubernetesCluster
