"""Editing the simulated cluster from the console, as kube-scheduler-simulator's UI does: replace a
pod or a node with an edited document, delete a node, and reset the cluster to its starting state.

A pod's spec cannot change in place (kube-apiserver refuses it), so an edited pod is replaced as
`kubectl replace --force` does: the old one is deleted and the edited one created (a new uid; it is
scheduled again unless it names its node). A node is replaced in place: its pods stay on it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from schedconsole.engine.bridge.answers import Document, NodeDeleted, ResetDone
from schedconsole.engine.bridge.common import BadInput, NotFound
from schedconsole.engine.bridge.documents import load_objects, pod_manifest, with_defaults
from scheduler.eventhandlers import RESULT_ANNOTATION_PREFIX as PREFIX

if TYPE_CHECKING:
    from schedconsole.engine.bridge.engine import Engine

# Set by the API server on every object; an edited document keeps them from the copy it was read from.
SERVER_FIELDS = ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields")


def _one(engine: Engine, document: Document, kind: str, namespace: str, name: str) -> Any:
    """The edited object, checked as kube-apiserver checks a new one; its name may not change."""
    if document.get("kind") != kind:
        raise BadInput("kind", f"expected kind {kind}, got {document.get('kind')!r}")
    meta = document.get("metadata") or {}
    if meta.get("name") != name or (kind == "Pod" and (meta.get("namespace") or "default") != namespace):
        where = f"{namespace}/{name}" if kind == "Pod" else name
        raise BadInput("metadata.name", f"the name cannot change in an edit: this is {kind} {where}")
    objects = load_objects([document], "body", engine.known_classes(), strict=True)
    found = objects.pods if kind == "Pod" else objects.nodes
    if len(found) != 1:
        raise BadInput("body", f"expected one {kind}")
    return found[0]


def fresh(document: Any) -> Document:
    """An edited document without what the server set on the copy it came from, nor the result
    annotations of the attempts of the object it replaces."""
    if not isinstance(document, dict):
        raise BadInput("body", f"expected an object, got {type(document).__name__}")
    out = dict(document)
    meta = {k: v for k, v in (out.get("metadata") or {}).items() if k not in SERVER_FIELDS}
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if not k.startswith(PREFIX)}
    if annotations:
        meta["annotations"] = annotations
    else:
        meta.pop("annotations", None)
    out["metadata"] = meta
    if out.get("kind") == "Pod":
        out.pop("status", None)  # a new pod starts Pending
    return out


def replace_pod(engine: Engine, namespace: str, name: str, document: Any) -> Document:
    """Delete the pod and create the edited one in its place (checked before anything changes)."""
    engine._simulated_only("editing a pod")
    old = engine.find_pod(namespace, name)
    new = _one(engine, with_defaults(fresh(document), "Pod"), "Pod", namespace, name)
    engine.resolve_priority(new)
    engine.cluster.delete_pod(old)
    engine.cluster.add_pod(new)
    return pod_manifest(new)


def replace_node(engine: Engine, name: str, document: Any) -> Document:
    """Replace the node's document (labels, taints, capacity, ...); its pods stay on it."""
    engine._simulated_only("editing a node")
    old = engine.cluster.nodes.get(name)
    if old is None:
        raise NotFound(f'nodes "{name}" not found')
    doc = fresh(document)
    if old.meta.uid:  # the same node: its stored row is replaced, not joined by another
        doc["metadata"] = {**doc["metadata"], "uid": old.meta.uid}
    node = _one(engine, doc, "Node", "", name)
    engine.cluster.add_node(node)
    return dict(node.raw)


def delete_node(engine: Engine, name: str) -> NodeDeleted:
    """Delete the node and the pods bound to it (as the pod garbage collector deletes a gone
    node's pods)."""
    engine._simulated_only("deleting a node")
    cluster = engine.cluster
    node = cluster.nodes.get(name)
    if node is None:
        raise NotFound(f'nodes "{name}" not found')
    bound = [p for p in list(cluster.pods.values()) if p.node_name == name]
    for pod in bound:
        cluster.delete_pod(pod)
    cluster.delete_node(name)
    return NodeDeleted(node=dict(node.raw), podsDeleted=sorted(p.key for p in bound))


def reset(engine: Engine, documents: list[Any]) -> ResetDone:
    """Delete every object of the simulated cluster, then create `documents` (its starting state)."""
    engine._simulated_only("resetting the cluster")
    starting = load_objects(documents, "starting cluster")
    cluster = engine.cluster
    deleted: dict[str, int] = {}
    pods = list(cluster.pods.values())
    for pod in pods:
        cluster.delete_pod(pod)
    nodes = list(cluster.nodes)
    for name in nodes:
        cluster.delete_node(name)
    deleted.update({k: n for k, n in (("Pod", len(pods)), ("Node", len(nodes))) if n})
    for kind, docs in list(cluster.extensions.items()):
        for doc in list(docs):
            meta = doc.get("metadata") or {}
            cluster.delete_object(kind, meta.get("namespace", "") or "", meta.get("name", ""))
        if docs:
            deleted[kind] = len(docs)
    held: list[tuple[str, Any]] = [
        ("PriorityClass", cluster.priority_classes),
        ("PodDisruptionBudget", cluster.pdbs),
        ("PersistentVolume", cluster.persistent_volumes),
        ("PersistentVolumeClaim", cluster.persistent_volume_claims),
        ("StorageClass", cluster.storage_classes),
        ("CSINode", cluster.csi_nodes),
        ("CSIDriver", cluster.csi_drivers),
    ]
    for kind, table in held:
        if table:
            deleted[kind] = len(table)
            table.clear()
    cluster.csi_storage_capacities.clear()
    cluster.selecting.clear()
    engine.extra.pop("pod_index", None)
    created = engine.create_objects(starting, documents)
    return ResetDone(deleted=deleted, created=created)
