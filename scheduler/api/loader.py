"""Reading cluster objects from YAML/JSON files as `kubectl get -o yaml` writes them."""

from __future__ import annotations

import json
import pathlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import yaml

from scheduler.api.fields import FieldError
from scheduler.api.koordinator import parse_node_metric, parse_node_resource_topology
from scheduler.api.objects import (
    Namespace,
    Node,
    Pod,
    PodDisruptionBudget,
    PriorityClass,
    parse_namespace,
    parse_node,
    parse_pdb,
    parse_pod,
    parse_priority_class,
)
from scheduler.api.podgroup import parse_pod_group
from scheduler.api.reservation import parse_reservation
from scheduler.api.storage import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    parse_csi_driver,
    parse_csi_node,
    parse_csi_storage_capacity,
    parse_persistent_volume,
    parse_persistent_volume_claim,
    parse_storage_class,
)
from scheduler.api.workloads import (
    SelectingObject,
    parse_replica_set,
    parse_replication_controller,
    parse_service,
    parse_stateful_set,
)

SUFFIXES = (".yaml", ".yml", ".json")
# Kinds the Koordinator plugins read; kept as documents for the plugins that parse them.
EXTENSION_KINDS = ("PodGroup", "Reservation", "NodeMetric", "NodeResourceTopology")


class LoadError(ValueError):
    """A file, document or field that cannot be read; the message names all three."""

    def __init__(self, source: str, document: int | None, what: str, field: str, message: str) -> None:
        where = source
        if document is not None:
            where += f": document {document}"
            if what:
                where += f" ({what})"
        if field:
            where += f": {field}"
        super().__init__(f"{where}: {message}")
        self.source = source
        self.document = document
        self.field = field


@dataclass(slots=True)
class ClusterObjects:
    """Everything read from the cluster files, in file order."""

    nodes: list[Node] = field(default_factory=list)
    pods: list[Pod] = field(default_factory=list)
    namespaces: list[Namespace] = field(default_factory=list)
    priority_classes: list[PriorityClass] = field(default_factory=list)
    pdbs: list[PodDisruptionBudget] = field(default_factory=list)
    # Default pod spreading's selectors (PodTopologySpread, `helper.DefaultSelector`).
    services: list[SelectingObject] = field(default_factory=list)
    replication_controllers: list[SelectingObject] = field(default_factory=list)
    replica_sets: list[SelectingObject] = field(default_factory=list)
    stateful_sets: list[SelectingObject] = field(default_factory=list)
    persistent_volumes: list[PersistentVolume] = field(default_factory=list)
    persistent_volume_claims: list[PersistentVolumeClaim] = field(default_factory=list)
    storage_classes: list[StorageClass] = field(default_factory=list)
    csi_nodes: list[CSINode] = field(default_factory=list)
    csi_drivers: list[CSIDriver] = field(default_factory=list)
    csi_storage_capacities: list[CSIStorageCapacity] = field(default_factory=list)
    extensions: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


_PARSERS: dict[str, Callable[[Any, str], Any]] = {
    "Node": parse_node,
    "Pod": parse_pod,
    "Namespace": parse_namespace,
    "PriorityClass": parse_priority_class,
    "PodDisruptionBudget": parse_pdb,
    "Service": parse_service,
    "ReplicationController": parse_replication_controller,
    "ReplicaSet": parse_replica_set,
    "StatefulSet": parse_stateful_set,
    "PersistentVolume": parse_persistent_volume,
    "PersistentVolumeClaim": parse_persistent_volume_claim,
    "StorageClass": parse_storage_class,
    "CSINode": parse_csi_node,
    "CSIDriver": parse_csi_driver,
    "CSIStorageCapacity": parse_csi_storage_capacity,
}
# Extension kinds checked at load time (bad input exits 2); they stay documents for the plugins.
_EXTENSION_VALIDATORS: dict[str, Callable[[Any, str], Any]] = {
    "PodGroup": parse_pod_group,
    "Reservation": parse_reservation,
    "NodeMetric": parse_node_metric,
    "NodeResourceTopology": parse_node_resource_topology,
}
_TARGETS = {
    "Node": "nodes",
    "Pod": "pods",
    "Namespace": "namespaces",
    "PriorityClass": "priority_classes",
    "PodDisruptionBudget": "pdbs",
    "Service": "services",
    "ReplicationController": "replication_controllers",
    "ReplicaSet": "replica_sets",
    "StatefulSet": "stateful_sets",
    "PersistentVolume": "persistent_volumes",
    "PersistentVolumeClaim": "persistent_volume_claims",
    "StorageClass": "storage_classes",
    "CSINode": "csi_nodes",
    "CSIDriver": "csi_drivers",
    "CSIStorageCapacity": "csi_storage_capacities",
}


def _files(paths: list[str]) -> Iterator[pathlib.Path]:
    for raw in paths:
        path = pathlib.Path(raw)
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in SUFFIXES)
        elif path.is_file():
            yield path
        else:
            raise LoadError(str(path), None, "", "", "no such file or directory")


def _documents(path: pathlib.Path) -> list[Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise LoadError(str(path), None, "", "", f"cannot read: {exc}") from exc
    if path.suffix == ".json":
        try:
            return [json.loads(text)]
        except json.JSONDecodeError as exc:
            raise LoadError(str(path), None, "", "", f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from exc
    try:
        return [d for d in yaml.safe_load_all(text)]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise LoadError(str(path), None, "", "", f"invalid YAML{where}: {problem}") from exc


def _describe(doc: dict[str, Any]) -> str:
    meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
    name = meta.get("name", "") if isinstance(meta, dict) else ""
    ns = meta.get("namespace", "") if isinstance(meta, dict) else ""
    kind = doc.get("kind", "?")
    return f"{kind} {ns + '/' if ns else ''}{name}".strip()


def load_cluster(paths: list[str]) -> ClusterObjects:
    """Read every object from the files and folders; raise LoadError on the first bad one."""
    return objects_from_documents((str(path), number, doc) for path in _files(paths) for number, doc in enumerate(_documents(path), start=1))


def objects_from_documents(documents: Iterable[tuple[str, int, Any]]) -> ClusterObjects:
    """Objects from parsed documents given as (source, document number, document).

    The console hands uploads here as they arrive from the web; `source` stands where a file
    name would in messages.
    """
    out = ClusterObjects()
    seen: dict[tuple[str, str], str] = {}
    skipped: set[str] = set()
    for path, number, doc in documents:
        if doc is None:
            continue
        items: list[tuple[str, Any]]
        if isinstance(doc, dict) and doc.get("kind") == "List":
            items = [(f"items[{i}].", item) for i, item in enumerate(doc.get("items") or [])]
        else:
            items = [("", doc)]
        for prefix, item in items:
            if not isinstance(item, dict):
                raise LoadError(path, number, "", prefix.rstrip("."), f"expected a Kubernetes object, got {type(item).__name__}")
            kind = item.get("kind")
            if not isinstance(kind, str) or not kind:
                raise LoadError(path, number, "", prefix + "kind", "is required")
            what = _describe(item)
            if kind in EXTENSION_KINDS:
                validator = _EXTENSION_VALIDATORS.get(kind)
                if validator is not None:
                    try:
                        checked = validator(item, prefix.rstrip(".") if prefix else "")
                    except FieldError as exc:
                        raise LoadError(path, number, what, exc.path, exc.detail) from exc
                    key = (kind, f"{getattr(checked.meta, 'namespace', '')}/{checked.meta.name}")
                    if key in seen:
                        raise LoadError(path, number, what, "metadata.name", f"duplicate {kind} {key[1].lstrip('/')!r} (first in {seen[key]})")
                    seen[key] = f"{path} document {number}"
                out.extensions.setdefault(kind, []).append(item)
                continue
            parser = _PARSERS.get(kind)
            if parser is None:
                if kind not in skipped:
                    skipped.add(kind)
                    out.warnings.append(f"warning: {path}: skipping objects of kind {kind!r} (not used by the scheduler)")
                continue
            try:
                obj = parser(item, prefix.rstrip(".") if prefix else "")
            except FieldError as exc:
                raise LoadError(path, number, what, exc.path, exc.detail) from exc
            key = (kind, f"{getattr(obj.meta, 'namespace', '')}/{obj.meta.name}")
            if key in seen:
                raise LoadError(path, number, what, "metadata.name", f"duplicate {kind} {key[1].lstrip('/')!r} (first in {seen[key]})")
            seen[key] = f"{path} document {number}"
            getattr(out, _TARGETS[kind]).append(obj)
    _resolve_priorities(out)
    _default_storage_classes(out)
    return out


def _default_storage_classes(objs: ClusterObjects) -> None:
    """Claims that name no class get the default StorageClass, as the DefaultStorageClass
    admission plugin sets it when a claim is created."""
    default = next((sc for sc in objs.storage_classes if sc.is_default), None)
    if default is None:
        return
    for i, pvc in enumerate(objs.persistent_volume_claims):
        if pvc.storage_class_name is None and "volume.beta.kubernetes.io/storage-class" not in pvc.meta.annotations:
            objs.persistent_volume_claims[i] = replace(pvc, storage_class_name=default.name)


def _resolve_priorities(objs: ClusterObjects) -> None:
    """spec.priority as given, else from priorityClassName, else the global default, else 0."""
    classes = {pc.name: pc for pc in objs.priority_classes}
    default = next((pc for pc in objs.priority_classes if pc.global_default), None)
    for pod in objs.pods:
        if pod.priority is not None:
            continue
        if pod.priority_class_name:
            pc = classes.get(pod.priority_class_name)
            if pc is None and pod.priority_class_name in ("system-cluster-critical", "system-node-critical"):
                pod.priority = 2000000000 if pod.priority_class_name == "system-cluster-critical" else 2000001000
                continue
            if pc is None:
                raise LoadError(
                    "cluster",
                    None,
                    "",
                    f"Pod {pod.key}: spec.priorityClassName",
                    f"no PriorityClass with name {pod.priority_class_name} was found",
                )
            pod.priority = pc.value
            if not pod.preemption_policy:
                pod.preemption_policy = pc.preemption_policy
        elif default is not None:
            pod.priority = default.value
            if not pod.preemption_policy:
                pod.preemption_policy = default.preemption_policy
        else:
            pod.priority = 0
    for pod in objs.pods:
        if not pod.preemption_policy:
            pod.preemption_policy = "PreemptLowerPriority"
