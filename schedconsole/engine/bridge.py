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

from scheduler.api.documents import DocumentError, load_all, looks_like_json
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
def parse_documents(text: str | bytes, source: str) -> list[Any]:
    """YAML (multi-document) or JSON text as a list of documents, read with the engine's bounds
    (nesting depth, go-yaml's alias expansion limit); BadInput names the line."""
    try:
        if looks_like_json(text):
            try:
                docs = load_all(text, json_text=True)
            except DocumentError:
                docs = load_all(text)  # `{a: b}` is YAML flow style, not JSON
        else:
            docs = load_all(text)
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
            out["informers"] = [
                {"kind": i.kind.kind, "installed": i.installed, "relists": i.relists, "watches": i.watches, "resourceVersion": i.resource_version}
                for i in informers
            ]
        recorder = self.extra.get("shadow")
        out["shadow"] = recorder.report() if recorder is not None else None
        return out

    def _simulated_only(self, what: str) -> None:
        if self.mode != "simulated":
            raise BadInput("mode", f"{what} changes the simulated cluster; this console runs in {self.mode} mode (SCHEDCONSOLE_MODE)")

    def _attach(self, scheduler: Scheduler) -> None:
        on_record = self.hooks.on_record
        original = scheduler._publish

        def publish(record: AttemptRecord, update: bool = False) -> None:
            original(record, update)
            on_record(record, update)

        scheduler._publish = publish  # type: ignore[method-assign]

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
        # Finish what the old scheduler started: binding cycles run, Permit waiters are turned back.
        with old.lock:
            while old.tasks:
                old.tasks.popleft()()
            for waiting in list(old.waiting.values()):
                waiting.reject("", "scheduler profiles changed while waiting at Permit")
            while old.tasks:
                old.tasks.popleft()()
            old.extender.stop()
            self.cluster.unwatch(old.on_event)
        self._attach(new)
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
        known = [
            {"kind": "PriorityClass", "metadata": {"name": pc.name}, "value": pc.value, "globalDefault": pc.global_default, "preemptionPolicy": pc.preemption_policy}
            for pc in self.cluster.priority_classes.values()
        ]
        objects = load_objects(documents, source, known)
        self.check_new(objects)
        return objects

    def find_pod(self, namespace: str, name: str) -> Pod:
        """A live pod by namespace and name."""
        for pod in self.cluster.pods.values():
            if pod.namespace == namespace and pod.name == name:
                return pod
        raise NotFound(f"pods \"{name}\" not found in namespace {namespace}")

    def delete_pod(self, namespace: str, name: str) -> dict[str, Any]:
        """Delete a pod; returns its last document."""
        self._simulated_only("deleting a pod")
        pod = self.find_pod(namespace, name)
        self.cluster.delete_pod(pod)
        return pod_manifest(pod)

    # ----- reading -------------------------------------------------------------------------------------
    def nodes(self) -> list[dict[str, Any]]:
        """Every node with requested and allocatable per resource (from the snapshot's arrays)."""
        return [self._node_summary(pos) for pos in range(self.scheduler.snapshot.num_nodes)]

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

    def pods(self) -> list[dict[str, Any]]:
        """Every live pod, with the queue it waits in when pending."""
        where = self.scheduler.queue.where
        return [pod_summary(p, where(p.uid)) for p in self.cluster.pods.values()]

    def pod_detail(self, namespace: str, name: str) -> dict[str, Any]:
        """One pod: summary and current document."""
        pod = self.find_pod(namespace, name)
        return {**pod_summary(pod, self.scheduler.queue.where(pod.uid)), "manifest": pod_manifest(pod)}

    def queue(self) -> dict[str, list[dict[str, Any]]]:
        """Pending pods by queue, with why each waits."""
        sched = self.scheduler
        q = sched.queue
        out: dict[str, list[dict[str, Any]]] = {"active": [], "backoff": [], "unschedulable": [], "gated": []}
        now = self.now()
        for pod in self.cluster.pods.values():
            where = q.where(pod.uid)
            if where not in out:
                continue
            info = q.info(pod.uid)
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
            out[where].append(row)
        return out

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
        objects = load_objects([doc], "pod")
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
    for each of the `score_nodes` highest totals) and up to `filter_nodes` filter failures."""
    failures = record.filter_failures()
    entry: dict[str, Any] = {
        "pod": record.pod,
        "profile": record.profile,
        "attempt": record.attempt,
        "outcome": record.outcome,
        "node": record.node,
        "nominatedNode": record.nominated_node,
        "victims": list(record.victims),
        "message": record.message,
        "filter": failures,
        "uid": record.uid,
        "at": record.at,
        "feasibleNodes": record.feasible_nodes,
        "numAllNodes": record.num_all_nodes,
        "timings": record.timings,
    }
    if len(failures) > filter_nodes:
        entry["filter"] = dict(list(failures.items())[:filter_nodes])
        entry["filterTruncated"] = len(failures) - filter_nodes
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


def live_message(record: AttemptRecord) -> dict[str, Any]:
    """The websocket message of one attempt (DESIGN section 6)."""
    return attempt_message(record)


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
    "NotFound",
    "Record",
    "check_config",
    "default_config_document",
    "live_message",
    "load_objects",
    "parse_config_text",
    "parse_documents",
    "pod_manifest",
    "record_key",
    "record_row",
    "score_table",
    "with_defaults",
]


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
