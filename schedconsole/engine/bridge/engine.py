"""The engine the console hosts: a cluster (simulated, or a live one) and the scheduler running
its profiles, built, stepped, reconfigured and edited on the engine thread."""

from __future__ import annotations

import logging
import socket
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from prometheus_client import generate_latest

from schedconsole.engine.bridge.annotations import result_annotations, result_patch
from schedconsole.engine.bridge.answers import ClusterStatus, DebugFlags, Document, K8sAnswer, PluginTiming, SyncStatus
from schedconsole.engine.bridge.common import HISTORY_LIMIT, BadInput, NotFound
from schedconsole.engine.bridge.documents import check_config, load_objects, pod_manifest
from schedconsole.engine.bridge.preemptions import PreemptionTimeline
from scheduler.api.loader import ClusterObjects
from scheduler.api.objects import Pod
from scheduler.apiserver.server import APIServer
from scheduler.clock import Clock
from scheduler.cluster.errors import APIError
from scheduler.cluster.events import WatchEvent
from scheduler.cluster.simulated import SimulatedCluster
from scheduler.framework.runtime import FrameworkError
from scheduler.frameworkext.debug import FlagError
from scheduler.frameworkext.extender import Extender
from scheduler.kube.backend import KubernetesCluster
from scheduler.kube.client import connect
from scheduler.kube.leaderelection import LeaderElector
from scheduler.kube.mirror import LiveMirror, informer_status
from scheduler.kube.shadow import ShadowRecorder
from scheduler.plugins.registry import new_registry
from scheduler.records import AttemptRecord
from scheduler.scheduler import Scheduler

log = logging.getLogger(__name__)


def _doc_key(doc: dict[str, Any]) -> tuple[str, str]:
    """(namespace, name) of a document."""
    meta = doc.get("metadata") or {}
    return meta.get("namespace", "") or "", meta.get("name", "") or ""


# ----- the engine ----------------------------------------------------------------------------------
# What an import counts, by kind (attributes of ClusterObjects; extension kinds are counted from
# `extensions`): every kind the engine reads is created, none is dropped in silence.
COUNTED_KINDS = (
    ("Node", "nodes"),
    ("Pod", "pods"),
    ("Namespace", "namespaces"),
    ("PriorityClass", "priority_classes"),
    ("PodDisruptionBudget", "pdbs"),
    ("PersistentVolume", "persistent_volumes"),
    ("PersistentVolumeClaim", "persistent_volume_claims"),
    ("StorageClass", "storage_classes"),
    ("CSINode", "csi_nodes"),
    ("CSIDriver", "csi_drivers"),
    ("CSIStorageCapacity", "csi_storage_capacities"),
    ("Service", "services"),
    ("ReplicationController", "replication_controllers"),
    ("ReplicaSet", "replica_sets"),
    ("StatefulSet", "stateful_sets"),
)


@dataclass(slots=True)
class Change:
    """One change of a cluster object, for the store: kind, key, uid, the document or None if deleted."""

    kind: str
    namespace: str
    name: str
    uid: str
    document: dict[str, Any] | None
    # For the change log a replay reads (history.ObjectChange): "add" (a pod created, a node added
    # or replaced), "delete", or "" (not logged: a pod's status updates, other kinds); and when.
    action: str = ""
    at: float = 0.0


@dataclass(slots=True)
class Hooks:
    """What the host wires into the engine: where records, changes and bindings go."""

    on_record: Callable[[AttemptRecord, bool], None] = lambda record, update: None
    on_change: Callable[[Change], None] = lambda change: None
    # (pod uid, pod key, node, apply): the host stores the binding, then calls apply on the engine thread.
    on_bind: Callable[[str, str, str, Callable[[], None]], None] | None = None


Backend = SimulatedCluster | KubernetesCluster
"""The cluster an engine schedules: simulated (the default) or a live one (`build_remote`)."""


@dataclass(slots=True)
class Engine:
    """A simulated cluster and the scheduler running its profiles; one per host."""

    cluster: Backend
    scheduler: Scheduler
    config_document: dict[str, Any]
    hooks: Hooks
    seed: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    preemptions: PreemptionTimeline = field(default_factory=PreemptionTimeline)
    started: float = field(default_factory=time.time)  # wall clock: the counters count from here
    # Simulated mode: each attempt's result is written on its pod (SCHEDCONSOLE_RESULT_ANNOTATIONS).
    annotate_results: bool = True
    _forgetting: str = ""  # the uid of a pod `not_stored` is taking out (its deletion is not stored)

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
    def _new_scheduler(config: Any, cluster: Backend, seed: int | None, top_n: int, failures: bool, metrics: Any) -> Scheduler:
        extender = Extender(debug_top_n=top_n, debug_filter_failure=failures)
        try:
            return Scheduler(
                config, cluster, cluster.clock, new_registry(), seed=seed, keep_records=False, extender=extender, metrics=metrics
            )
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
                raise BadInput(
                    "SCHEDCONSOLE_SHADOW_PROFILE", f"unknown profile {profile!r}; known: {', '.join(scheduler.profiles)}"
                )
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

    def cluster_status(self) -> ClusterStatus:
        """The mode, the API server, leadership, the informers and (shadow mode) the comparison."""
        recorder = self.extra.get("shadow")
        mirror = self.extra.get("sync")
        out = ClusterStatus(
            mode=self.mode,
            server=self.extra.get("server"),
            leading=self.leading,
            shadow=recorder.report() if recorder is not None else None,
            sync=mirror.status() if mirror is not None else None,
        )
        informers = getattr(self.cluster, "informers", None)
        if informers is not None:
            out["informers"] = [informer_status(i) for i in informers]
        elector = self.extra.get("elector")
        if elector is not None:
            out["lease"] = elector.status()
        metrics = self.scheduler.metrics
        if metrics.last_background_error:
            counts = {
                s["labels"]["source"]: s["value"] for s in metrics.as_json().get("schedconsole_background_errors_total", [])
            }
            out["errors"] = [
                {"source": source, "count": int(counts.get(source, 0)), "last": message}
                for source, message in sorted(metrics.last_background_error.items())
            ]
        return out

    def background_error(self, source: str, exc: BaseException) -> None:
        """Log and count an error of work beside the cycles (listed on the Cluster page)."""
        self.scheduler.metrics.background_error(source, exc)

    def plugin_timing(self, every: object = None) -> PluginTiming:
        """`{"every": N}`: each plugin is timed in every Nth attempt (0: never); sets N when given."""
        if every is not None:
            if isinstance(every, bool) or not isinstance(every, int) or every < 0:
                raise BadInput("every", f"invalid value {every!r}: must be a whole number, 0 or more (0: off, 1: every attempt)")
            self.scheduler.plugin_timing_every = every
        return PluginTiming(every=self.scheduler.plugin_timing_every)

    # ----- continuous sync of a live cluster into the simulated one ----------------------------------
    def sync_start(
        self,
        kubeconfig: str = "",
        context: str = "",
        in_cluster: bool = False,
        keep_bindings: bool = True,
        known: list[list[str]] | None = None,
    ) -> SyncStatus:
        """Start mirroring a live cluster into this simulated one (see scheduler/kube/mirror.py);
        `known`: what a sync stopped by a restart had mirrored (`sync_snapshot`), to resume it."""
        self._simulated_only("syncing a live cluster")
        running = self.extra.get("sync")
        if running is not None and running.running:
            raise BadInput("sync", f"a sync from {running.connection.host} is running; stop it first")
        try:
            connection = connect(kubeconfig or None, context or None, in_cluster)
        except Exception as exc:  # the kubernetes client's config errors have no common base
            raise BadInput(
                "kubeconfig",
                f"cannot connect with {kubeconfig or ('the service account' if in_cluster else 'the default kubeconfig')}: {exc}",
            ) from exc

        def post(task: Callable[[], None]) -> None:
            hand_over = self.extra.get("post") or self.scheduler.submit
            hand_over(task)

        mirror = LiveMirror(connection, self.k8s_api().handle, post, keep_bindings=keep_bindings)
        mirror.start(known)
        self.extra["sync"] = mirror
        return dict(mirror.status())

    def sync_stop(self) -> SyncStatus:
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

    def sync_status(self) -> SyncStatus | None:
        """The sync's state, or None if none was started."""
        mirror = self.extra.get("sync")
        return dict(mirror.status()) if mirror is not None else None

    def _simulated_only(self, what: str) -> None:
        if self.mode != "simulated":
            raise BadInput(
                "mode", f"{what} changes the simulated cluster; this console runs in {self.mode} mode (SCHEDCONSOLE_MODE)"
            )

    def set_annotate_results(self, on: bool) -> None:
        """Write each attempt's result on its pod (simulated mode), the raw scores kept for it."""
        self.annotate_results = on
        self.scheduler.keep_raw_scores = on and self.mode == "simulated"

    def _attach(self, scheduler: Scheduler) -> None:
        scheduler.keep_raw_scores = self.annotate_results and self.mode == "simulated"
        on_record = self.hooks.on_record
        original = scheduler._publish

        timeline = self.preemptions

        def publish(record: AttemptRecord, update: bool = False) -> None:
            original(record, update)
            on_record(record, update)
            timeline.on_record(record, update)
            if not update and self.annotate_results and self.mode == "simulated":
                self._annotate(record)

        # The engine's `listeners` are not told whether a record is an update of one already
        # published (the history rewrites its row then), so the publishing method is wrapped.
        scheduler._publish = publish  # type: ignore[method-assign]  # see the comment above
        scheduler.api_call_listeners.append(timeline.on_api_call)

    def _annotate(self, record: AttemptRecord) -> None:
        """Write the attempt's result on its pod as kube-scheduler-simulator does (see
        bridge/annotations.py): only on a pod neither bound nor being bound."""
        cluster = self.cluster
        pod = cluster.pods.get(record.uid)
        binding = isinstance(cluster, SimulatedCluster) and cluster.is_binding(record.uid)  # a live cluster's are not held
        if pod is None or pod.node_name or binding:
            return
        fwk = self.scheduler.profiles.get(record.profile)
        results = result_annotations(record, fwk.plugin_names("filter") if fwk is not None else [])
        patch = result_patch(dict(pod.meta.annotations), results)
        if patch:
            try:
                cluster.patch_annotations(pod, patch)
            except APIError:
                pass  # an injected fault refused the patch: the history still has the attempt

    def _on_event(self, event: WatchEvent) -> None:
        obj = event.new if event.new is not None else event.old
        if event.kind == "Pod":
            if event.old is not None and event.new is not None and not event.old.node_name and event.new.node_name:
                return  # a binding: the host stored it before applying it
            if obj.uid == self._forgetting:
                return  # a pod the database refused to create: nothing of it to store (not_stored)
            doc = pod_manifest(event.new) if event.new is not None else None
            action = {"ADDED": "add", "DELETED": "delete"}.get(event.type, "")
            self.hooks.on_change(Change("Pod", obj.namespace, obj.name, obj.uid, doc, action, self.cluster.clock.now()))
        elif event.kind == "Node":
            doc = dict(event.new.raw) if event.new is not None else None
            action = "delete" if event.type == "DELETED" else "add"
            self.hooks.on_change(Change("Node", "", obj.name, obj.meta.uid or obj.name, doc, action, self.cluster.clock.now()))

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
        new.attempt_count, new.scheduled_count = old.attempt_count, old.scheduled_count  # counted since the engine started
        self.scheduler = new
        self.config_document = document
        # A pod's attempts go on counting under the new profiles (they restarted at 1, so its
        # history showed attempt 1 twice).
        counted = {uid: qpi.attempts for uid in self.cluster.pods if (qpi := old.queue.info(uid)) is not None}
        new.start()
        for uid, attempts in counted.items():
            qpi = new.queue.info(uid)
            if qpi is not None:
                qpi.attempts = attempts
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
        self._tick_agents()
        return self.scheduler.step()

    def _tick_agents(self) -> None:
        """The simulated cluster's agents (the koordlet's NodeMetric reports) on the wall clock."""
        tick = getattr(self.cluster, "tick", None)
        if tick is not None and not self.scheduler.clock.virtual:
            with self.scheduler.lock:
                tick(self.scheduler.clock.now())

    def next_wakeup(self) -> float | None:
        """When something becomes due (backoff expiry, Permit timeout), if anything."""
        return self.scheduler.next_wakeup()

    def idle_tick(self) -> None:
        """Between turns when idle: renew the simulated NodeMetrics that are due, flush expired
        backoffs and the unschedulable leftovers."""
        self._tick_agents()
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
            cluster = self.cluster
            if not isinstance(cluster, SimulatedCluster):  # `k8s` and `sync_start` answer before this
                raise BadInput("mode", f"/k8s serves the simulated cluster; this console runs in {self.mode} mode")

            def persist(kind: str, namespace: str, name: str, uid: str, document: dict[str, Any] | None) -> None:
                self.hooks.on_change(Change(kind, namespace, name, uid, document))

            api = APIServer(cluster, persist=persist, termination_seconds=self.extra.get("k8s_termination_seconds", 1.0))
            self.extra["k8sapi"] = api
        return api

    def k8s(self, request: dict[str, Any]) -> K8sAnswer:
        """One Kubernetes API request as data (see `APIServer.handle`): `{"code", "body"}`."""
        if self.mode != "simulated":
            message = (
                f"/k8s serves the simulated cluster; this console runs in {self.mode} mode against {self.extra.get('server')}"
            )
            status = {
                "kind": "Status",
                "apiVersion": "v1",
                "status": "Failure",
                "code": 503,
                "reason": "ServiceUnavailable",
                "message": message,
            }
            return K8sAnswer(code=503, body=status, warnings=[])
        code, body, warnings = self.k8s_api().handle_warned(request)
        return K8sAnswer(code=code, body=body, warnings=warnings)

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
    def create_objects(self, objects: ClusterObjects, documents: Sequence[Any] = ()) -> dict[str, int]:
        """Add loaded objects to the cluster (nodes first, then pods); counts by kind. `documents`
        are the upload's: those of kinds the cluster's watch events do not store (all but Node and
        Pod) are handed to the store here, so what was imported is there after a restart."""
        self._simulated_only("creating objects")
        counts: dict[str, int] = {}
        cluster = self.cluster
        for pv in objects.persistent_volumes:
            cluster.put_persistent_volume(pv)
        for sc in objects.storage_classes:
            cluster.put_storage_class(sc)
        for csi_node in objects.csi_nodes:
            cluster.put_csi_node(csi_node)
        for driver in objects.csi_drivers:
            cluster.put_csi_driver(driver)
        cluster.csi_storage_capacities.extend(objects.csi_storage_capacities)
        for pvc in objects.persistent_volume_claims:
            cluster.put_persistent_volume_claim(pvc)
        for obj in [*objects.services, *objects.replication_controllers, *objects.replica_sets, *objects.stateful_sets]:
            cluster.selecting.setdefault(obj.kind, {})[f"{obj.namespace}/{obj.name}"] = obj
        for kind, docs in objects.extensions.items():
            for doc in docs:
                cluster.update_object(kind, doc)
            counts[kind] = len(docs)
        for pc in objects.priority_classes:
            self.cluster.priority_classes[pc.name] = pc
        for ns in objects.namespaces:
            self.cluster.namespaces[ns.name] = ns
        for pdb in objects.pdbs:
            self.cluster.pdbs[f"{pdb.meta.namespace}/{pdb.name}"] = pdb
        for node in objects.nodes:
            self.cluster.add_node(node)
        for pod in objects.pods:
            self.resolve_priority(pod)
            try:
                self.cluster.add_pod(pod)
            except APIError as exc:
                raise BadInput("metadata.name", str(exc)) from exc
        for kind, attr in COUNTED_KINDS:
            if getattr(objects, attr):
                counts[kind] = len(getattr(objects, attr))
        for doc in documents:
            stored = doc.get("kind") if isinstance(doc, dict) else None
            if stored in counts and stored not in ("Node", "Pod"):
                namespace, name = _doc_key(doc)
                uid = (doc.get("metadata") or {}).get("uid") or f"{stored}/{namespace}/{name}"
                self.hooks.on_change(Change(str(stored), namespace, name, uid, doc))
        return counts

    def check_new(self, objects: ClusterObjects) -> None:
        """Refuse objects that already exist, before anything is applied."""
        existing = {(p.namespace, p.name) for p in self.cluster.pods.values()}
        for pod in objects.pods:
            if (pod.namespace, pod.name) in existing:
                raise BadInput("metadata.name", f'pods "{pod.name}" already exists in namespace {pod.namespace}')
            self.resolve_priority(pod)
        for node in objects.nodes:
            if node.name in self.cluster.nodes:
                raise BadInput("metadata.name", f'nodes "{node.name}" already exists')
        cluster = self.cluster
        held: list[tuple[str, Any, Any]] = [
            ("PersistentVolume", objects.persistent_volumes, cluster.persistent_volumes),
            ("StorageClass", objects.storage_classes, cluster.storage_classes),
            ("CSINode", objects.csi_nodes, cluster.csi_nodes),
            ("CSIDriver", objects.csi_drivers, cluster.csi_drivers),
        ]
        for kind, new, existing in held:
            for obj in new:
                if obj.name in existing:
                    raise BadInput("metadata.name", f'{kind} "{obj.name}" already exists')
        for pvc in objects.persistent_volume_claims:
            if pvc.key in cluster.persistent_volume_claims:
                raise BadInput("metadata.name", f'PersistentVolumeClaim "{pvc.key}" already exists')
        for kind, docs in objects.extensions.items():
            keys = {_doc_key(d) for d in cluster.extensions.get(kind, ())}
            for doc in docs:
                if _doc_key(doc) in keys:
                    raise BadInput("metadata.name", f'{kind} "{"/".join(filter(None, _doc_key(doc)))}" already exists')

    def resolve_priority(self, pod: Pod) -> None:
        if pod.priority is not None:
            if not pod.preemption_policy:
                pod.preemption_policy = "PreemptLowerPriority"
            return
        classes = self.cluster.priority_classes
        pc = (
            classes.get(pod.priority_class_name)
            if pod.priority_class_name
            else next((c for c in classes.values() if c.global_default), None)
        )
        if pod.priority_class_name and pc is None:
            raise BadInput("spec.priorityClassName", f"no PriorityClass with name {pod.priority_class_name} was found")
        pod.priority = pc.value if pc is not None else 0
        if not pod.preemption_policy:
            pod.preemption_policy = pc.preemption_policy if pc is not None and pc.preemption_policy else "PreemptLowerPriority"

    def load_new(self, documents: list[Any], source: str) -> ClusterObjects:
        """Objects from an upload, resolved against the cluster's PriorityClasses."""
        objects = load_objects(documents, source, self.known_classes(), strict=True)
        self.check_new(objects)
        return objects

    def known_classes(self) -> list[dict[str, Any]]:
        """The cluster's PriorityClasses as documents, for loading pods that name them."""
        return [
            {
                "kind": "PriorityClass",
                "metadata": {"name": pc.name},
                "value": pc.value,
                "globalDefault": pc.global_default,
                "preemptionPolicy": pc.preemption_policy,
            }
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
        raise NotFound(f'pods "{name}" not found in namespace {namespace}')

    def delete_pod(self, namespace: str, name: str) -> Document:
        """Delete a pod; returns its last document."""
        self._simulated_only("deleting a pod")
        pod = self.find_pod(namespace, name)
        self.cluster.delete_pod(pod)
        return pod_manifest(pod)

    # ----- reading -------------------------------------------------------------------------------------

    # ----- Koordinator routes, flags, metrics -------------------------------------------------------
    def dispatch(self, method: str, path: str, body: bytes, query: Mapping[str, str]) -> tuple[int, str, bytes]:
        """Answer a Koordinator route: (status, content type, body)."""
        response = self.scheduler.extender.dispatch(method, path, body, query)
        return response.status, response.content_type, response.content()

    def debug_flags(self) -> DebugFlags:
        """debugTopNScores and debugFilterFailure as the engine holds them."""
        flags = self.scheduler.extender.flags
        return DebugFlags(debugTopNScores=flags.top_n, debugFilterFailure=flags.filter_failure)

    def set_debug_flags(self, top_n: int | None = None, filter_failure: bool | None = None) -> DebugFlags:
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

    def not_stored(self, kind: str, key: str, message: str, created: bool = False) -> None:
        """A write of this object the database refused: counted (`schedconsole_background_errors_total`
        of source `store`, shown on the Cluster page) and a Warning Event `NotStored` on the object.
        A simulated pod whose creation was refused is forgotten, without a change for the store: the
        database is the record, and scheduling it would store it by its later writes (its binding,
        its result annotations) although its creator was told it was not created."""
        self.scheduler.metrics.background_error("store", RuntimeError(message))
        self.cluster.record("Warning", "NotStored", key if kind == "Pod" else f"{kind} {key}", message)
        if not (created and kind == "Pod" and isinstance(self.cluster, SimulatedCluster)):
            return
        namespace, _, name = key.rpartition("/")
        try:
            pod = self.find_pod(namespace, name)
        except NotFound:
            return
        self._forgetting = pod.uid
        try:
            self.cluster.delete_pod(pod)
        except APIError:
            log.warning("could not forget pod %s the database refused", key, exc_info=True)
        finally:
            self._forgetting = ""

    def metrics_text(self) -> bytes:
        """The engine's Prometheus registry in the text format."""
        return bytes(generate_latest(self.scheduler.metrics.registry))

    def profile_names(self) -> list[str]:
        """The running profiles' scheduler names."""
        return list(self.scheduler.profiles)


def build_check(document: Any) -> list[str]:
    """Validate a configuration and build its profiles on an empty cluster; the profile names."""
    config = check_config(document)
    cluster = SimulatedCluster(clock=Clock())
    scheduler = Engine._new_scheduler(config, cluster, None, 0, False, None)
    return list(scheduler.profiles)
