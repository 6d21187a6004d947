"""Documents in and out of the engine: parsing uploads, loading objects, configurations, the
documents of live objects, and the `/k8s` route table."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable
from typing import Any

from schedconsole.engine.bridge.answers import Document, K8sResource, K8sRoute, PodRow
from schedconsole.engine.bridge.common import BadInput
from scheduler.api.fields import format_time
from scheduler.api.loader import ClusterObjects, LoadError, objects_from_documents
from scheduler.api.objects import Pod
from scheduler.apiserver.httpserver import route
from scheduler.apiserver.resources import RESOURCES
from scheduler.cluster.errors import APIError
from scheduler.config.errors import ConfigError
from scheduler.config.loader import KIND, parse_config
from scheduler.config.validation import API_VERSION
from scheduler.frameworkext.services import pod_json
from scheduler.io.documents import Document as ParsedDocument
from scheduler.io.documents import DocumentError, load_all, looks_like_json, read_documents
from scheduler.kube.client import connect
from scheduler.kube.informer import KINDS


# ----- parsing ------------------------------------------------------------------------------------
def parse_documents(text: str | bytes, source: str, on_document: Callable[[int], None] | None = None) -> list[Any]:
    """YAML (multi-document) or JSON text as a list of documents, read with the engine's bounds
    (nesting depth, go-yaml's alias expansion limit); BadInput names the line. `on_document` is
    told how many documents are read so far, as they are read (progress of a large import)."""

    def read(json_text: bool = False) -> list[Any]:
        if on_document is None:
            return load_all(text, json_text=json_text)
        out = []
        for doc in read_documents(text, json_text=json_text):
            if isinstance(doc, ParsedDocument):
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


def parse_body(raw: bytes, media: str) -> Any:
    """A request body (`json` or `yaml`) as the API reads it: bounded nesting, no repeated keys,
    no YAML aliases; one document, or several as a list. BadInput names the line."""
    try:
        docs = load_all(raw, json_text=media == "json", strict_keys=True, aliases=False)
    except DocumentError as exc:
        raise BadInput("body", f"body: invalid {media.upper()}: {exc}") from exc
    docs = [d for d in docs if d is not None]
    if media == "json" and len(docs) > 1:
        raise BadInput("body", "body: invalid JSON: more than one value")
    if not docs:
        raise BadInput("body", f"body: no {media.upper()} document")
    return docs[0] if len(docs) == 1 else docs


def load_objects(documents: Iterable[Any], source: str, known: Iterable[Any] = (), strict: bool = False) -> ClusterObjects:
    """Kubernetes objects from parsed documents, as `simulate --cluster` reads them.

    `known` are documents already in the cluster (PriorityClasses) that new pods may name; they
    are read first and left out of the result. `strict`: new objects from a user, checked as
    kube-apiserver checks them (names, labels, unknown fields, int32 fields).
    """
    known = list(known)
    numbered = [("cluster", n, d) for n, d in enumerate(known, start=1)]
    numbered += [(source, n, d) for n, d in enumerate(documents, start=1)]
    try:
        objects = objects_from_documents(numbered, strict)
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


def default_config_document() -> dict[str, Any]:
    """The configuration kube-scheduler runs with when given none."""
    return {"apiVersion": API_VERSION, "kind": KIND}


# ----- documents of live objects ---------------------------------------------------------------
def pod_manifest(pod: Pod) -> Document:
    """The pod's document with every field the engine changes made current."""
    doc = pod_json(pod)
    meta = dict(doc.get("metadata") or {})
    meta["annotations"] = dict(pod.annotations)
    meta.setdefault("uid", pod.uid)
    doc["metadata"] = meta
    if pod.conditions:
        doc["status"] = {**doc["status"], "conditions": list(pod.conditions)}
    return doc


def pod_summary(pod: Pod, where: str | None = None) -> PodRow:
    """One row of the pods list."""
    return PodRow(
        namespace=pod.namespace,
        name=pod.name,
        uid=pod.uid,
        profile=pod.scheduler_name,
        phase=pod.phase or "Pending",
        node=pod.node_name or None,
        nominatedNode=pod.nominated_node_name or None,
        priority=pod.effective_priority,
        requests={k: int(v) for k, v in sorted(pod.requests.items())},
        queue=where,
    )


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


def k8s_route(path: str) -> K8sRoute | None:
    """The group, version, resource, namespace, name and subresource a `/k8s` path names (the
    engine's own HTTP front parses paths the same way)."""
    found = route(path)
    if found is None:
        return None
    return K8sRoute(
        group=found["group"],
        version=found["version"],
        resource=found["resource"],
        namespace=found["namespace"],
        name=found["name"],
        subresource=found["subresource"],
    )


def k8s_resources() -> list[K8sResource]:
    """The resources `/k8s` serves, for discovery: name, kind, group, version, scope, verbs."""
    return [
        K8sResource(
            name=r.name,
            kind=r.kind,
            group=r.group,
            version=r.version,
            namespaced=r.namespaced,
            shortNames=list(r.short_names),
            verbs=list(r.verbs),
            subresources=list(r.subresources),
        )
        for r in RESOURCES
    ]


def live_documents(kubeconfig: str = "", context: str = "", in_cluster: bool = False) -> list[dict[str, Any]]:
    """Every object of a live cluster the engine reads, as documents to import into the simulated
    one (server-managed metadata dropped; bound pods keep their node)."""
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
            meta = {
                k: v
                for k, v in (item.get("metadata") or {}).items()
                if k not in ("resourceVersion", "managedFields", "selfLink", "generation")
            }
            docs.append({**item, "apiVersion": item.get("apiVersion") or group_version, "kind": kind.kind, "metadata": meta})
    return docs
