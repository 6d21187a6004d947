"""Continuous sync: a live cluster mirrored into the simulated one, so profiles can be tuned on a
copy that follows production.

Informers (the backend's list+watch, relist on 410, periodic resync diffed against what was
mirrored) follow every kind the engine reads. Their changes are handed to the engine thread in
batches and written through the simulated cluster's own API server (`APIServer`, what `/k8s`
serves), so a mirrored object is stored, persisted and watched like any other.

Pods come in one of two ways:

- `keep_bindings` (the default): a bound live pod is mirrored bound to the same node; a pending
  one is mirrored with the scheduling gate `schedconsole.io/mirrored`, so our engine leaves it to
  the live cluster's scheduler, and when the live cluster binds it the gate is removed and the
  same binding made here (in one task, so no cycle runs between the two).
- pending (`keep_bindings=False`): every pod is mirrored unbound, for our engine to place; later
  live changes of a pod's node are not copied, only its labels and annotations and its end.

Objects that were in the simulated cluster before the sync are adopted when the live cluster has
an object of the same name (replaced by the live one); others are left alone. Stopping the sync
keeps what was mirrored.

A sync resumed after a restart starts from `mirrored` as it was last saved (`known`): the first
list then copies only what changed since and deletes what the live cluster no longer has.
"""

from __future__ import annotations

import copy
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from scheduler.api.fields import format_time
from scheduler.apiserver.resources import RESOURCES, Resource
from scheduler.kube.client import Connection
from scheduler.kube.informer import KINDS, Informer, Kind

log = logging.getLogger(__name__)
MIRROR_GATE = "schedconsole.io/mirrored"
# Set by the API server or meaningless in another cluster: dropped from mirrored metadata.
SERVER_FIELDS = ("resourceVersion", "managedFields", "selfLink", "generation", "uid", "creationTimestamp")
Handle = Callable[[dict[str, Any]], tuple[int, dict[str, Any]]]
Key = tuple[str, str, str]


def _key(kind: str, doc: dict[str, Any]) -> Key:
    meta = doc.get("metadata") or {}
    return kind, str(meta.get("namespace") or ""), str(meta.get("name") or "")


def _terminal(doc: dict[str, Any]) -> bool:
    return (doc.get("status") or {}).get("phase") in ("Succeeded", "Failed")


@dataclass(slots=True)
class LiveMirror:
    """Mirrors a live cluster (through `connection`) into the API server `handle` answers for."""

    connection: Connection
    handle: Handle
    post: Callable[[Callable[[], None]], None]
    keep_bindings: bool = True
    resync_seconds: float = 300.0
    watch_seconds: int = 300
    read_timeout: float = 60.0
    informers: list[Informer] = field(default_factory=list)
    mirrored: dict[Key, str] = field(default_factory=dict)  # key → the live resourceVersion mirrored
    applied: int = 0
    failures: int = 0
    last_error: str = ""
    resumed_with: int = 0  # objects known from before a restart (0: a fresh sync)
    started_at: float = 0.0
    stopped_at: float = 0.0
    synced_at: float = 0.0
    _inbox: list[tuple[Kind, str, Any]] = field(default_factory=list)
    _inbox_lock: threading.Lock = field(default_factory=threading.Lock)
    _posted: bool = False
    _stopped: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    # ----- lifecycle ------------------------------------------------------------------------------
    def start(self, known: list[list[str]] | None = None) -> None:
        """List every kind in dependency order (namespaces and classes before pods), then watch.
        `known`: `[kind, namespace, name, resourceVersion]` of what a sync stopped by a restart had
        mirrored (see `snapshot`), diffed against the first list like any relist."""
        for kind_name, namespace, name, version in known or []:
            self.mirrored[(kind_name, namespace, name)] = version
        self.resumed_with = len(self.mirrored)
        self.started_at = time.time()
        for kind in KINDS:
            self.informers.append(
                Informer(
                    kind,
                    self.connection,
                    partial(self._watched, kind),
                    partial(self._listed, kind),
                    self.resync_seconds,
                    self.watch_seconds,
                    self.read_timeout,
                )
            )
        self._thread = threading.Thread(target=self._run, name="cluster-sync", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        for informer in self.informers:
            while not self._stopped.is_set():
                try:
                    informer.list_until_synced(30.0)
                    break
                except Exception as exc:  # unreachable or refused: say so, try again
                    self._failed(f"listing {informer.kind.path}: {exc}")
                    self._stopped.wait(5.0)
        if self._stopped.is_set():
            return
        self.synced_at = time.time()
        for informer in self.informers:
            if informer.installed:
                informer.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop following (what was mirrored stays)."""
        self._stopped.set()
        for informer in self.informers:
            informer.stop()
        deadline = time.monotonic() + timeout
        if self._thread is not None:
            self._thread.join(timeout)
        for informer in self.informers:
            informer.join(max(0.0, deadline - time.monotonic()))
        self.connection.close()
        self.stopped_at = time.time()

    def snapshot(self) -> list[list[str]]:
        """What is mirrored now, as `start(known=...)` takes it (on the engine thread, which alone
        changes it)."""
        return [[kind, namespace, name, version] for (kind, namespace, name), version in self.mirrored.items()]

    @property
    def running(self) -> bool:
        """Whether the sync follows the live cluster."""
        return self.started_at > 0 and not self._stopped.is_set()

    def status(self) -> dict[str, Any]:
        """What the console shows: state, server, option, informers, counts, the last error."""
        counts: dict[str, int] = {}
        for kind, _, _ in self.mirrored:
            counts[kind] = counts.get(kind, 0) + 1
        return {
            "running": self.running,
            "state": "running" if self.running and self.synced_at else ("syncing" if self.running else "stopped"),
            "server": self.connection.host,
            "keepBindings": self.keep_bindings,
            "resumedWith": self.resumed_with,
            "startedAt": format_time(self.started_at) if self.started_at else None,
            "syncedAt": format_time(self.synced_at) if self.synced_at else None,
            "stoppedAt": format_time(self.stopped_at) if self.stopped_at and not self.running else None,
            "informers": [informer_status(i) for i in self.informers],
            "mirrored": dict(sorted(counts.items())),
            "applied": self.applied,
            "failures": self.failures,
            "lastError": self.last_error or None,
        }

    def _failed(self, message: str) -> None:
        self.failures += 1
        self.last_error = message
        log.warning("cluster sync: %s", message)

    # ----- hand-over to the engine thread ---------------------------------------------------------
    def _watched(self, kind: Kind, _: str, type_: str, doc: dict[str, Any]) -> None:
        self._deliver(kind, type_, doc)

    def _listed(self, kind: Kind, _: str, items: list[dict[str, Any]]) -> None:
        self._deliver(kind, "LIST", items)

    def _deliver(self, kind: Kind, type_: str, doc: Any) -> None:
        with self._inbox_lock:
            self._inbox.append((kind, type_, doc))
            if self._posted:
                return
            self._posted = True
        self.post(self._drain)

    def _drain(self) -> None:
        """On the engine thread: apply every change queued so far, in order."""
        with self._inbox_lock:
            items, self._inbox = self._inbox, []
            self._posted = False
        for kind, type_, doc in items:
            if self._stopped.is_set():
                return
            try:
                if type_ == "LIST":
                    self._relist(kind, doc)
                else:
                    self._change(kind, type_, doc)
            except Exception as exc:  # one bad object must not stop the sync
                self._failed(f"{kind.kind} {type_}: {exc}")

    def _relist(self, kind: Kind, items: list[dict[str, Any]]) -> None:
        fresh = {_key(kind.kind, doc): doc for doc in items}
        for key, doc in fresh.items():
            version = str((doc.get("metadata") or {}).get("resourceVersion") or "")
            if self.mirrored.get(key) != version or not version:
                self._change(kind, "MODIFIED" if key in self.mirrored else "ADDED", doc)
        for key in [k for k in self.mirrored if k[0] == kind.kind and k not in fresh]:
            self._change(kind, "DELETED", {"metadata": {"namespace": key[1], "name": key[2]}})

    # ----- one change -----------------------------------------------------------------------------
    def _request(
        self, kind: str, verb: str, namespace: str, name: str = "", body: Any = None, **extra: Any
    ) -> tuple[int, dict[str, Any]]:
        res = _resource(kind)
        request = {
            "group": res.group,
            "version": res.version,
            "resource": res.name,
            "namespace": namespace if res.namespaced else "",
            "name": name,
            "subresource": extra.get("subresource", ""),
            "verb": verb,
            "query": extra.get("query") or {},
            "body": body,
            "contentType": extra.get("content_type", "application/json"),
        }
        return self.handle(request)

    def _ok(self, what: str, answer: tuple[int, dict[str, Any]]) -> bool:
        code, body = answer
        if code < 300:
            return True
        self._failed(f"{what}: {code} {body.get('message', '')}")
        return False

    def _change(self, kind: Kind, type_: str, doc: dict[str, Any]) -> None:
        key = _key(kind.kind, doc)
        _, namespace, name = key
        version = str((doc.get("metadata") or {}).get("resourceVersion") or "")
        if type_ == "DELETED" or (kind.kind == "Pod" and _terminal(doc)):
            if self.mirrored.pop(key, None) is not None:
                code, body = self._request(kind.kind, "delete", namespace, name, query={"gracePeriodSeconds": "0"})
                if code != 404:
                    self._ok(f"deleting {kind.kind} {namespace}/{name}", (code, body))
                self.applied += 1
            return
        body = self._mirrored_doc(kind.kind, doc)
        code, current = self._request(kind.kind, "get", namespace, name)
        if code == 404:
            if self._ok(f"creating {kind.kind} {namespace}/{name}", self._request(kind.kind, "create", namespace, body=body)):
                self.mirrored[key] = version
                self.applied += 1
            return
        if kind.kind == "Pod":
            done = self._pod_changed(namespace, name, doc, current)
        else:
            done = self._ok(f"updating {kind.kind} {namespace}/{name}", self._request(kind.kind, "update", namespace, name, body))
            if done and "status" in _resource(kind.kind).subresources and "status" in body:
                done = self._ok(
                    f"updating {kind.kind} {namespace}/{name} status",
                    self._request(kind.kind, "update", namespace, name, body, subresource="status"),
                )
        if done:
            self.mirrored[key] = version
            self.applied += 1

    def _mirrored_doc(self, kind: str, doc: dict[str, Any]) -> dict[str, Any]:
        out = copy.deepcopy(doc)
        meta = out.setdefault("metadata", {})
        for name in SERVER_FIELDS:
            meta.pop(name, None)
        out["kind"] = kind
        if kind != "Pod":
            return out
        spec = out.setdefault("spec", {})
        if self.keep_bindings:
            if not spec.get("nodeName"):
                gates = [g for g in spec.get("schedulingGates") or [] if g.get("name") != MIRROR_GATE]
                spec["schedulingGates"] = [*gates, {"name": MIRROR_GATE}]
        else:
            spec.pop("nodeName", None)
            spec.pop("nominatedNodeName", None)
            out["status"] = {"phase": "Pending"}
        return out

    def _pod_changed(self, namespace: str, name: str, live: dict[str, Any], current: dict[str, Any]) -> bool:
        """A known pod changed live: copy its labels and annotations, and (keeping bindings) its
        binding: the gate comes off and the same node is bound in one go."""
        ok = True
        live_meta, meta = live.get("metadata") or {}, current.get("metadata") or {}
        patch = {
            field_name: _merge_patch(meta.get(field_name) or {}, live_meta.get(field_name) or {})
            for field_name in ("labels", "annotations")
            if (meta.get(field_name) or {}) != (live_meta.get(field_name) or {})
        }
        if patch:
            ok = self._ok(
                f"patching pod {namespace}/{name}",
                self._request("Pod", "patch", namespace, name, {"metadata": patch}, content_type="application/merge-patch+json"),
            )
        node = (live.get("spec") or {}).get("nodeName")
        spec = current.get("spec") or {}
        if not self.keep_bindings or not node or spec.get("nodeName"):
            return ok
        gates = spec.get("schedulingGates") or []
        if any(g.get("name") == MIRROR_GATE for g in gates):
            ungated = copy.deepcopy(current)
            ungated["spec"]["schedulingGates"] = [g for g in gates if g.get("name") != MIRROR_GATE]
            ungated["metadata"].pop("resourceVersion", None)
            ok = self._ok(f"ungating pod {namespace}/{name}", self._request("Pod", "update", namespace, name, ungated)) and ok
        binding = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": name, "namespace": namespace},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node},
        }
        return (
            self._ok(
                f"binding pod {namespace}/{name} to {node}",
                self._request("Pod", "create", namespace, name, binding, subresource="binding"),
            )
            and ok
        )


def _merge_patch(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """The JSON merge patch turning `old` into `new` (removed keys set to null)."""
    return {**{k: None for k in old if k not in new}, **new}


def _resource(kind: str) -> Resource:
    """The served resource of a kind the informers follow (one each)."""
    return next(r for r in RESOURCES if r.kind == kind and r.group != "events.k8s.io")


def informer_status(informer: Informer) -> dict[str, Any]:
    """One informer's state for the console: relists, watches, events, the last event's time."""
    return {
        "kind": informer.kind.kind,
        "installed": informer.installed,
        "synced": informer.synced.is_set(),
        "relists": informer.relists,
        "watches": informer.watches,
        "broken": informer.broken,
        "expired": informer.expired,
        "events": informer.events,
        "lastEventAt": format_time(informer.last_event_at) if informer.last_event_at else None,
        "resourceVersion": informer.resource_version,
    }


__all__ = ["MIRROR_GATE", "LiveMirror", "informer_status"]
