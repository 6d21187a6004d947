"""The one door between the console and the engine.

This is the only module under `schedconsole/` that imports `scheduler`; everything the console
needs from the engine (building it, feeding it objects, reading its state, what-if runs, the
Koordinator routes) is a method of `Engine` or a function here, taking and returning plain JSON
values. A test checks that no other console module imports the engine.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from schedconsole.engine.preemptions import PreemptionTimeline
from schedconsole.history.compact import group_failures
from scheduler.api.documents import Document, DocumentError, load_all, looks_like_json, read_documents
from scheduler.api.fields import FieldError, format_time
from scheduler.api.loader import ClusterObjects, LoadError, objects_from_documents
from scheduler.api.objects import Node, Pod
from scheduler.cli import ScoresSpec, record_json
from scheduler.clock import Clock
from scheduler.cluster.apiserver import RESOURCES, APIServer
from scheduler.cluster.simulated import APIError, SimulatedCluster, WatchEvent
from scheduler.config.errors import ConfigError
from scheduler.config.loader import API_VERSION, KIND, parse_config, parse_text
from scheduler.framework.runtime import FrameworkError
from scheduler.frameworkext.debug import FlagError
from scheduler.frameworkext.extender import Extender
from scheduler.frameworkext.publisher import attempt_message
from scheduler.frameworkext.services import node_info_json, pod_json
from scheduler.plugins.registry import new_registry
from scheduler.records import AttemptRecord
from scheduler.scheduler import Scheduler

Record = AttemptRecord
# Deleted pods and scheduler Events a long-running engine keeps (the newest).
HISTORY_LIMIT = 10000
RESOURCE_NAMES = {"cpu": "MilliCPU", "memory": "Memory", "ephemeral-storage": "EphemeralStorage", "pods": "AllowedPodNumber"}


class BadInput(ValueError):
    """Input the engine refuses: `field` names where (DRF's field-keyed 400 body)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


class NotFound(LookupError):
    """The object a request names does not exist."""


# ----- parsing -----------------------------------------------------------------------------------
def parse_documents(text: str | bytes, source: str, on_document: Callable[[int], None] | None = None) -> list[Any]:
    """YAML (multi-document) or JSON text as a list of documents, read with the engine's bounds
    (nesting depth, go-yaml's alias expansion limit); BadInput names the line. `on_document` is
    told how many documents are read so far, as they are read (progress of a large import)."""

    def read(json_text: bool = False) -> list[Any]:
        if on_document is None:
            return load_all(text, json_text=json_text)
        out = []
        for doc in read_documents(text, json_text=json_text):
            if isinstance(doc, Document):
                out.append(doc.value)
                on_document(len(out))
        return out

    try:
        if looks_like_json(text):
            try:
                docs = read(json_text=True)
            except DocumentError:
                docs = read()  # `{a: b}` is YAML flow style, not JSON
        else:
            docs = read()
    except DocumentError as exc:
        kind = "JSON" if looks_like_json(text) else "YAML"
        raise BadInput(source, f"{source}: invalid {kind}: {exc}") from exc
    out: list[Any] = []
    for doc in docs:
        if isinstance(doc, list) and looks_like_json(text):
            out.extend(doc)
        elif doc is not None:
            out.append(doc)
    return out


def load_objects(documents: Iterable[Any], source: str, known: Iterable[Any] = ()) -> ClusterObjects:
    """Kubernetes objects from parsed documents, as `simulate --cluster` reads them.

    `known` are documents already in the cluster (PriorityClasses) that new pods may name; they
    are read first and left out of the result.
    """
    known = list(known)
    numbered = [("cluster", n, d) for n, d in enumerate(known, start=1)]
    numbered += [(source, n, d) for n, d in enumerate(documents, start=1)]
    try:
        objects = objects_from_documents(numbered)
    except LoadError as exc:
        field = exc.field.rsplit(": ", 1)[-1] if exc.field else source
        raise BadInput(field, str(exc)) from exc
    if known:
        names = {(d.get("metadata") or {}).get("name") for d in known if isinstance(d, dict)}
        objects.priority_classes = [pc for pc in objects.priority_classes if pc.name not in names]
    return objects


def check_config(document: Any, source: str = "profile") -> Any:
    """Decode, default and validate a KubeSchedulerConfiguration document (BadInput on failure)."""
    try:
        return parse_config(document, source)
    except ConfigError as exc:
        raise BadInput(exc.field or "document", exc.message) from exc


def parse_config_text(text: str, source: str = "profile") -> Any:
    """A KubeSchedulerConfiguration from YAML or JSON text."""
    try:
        return parse_text(text, source)
    except ConfigError as exc:
        raise BadInput("document", str(exc)) from exc


def default_config_document() -> dict[str, Any]:
    """The configuration kube-scheduler runs with when given none."""
    return {"apiVersion": API_VERSION, "kind": KIND}


# ----- documents of live objects ---------------------------------------------------------------
def pod_manifest(pod: Pod) -> dict[str, Any]:
    """The pod's document with every field the engine changes made current."""
    doc = pod_json(pod)
    meta = dict(doc.get("metadata") or {})
    meta["annotations"] = dict(pod.annotations)
    meta.setdefault("uid", pod.uid)
    doc["metadata"] = meta
    if pod.conditions:
        doc["status"] = {**doc["status"], "conditions": list(pod.conditions)}
    return doc


def pod_summary(pod: Pod, where: str | None = None) -> dict[str, Any]:
    """One row of the pods list."""
    return {
        "namespace": pod.namespace,
        "name": pod.name,
        "uid": pod.uid,
        "profile": pod.scheduler_name,
        "phase": pod.phase or "Pending",
        "node": pod.node_name or None,
        "nominatedNode": pod.nominated_node_name or None,
        "priority": pod.effective_priority,
        "requests": {k: str(v) for k, v in sorted(pod.requests.items())},
        "queue": where,
    }


def with_defaults(doc: dict[str, Any], kind: str) -> dict[str, Any]:
    """A document from the web with the metadata the API server fills in (uid, namespace)."""
    out = dict(doc)
    meta = dict(out.get("metadata") or {}) if isinstance(out.get("metadata"), dict) else {}
    if kind == "Pod":
        meta.setdefault("namespace", "default")
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = f"{meta['generateName']}{uuid.uuid4().hex[:5]}"
    meta.setdefault("uid", str(uuid.uuid4()))
    meta.setdefault("creationTimestamp", format_time(time.time()))
    out["metadata"] = meta
    out.setdefault("apiVersion", "v1")
    return out


# ----- the engine ----------------------------------------------------------------------------------
@dataclass(slots=True)
class Change:
    """One change of a cluster object, for the store: kind, key, uid, the document or None if deleted."""

    kind: str
    namespace: str
    name: str
    uid: str
    document: dict[str, Any] | None


@dataclass(slots=True)
class Hooks:
    """What the host wires into the engine: where records, changes and bindings go."""

    on_record: Callable[[AttemptRecord, bool], None] = lambda record, update: None
    on_change: Callable[[Change], None] = lambda change: None
    # (pod uid, pod key, node, apply): the host stores the binding, then calls apply on the engine thread.
    on_bind: Callable[[str, str, str, Callable[[], None]], None] | None = None


@dataclass(slots=True)
class Engine:
    """A simulated cluster and the scheduler running its profiles; one per host."""

    cluster: SimulatedCluster
    scheduler: Scheduler
    config_document: dict[str, Any]
    hooks: Hooks
    seed: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    preemptions: PreemptionTimeline = field(default_factory=PreemptionTimeline)

    # ----- building --------------------------------------------------------------------------------
    @classmethod
    def build(
        cls,
        config_document: dict[str, Any],
        objects: ClusterObjects,
        hooks: Hooks,
        *,
        seed: int | None = None,
        debug_top_n: int = 0,
        debug_filter_failure: bool = False,
        clock: Clock | None = None,
    ) -> Engine:
        """A started engine over `objects` with the profiles of `config_document`."""
        config = check_config(config_document)
        cluster = SimulatedCluster.from_objects(objects, clock or Clock())
        cluster.history_limit = HISTORY_LIMIT  # the console runs for days: deleted pods and events are bounded
        scheduler = cls._new_scheduler(config, cluster, seed, debug_top_n, debug_filter_failure, None)
        engine = cls(cluster, scheduler, config_document, hooks, seed)
        cluster.watch(engine._on_event)
        if hooks.on_bind is not None:
            on_bind = hooks.on_bind
            cluster.bind_sink = lambda pod, node, apply: on_bind(pod.uid, pod.key, node, apply)
        engine._attach(scheduler)
        scheduler.start()
        return engine

    @staticmethod
    def _new_scheduler(config: Any, cluster: SimulatedCluster, seed: int | None, top_n: int, failures: bool, metrics: Any) -> Scheduler:
        extender = Extender(debug_top_n=top_n, debug_filter_failure=failures)
        try:
            return Scheduler(config, cluster, cluster.clock, new_registry(), seed=seed, keep_records=False, extender=extender, metrics=metrics)
        except (FrameworkError, ValueError, TypeError) as exc:
            raise BadInput("profiles", f"the profiles cannot be built: {exc}") from exc

    @classmethod
    def build_remote(
        cls,
        config_document: dict[str, Any],
        hooks: Hooks,
        *,
        mode: str,
        kubeconfig: str = "",
        context: str = "",
        in_cluster: bool = False,
        qps: float = 50.0,
        burst: int = 100,
        shadow_profile: str = "",
        lease_namespace: str = "kube-system",
        seed: int | None = None,
        debug_top_n: int = 0,
        debug_filter_failure: bool = False,
    ) -> Engine:
        """An engine over a live cluster (`cluster`: schedule the pods naming our profiles, while
        holding the Lease; `shadow`: bind nothing, compare with the cluster's own scheduler)."""
        import socket

        from scheduler.cluster.kubernetes import KubernetesCluster, connect
        from scheduler.cluster.leaderelection import LeaderElector
        from scheduler.cluster.shadow import ShadowRecorder

        config = check_config(config_document)
        connection = connect(kubeconfig or None, context or None, in_cluster, qps, burst)
        cluster = KubernetesCluster.open(connection, Clock(), shadow=mode == "shadow")
        cluster.record_events = mode == "cluster"
        scheduler = cls._new_scheduler(config, cluster, seed, debug_top_n, debug_filter_failure, None)
        engine = cls(cluster, scheduler, config_document, hooks, seed, {"mode": mode, "server": connection.host})
        engine._attach(scheduler)
        scheduler.start()
        if mode == "shadow":
            profile = shadow_profile or next(iter(scheduler.profiles))
            if profile not in scheduler.profiles:
                raise BadInput("SCHEDCONSOLE_SHADOW_PROFILE", f"unknown profile {profile!r}; known: {', '.join(scheduler.profiles)}")
            recorder = ShadowRecorder(scheduler, profile)
            recorder.start(cluster)
            engine.extra["shadow"] = recorder
        else:
            identity = f"{socket.gethostname()}_{uuid.uuid4().hex[:8]}"
            elector = LeaderElector(connection, lease_namespace, "schedconsole", identity)
            elector.start()
            engine.extra["elector"] = elector
        cluster.watch_all()
        return engine

    @property
    def mode(self) -> str:
        """simulated, cluster or shadow."""
        return str(self.extra.get("mode", "simulated"))

    @property
    def leading(self) -> bool:
        """Whether this engine may schedule (cluster mode: while it holds the Lease)."""
        elector = self.extra.get("elector")
        return elector is None or bool(elector.leading)

    def cluster_status(self) -> dict[str, Any]:
        """The mode, the API server, leadership, the informers and (shadow mode) the comparison."""
        out: dict[str, Any] = {"mode": self.mode, "server": self.extra.get("server"), "leading": self.leading}
        informers = getattr(self.cluster, "informers", None)
        if informers is not None:
            from scheduler.cluster.mirror import informer_status

            out["informers"] = [informer_status(i) for i in informers]
        elector = self.extra.get("elector")
        if elector is not None:
            out["lease"] = elector.status()
        recorder = self.extra.get("shadow")
        out["shadow"] = recorder.report() if recorder is not None else None
        mirror = self.extra.get("sync")
        out["sync"] = mirror.status() if mirror is not None else None
        return out

    def plugin_timing(self, every: Any = None) -> dict[str, int]:
        """`{"every": N}`: each plugin is timed in every Nth attempt (0: never); sets N when given."""
        if every is not None:
            if isinstance(every, bool) or not isinstance(every, int) or every < 0:
                raise BadInput("every", f"invalid value {every!r}: must be a whole number, 0 or more (0: off, 1: every attempt)")
            self.scheduler.plugin_timing_every = every
        return {"every": self.scheduler.plugin_timing_every}

    # ----- continuous sync of a live cluster into the simulated one ----------------------------------
    def sync_start(
        self, kubeconfig: str = "", context: str = "", in_cluster: bool = False, keep_bindings: bool = True, known: list[list[str]] | None = None
    ) -> dict[str, Any]:
        """Start mirroring a live cluster into this simulated one (see scheduler/cluster/mirror.py);
        `known`: what a sync stopped by a restart had mirrored (`sync_snapshot`), to resume it."""
        from scheduler.cluster.mirror import LiveMirror

        self._simulated_only("syncing a live cluster")
        running = self.extra.get("sync")
        if running is not None and running.running:
            raise BadInput("sync", f"a sync from {running.connection.host} is running; stop it first")
        try:
            from scheduler.cluster.kubernetes import connect

            connection = connect(kubeconfig or None, context or None, in_cluster)
        except Exception as exc:  # the kubernetes client's config errors have no common base
            raise BadInput("kubeconfig", f"cannot connect with {kubeconfig or ('the service account' if in_cluster else 'the default kubeconfig')}: {exc}") from exc

        def post(task: Callable[[], None]) -> None:
            hand_over = self.extra.get("post") or self.scheduler.submit
            hand_over(task)

        mirror = LiveMirror(connection, self.k8s_api().handle, post, keep_bindings=keep_bindings)
        mirror.start(known)
        self.extra["sync"] = mirror
        return dict(mirror.status())

    def sync_stop(self) -> dict[str, Any]:
        """Stop the sync (what it mirrored stays)."""
        mirror = self.extra.get("sync")
        if mirror is None or not mirror.running:
            raise BadInput("sync", "no sync is running")
        mirror.stop()
        return dict(mirror.status())

    def sync_applied(self) -> int | None:
        """How many changes the running sync has applied (None when no sync runs): its snapshot
        changes only when this does."""
        mirror = self.extra.get("sync")
        return int(mirror.applied) if mirror is not None and mirror.running else None

    def sync_snapshot(self) -> list[list[str]] | None:
        """What the running sync has mirrored (`[kind, namespace, name, resourceVersion]` each), or
        None when no sync runs."""
        mirror = self.extra.get("sync")
        return mirror.snapshot() if mirror is not None and mirror.running else None

    def sync_status(self) -> dict[str, Any] | None:
        """The sync's state, or None if none was started."""
        mirror = self.extra.get("sync")
        return dict(mirror.status()) if mirror is not None else None

    def _simulated_only(self, what: str) -> None:
        if self.mode != "simulated":
            raise BadInput("mode", f"{what} changes the simulated cluster; this console runs in {self.mode} mode (SCHEDCONSOLE_MODE)")

    def _attach(self, scheduler: Scheduler) -> None:
        on_record = self.hooks.on_record
        original = scheduler._publish

        timeline = self.preemptions

        def publish(record: AttemptRecord, update: bool = False) -> None:
            original(record, update)
            on_record(record, update)
            timeline.on_record(record, update)

        scheduler._publish = publish  # type: ignore[method-assign]
        scheduler.api_call_listeners.append(timeline.on_api_call)

    def _on_event(self, event: WatchEvent) -> None:
        obj = event.new if event.new is not None else event.old
        if event.kind == "Pod":
            if event.old is not None and event.new is not None and not event.old.node_name and event.new.node_name:
                return  # a binding: the host stored it before applying it
            doc = pod_manifest(event.new) if event.new is not None else None
            self.hooks.on_change(Change("Pod", obj.namespace, obj.name, obj.uid, doc))
        elif event.kind == "Node":
            doc = dict(event.new.raw) if event.new is not None else None
            self.hooks.on_change(Change("Node", "", obj.name, obj.meta.uid or obj.name, doc))

    def apply_config(self, document: dict[str, Any]) -> None:
        """Swap in new profiles atomically: build first; on failure the running ones stay."""
        config = check_config(document)
        old = self.scheduler
        flags = old.extender.flags
        new = self._new_scheduler(config, self.cluster, self.seed, flags.top_n, flags.filter_failure, old.metrics)
        # Finish what the old scheduler started: binding cycles run (those waiting for an API
        # server's answer too), Permit waiters are turned back.
        with old.lock:
            old.finish_bindings()
            while old.tasks:
                old.tasks.popleft()()
            for waiting in list(old.waiting.values()):
                waiting.reject("", "scheduler profiles changed while waiting at Permit")
            while old.tasks:
                old.tasks.popleft()()
            old.extender.stop()
            self.cluster.unwatch(old.on_event)
        self._attach(new)
        new.plugin_timing_every = old.plugin_timing_every
        self.scheduler = new
        self.config_document = document
        new.start()
        recorder = self.extra.get("shadow")
        if recorder is not None:
            recorder.scheduler = new

    # ----- the loop ------------------------------------------------------------------------------------
    def step(self) -> bool:
        """One turn of the scheduler loop; whether anything happened. Not leading (cluster mode
        without the Lease), only the informers' changes are applied: nothing is scheduled."""
        if not self.leading:
            with self.scheduler.lock:
                return self.scheduler._run_tasks()
        return self.scheduler.step()

    def next_wakeup(self) -> float | None:
        """When something becomes due (backoff expiry, Permit timeout), if anything."""
        return self.scheduler.next_wakeup()

    def idle_tick(self) -> None:
        """Between turns when idle: flush expired backoffs and the unschedulable leftovers."""
        self.scheduler.flush_queues()
        api = self.extra.get("k8sapi")
        if api is not None:
            api.tick()

    # ----- the Kubernetes-compatible API (/k8s) -------------------------------------------------------
    def k8s_api(self) -> APIServer:
        """The API server view of the cluster, built on first use (so an engine nobody asks through
        /k8s pays nothing for its watch log)."""
        api = self.extra.get("k8sapi")
        if api is None:

            def persist(kind: str, namespace: str, name: str, uid: str, document: dict[str, Any] | None) -> None:
                self.hooks.on_change(Change(kind, namespace, name, uid, document))

            api = APIServer(self.cluster, persist=persist, termination_seconds=self.extra.get("k8s_termination_seconds", 1.0))
            self.extra["k8sapi"] = api
        return api

    def k8s(self, request: dict[str, Any]) -> dict[str, Any]:
        """One Kubernetes API request as data (see `APIServer.handle`): `{"code", "body"}`."""
        if self.mode != "simulated":
            message = f"/k8s serves the simulated cluster; this console runs in {self.mode} mode against {self.extra.get('server')}"
            return {"code": 503, "body": {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 503, "reason": "ServiceUnavailable", "message": message}}
        code, body = self.k8s_api().handle(request)
        return {"code": code, "body": body}

    def now(self) -> float:
        """The engine's clock."""
        return self.cluster.clock.now()

    def stop(self) -> None:
        """Stop the plugins' controllers (and a live cluster's informers and Lease)."""
        self.scheduler.extender.stop()
        mirror = self.extra.get("sync")
        if mirror is not None and mirror.running:
            mirror.stop()
        elector = self.extra.get("elector")
        if elector is not None:
            elector.stop()
        close = getattr(self.cluster, "close", None)
        if close is not None:
            self.scheduler.shutdown()
            close()

    # ----- cluster edits -------------------------------------------------------------------------------
    def create_objects(self, objects: ClusterObjects) -> dict[str, int]:
        """Add loaded objects to the cluster (nodes first, then pods); counts by kind."""
        self._simulated_only("creating objects")
        counts: dict[str, int] = {}
        for pc in objects.priority_classes:
            self.cluster.priority_classes[pc.name] = pc
        for ns in objects.namespaces:
            self.cluster.namespaces[ns.name] = ns
        for pdb in objects.pdbs:
            self.cluster.pdbs[f"{pdb.meta.namespace}/{pdb.name}"] = pdb
        for node in objects.nodes:
            self.cluster.add_node(node)
        for pod in objects.pods:
            self._resolve_priority(pod)
            try:
                self.cluster.add_pod(pod)
            except APIError as exc:
                raise BadInput("metadata.name", str(exc)) from exc
        for kind, attr in (("Node", "nodes"), ("Pod", "pods"), ("Namespace", "namespaces"), ("PriorityClass", "priority_classes"), ("PodDisruptionBudget", "pdbs")):
            if getattr(objects, attr):
                counts[kind] = len(getattr(objects, attr))
        return counts

    def check_new(self, objects: ClusterObjects) -> None:
        """Refuse objects that already exist, before anything is applied."""
        existing = {(p.namespace, p.name) for p in self.cluster.pods.values()}
        for pod in objects.pods:
            if (pod.namespace, pod.name) in existing:
                raise BadInput("metadata.name", f'pods "{pod.name}" already exists in namespace {pod.namespace}')
            self._resolve_priority(pod)
        for node in objects.nodes:
            if node.name in self.cluster.nodes:
                raise BadInput("metadata.name", f'nodes "{node.name}" already exists')

    def _resolve_priority(self, pod: Pod) -> None:
        if pod.priority is not None:
            if not pod.preemption_policy:
                pod.preemption_policy = "PreemptLowerPriority"
            return
        classes = self.cluster.priority_classes
        pc = classes.get(pod.priority_class_name) if pod.priority_class_name else next((c for c in classes.values() if c.global_default), None)
        if pod.priority_class_name and pc is None:
            raise BadInput("spec.priorityClassName", f"no PriorityClass with name {pod.priority_class_name} was found")
        pod.priority = pc.value if pc is not None else 0
        if not pod.preemption_policy:
            pod.preemption_policy = pc.preemption_policy if pc is not None and pc.preemption_policy else "PreemptLowerPriority"

    def load_new(self, documents: list[Any], source: str) -> ClusterObjects:
        """Objects from an upload, resolved against the cluster's PriorityClasses."""
        objects = load_objects(documents, source, self._known_classes())
        self.check_new(objects)
        return objects

    def _known_classes(self) -> list[dict[str, Any]]:
        """The cluster's PriorityClasses as documents, for loading pods that name them."""
        return [
            {"kind": "PriorityClass", "metadata": {"name": pc.name}, "value": pc.value, "globalDefault": pc.global_default, "preemptionPolicy": pc.preemption_policy}
            for pc in self.cluster.priority_classes.values()
        ]

    def find_pod(self, namespace: str, name: str) -> Pod:
        """A live pod by namespace and name (through a key index, rebuilt when it misses)."""
        index: dict[tuple[str, str], str] = self.extra.setdefault("pod_index", {})
        for attempt in range(2):
            pod = self.cluster.pods.get(index.get((namespace, name), ""))
            if pod is not None and pod.namespace == namespace and pod.name == name:
                return pod
            if attempt == 0:
                index.clear()
                index.update({(p.namespace, p.name): uid for uid, p in self.cluster.pods.items()})
        raise NotFound(f"pods \"{name}\" not found in namespace {namespace}")

    def delete_pod(self, namespace: str, name: str) -> dict[str, Any]:
        """Delete a pod; returns its last document."""
        self._simulated_only("deleting a pod")
        pod = self.find_pod(namespace, name)
        self.cluster.delete_pod(pod)
        return pod_manifest(pod)

    # ----- reading -------------------------------------------------------------------------------------
    def nodes(self, zone: str = "", name: str = "", offset: int = 0, limit: int | None = None) -> dict[str, Any]:
        """A page of nodes (in the snapshot's order) with requested and allocatable per resource:
        those in `zone` (`topology.kubernetes.io/zone`) whose name holds `name`. Only the page's
        rows are built, so a page costs the same at 5000 nodes as at 50."""
        snap = self.scheduler.snapshot
        n = snap.num_nodes
        keep = np.ones(n, dtype=bool)
        if zone:
            codes, values = snap.label_codes(ZONE_LABEL)
            code = values.get(zone)
            keep &= (codes[:n] == code) if code is not None else False
        if name:
            keep &= np.fromiter((name in node for node in snap.names[:n]), dtype=bool, count=n)
        positions = np.flatnonzero(keep).tolist()
        offset, limit = _window(offset, limit, len(positions))
        return {"count": len(positions), "results": [self._node_summary(pos) for pos in positions[offset : offset + limit]]}

    def _node_summary(self, pos: int) -> dict[str, Any]:
        snap = self.scheduler.snapshot
        alloc, req = snap.allocatable[pos], snap.requested[pos]
        name = snap.names[pos]
        node = self.cluster.nodes.get(name)
        row_alloc = {res: int(alloc[i]) for i, res in enumerate(snap.resource_names) if alloc[i] or res in ("cpu", "memory")}
        row_req = {res: int(req[i]) for i, res in enumerate(snap.resource_names) if res in row_alloc}
        row_alloc["pods"], row_req["pods"] = int(snap.allowed_pods[pos]), int(snap.pod_count[pos])
        return {
            "name": name,
            "labels": dict(node.labels) if node else {},
            "taints": [{"key": t.key, "value": t.value, "effect": t.effect} for t in (node.taints if node else ())],
            "unschedulable": bool(node.unschedulable) if node else False,
            "allocatable": row_alloc,
            "requested": row_req,
        }

    def node_detail(self, name: str) -> dict[str, Any]:
        """One node: the summary plus Koordinator's NodeInfo document."""
        info = self.scheduler.snapshot.get(name)
        if info is None:
            raise NotFound(f"cannot find node {name}")
        return {**self._node_summary(self.scheduler.snapshot.position[name]), "nodeInfo": node_info_json(info, {})}

    def pods(self, namespace: str = "", phase: str = "", node: str = "", profile: str = "", offset: int = 0, limit: int | None = None) -> dict[str, Any]:
        """A page of live pods (in creation order) with the queue each waits in when pending,
        filtered by namespace, phase, node and profile (each an exact match when given)."""
        chosen = [
            p
            for p in self.cluster.pods.values()
            if (not namespace or p.namespace == namespace)
            and (not phase or (p.phase or "Pending") == phase)
            and (not node or (p.node_name or "") == node)
            and (not profile or p.scheduler_name == profile)
        ]
        offset, limit = _window(offset, limit, len(chosen))
        where = self.scheduler.queue.where
        return {"count": len(chosen), "results": [pod_summary(p, where(p.uid)) for p in chosen[offset : offset + limit]]}

    def pod_detail(self, namespace: str, name: str) -> dict[str, Any]:
        """One pod: summary and current document."""
        pod = self.find_pod(namespace, name)
        return {**pod_summary(pod, self.scheduler.queue.where(pod.uid)), "manifest": pod_manifest(pod)}

    def queue(self, offset: int = 0, limit: int | None = None) -> dict[str, Any]:
        """Pending pods by queue, with why each waits: in each queue the pods `offset` to
        `offset + limit` (creation order), and under `counts` how many each queue holds."""
        sched = self.scheduler
        q = sched.queue
        members: dict[str, list[Pod]] = {"active": [], "backoff": [], "unschedulable": [], "gated": []}
        for pod in self.cluster.pods.values():
            bucket = members.get(q.where(pod.uid) or "")
            if bucket is not None:
                bucket.append(pod)
        counts = {name: len(pods) for name, pods in members.items()}
        offset, limit = _window(offset, limit, max(counts.values()))
        out: dict[str, Any] = {name: [] for name in members}
        now = self.now()
        for where, pods in members.items():
            for pod in pods[offset : offset + limit]:
                out[where].append(self._queue_row(pod, where, now))
        out["counts"] = counts
        return out

    def _queue_row(self, pod: Pod, where: str, now: float) -> dict[str, Any]:
        info = self.scheduler.queue.info(pod.uid)
        row: dict[str, Any] = {"pod": pod.key, "profile": pod.scheduler_name, "priority": pod.effective_priority, "attempts": info.attempts if info else 0}
        if where == "gated" and info is not None:
            row["reason"] = f"gated by {info.gated_by}: {info.gated_message}".rstrip(": ")
        elif where == "unschedulable" and info is not None:
            plugins = sorted(info.unschedulable_plugins | info.pending_plugins)
            row["reason"] = f"rejected by {', '.join(plugins) or 'the scheduler'}; waits for a cluster event that may help"
            row["plugins"] = plugins
        elif where == "backoff" and info is not None:
            row["reason"] = f"backing off after {info.attempts} failed attempt(s)"
            row["retryIn"] = round(max(0.0, info.backoff_until - now), 3)
        else:
            row["reason"] = "waiting for its turn in activeQ"
        return row

    # ----- what-if ---------------------------------------------------------------------------------
    def whatif(self, document: Any, profile: str | None) -> dict[str, Any]:
        """The full scheduling cycle for one pod on the current snapshot; nothing changes."""
        pod = self._whatif_pod(document)
        name = profile or pod.scheduler_name
        if name not in self.scheduler.profiles:
            raise BadInput("profile", f"unknown profile {name!r}; known: {', '.join(sorted(self.scheduler.profiles))}")
        record = self.scheduler.evaluate(pod, name)
        entry = record_json(record, ScoresSpec("all"))
        entry["feasibleNodes"] = record.feasible_nodes
        entry["weights"] = dict(self.scheduler.profiles[name].weights)
        return entry

    def _whatif_pod(self, document: Any) -> Pod:
        if not isinstance(document, dict):
            raise BadInput("pod", f"expected a Pod object, got {type(document).__name__}")
        if document.get("kind") != "Pod":
            raise BadInput("pod.kind", f"expected kind Pod, got {document.get('kind')!r}")
        doc = with_defaults(document, "Pod")
        objects = load_objects([doc], "pod", self._known_classes())
        pod = objects.pods[0]
        self._resolve_priority(pod)
        if pod.node_name:
            raise BadInput("pod.spec.nodeName", f"the pod is already bound to {pod.node_name!r}; what-if takes a pending pod")
        return pod

    def compare(self, document: Any, profiles: list[str]) -> dict[str, Any]:
        """What-if under two profiles, with per-node and per-plugin deltas (b - a)."""
        if len(profiles) != 2:
            raise BadInput("profiles", f"expected two profile names, got {len(profiles)}")
        a, b = (self.whatif(document, p) for p in profiles)
        nodes = sorted(set(a["totals"]) | set(b["totals"]))
        deltas = {}
        for node in nodes:
            pa, pb = a["scores"].get(node, {}), b["scores"].get(node, {})
            deltas[node] = {
                "total": b["totals"].get(node, 0) - a["totals"].get(node, 0),
                "plugins": {p: pb.get(p, 0) - pa.get(p, 0) for p in sorted(set(pa) | set(pb))},
            }
        return {"profiles": profiles, "results": [a, b], "sameNode": a["node"] == b["node"], "deltas": deltas}

    # ----- Koordinator routes, flags, metrics -------------------------------------------------------
    def dispatch(self, method: str, path: str, body: bytes, query: Mapping[str, str]) -> tuple[int, str, bytes]:
        """Answer a Koordinator route: (status, content type, body)."""
        response = self.scheduler.extender.dispatch(method, path, body, query)
        return response.status, response.content_type, response.content()

    def debug_flags(self) -> dict[str, Any]:
        """debugTopNScores and debugFilterFailure as the engine holds them."""
        flags = self.scheduler.extender.flags
        return {"debugTopNScores": flags.top_n, "debugFilterFailure": flags.filter_failure}

    def set_debug_flags(self, top_n: Any = None, filter_failure: Any = None) -> dict[str, Any]:
        """Set either flag (validated as the /debug/flags routes do)."""
        flags = self.scheduler.extender.flags
        try:
            if top_n is not None:
                flags.set_top_n(str(top_n))
            if filter_failure is not None:
                flags.set_filter_failure(str(filter_failure).lower())
        except FlagError as exc:
            raise BadInput("debugTopNScores" if top_n is not None else "debugFilterFailure", str(exc)) from exc
        return self.debug_flags()

    def metrics_text(self) -> bytes:
        """The engine's Prometheus registry in the text format."""
        from prometheus_client import generate_latest

        return bytes(generate_latest(self.scheduler.metrics.registry))

    def profile_names(self) -> list[str]:
        """The running profiles' scheduler names."""
        return list(self.scheduler.profiles)

    def plugin_args(self) -> dict[str, dict[str, Any]]:
        """Live plugin args per profile, as the running configuration document sets them."""
        config = check_config(self.config_document)
        out: dict[str, dict[str, Any]] = {}
        for profile in config.profiles:
            out[profile.scheduler_name] = {name: _args_json(args) for name, args in profile.plugin_config.items()}
        return out

    def stats(self) -> dict[str, Any]:
        """Counters for the health and live pages."""
        sched = self.scheduler
        return {
            "nodes": sched.snapshot.num_nodes,
            "pods": len(self.cluster.pods),
            "attempts": sched.attempt_count,
            "scheduled": sched.scheduled_count,
            "pending": sched.queue.pending(),
            "profiles": list(sched.profiles),
        }


def _args_json(args: Any) -> Any:
    """Plugin args as JSON (dataclasses walked field by field)."""
    if args is None or isinstance(args, (str, int, float, bool)):
        return args
    if isinstance(args, Mapping):
        return {str(k): _args_json(v) for k, v in args.items()}
    if isinstance(args, (list, tuple)):
        return [_args_json(v) for v in args]
    slots = getattr(args, "__dataclass_fields__", None)
    if slots:
        return {_camel(k): _args_json(getattr(args, k)) for k in slots}
    return str(args)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


# ----- records ----------------------------------------------------------------------------------
def record_row(record: AttemptRecord, score_nodes: int, filter_nodes: int) -> dict[str, Any]:
    """An attempt as the history stores it: section 5's entry, with the scores as a compact table
    (`scoreTable`: the plugins, then one row `[node, weighted total, [normalized score per plugin]]`
    for each of the `score_nodes` highest totals) and the filter failures of up to `filter_nodes`
    nodes as `filterGroups` (`history.compact`: one group per plugin, code and reasons, its nodes as
    name ranges) instead of section 5's per-node `filter`, which `attempt_json` rebuilds."""
    fo = record.filter_outcome
    if record.pre_filter_statuses or (fo is not None and len(fo.failed_positions)):
        groups, dropped = group_failures(record.failure_rows(), filter_nodes)
    else:  # every node passed (most attempts): nothing to group
        groups, dropped = [], 0
    entry: dict[str, Any] = {
        "pod": record.pod,
        "profile": record.profile,
        "attempt": record.attempt,
        "outcome": record.outcome,
        "node": record.node,
        "nominatedNode": record.nominated_node,
        "victims": list(record.victims),
        "message": record.message,
        "filterGroups": groups,
        "uid": record.uid,
        "at": record.at,
        "feasibleNodes": record.feasible_nodes,
        "numAllNodes": record.num_all_nodes,
        "timings": record.timings,
    }
    if dropped:
        entry["filterTruncated"] = dropped
    so = record.score_outcome
    entry["scoredNodes"] = len(so.positions) if so is not None and so.plugins else 0
    if so is not None and so.plugins and score_nodes > 0:
        cols = np.argsort(-so.totals, kind="stable")[:score_nodes]
        names = record.names
        rows = [
            [names[pos], total, scores]
            for pos, total, scores in zip(so.positions[cols].tolist(), so.totals[cols].tolist(), so.matrix[:, cols].T.tolist(), strict=True)
        ]
        entry["scoreTable"] = {"plugins": list(so.plugins), "rows": rows}
    return entry


def score_table(entry: dict[str, Any]) -> tuple[dict[str, dict[str, int]], dict[str, int]]:
    """`scores` and `totals` (section 5's shapes) from a stored entry's score table."""
    table = entry.get("scoreTable") or {"plugins": [], "rows": []}
    plugins = table["plugins"]
    scores = {node: dict(zip(plugins, values, strict=True)) for node, _, values in table["rows"]}
    totals = {node: total for node, total, _ in table["rows"]}
    return scores, totals


@dataclass(slots=True, eq=False)
class LiveRecord:
    """What the live view sends of an attempt, without the attempt's per-node arrays. Websocket
    clients' buffers hold hundreds of attempts at a time; holding the full records (their score and
    filter arrays) made the engine itself slower: keeping the last 300 cost it 5-13% per pod, in
    memory it could no longer reuse while warm."""

    at: float
    pod: str
    profile: str
    outcome: str
    node: str | None
    feasible_nodes: int
    timings: dict[str, float]
    plugin_timings: dict[str, dict[str, float]] | None
    # The top-N rows (N = debugTopNScores): as `attempt_message` sends them when `weighting` is None,
    # else the history row's `[node, total, values]` with (plugins, weights) to build them from.
    # Built when sent: with many clients most attempts are coalesced away, and this runs on the
    # engine's thread.
    rows: list[Any]
    weighting: tuple[list[str], Any] | None
    filter: dict[str, dict[str, Any]] | None  # every node's failure, when debugFilterFailure was on

    @property
    def debug_filter_failure(self) -> bool:
        """Whether debugFilterFailure was on for the attempt."""
        return self.filter is not None

    def debug_rows(self) -> list[dict[str, Any]]:
        """The top-N rows."""
        if self.weighting is None:
            return self.rows
        plugins, weights = self.weighting
        return [
            {"node": node, "total": total, "plugins": {p: v * w for p, v, w in zip(plugins, values, weights, strict=True)}}
            for node, total, values in self.rows
        ]

    def filter_failures(self) -> dict[str, dict[str, Any]]:
        """Every node's failure (debugFilterFailure), else nothing."""
        return self.filter or {}


def live_record(record: AttemptRecord, row: dict[str, Any] | None = None) -> LiveRecord:
    """The live view's part of a record. The top-N rows come from the history row's score table
    (`record_row`, the same columns in the same order) when it holds enough of them, else from the
    record's arrays."""
    n = record.debug_top_n
    rows: list[Any] = []
    weighting = None
    so = record.score_outcome
    if n > 0 and so is not None and so.plugins:
        table = row.get("scoreTable") if row is not None else None
        if table is not None and len(table["rows"]) >= min(n, len(so.positions)):
            rows, weighting = table["rows"][:n], (table["plugins"], so.weights)
        else:
            rows = record.debug_rows()
    failures = record.filter_failures() if record.debug_filter_failure else None
    return LiveRecord(
        record.at, record.pod, record.profile, record.outcome, record.node, record.feasible_nodes, record.timings, record.plugin_timings, rows, weighting, failures
    )


def live_message(record: AttemptRecord | LiveRecord) -> dict[str, Any]:
    """The websocket message of one attempt (DESIGN section 6), with the milliseconds each
    extension point took (`timings`) for the live page's latency column, and in attempts timed per
    plugin (every `Engine.plugin_timing_every`th) each plugin's per extension point (`pluginTimings`)."""
    message = attempt_message(record)
    message["timings"] = {point: round(seconds * 1000, 3) for point, seconds in record.timings.items()}
    if record.plugin_timings:  # a sampled attempt: milliseconds per plugin and extension point
        message["pluginTimings"] = {
            plugin: {point: round(seconds * 1000, 3) for point, seconds in points.items()} for plugin, points in record.plugin_timings.items()
        }
    return message


def record_key(record: AttemptRecord) -> tuple[str, int, float]:
    """A record's identity across its first publication and later updates."""
    return (record.uid, record.attempt, record.at)


def objects_from_rows(rows: Iterable[dict[str, Any]]) -> ClusterObjects:
    """Rebuild the cluster from stored documents (kind order does not matter)."""
    return load_objects(rows, "database")


def is_node(obj: Any) -> bool:
    """Whether an engine object is a Node."""
    return isinstance(obj, Node)


__all__ = [
    "BadInput",
    "Change",
    "Engine",
    "FieldError",
    "Hooks",
    "LiveRecord",
    "NotFound",
    "Record",
    "check_config",
    "default_config_document",
    "live_message",
    "live_record",
    "load_objects",
    "parse_config_text",
    "parse_documents",
    "pod_manifest",
    "record_key",
    "record_row",
    "score_table",
    "with_defaults",
]


def k8s_route(path: str) -> dict[str, str] | None:
    """The group, version, resource, namespace, name and subresource a `/k8s` path names (the
    engine's own HTTP front parses paths the same way)."""
    from scheduler.cluster.httpserver import route

    return route(path)


def k8s_resources() -> list[dict[str, Any]]:
    """The resources `/k8s` serves, for discovery: name, kind, group, version, scope, verbs."""
    return [
        {
            "name": r.name,
            "kind": r.kind,
            "group": r.group,
            "version": r.version,
            "namespaced": r.namespaced,
            "shortNames": list(r.short_names),
            "verbs": list(r.verbs),
            "subresources": list(r.subresources),
        }
        for r in RESOURCES
    ]


def live_documents(kubeconfig: str = "", context: str = "", in_cluster: bool = False) -> list[dict[str, Any]]:
    """Every object of a live cluster the engine reads, as documents to import into the simulated
    one (server-managed metadata dropped; bound pods keep their node)."""
    from scheduler.cluster.kubernetes import KINDS, connect

    connection = connect(kubeconfig or None, context or None, in_cluster)
    docs: list[dict[str, Any]] = []
    for kind in KINDS:
        try:
            listed = connection.request("GET", kind.path)
        except APIError as exc:
            if kind.optional and getattr(exc, "code", 0) == 404:
                continue
            raise BadInput("cluster", f"listing {kind.path}: {exc}") from exc
        group_version = str(listed.get("apiVersion") or "v1")
        for item in listed.get("items") or []:
            meta = {k: v for k, v in (item.get("metadata") or {}).items() if k not in ("resourceVersion", "managedFields", "selfLink", "generation")}
            docs.append({**item, "apiVersion": item.get("apiVersion") or group_version, "kind": kind.kind, "metadata": meta})
    return docs


def build_check(document: Any) -> list[str]:
    """Validate a configuration and build its profiles on an empty cluster; the profile names."""
    config = check_config(document)
    cluster = SimulatedCluster(clock=Clock())
    scheduler = Engine._new_scheduler(config, cluster, None, 0, False, None)
    return list(scheduler.profiles)


# ----- dashboard reads -------------------------------------------------------------------------------
# What the console's pages show, computed on the engine thread from the snapshot's arrays, paged
# here so no answer carries the whole cluster (5000 nodes, 10000 pending pods).
PAGE_LIMIT_MAX = 200
LIST_LIMIT_MAX = 1000  # the REST lists' largest page (`?limit=`); the pages' own is PAGE_LIMIT_MAX
ZONE_LABEL = "topology.kubernetes.io/zone"


def _window(offset: int, limit: int | None, count: int) -> tuple[int, int]:
    """A list page's bounds: `limit` None is every row (the engine's own callers), else 1 to LIST_LIMIT_MAX."""
    offset = max(0, int(offset))
    if limit is None:
        return offset, count
    return offset, max(1, min(int(limit), LIST_LIMIT_MAX))
NODE_SORTS = ("name", "cpu", "memory", "pods")
PREVIEW_FIELDS = ("usageThresholds", "prodUsageThresholds", "resourceWeights", "dominantResourceWeight")
_preview_versions = iter(range(-1, -(2**62), -1))


def _utilization(engine: Engine) -> dict[str, np.ndarray]:
    """requested / allocatable per node for cpu, memory and pods (0 where nothing is allocatable)."""
    snap = engine.scheduler.snapshot
    n = snap.num_nodes
    out: dict[str, np.ndarray] = {}
    for res in ("cpu", "memory"):
        col = snap.column(res)
        if col is None:
            out[res] = np.zeros(n)
            continue
        alloc, req = snap.allocatable[:n, col], snap.requested[:n, col]
        out[res] = np.divide(req, alloc, out=np.zeros(n), where=alloc > 0)
    out["pods"] = np.divide(snap.pod_count[:n], snap.allowed_pods[:n], out=np.zeros(n), where=snap.allowed_pods[:n] > 0)
    return out


def nodes_page(engine: Engine, query: str = "", sort: str = "name", offset: int = 0, limit: int = 50) -> dict[str, Any]:
    """One page of nodes: `query` is a name substring or `key=value` label terms (all must hold);
    `sort` one of NODE_SORTS, `-` first for descending (by utilization for resources)."""
    snap = engine.scheduler.snapshot
    names = snap.names[: snap.num_nodes]
    keep = np.ones(len(names), dtype=bool)
    for term in query.split():
        if "=" in term:
            key, _, value = term.partition("=")
            codes, values = snap.label_codes(key)
            code = values.get(value)
            keep &= (codes[: len(names)] == code) if code is not None else False
        else:
            keep &= np.fromiter((term in name for name in names), dtype=bool, count=len(names))
    positions = np.flatnonzero(keep)
    descending, key = sort.startswith("-"), sort.lstrip("-")
    if key not in NODE_SORTS:
        raise BadInput("sort", f"unknown sort {sort!r}; valid: {', '.join(NODE_SORTS)} (prefix - for descending)")
    if key == "name":
        order = sorted(positions.tolist(), key=names.__getitem__, reverse=descending)
    else:
        used = _utilization(engine)[key][positions]
        idx = np.argsort(-used if descending else used, kind="stable")
        order = positions[idx].tolist()
    limit = max(1, min(int(limit), PAGE_LIMIT_MAX))
    offset = max(0, int(offset))
    rows = [_node_summary_with_use(engine, pos) for pos in order[offset : offset + limit]]
    return {"count": len(order), "offset": offset, "limit": limit, "results": rows}


def _node_summary_with_use(engine: Engine, pos: int) -> dict[str, Any]:
    row = engine._node_summary(pos)
    row["used"] = {res: round(row["requested"][res] / row["allocatable"][res], 4) if row["allocatable"].get(res) else 0.0 for res in ("cpu", "memory", "pods")}
    return row


def pending_page(engine: Engine, queue: str = "", query: str = "", offset: int = 0, limit: int = 50) -> dict[str, Any]:
    """One page of pending pods (optionally of one queue, or whose key holds `query`), with why each waits."""
    sched = engine.scheduler
    q = sched.queue
    keys = []
    for pod in engine.cluster.pods.values():
        where = q.where(pod.uid)
        if where not in ("active", "backoff", "unschedulable", "gated") or (queue and where != queue):
            continue
        if query and query not in pod.key:
            continue
        keys.append(pod)
    limit = max(1, min(int(limit), PAGE_LIMIT_MAX))
    offset = max(0, int(offset))
    rows = []
    for pod in keys[offset : offset + limit]:
        info = q.info(pod.uid)
        row = pod_summary(pod, q.where(pod.uid))
        row["key"] = pod.key
        row["attempts"] = info.attempts if info else 0
        row["plugins"] = first_failing(sched, pod.scheduler_name, info.unschedulable_plugins | info.pending_plugins) if info else []
        rows.append(row)
    return {"count": len(keys), "offset": offset, "limit": limit, "results": rows}


def first_failing(sched: Scheduler, profile: str, plugins: Iterable[str]) -> list[str]:
    """The rejecting plugins in the order the profile runs its filters (PreFilter ones first)."""
    wanted = set(plugins)
    if not wanted:
        return []
    fwk = sched.profiles.get(profile)
    if fwk is None:
        return sorted(wanted)
    rank = _filter_rank(fwk)
    return sorted(wanted, key=lambda p: (rank.get(p, len(rank)), p))


def _filter_rank(fwk: Any) -> dict[str, int]:
    """Plugin -> its position among the profile's PreFilter, Filter and Permit plugins (kept per framework)."""
    hit = _RANKS.get(id(fwk))
    if hit is not None and hit[0] is fwk:
        return hit[1]
    order = [e.name for point in ("pre_filter", "filter", "permit") for e in fwk.points.get(point, [])]
    rank = {name: i for i, name in enumerate(dict.fromkeys(order))}
    if len(_RANKS) > 32:
        _RANKS.clear()
    _RANKS[id(fwk)] = (fwk, rank)
    return rank


_RANKS: dict[int, tuple[Any, dict[str, int]]] = {}


def _loadaware_plugins(engine: Engine) -> dict[str, Any]:
    """The running LoadAwareScheduling plugin of each profile that enables it."""
    out = {}
    for name, fwk in engine.scheduler.profiles.items():
        plugin = fwk.plugins.get("LoadAwareScheduling")
        if plugin is not None:
            out[name] = plugin
    return out


def _loadaware_percent(engine: Engine, plugin: Any) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Per node: the estimated usage percent per resource the plugin filters on (-1 where the node has
    no reported NodeMetric: the filter lets it pass), and whether it has one. Read from the plugin's
    arrays at once (the same values `existing_one` and `usage_percent` give node by node)."""
    from scheduler.plugins.loadaware.plugin import _percent

    snap = engine.scheduler.snapshot
    names = list(plugin.names)
    n = snap.num_nodes
    rows = plugin._row_index(snap)[:n]
    cache = plugin.cache
    known = rows > 0
    reported = known & cache.has_metric[rows] & cache.has_node_metric[rows]
    existing = cache.existing(rows, False, None)
    alloc = plugin._node_tables(snap)[2][:n]
    safe = np.where(alloc > 0, alloc, 1)
    percent = np.where((alloc > 0) & reported[:, None], _percent(existing, safe), -1)
    return names, percent.astype(np.int64), reported


def _passing(percent: np.ndarray, names: list[str], thresholds: Mapping[str, int]) -> np.ndarray:
    """Nodes whose estimated usage stays within every non-zero threshold."""
    ok = np.ones(len(percent), dtype=bool)
    for i, res in enumerate(names):
        limit = int(thresholds.get(res, 0) or 0)
        if limit > 0:
            ok &= percent[:, i] <= limit
    return ok


def overview(engine: Engine) -> dict[str, Any]:
    """What the Overview page shows: utilization per node and resource, LoadAware estimates against
    thresholds, pending pods by queue and by first rejecting plugin, preemptions and gangs."""
    sched = engine.scheduler
    snap = sched.snapshot
    use = _utilization(engine)
    by_plugin: dict[str, int] = {}
    nominated = []
    for pod in engine.cluster.pods.values():
        where = sched.queue.where(pod.uid)
        if where == "unschedulable" or where == "backoff":
            info = sched.queue.info(pod.uid)
            ranked = first_failing(sched, pod.scheduler_name, info.unschedulable_plugins | info.pending_plugins) if info else []
            key = ranked[0] if ranked else "(none recorded)"
            by_plugin[key] = by_plugin.get(key, 0) + 1
        if pod.nominated_node_name and not pod.node_name:
            nominated.append({"pod": pod.key, "node": pod.nominated_node_name, "priority": pod.effective_priority})
    loadaware = {}
    for profile, plugin in _loadaware_plugins(engine).items():
        names, percent, reported = _loadaware_percent(engine, plugin)
        thresholds = dict(plugin.args.usage_thresholds)
        loadaware[profile] = {
            "resources": names,
            "thresholds": thresholds,
            "percent": {res: percent[:, i].tolist() for i, res in enumerate(names)},
            "reported": int(reported.sum()),
            "passing": int(_passing(percent, names, thresholds).sum()),
        }
    waiting_gangs: list[dict[str, Any]] = []
    for fwk in sched.profiles.values():
        if "Coscheduling" not in fwk.plugins:
            continue
        status, _, body = engine.dispatch("GET", "/apis/v1/plugins/Coscheduling/gangs", b"", {})
        if status == 200:
            import json

            for name, gang in json.loads(body).items():
                bound = len(gang.get("boundChildren") or {})
                if bound < int(gang.get("minRequiredNumber") or 0):
                    waiting_gangs.append({"gang": name, "bound": bound, "min": gang["minRequiredNumber"],
                                          "waitingForBind": len(gang.get("waitingForBindChildren") or {}), "total": gang.get("totalChildrenNum")})
        break
    return {
        "nodes": snap.names[: snap.num_nodes],
        "utilization": {res: np.round(values, 4).tolist() for res, values in use.items()},
        "loadaware": loadaware,
        "queue": sched.queue.pending(),
        "pendingByPlugin": dict(sorted(by_plugin.items(), key=lambda kv: -kv[1])),
        "nominated": nominated[:50],
        "nominatedCount": len(nominated),
        "waitingPermit": len(sched.waiting),
        "gangsWaiting": waiting_gangs[:50],
        "stats": engine.stats(),
    }


def preemption_timeline(engine: Engine, offset: int = 0, limit: int = 50) -> dict[str, Any]:
    """Preemptions newest first as the engine saw them happen (`preemptions.PreemptionTimeline`)."""
    return engine.preemptions.page(offset, limit)


def nominated(engine: Engine, limit: int = 50) -> dict[str, Any]:
    """Preemptors waiting for their victims to go: pods nominated to a node and not bound yet."""
    rows = [{"pod": p.key, "node": p.nominated_node_name, "priority": p.effective_priority}
            for p in engine.cluster.pods.values() if p.nominated_node_name and not p.node_name]
    return {"count": len(rows), "results": rows[:limit]}


def node_page(engine: Engine, name: str) -> dict[str, Any]:
    """One node for its page: the summary, NodeInfo, its pods, the LoadAware estimate per profile,
    and the Koordinator routes' answers about it (NUMA, reservations) where a profile runs them."""
    detail = engine.node_detail(name)
    pos = engine.scheduler.snapshot.position[name]
    detail["used"] = _node_summary_with_use(engine, pos)["used"]
    info = engine.scheduler.snapshot.get(name)
    assert info is not None
    detail["pods"] = [pod_summary(p.pod) for p in info.pods][:500]
    detail["podCount"] = len(info.pods)
    detail["loadaware"] = {}
    from scheduler.plugins.loadaware.plugin import usage_percent

    for profile, plugin in _loadaware_plugins(engine).items():
        node = info.node
        existing = plugin.cache.existing_one(name, False, None)
        alloc = plugin._allocatable(node)
        load = plugin.cache.nodes.get(name)
        metric = load.metric if load is not None else None
        rows = []
        for i, res in enumerate(plugin.names):
            est = int(existing[i]) if existing is not None else None
            rows.append({"resource": res, "allocatable": int(alloc[i]), "estimated": est,
                         "percent": usage_percent(est, int(alloc[i])) if est is not None and alloc[i] else None,
                         "threshold": int(plugin.args.usage_thresholds.get(res, 0) or 0)})
        detail["loadaware"][profile] = {"reported": bool(metric is not None and metric.has_node_metric), "resources": rows}
    routes = {}
    services = json_route(engine, "/apis/v1/__services__")
    for label, route in (("numa", f"/apis/v1/plugins/NodeNUMAResource/availableCPUs/{name}"),
                         ("cpuTopology", f"/apis/v1/plugins/NodeNUMAResource/cpuTopologyOptions/{name}"),
                         ("numaNode", f"/apis/v1/plugins/NodeNUMAResource/nodes/{name}"),
                         ("reservations", f"/apis/v1/plugins/Reservation/nodeReservations/{name}")):
        template = route.rsplit("/", 1)[0] + "/:nodeName"
        if template in (services or {}).get("GET", []):
            routes[label] = json_route(engine, route)
    detail["routes"] = routes
    detail["numaMap"] = numa_map(routes.get("cpuTopology"), routes.get("numa"), (routes.get("numaNode") or {}).get("allocatedPods") or [])
    return detail


def numa_map(options: Any, available: Any, allocated_pods: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per socket, per core, each CPU's state (`available`, `allocated`, `reserved`) and, for an
    allocated one, the pods holding it, from NodeNUMAResource's `cpuTopologyOptions`,
    `availableCPUs` and `nodes` answers; empty when the node reports no CPU topology."""
    from scheduler.api.koordinator import parse_cpuset

    topology = (options or {}).get("cpuTopology") or {}
    details = topology.get("cpuDetails") or {}
    if not details or not available:
        return []
    free = parse_cpuset(available.get("availableCPUs") or "")
    reserved = parse_cpuset((options or {}).get("reservedCPUs") or "")
    holders: dict[int, list[str]] = {}
    for pod in allocated_pods:
        for cpu in parse_cpuset(str(pod.get("cpuset") or "")):
            holders.setdefault(cpu, []).append(f"{pod.get('namespace')}/{pod.get('name')}")
    sockets: dict[int, dict[int, list[dict[str, Any]]]] = {}
    for info in details.values():
        cpu = int(info["cpuID"])
        state = "reserved" if cpu in reserved else "available" if cpu in free else "allocated"
        sockets.setdefault(int(info.get("socketID", 0)), {}).setdefault(int(info.get("coreID", 0)), []).append(
            {"cpu": cpu, "state": state, "node": int(info.get("nodeID", 0)), "pods": holders.get(cpu, [])})
    return [{"socket": sid, "cores": [{"core": cid, "cpus": sorted(cpus, key=lambda c: c["cpu"])} for cid, cpus in sorted(cores.items())]}
            for sid, cores in sorted(sockets.items())]


def json_route(engine: Engine, path: str) -> Any:
    """A Koordinator GET route's JSON answer (None when it refuses)."""
    import json

    status, _, body = engine.dispatch("GET", path, b"", {})
    return json.loads(body) if status == 200 else None


# ----- why a pod waits, and the smallest change that would let it fit -----------------------------------
def _amount(resource: str, value: int) -> str:
    """A request amount as a person writes it: cpu in millicores, memory in Mi/Gi."""
    if resource == "cpu":
        return f"{value // 1000}" if value % 1000 == 0 else f"{value}m"
    if resource in ("memory", "ephemeral-storage"):
        for unit, size in (("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
            if value >= size and value % size == 0:
                return f"{value // size}{unit}"
        mi = -(-value // (1 << 20))
        return f"{mi}Mi"
    return str(value)


def _nodes(count: int) -> str:
    """`1 node`, `3 nodes`."""
    return f"{count} node" if count == 1 else f"{count} nodes"


def _with_request(document: dict[str, Any], resource: str, cut: int) -> dict[str, Any] | None:
    """A copy of a pod document asking for `cut` less of `resource` (taken from its containers,
    largest request first); None when it asks for too little to take that much."""
    import copy

    from scheduler.api.quantity import milli_value, value

    doc = copy.deepcopy(document)
    read = milli_value if resource == "cpu" else value
    containers = (doc.get("spec") or {}).get("containers") or []
    left = cut
    for c in sorted(containers, key=lambda c: -read(((c.get("resources") or {}).get("requests") or {}).get(resource, "0"))):
        requests = (c.setdefault("resources", {})).setdefault("requests", {})
        have = read(requests.get(resource, "0"))
        take = min(have, left)
        if take:
            requests[resource] = _amount(resource, have - take)
            limits = c["resources"].get("limits") or {}
            limits.pop(resource, None)
            left -= take
        if left == 0:
            return doc
    return None


def explain(engine: Engine, namespace: str, name: str) -> dict[str, Any]:
    """Why a pod does not fit, from the real scheduling cycle run now with no side effects: the
    rejecting plugins in plain words, and for NodeResourcesFit and LoadAwareScheduling the smallest
    change that would let it fit, checked by running the cycle again on the changed spec."""
    pod = engine.find_pod(namespace, name)
    document = pod_manifest(pod)
    (document.get("spec") or {}).pop("nodeName", None)
    document.pop("status", None)
    if pod.node_name:
        # Run again now, a bound pod would meet its own requests on its node: its decision record
        # (the history) says why it went there instead.
        return {"pod": pod.key, "profile": pod.scheduler_name, "outcome": "Bound", "node": pod.node_name, "message": "",
                "groups": [], "evaluation": None, "queue": None, "boundTo": pod.node_name, "manifest": document}
    pending = _whatif_record(engine, document, None)
    record, probe = pending
    failures = record.filter_failures()
    groups: dict[str, dict[str, Any]] = {}
    for _node, failure in failures.items():
        group = groups.setdefault(failure["plugin"], {"plugin": failure["plugin"], "nodes": 0, "reasons": {}, "advice": []})
        group["nodes"] += 1
        for reason in failure["reasons"] or [failure["code"]]:
            group["reasons"][reason] = group["reasons"].get(reason, 0) + 1
    if "NodeResourcesFit" in groups:
        groups["NodeResourcesFit"]["advice"] = _fit_advice(engine, probe, document, failures)
    if "LoadAwareScheduling" in groups:
        groups["LoadAwareScheduling"]["advice"] = _loadaware_advice(engine, probe, document, failures)
    ordered = first_failing(engine.scheduler, record.profile, groups)
    entry = {"feasibleNodes": record.feasible_nodes, "numAllNodes": record.num_all_nodes, "topRows": record.top_rows(10),
             "timings": {k: round(v * 1000, 3) for k, v in record.timings.items()}}
    return {"pod": pod.key, "profile": record.profile, "outcome": record.outcome, "node": record.node,
            "message": record.message, "groups": [groups[p] for p in ordered], "evaluation": entry,
            "queue": engine.scheduler.queue.where(pod.uid), "boundTo": pod.node_name or None, "manifest": document}


def _whatif_record(engine: Engine, document: Any, profile: str | None, loadaware_args: Any = None) -> tuple[AttemptRecord, Pod]:
    """Evaluate a pod document on the current snapshot (optionally with other LoadAware args)."""
    pod = engine._whatif_pod(document)
    name = profile or pod.scheduler_name
    if name not in engine.scheduler.profiles:
        raise BadInput("profile", f"unknown profile {name!r}; known: {', '.join(sorted(engine.scheduler.profiles))}")
    if loadaware_args is None:
        return engine.scheduler.evaluate(pod, name), pod
    plugin = engine.scheduler.profiles[name].plugins.get("LoadAwareScheduling")
    with _loadaware_args(plugin, loadaware_args):
        return engine.scheduler.evaluate(pod, name), pod


class _loadaware_args:
    """Run the enclosed cycles with other LoadAware thresholds and weights, then put the running
    ones back. Only fields that do not change the plugin's estimates may differ (PREVIEW_FIELDS)."""

    def __init__(self, plugin: Any, args: Any) -> None:
        self.plugin, self.args = plugin, args

    def __enter__(self) -> None:
        p = self.plugin
        if p is None:
            return
        self.saved = (p.args, p.args_version, p.base_profile, p.score_weights)
        p.args, p.args_version = self.args, next(_preview_versions)
        p._configure(self.args)

    def __exit__(self, *exc: object) -> None:
        p = self.plugin
        if p is not None:
            p.args, p.args_version, p.base_profile, p.score_weights = self.saved


def _checked(record: AttemptRecord) -> str:
    """What running the cycle on the changed spec showed."""
    if record.node:
        return f" (checked: the cycle would place it on {record.node})"
    plugins = sorted({f["plugin"] for f in record.filter_failures().values()})
    return f" (checked: still rejected, by {', '.join(plugins) or 'the scheduler'})"


def _fit_advice(engine: Engine, pod: Pod, document: dict[str, Any], failures: dict[str, dict[str, Any]]) -> list[str]:
    snap = engine.scheduler.snapshot
    wanted = snap.pod_vector(pod)
    out = []
    for res in ("cpu", "memory", "ephemeral-storage"):
        reason = f"Insufficient {res}"
        only = [n for n, f in failures.items() if f["plugin"] == "NodeResourcesFit" and f["reasons"] == [reason]]
        col = snap.column(res)
        if not only or col is None:
            continue
        positions = np.array([snap.position[n] for n in only], dtype=np.int64)
        free = snap.allocatable[positions, col] - snap.requested[positions, col]
        asked = int(wanted[col])
        short = asked - int(free.max())
        target = asked - short
        if short <= 0 or target <= 0:
            continue
        count = int((free >= target).sum())
        unit = "CPU" if res == "cpu" else res
        # Say what it asks now, what it would have to ask, and how many nodes that opens.
        line = (f"asks for {_amount(res, asked)} {unit}, {_amount(res, short)} more than the most any node has free: "
                f"if it asked for {_amount(res, target)} {unit} instead, {_nodes(count)} would fit")
        changed = _with_request(document, res, short)
        if changed is not None:
            record, _ = _whatif_record(engine, changed, pod.scheduler_name)
            line += _checked(record)
        out.append(line)
    return out


def _loadaware_advice(engine: Engine, pod: Pod, document: dict[str, Any], failures: dict[str, dict[str, Any]]) -> list[str]:
    import dataclasses

    from scheduler.plugins.loadaware.cache import estimate_pod, to_vec
    from scheduler.plugins.loadaware.plugin import usage_percent

    plugin = engine.scheduler.profiles[pod.scheduler_name].plugins.get("LoadAwareScheduling")
    if plugin is None:
        return []
    incoming = to_vec(plugin.names, estimate_pod(pod, plugin.args))
    out = []
    rejected = [n for n, f in failures.items() if f["plugin"] == "LoadAwareScheduling"]
    for i, res in enumerate(plugin.names):
        reason = f"node(s) {res} usage exceed threshold"
        nodes = [n for n in rejected if failures[n]["reasons"] == [reason]]
        if not nodes:
            continue
        needed = []
        for n in nodes:
            existing = plugin.cache.existing_one(n, False, None)
            alloc = plugin._allocatable(engine.cluster.nodes[n])
            if existing is not None and alloc[i]:
                needed.append(usage_percent(int(existing[i]) + int(incoming[i]), int(alloc[i])))
        if not needed:
            continue
        now = int(plugin.args.usage_thresholds.get(res, 0))
        target = min(100, -(-min(needed) // 5) * 5)
        count = sum(1 for v in needed if v <= target)
        line = (f"{_nodes(len(rejected))} rejected by LoadAwareScheduling: {count} would pass "
                f"if the {res} usage threshold were {target}% instead of {now}%")
        args = dataclasses.replace(plugin.args, usage_thresholds={**plugin.args.usage_thresholds, res: target})
        record, _ = _whatif_record(engine, document, pod.scheduler_name, args)
        line += _checked(record)
        out.append(line)
    return out


# ----- threshold preview ---------------------------------------------------------------------------------
def threshold_preview(engine: Engine, document: dict[str, Any], profile: str, pods: list[str], count_nodes: bool = True) -> dict[str, Any]:
    """What new LoadAware args (in `document`, a whole configuration) would change, before applying:
    nodes passing the usage thresholds now and after, and for each of `pods` (keys, newest first)
    the node the cycle picks now and with the new args. Nothing changes."""
    import dataclasses

    config = check_config(document)
    entry = next((p for p in config.profiles if p.scheduler_name == profile), None)
    if entry is None:
        raise BadInput("profile", f"unknown profile {profile!r}")
    new_args = entry.plugin_config.get("LoadAwareScheduling")
    plugin = engine.scheduler.profiles.get(profile, None)
    running = plugin.plugins.get("LoadAwareScheduling") if plugin is not None else None
    if running is None or new_args is None:
        raise BadInput("profile", f"profile {profile!r} does not run LoadAwareScheduling")
    fixed = {f.name for f in dataclasses.fields(new_args)} - {"usage_thresholds", "prod_usage_thresholds", "resource_weights", "dominant_resource_weight"}
    for name in sorted(fixed):
        if getattr(new_args, name) != getattr(running.args, name):
            raise BadInput(_camel(name), f"{_camel(name)} changes the plugin's estimates; the preview covers {', '.join(PREVIEW_FIELDS)} only (change it under Profiles)")
    nodes: dict[str, int] = {}
    if count_nodes:
        names, percent, reported = _loadaware_percent(engine, running)
        before = _passing(percent, names, running.args.usage_thresholds)
        after = _passing(percent, names, new_args.usage_thresholds)
        nodes = {"total": len(before), "reported": int(reported.sum()), "passingNow": int(before.sum()), "passingAfter": int(after.sum()),
                 "newlyPassing": int((after & ~before).sum()), "newlyFailing": int((before & ~after).sum())}
    changes = []
    moved = 0
    for key in pods[:100]:
        namespace, _, pod_name = key.partition("/")
        try:
            pod = engine.find_pod(namespace, pod_name)
        except NotFound:
            continue
        if pod.scheduler_name != profile:
            continue
        doc = pod_manifest(pod)
        (doc.get("spec") or {}).pop("nodeName", None)
        doc.pop("status", None)
        now, _ = _whatif_record(engine, doc, profile)
        then, _ = _whatif_record(engine, doc, profile, new_args)
        moved += now.node != then.node
        changes.append({"pod": key, "boundTo": pod.node_name or None, "now": now.node, "after": then.node,
                        "feasibleNow": now.feasible_nodes, "feasibleAfter": then.feasible_nodes})
    return {
        "profile": profile,
        "before": _args_json(running.args),
        "after": _args_json(new_args),
        "nodes": nodes,
        "pods": changes,
        "podsChanged": moved,
    }


def whatif_diff(engine: Engine, document: Any, original: Any, profile: str | None) -> dict[str, Any]:
    """What-if for an edited spec next to the pod's current spec: both entries and what changed."""
    edited = engine.whatif(document, profile)
    base = engine.whatif(original, profile) if original is not None else None
    out: dict[str, Any] = {"result": _trim(edited), "base": _trim(base) if base else None}
    if base is not None:
        out["diff"] = {"node": [base["node"], edited["node"]], "outcome": [base["outcome"], edited["outcome"]],
                       "feasibleNodes": [base["feasibleNodes"], edited["feasibleNodes"]],
                       "rejectedNodes": [len(base["filter"]), len(edited["filter"])]}
    return out


def _trim(entry: dict[str, Any]) -> dict[str, Any]:
    """An entry with its 10 best-scored nodes only, and its filter failures counted by plugin."""
    totals = entry["totals"]
    top = sorted(totals, key=lambda n: -totals[n])[:10]
    by_plugin: dict[str, int] = {}
    for failure in entry["filter"].values():
        by_plugin[failure["plugin"]] = by_plugin.get(failure["plugin"], 0) + 1
    return {**entry, "scores": {n: entry["scores"][n] for n in top}, "totals": {n: totals[n] for n in top},
            "filter": dict(list(entry["filter"].items())[:50]), "rejectedBy": by_plugin}


def compare_summary(engine: Engine, document: Any, profiles: list[str], top: int = 10) -> dict[str, Any]:
    """`Engine.compare` cut to the nodes in either profile's top `top`, with their totals and deltas."""
    full = engine.compare(document, profiles)
    a, b = full["results"]
    keep: list[str] = []
    for entry in (a, b):
        for node in sorted(entry["totals"], key=lambda n: -entry["totals"][n])[:top]:
            if node not in keep:
                keep.append(node)
    rows = [{"node": n, "a": a["totals"].get(n), "b": b["totals"].get(n), "delta": full["deltas"][n]["total"],
             "plugins": {p: d for p, d in full["deltas"][n]["plugins"].items() if d}} for n in keep]
    return {"profiles": profiles, "sameNode": full["sameNode"], "results": [_trim(a), _trim(b)], "rows": rows}


def gangs(engine: Engine) -> dict[str, Any]:
    """Every gang (Coscheduling's GangSummary) with its members by state, the pending members with
    why they wait, and the Permit timers of members waiting for the rest of the gang."""
    summaries = json_route(engine, "/apis/v1/plugins/Coscheduling/gangs") if _route_exists(engine, "/apis/v1/plugins/Coscheduling/gangs") else None
    sched = engine.scheduler
    by_key = {p.key: p for p in engine.cluster.pods.values()}
    waiting = {w.pod.key: w for w in sched.waiting.values() if not w.done}
    now = engine.now()
    out = []
    for name, summary in sorted((summaries or {}).items()):
        members = []
        for key in sorted(summary.get("children") or {}):
            pod = by_key.get(key)
            row: dict[str, Any] = {"pod": key, "state": "bound" if key in (summary.get("boundChildren") or {}) else
                                   "waitingForBind" if key in (summary.get("waitingForBindChildren") or {}) else "pending"}
            if pod is not None and pod.node_name:
                row["node"] = pod.node_name
            if pod is not None and row["state"] == "pending":
                info = sched.queue.info(pod.uid)
                row["queue"] = sched.queue.where(pod.uid)
                row["plugins"] = first_failing(sched, pod.scheduler_name, info.unschedulable_plugins | info.pending_plugins) if info else []
            held = waiting.get(key)
            if held is not None:
                row["state"] = "waitingAtPermit"
                row["node"] = held.node
                row["permitDeadlineIn"] = {p: round(max(0.0, at - now), 1) for p, at in held.pending.items()}
            members.append(row)
        states: dict[str, int] = {}
        for m in members:
            states[m["state"]] = states.get(m["state"], 0) + 1
        blocking = next((m for m in members if m["state"] == "pending"), None)
        out.append({"name": name, "summary": {k: v for k, v in summary.items() if k not in ("children", "pendingChildren", "waitingForBindChildren", "boundChildren")},
                    "members": members, "states": states, "blocking": blocking})
    return {"gangs": out, "available": summaries is not None}


def _route_exists(engine: Engine, path: str) -> bool:
    return path in (json_route(engine, "/apis/v1/__services__") or {}).get("GET", [])
