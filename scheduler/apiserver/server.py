"""Kubernetes API semantics over the simulated cluster: what `/k8s` serves (kubectl works against it).

Documents in, documents out. Every change of an object (made here, or by the engine: bindings,
nominations, preemption's deletions, controllers' status writes) gets the next resourceVersion
and goes into a bounded log that watches read from; a watch from a version older than the log
gets 410 Gone, as the API server's watch cache answers (k8s.io/apiserver `pkg/storage/cacher`).
resourceVersions start at the wall clock in milliseconds, so versions handed out before a
restart are older than any after it (a watch resuming across a restart relists).

The engine owns the objects: pods and nodes are the cluster's objects, the Koordinator kinds its
extension documents; namespaces, PriorityClasses and PDBs keep their documents here beside the
engine's parsed objects. Requests run on the engine thread, between scheduling cycles.
"""

from __future__ import annotations

import base64
import builtins
import copy
import json
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from scheduler.api.fields import FieldError, format_time
from scheduler.api.loader import EXTENSION_VALIDATORS
from scheduler.api.objects import Pod, parse_namespace, parse_node, parse_pdb, parse_pod, parse_priority_class
from scheduler.api.validation import refusal
from scheduler.apiserver.documents import doc_meta, doc_time, query_int, same_document, without_images
from scheduler.apiserver.fieldvalidation import decode, decode_patched, mode_of
from scheduler.apiserver.patches import PatchError, apply_patch
from scheduler.apiserver.query import SelectorError, labels_match, parse_field_selector, parse_label_selector
from scheduler.apiserver.resources import (
    BUILTIN_NAMESPACES,
    EXTENSION_KINDS,
    RESOURCES,
    Resource,
    StatusError,
    conflict,
    core_event,
    events_v1,
    find_resource,
    invalid,
    not_found,
)
from scheduler.cluster.errors import APIError
from scheduler.cluster.events import WatchEvent
from scheduler.cluster.simulated import SimulatedCluster

LOG_SIZE = 10000


Key = tuple[str, str, str]  # kind, namespace, name


@dataclass(slots=True)
class LogEntry:
    """One change in the watch log: its version, event type and the object before and after."""

    rv: int
    kind: str
    type: str
    namespace: str
    name: str
    old: Any
    new: Any


@dataclass(slots=True)
class APIServer:
    """Kubernetes REST semantics (get, list, watch, create, update, patch, delete, subresources)."""

    cluster: SimulatedCluster
    # Called with (kind, namespace, name, uid, document or None) for changes of the kinds the
    # engine does not store itself (namespaces, PriorityClasses, PDBs, Koordinator objects).
    persist: Callable[[str, str, str, str, dict[str, Any] | None], None] = lambda *args: None
    # Seconds a bound pod takes to stop after a graceful delete (the simulated kubelet's part).
    termination_seconds: float = 1.0
    rv: int = 0
    floor: int = 0
    started: float = 0.0
    versions: dict[Key, int] = field(default_factory=dict)
    docs: dict[Key, dict[str, Any]] = field(default_factory=dict)
    log: deque[LogEntry] = field(default_factory=lambda: deque(maxlen=LOG_SIZE))
    pod_index: dict[tuple[str, str], str] = field(default_factory=dict)
    terminating: dict[str, float] = field(default_factory=dict)
    events_seen: int = 0
    event_keys: deque[Key] = field(default_factory=deque)  # scheduler Events, oldest first
    field_validation: str = "Warn"  # the current request's `fieldValidation`
    warnings: list[str] = field(default_factory=list)  # the current request's `Warning` texts

    def __post_init__(self) -> None:
        self.rv = self.floor = int(time.time() * 1000)
        self.started = self.cluster.clock.now()
        for pod in self.cluster.pods.values():
            self.pod_index[(pod.namespace, pod.name)] = pod.uid
        for name in BUILTIN_NAMESPACES:
            if name not in self.cluster.namespaces:
                self.cluster.namespaces[name] = parse_namespace({"metadata": {"name": name}})
        # The objects' uids are kept: the console stores each object under its uid, so an update
        # through this API (the continuous sync's) must find the row an import wrote.
        for ns in self.cluster.namespaces.values():
            self.docs[("Namespace", "", ns.name)] = {
                "metadata": doc_meta(ns.meta, namespaced=False),
                "spec": {"finalizers": ["kubernetes"]},
                "status": {"phase": "Active"},
            }
        for pc in self.cluster.priority_classes.values():
            doc: dict[str, Any] = {
                "metadata": doc_meta(pc.meta, namespaced=False),
                "value": pc.value,
                "preemptionPolicy": pc.preemption_policy,
            }
            if pc.global_default:
                doc["globalDefault"] = True
            self.docs[("PriorityClass", "", pc.name)] = doc
        for pdb in self.cluster.pdbs.values():
            self.docs[("PodDisruptionBudget", pdb.meta.namespace, pdb.name)] = {
                "metadata": doc_meta(pdb.meta, namespaced=True),
                "spec": {},
                "status": {"disruptionsAllowed": pdb.disruptions_allowed},
            }
        self.cluster.watch(self._on_event)

    # ----- the engine's changes ----------------------------------------------------------------
    def _on_event(self, event: WatchEvent) -> None:
        if event.kind == "Pod":
            obj = event.new if event.new is not None else event.old
            if event.type == "ADDED":
                self.pod_index[(obj.namespace, obj.name)] = obj.uid
            elif event.type == "DELETED":
                self.pod_index.pop((obj.namespace, obj.name), None)
                self.terminating.pop(obj.uid, None)
            self._record("Pod", event.type, obj.namespace, obj.name, event.old, event.new)
        elif event.kind == "Node":
            obj = event.new if event.new is not None else event.old
            self._record("Node", event.type, "", obj.name, event.old, event.new)
        elif event.kind in EXTENSION_KINDS:
            doc = event.new if event.new is not None else event.old
            meta = doc.get("metadata") or {}
            self._record(event.kind, event.type, meta.get("namespace", "") or "", meta.get("name", ""), event.old, event.new)

    def _record(self, kind: str, type_: str, namespace: str, name: str, old: Any, new: Any) -> int:
        self.rv += 1
        key = (kind, namespace, name)
        if type_ == "DELETED":
            self.versions.pop(key, None)
        else:
            self.versions[key] = self.rv
        if len(self.log) == self.log.maxlen:
            self.floor = self.log[0].rv
        self.log.append(LogEntry(self.rv, kind, type_, namespace, name, old, new))
        return self.rv

    def tick(self) -> None:
        """Finish graceful deletions that are due and take in the events the engine recorded."""
        now = self.cluster.clock.now()
        for uid, due in list(self.terminating.items()):
            if due <= now:
                self.terminating.pop(uid, None)
                pod = self.cluster.pods.get(uid)
                if pod is not None:
                    try:
                        self.cluster.delete_pod(pod)
                    except APIError:
                        self.terminating[uid] = now + 1.0
        self._sync_events()

    def _sync_events(self) -> None:
        recorded = self.cluster.events
        # Positions count from the first event ever recorded; the cluster may have let old ones go.
        for event in recorded[max(0, self.events_seen - self.cluster.events_dropped) :]:
            namespace, _, name = event.object.rpartition("/")
            namespace = namespace or "default"
            stamp = format_time(event.at)
            ev_name = f"{name}.{uuid.uuid4().hex[:16]}"
            doc = {
                "metadata": {"name": ev_name, "namespace": namespace, "uid": str(uuid.uuid4()), "creationTimestamp": stamp},
                "involvedObject": {"kind": "Pod", "namespace": namespace, "name": name, "apiVersion": "v1"},
                "reason": event.reason,
                "message": event.message,
                "type": event.type,
                "source": {"component": "default-scheduler"},
                "reportingComponent": "default-scheduler",
                "firstTimestamp": stamp,
                "lastTimestamp": stamp,
                "count": 1,
            }
            key = ("Event", namespace, ev_name)
            self.docs[key] = doc
            self._record("Event", "ADDED", namespace, ev_name, None, doc)
            self.event_keys.append(key)
        self.events_seen = self.cluster.events_dropped + len(recorded)
        self._expire_events()

    def _expire_events(self) -> None:
        """Keep the newest `cluster.history_limit` scheduler Events, as kube-apiserver lets events go
        after `--event-ttl`: older ones are deleted (watchers see DELETED)."""
        limit = self.cluster.history_limit
        while limit is not None and len(self.event_keys) > limit:
            key = self.event_keys.popleft()
            old = self.docs.pop(key, None)
            if old is not None:  # not deleted through the API meanwhile
                self._record("Event", "DELETED", key[1], key[2], old, None)

    # ----- rendering -----------------------------------------------------------------------------
    def _render(self, res: Resource, obj: Any, rv: int | None) -> dict[str, Any]:
        kind = res.kind
        if kind == "Pod":
            doc = self._pod_doc(obj)
        elif kind == "Node":
            doc = obj.raw
        elif kind == "Event" and res.group == "events.k8s.io":
            doc = events_v1(obj)
        else:
            doc = copy.deepcopy(obj)
        meta = dict(doc.get("metadata") or {})
        if res.namespaced:
            meta.setdefault("namespace", "default")
        else:
            meta.pop("namespace", None)
        # Filled only when absent: rendering runs for every watch event a client is sent.
        if "uid" not in meta:
            meta["uid"] = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{kind}/{meta.get('namespace', '')}/{meta.get('name', '')}"))
        if "creationTimestamp" not in meta:
            meta["creationTimestamp"] = doc_time(self.started)
        if rv is not None:
            meta["resourceVersion"] = str(rv)
        doc["metadata"] = meta
        doc["apiVersion"] = res.api_version
        doc["kind"] = res.kind
        return doc

    def _pod_doc(self, pod: Pod) -> dict[str, Any]:
        doc = pod.raw
        meta = dict(doc.get("metadata") or {})
        meta["labels"] = dict(pod.labels)
        meta["annotations"] = dict(pod.annotations)
        for key in ("labels", "annotations"):
            if not meta[key]:
                del meta[key]
        meta["uid"] = pod.uid
        meta["namespace"] = pod.namespace
        if pod.meta.deletion_timestamp is not None:
            meta["deletionTimestamp"] = format_time(pod.meta.deletion_timestamp)
        spec = dict(doc.get("spec") or {})
        spec.setdefault("schedulerName", pod.scheduler_name or "default-scheduler")
        if pod.node_name:
            spec["nodeName"] = pod.node_name
        if pod.priority is not None:
            spec["priority"] = pod.priority
        status = dict(doc.get("status") or {})
        status["phase"] = pod.phase or "Pending"
        if pod.nominated_node_name:
            status["nominatedNodeName"] = pod.nominated_node_name
        else:
            status.pop("nominatedNodeName", None)
        conditions = [c for c in pod.conditions if c.get("type") != "PodScheduled"]
        if pod.node_name:
            conditions.insert(
                0,
                {
                    "type": "PodScheduled",
                    "status": "True",
                    "lastTransitionTime": status.get("startTime") or doc_time(pod.start_time or self.started),
                },
            )
            if pod.start_time is not None:
                if "startTime" not in status:
                    status["startTime"] = doc_time(pod.start_time)
        else:
            conditions = [c for c in pod.conditions]
        if conditions:
            status["conditions"] = conditions
        doc["metadata"], doc["spec"], doc["status"] = meta, spec, status
        return doc

    # ----- reading ---------------------------------------------------------------------------------
    def _objects(self, res: Resource, namespace: str) -> Iterable[tuple[Key, Any]]:
        kind = res.kind
        if kind == "Pod":
            for pod in self.cluster.pods.values():
                if not namespace or pod.namespace == namespace:
                    yield ("Pod", pod.namespace, pod.name), pod
        elif kind == "Node":
            for node in self.cluster.nodes.values():
                yield ("Node", "", node.name), node
        elif kind in EXTENSION_KINDS:
            for doc in self.cluster.extensions.get(kind, ()):
                meta = doc.get("metadata") or {}
                ns = meta.get("namespace", "") or ("default" if res.namespaced else "")
                if not namespace or ns == namespace:
                    yield (kind, ns, meta.get("name", "")), doc
        else:
            for key, doc in self.docs.items():
                if key[0] == kind and (not namespace or key[1] == namespace):
                    yield key, doc

    def _lookup(self, res: Resource, namespace: str, name: str) -> Any:
        kind = res.kind
        if kind == "Pod":
            uid = self.pod_index.get((namespace, name))
            obj: Any = self.cluster.pods.get(uid) if uid is not None else None
        elif kind == "Node":
            obj = self.cluster.nodes.get(name)
        elif kind in EXTENSION_KINDS:
            obj = next((doc for key, doc in self._objects(res, namespace) if key[2] == name), None)
        else:
            obj = self.docs.get((kind, namespace, name))
        if obj is None:
            raise not_found(res, name)
        return obj

    def _version(self, res: Resource, namespace: str, name: str) -> int:
        return self.versions.get((res.kind, namespace, name), self.floor)

    def get(self, res: Resource, namespace: str, name: str) -> dict[str, Any]:
        """One object."""
        obj = self._lookup(res, namespace, name)
        return self._render(res, obj, self._version(res, namespace, name))

    def list(
        self,
        res: Resource,
        namespace: str,
        label_selector: str = "",
        field_selector: str = "",
        limit: int = 0,
        continue_token: str = "",
    ) -> dict[str, Any]:
        """A list with selectors and paging (`continue` resumes after the last name returned)."""
        match = self._matcher(res, label_selector, field_selector)
        start: tuple[str, str] | None = None
        if continue_token:
            try:
                token = json.loads(base64.urlsafe_b64decode(continue_token.encode()))
                start = (str(token["ns"]), str(token["name"]))
            except (ValueError, KeyError, TypeError) as exc:
                raise StatusError(400, "BadRequest", f"invalid continue token: {exc}") from exc
        docs = []
        for key, obj in sorted(self._objects(res, namespace), key=lambda item: (item[0][1], item[0][2])):
            if start is not None and (key[1], key[2]) <= start:
                continue
            doc = self._render(res, obj, self.versions.get(key, self.floor))
            if match(doc):
                docs.append(doc)
        meta: dict[str, Any] = {"resourceVersion": str(self.rv)}
        if limit > 0 and len(docs) > limit:
            last = docs[limit - 1]["metadata"]
            meta["continue"] = base64.urlsafe_b64encode(
                json.dumps({"ns": last.get("namespace", ""), "name": last["name"]}).encode()
            ).decode()
            meta["remainingItemCount"] = len(docs) - limit
            docs = docs[:limit]
        return {"kind": f"{res.kind}List", "apiVersion": res.api_version, "metadata": meta, "items": docs}

    def _matcher(self, res: Resource, label_selector: str, field_selector: str) -> Callable[[dict[str, Any]], bool]:
        try:
            labels = parse_label_selector(label_selector)
            fields = parse_field_selector(field_selector, res.kind)
        except SelectorError as exc:
            raise StatusError(400, "BadRequest", f"unable to parse requirement: {exc}") from exc

        def match(doc: dict[str, Any]) -> bool:
            return labels_match(labels, (doc.get("metadata") or {}).get("labels") or {}) and fields(doc)

        return match

    def watch(
        self, res: Resource, namespace: str, since: int, label_selector: str = "", field_selector: str = ""
    ) -> dict[str, Any]:
        """Events after resourceVersion `since`: `{"events": [...], "resourceVersion"}`; 410 when too old."""
        self.tick()
        if since < self.floor:
            raise StatusError(410, "Expired", f"too old resource version: {since} ({self.floor})")
        match = self._matcher(res, label_selector, field_selector)
        selective = bool(label_selector.strip() or field_selector.strip())
        events: list[dict[str, Any]] = []
        for entry in self._entries_after(since):
            if entry.kind != res.kind or (namespace and entry.namespace != namespace):
                continue
            if not selective and entry.type != "DELETED":
                # Everything matches: only the new state is sent (rendering the old one costs as much).
                events.append({"type": entry.type, "object": self._render(res, entry.new, entry.rv)})
                continue
            old = self._render(res, entry.old, entry.rv) if entry.old is not None else None
            new = self._render(res, entry.new, entry.rv) if entry.new is not None else None
            was, now = old is not None and match(old), new is not None and match(new)
            if entry.type == "DELETED":
                if was and old is not None:
                    events.append({"type": "DELETED", "object": old})
            elif was and now:
                events.append({"type": entry.type, "object": new})
            elif now:
                events.append({"type": "ADDED", "object": new})
            elif was and old is not None:
                # Left the selection: a deletion of its last matching state, at the new version.
                events.append({"type": "DELETED", "object": old})
        return {"events": events, "resourceVersion": str(self.rv)}

    def _entries_after(self, since: int) -> Iterable[LogEntry]:
        log = self.log
        if not log or log[-1].rv <= since:
            return ()
        # Versions are consecutive in the log: index straight to the first newer entry.
        first = max(0, since + 1 - log[0].rv)
        return (log[i] for i in range(first, len(log)))

    # ----- writing ---------------------------------------------------------------------------------
    def create(self, res: Resource, namespace: str, body: Any) -> dict[str, Any]:
        """Create an object (201), or 409 AlreadyExists."""
        doc = self._body(res, namespace, body)
        self.warnings += decode(res, doc, self.field_validation)
        meta = doc["metadata"]
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = f"{meta['generateName']}{uuid.uuid4().hex[:5]}"
        name = meta.get("name") or ""
        if not name:
            raise invalid(res, "", "metadata.name: Required value: name or generateName is required")
        ns = meta.get("namespace", "")
        try:
            self._lookup(res, ns, name)
        except StatusError:
            pass
        else:
            group = f".{res.group}" if res.group else ""
            raise StatusError(
                409, "AlreadyExists", f'{res.name}{group} "{name}" already exists', {"name": name, "kind": res.name}
            )
        meta["uid"] = str(uuid.uuid4())
        meta["creationTimestamp"] = format_time(self.cluster.clock.now())
        meta.pop("resourceVersion", None)
        self._store(res, ns, name, doc, None)
        return self.get(res, ns, name)

    def _body(self, res: Resource, namespace: str, body: Any) -> dict[str, Any]:
        if not isinstance(body, dict):
            raise StatusError(400, "BadRequest", f"the body must be a {res.kind} object, got {type(body).__name__}")
        if body.get("kind") not in (None, res.kind):
            raise StatusError(400, "BadRequest", f"the body is a {body.get('kind')}, the URL names {res.name} ({res.kind})")
        doc = copy.deepcopy(body)
        meta = doc.get("metadata")
        if not isinstance(meta, dict):
            meta = doc["metadata"] = {}
        if res.namespaced:
            ns = meta.get("namespace") or namespace or "default"
            if namespace and ns != namespace:
                raise StatusError(
                    400, "BadRequest", "the namespace of the provided object does not match the namespace sent on the request"
                )
            meta["namespace"] = ns
        else:
            meta.pop("namespace", None)
        doc["apiVersion"], doc["kind"] = res.api_version, res.kind
        return doc

    def update(self, res: Resource, namespace: str, name: str, body: Any, subresource: str = "") -> dict[str, Any]:
        """Replace an object (or its status); 409 when `metadata.resourceVersion` is stale."""
        doc = self._body(res, namespace, body)
        self.warnings += decode(res, doc, self.field_validation)
        meta = doc["metadata"]
        if meta.get("name", name) != name:
            raise StatusError(
                400, "BadRequest", f"the name of the object ({meta.get('name')}) does not match the name on the URL ({name})"
            )
        meta["name"] = name
        current = self.get(res, namespace, name)
        given = meta.get("resourceVersion")
        if given and str(given) != current["metadata"]["resourceVersion"]:
            raise conflict(
                res, name, "the object has been modified; please apply your changes to the latest version and try again"
            )
        return self._replace(res, namespace, name, current, doc, subresource)

    def patch(
        self, res: Resource, namespace: str, name: str, content_type: str, patch: Any, subresource: str = ""
    ) -> dict[str, Any]:
        """Apply a JSON merge, strategic merge or JSON patch to the current object."""
        current = self.get(res, namespace, name)
        try:
            doc = apply_patch(current, content_type, patch)
        except PatchError as exc:
            code = 415 if "unsupported patch type" in str(exc) else 422
            raise StatusError(code, "UnsupportedMediaType" if code == 415 else "Invalid", str(exc)) from exc
        if isinstance(doc, dict):
            self.warnings += decode_patched(res, doc, self.field_validation, content_type, patch)
        given = (doc.get("metadata") or {}).get("resourceVersion")
        if given and str(given) != current["metadata"]["resourceVersion"]:
            raise conflict(
                res, name, "the object has been modified; please apply your changes to the latest version and try again"
            )
        doc = self._body(res, namespace, doc)
        return self._replace(res, namespace, name, current, doc, subresource)

    def _replace(
        self, res: Resource, namespace: str, name: str, current: dict[str, Any], doc: dict[str, Any], subresource: str
    ) -> dict[str, Any]:
        meta = doc["metadata"]
        for fixed in ("uid", "creationTimestamp", "namespace", "name"):
            if fixed in current["metadata"]:
                meta[fixed] = current["metadata"][fixed]
        meta.pop("resourceVersion", None)
        if subresource == "status":
            out = {**current, "status": doc.get("status")}
            out["metadata"] = {k: v for k, v in current["metadata"].items() if k != "resourceVersion"}
            doc = out
        elif "status" in res.subresources:
            # With a status subresource, the main resource's update leaves status alone.
            if "status" in current:
                doc["status"] = current["status"]
            else:
                doc.pop("status", None)
        if res.kind == "Pod" and subresource != "status":
            self._check_pod_update(res, name, current, doc)
        if same_document(current, doc):
            return current  # an update that changes nothing keeps its version, as upstream
        self._store(res, namespace, name, doc, current)
        return self.get(res, namespace, name)

    def _check_pod_update(self, res: Resource, name: str, current: dict[str, Any], doc: dict[str, Any]) -> None:
        mutable = {"schedulingGates", "tolerations", "activeDeadlineSeconds", "terminationGracePeriodSeconds"}
        old = {k: v for k, v in (current.get("spec") or {}).items() if k not in mutable}
        new = {k: v for k, v in (doc.get("spec") or {}).items() if k not in mutable}
        new.setdefault("schedulerName", old.get("schedulerName"))
        for key in ("nodeName", "priority"):
            if key in old:
                new.setdefault(key, old[key])
        if without_images(old) != without_images(new):
            changed = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
            raise invalid(
                res,
                name,
                f"spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`, `spec.initContainers[*].image`, "
                f"`spec.activeDeadlineSeconds`, `spec.tolerations` (only additions to existing tolerations), `spec.terminationGracePeriodSeconds` "
                f"(allow it to be set to 1 if it was previously negative) (changed: {', '.join(changed)})",
            )

    def _store(self, res: Resource, namespace: str, name: str, doc: dict[str, Any], current: dict[str, Any] | None) -> None:
        """Hand a created or replaced object to the engine (parsed as the engine reads it)."""
        kind = res.kind
        path = f"{res.name}/{name}"
        refused = refusal(kind, doc)  # unknown fields: the web view applies `fieldValidation`
        if refused:
            raise invalid(res, name, refused)
        try:
            if kind == "Pod":
                self._store_pod(doc, current)
            elif kind == "Node":
                self.cluster.add_node(parse_node(doc, path))
            elif kind in EXTENSION_KINDS:
                EXTENSION_VALIDATORS[kind](doc, path)
                self.cluster.update_object(kind, doc)
                self.persist(kind, namespace, name, doc["metadata"]["uid"], doc)
            else:
                self._store_document(res, namespace, name, doc, current)
        except FieldError as exc:
            raise invalid(res, name, str(exc)) from exc
        except APIError as exc:
            raise StatusError(500, "InternalError", str(exc)) from exc

    def _store_document(
        self, res: Resource, namespace: str, name: str, doc: dict[str, Any], current: dict[str, Any] | None
    ) -> None:
        kind = res.kind
        path = f"{res.name}/{name}"
        if kind == "Namespace":
            ns = parse_namespace(doc, path)
            self.cluster.put_namespace(ns)
            doc.setdefault("status", {"phase": "Active"})
        elif kind == "PriorityClass":
            self.cluster.priority_classes[name] = parse_priority_class(doc, path)
        elif kind == "PodDisruptionBudget":
            self.cluster.pdbs[f"{namespace}/{name}"] = parse_pdb(doc, path)
        key = (kind, namespace, name)
        stored = copy.deepcopy(doc)
        stored["metadata"].pop("resourceVersion", None)
        self.docs[key] = stored
        self._record(kind, "MODIFIED" if current is not None else "ADDED", namespace, name, current, stored)
        if kind in ("Namespace", "PriorityClass", "PodDisruptionBudget"):
            self.persist(kind, namespace, name, stored["metadata"].get("uid", f"{kind}/{namespace}/{name}"), stored)

    def _store_pod(self, doc: dict[str, Any], current: dict[str, Any] | None) -> None:
        meta = doc["metadata"]
        spec = doc.setdefault("spec", {})
        if not isinstance(spec, dict):
            raise FieldError("spec", "must be an object")
        spec.setdefault("schedulerName", "default-scheduler")
        if current is None:
            self._admit_priority(doc)
            status = doc.setdefault("status", {})
            if isinstance(status, dict):
                status.setdefault("phase", "Pending")
        pod = parse_pod(doc, f"pods/{meta.get('name')}")
        status = doc.get("status") or {}
        if current is None:
            if pod.node_name and pod.phase == "Pending":
                pod = pod.with_changes(phase="Running", start_time=self.cluster.clock.now())
            self.cluster.add_pod(pod)
            return
        uid = self.pod_index[(pod.namespace, pod.name)]
        old = self.cluster.pods[uid]
        phase = status.get("phase") or old.phase
        pod = pod.with_changes(
            node_name=old.node_name,
            phase=phase,
            start_time=old.start_time,
            nominated_node_name=status.get("nominatedNodeName") or "",
            conditions=[c for c in status.get("conditions") or [] if c.get("type") != "PodScheduled" or not old.node_name],
        )
        if old.terminal and phase != old.phase:
            raise FieldError("status.phase", f"cannot change from terminal phase {old.phase} to {phase}")
        self.cluster.update_pod(pod)

    def _admit_priority(self, doc: dict[str, Any]) -> None:
        """The Priority admission plugin: spec.priority and preemptionPolicy from the PriorityClass."""
        spec = doc["spec"]
        classes = self.cluster.priority_classes
        name = spec.get("priorityClassName") or ""
        pc = classes.get(name) if name else next((c for c in classes.values() if c.global_default), None)
        if name and pc is None:
            raise StatusError(
                403,
                "Forbidden",
                f'pods "{doc["metadata"].get("name")}" is forbidden: no PriorityClass with name {name} was found',
            )
        value = pc.value if pc is not None else 0
        if spec.get("priority") is not None and spec["priority"] != value and name:
            raise invalid(
                find_resource("", "v1", "pods") or RESOURCES[0],
                doc["metadata"].get("name", ""),
                "spec.priority: Forbidden: the integer value of priority must not be provided in pod spec; priority admission controller computed "
                f"{value} from the given PriorityClass name",
            )
        spec.setdefault("priority", value)
        spec.setdefault(
            "preemptionPolicy", pc.preemption_policy if pc is not None and pc.preemption_policy else "PreemptLowerPriority"
        )
        if pc is not None and not name:
            spec["priorityClassName"] = pc.name

    def delete(self, res: Resource, namespace: str, name: str, grace_seconds: int | None = None) -> dict[str, Any]:
        """Delete an object; a bound pod is deleted gracefully (deletionTimestamp, then gone)."""
        current = self.get(res, namespace, name)
        kind = res.kind
        if kind == "Pod":
            return self._delete_pod(current, grace_seconds)
        if kind == "Node":
            self.cluster.delete_node(name)
        elif kind in EXTENSION_KINDS:
            self.cluster.delete_object(kind, namespace, name)
            self.persist(kind, namespace, name, current["metadata"]["uid"], None)
        else:
            key = (kind, namespace, name)
            old = self.docs.pop(key)
            if kind == "Namespace":
                self.cluster.namespaces.pop(name, None)
            elif kind == "PriorityClass":
                self.cluster.priority_classes.pop(name, None)
            elif kind == "PodDisruptionBudget":
                self.cluster.pdbs.pop(f"{namespace}/{name}", None)
            self._record(kind, "DELETED", namespace, name, old, None)
            if kind in ("Namespace", "PriorityClass", "PodDisruptionBudget"):
                self.persist(kind, namespace, name, current["metadata"]["uid"], None)
        return {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Success",
            "details": {"name": name, "kind": res.name, "uid": current["metadata"]["uid"]},
        }

    def _delete_pod(self, current: dict[str, Any], grace_seconds: int | None) -> dict[str, Any]:
        meta = current["metadata"]
        uid = self.pod_index[(meta["namespace"], meta["name"])]
        pod = self.cluster.pods[uid]
        grace = (
            grace_seconds
            if grace_seconds is not None
            else int((current.get("spec") or {}).get("terminationGracePeriodSeconds", 30))
        )
        if pod.node_name and grace > 0 and not pod.terminal:
            if pod.meta.deletion_timestamp is None:
                now = self.cluster.clock.now()
                meta_fields = {f: getattr(pod.meta, f) for f in pod.meta.__slots__}
                self.cluster.update_pod(pod.with_changes(meta=type(pod.meta)(**{**meta_fields, "deletion_timestamp": now})))
                # No containers to stop: the simulated kubelet confirms after a short pause.
                self.terminating[uid] = now + min(float(grace), self.termination_seconds)
            out = self.get(RESOURCES[0], meta["namespace"], meta["name"])
            out["metadata"]["deletionGracePeriodSeconds"] = grace
            return out
        self.cluster.delete_pod(pod)
        return current

    def bind(self, namespace: str, name: str, body: Any) -> dict[str, Any]:
        """`pods/binding` (and `bindings`): assign a pending pod to a node; 409 when already bound."""
        pods = RESOURCES[0]
        if not isinstance(body, dict) or not isinstance(body.get("target"), dict) or not body["target"].get("name"):
            raise StatusError(400, "BadRequest", "a Binding needs target.name (the node)")
        target = str(body["target"]["name"])
        pod_name = name or str((body.get("metadata") or {}).get("name") or "")
        uid = self.pod_index.get((namespace, pod_name))
        pod = self.cluster.pods.get(uid) if uid is not None else None
        if pod is None:
            raise not_found(pods, pod_name)
        if pod.node_name:
            raise StatusError(
                409,
                "Conflict",
                f'Operation cannot be fulfilled on pods/binding "{pod_name}": pod {pod_name} is already assigned to node "{pod.node_name}"',
                {"name": pod_name, "kind": "pods/binding"},
            )
        if target not in self.cluster.nodes:
            raise StatusError(404, "NotFound", f'nodes "{target}" not found', {"name": target, "kind": "nodes"})
        try:
            self.cluster.bind(pod, target)
        except APIError as exc:
            raise StatusError(409, "Conflict", f'Operation cannot be fulfilled on pods/binding "{pod_name}": {exc}') from exc
        meta = {**(body.get("metadata") or {}), "name": pod_name, "namespace": namespace}
        return {"kind": "Binding", "apiVersion": "v1", "metadata": meta, "target": body["target"]}

    def create_event(self, res: Resource, namespace: str, body: Any) -> dict[str, Any]:
        """Events of either group, stored as core/v1 Events (what `kubectl get events` lists)."""
        if res.group == "events.k8s.io" and isinstance(body, dict):
            body = core_event(body)
        return self.create(find_resource("", "v1", "events") or res, namespace, body)

    # ----- dispatch ----------------------------------------------------------------------------------
    def handle_warned(self, request: dict[str, Any]) -> tuple[int, dict[str, Any], builtins.list[str]]:
        """`handle`, with the request's warnings (unknown fields under `fieldValidation=Warn`)."""
        code, body = self.handle(request)
        return code, body, self.warnings if code < 300 else []

    def handle(self, request: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """One request as plain data: `{verb, group, version, resource, namespace, name, subresource,
        body, query, contentType}` → (HTTP code, body)."""
        self.warnings = []
        res = find_resource(request.get("group", ""), request.get("version", ""), request.get("resource", ""))
        if res is None:
            return 404, StatusError(404, "NotFound", "the server could not find the requested resource").status()
        verb = request["verb"]
        ns = request.get("namespace", "") if res.namespaced else ""
        name = request.get("name", "")
        sub = request.get("subresource", "")
        query = request.get("query") or {}
        body = request.get("body")
        self.tick()
        try:
            if sub and sub not in res.subresources:
                raise StatusError(404, "NotFound", f"{res.name} has no subresource {sub!r}")
            self.field_validation = mode_of(query, verb) if verb in ("create", "update", "patch") else "Warn"
            if res.kind == "Binding" or sub == "binding":
                if verb != "create":
                    raise StatusError(
                        405,
                        "MethodNotAllowed",
                        f"the server does not allow this method on the requested resource ({verb} {res.name})",
                    )
                return 201, self.bind(ns, name, body)
            if verb == "get":
                return 200, self.get(res, ns, name)
            if verb == "list":
                return 200, self.list(
                    res,
                    ns,
                    query.get("labelSelector", ""),
                    query.get("fieldSelector", ""),
                    query_int(query.get("limit")),
                    query.get("continue", ""),
                )
            if verb == "watch":
                return 200, self.watch(
                    res,
                    ns,
                    query_int(query.get("resourceVersion")),
                    query.get("labelSelector", ""),
                    query.get("fieldSelector", ""),
                )
            if verb == "create":
                if res.kind == "Event":
                    return 201, self.create_event(res, ns, body)
                return 201, self.create(res, ns, body)
            if verb == "update":
                return 200, self.update(res, ns, name, body, sub)
            if verb == "patch":
                return 200, self.patch(res, ns, name, request.get("contentType", ""), body, sub)
            if verb == "delete":
                grace = query.get("gracePeriodSeconds")
                if grace is None and isinstance(body, dict):
                    grace = body.get("gracePeriodSeconds")
                return 200, self.delete(res, ns, name, None if grace is None else query_int(grace))
            raise StatusError(405, "MethodNotAllowed", f"unsupported verb {verb}")
        except StatusError as exc:
            return exc.code, exc.status()
