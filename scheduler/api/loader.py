"""Reading cluster objects from YAML/JSON files (or uploaded text) as `kubectl get -o yaml` writes them.

Files are read through `scheduler.io.documents` (bounded depth and aliasing, libyaml's
parser); the items of a `kind: List` are parsed one by one as they are read, so a file of
100000 pods is never held as one tree of dicts.
"""

from __future__ import annotations

import gc
import pathlib
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import IO, Any

from scheduler.api.fields import FieldError, shown
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
from scheduler.api.quantity import MAX_INT64
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
from scheduler.api.validation import check_object, detail
from scheduler.api.workload import parse_workload
from scheduler.api.workloads import (
    SelectingObject,
    parse_replica_set,
    parse_replication_controller,
    parse_service,
    parse_stateful_set,
)
from scheduler.io.documents import DocumentError, Item, looks_like_json, read_documents

SUFFIXES = (".yaml", ".yml", ".json")
# Kinds the Koordinator plugins and GangScheduling read; kept as documents for the plugins that parse them.
EXTENSION_KINDS = ("PodGroup", "Reservation", "NodeMetric", "NodeResourceTopology", "Workload")


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
        self.syntax = False


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
EXTENSION_VALIDATORS: dict[str, Callable[[Any, str], Any]] = {
    "PodGroup": parse_pod_group,
    "Reservation": parse_reservation,
    "NodeMetric": parse_node_metric,
    "NodeResourceTopology": parse_node_resource_topology,
    "Workload": parse_workload,
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
            found = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in SUFFIXES)
            if not found:
                raise LoadError(str(path), None, "", "", f"no {', '.join(SUFFIXES)} files in this folder")
            yield from found
        elif path.is_file():
            yield path
        else:
            raise LoadError(str(path), None, "", "", "no such file or directory")


def _describe(doc: dict[str, Any]) -> str:
    meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
    name = meta.get("name", "") if isinstance(meta, dict) else ""
    ns = meta.get("namespace", "") if isinstance(meta, dict) else ""
    return _what(doc.get("kind", "?"), ns, name)


def _what(kind: Any, ns: Any, name: Any) -> str:
    """A document's kind, namespace and name as messages show them."""
    text = f"{kind} {ns + '/' if isinstance(ns, str) and ns else ''}{name if isinstance(name, str) else ''}".strip()
    return text if len(text) <= 120 else text[:117] + "..."


def _is_list(doc: Any) -> bool:
    """`kind: List` as kubectl writes it, or a typed list such as PodList."""
    kind = doc.get("kind") if isinstance(doc, dict) else None
    return isinstance(kind, str) and (kind == "List" or (kind.endswith("List") and "items" in doc))


class _Reader:
    """Collects the objects of one or more sources, checking names across all of them."""

    def __init__(self, strict: bool = False) -> None:
        self.strict = strict
        self.out = ClusterObjects()
        self.seen: dict[tuple[str, str], tuple[str, int]] = {}
        self.skipped: set[str] = set()
        self.objects = 0

    def read(self, source: str, data: str | bytes | IO[bytes], json_text: bool) -> None:
        """Read every document of one source; List items are parsed as they stream in."""
        # Items of a top-level `items` list are parsed as they arrive (the document's kind is
        # only known at its end: kubectl writes `kind: List` after the items) and kept
        # aside until the document turns out to be a List.
        pending: list[Callable[[], None]] = []
        first_error: LoadError | None = None
        try:
            for part in read_documents(data, json_text=json_text, stream_items=True):
                if isinstance(part, Item):
                    if first_error is None:
                        try:
                            pending.append(self._parse(source, part.document, f"items[{part.index}]", part.value))
                        except LoadError as exc:
                            first_error = exc
                    continue
                doc = part.value
                if part.streamed and _is_list(doc):
                    if first_error is not None:
                        raise first_error
                    for commit in pending:
                        commit()
                elif part.streamed and isinstance(doc, dict):
                    # Not a List after all: its `items` is not ours to read.
                    doc["items"] = None
                pending, first_error = [], None
                self.document(source, part.number, doc)
        except DocumentError as exc:
            error = LoadError(source, exc.document, "", "", f"invalid {'JSON' if json_text else 'YAML'}: {exc}")
            error.syntax = True
            raise error from None

    def document(self, source: str, number: int, doc: Any) -> None:
        """Read one parsed document (a single object or a List)."""
        if doc is None:
            return
        if _is_list(doc):
            items = doc.get("items")
            if items is None:
                return
            if not isinstance(items, list):
                raise LoadError(
                    source, number, str(doc.get("kind")), "items", f"expected a list of objects, got {_kind_of(items)}"
                )
            for i, item in enumerate(items):
                self._parse(source, number, f"items[{i}]", item)()
            return
        self._parse(source, number, "", doc)()

    def _parse(self, source: str, number: int, prefix: str, item: Any) -> Callable[[], None]:
        """Parse one object; the returned step files it (or warns that its kind is skipped)."""
        if not isinstance(item, dict):
            raise LoadError(
                source,
                number,
                "",
                prefix,
                f"expected a Kubernetes object (a mapping with kind, metadata, ...), got {_kind_of(item)}",
            )
        field_prefix = prefix + "." if prefix else ""
        kind = item.get("kind")
        if kind is None or kind == "":
            raise LoadError(source, number, "", field_prefix + "kind", "is required (e.g. kind: Pod)")
        if not isinstance(kind, str):
            raise LoadError(
                source,
                number,
                "",
                field_prefix + "kind",
                f"expected a string such as Pod or Node, got {_kind_of(kind)} {shown(kind)}",
            )
        self.objects += 1
        if self.strict and (kind in EXTENSION_KINDS or kind in _PARSERS):
            self._check(source, number, prefix, kind, item)
        if kind in EXTENSION_KINDS:
            return self._extension(source, number, prefix, kind, item)
        parser = _PARSERS.get(kind)
        if parser is None:
            return lambda: self._skip(source, kind)
        try:
            obj = parser(item, prefix)
        except FieldError as exc:
            raise LoadError(source, number, _describe(item), exc.path, _advice(item, exc)) from exc
        # For a duplicate's message: the namespace as written (parsed, the name is metadata.name).
        meta = item.get("metadata")
        written_namespace = meta.get("namespace", "") if type(meta) is dict else ""

        # The step keeps the parsed object only, never the document (a List's items wait for it).
        def commit() -> None:
            key = (kind, f"{getattr(obj.meta, 'namespace', '')}/{obj.meta.name}")
            first = self.seen.get(key)
            if first is not None:
                raise LoadError(
                    source,
                    number,
                    _what(kind, written_namespace, obj.meta.name),
                    field_prefix + "metadata.name",
                    f"duplicate {kind} {shown(key[1].lstrip('/'))} (first in {first[0]} document {first[1]})",
                )
            self.seen[key] = (source, number)
            getattr(self.out, _TARGETS[kind]).append(obj)

        return commit

    def _check(self, source: str, number: int, prefix: str, kind: str, item: dict[str, Any]) -> None:
        """What kube-apiserver (or the console's store) would refuse in a new object."""
        issues = check_object(kind, item)
        if issues:
            path = (prefix + "." if prefix else "") + issues[0].field
            raise LoadError(source, number, _describe(item), path, detail(issues[0]))

    def _extension(self, source: str, number: int, prefix: str, kind: str, item: dict[str, Any]) -> Callable[[], None]:
        """Extension kinds stay documents for the plugins; those with a validator are checked now."""
        validator = EXTENSION_VALIDATORS.get(kind)
        key: tuple[str, str] | None = None
        if validator is not None:
            what = _describe(item)
            try:
                checked = validator(item, prefix)
            except FieldError as exc:
                raise LoadError(source, number, what, exc.path, exc.detail) from exc
            key = (kind, f"{getattr(checked.meta, 'namespace', '')}/{checked.meta.name}")

        def commit() -> None:
            if key is not None:
                first = self.seen.get(key)
                if first is not None:
                    raise LoadError(
                        source,
                        number,
                        _describe(item),
                        (prefix + "." if prefix else "") + "metadata.name",
                        f"duplicate {kind} {shown(key[1].lstrip('/'))} (first in {first[0]} document {first[1]})",
                    )
                self.seen[key] = (source, number)
            self.out.extensions.setdefault(kind, []).append(item)

        return commit

    def _skip(self, source: str, kind: str) -> None:
        if kind not in self.skipped:
            self.skipped.add(kind)
            self.out.warnings.append(f"warning: {source}: skipping objects of kind {shown(kind)} (not used by the scheduler)")

    def finish(self, sources: list[str], require_objects: bool = True) -> ClusterObjects:
        """Check the whole and resolve what spans files (priorities, unknown nodes)."""
        if require_objects and self.objects == 0:
            raise LoadError(
                ", ".join(sources) or "<none>", None, "", "", "no objects found (kubectl would say: no objects passed to apply)"
            )
        _resolve_priorities(self.out)
        _default_storage_classes(self.out)
        _check_bound_pods(self.out)
        return self.out


def _kind_of(value: Any) -> str:
    """A YAML-flavoured name for a value's type in messages."""
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "null"
    return type(value).__name__


def _advice(item: dict[str, Any], exc: FieldError) -> str:
    """The field error, with what to do when the cause is a common one."""
    meta = item.get("metadata")
    if exc.path.endswith("metadata.name") and isinstance(meta, dict) and meta.get("generateName") and not meta.get("name"):
        return (
            f"{exc.detail}: metadata.generateName {shown(meta['generateName'])} is expanded by the API server "
            "on create, not by this scheduler; set metadata.name (e.g. run the file through "
            "`kubectl create --dry-run=server -o yaml`)"
        )
    return exc.detail


def _check_bound_pods(objs: ClusterObjects) -> None:
    """Warn once about pods bound to nodes no file defines; refuse a node whose pods' requests
    add up beyond int64 (kube-scheduler's NodeInfo sums would wrap around)."""
    names = {node.name for node in objs.nodes}
    orphans: list[Pod] = []
    totals: dict[tuple[str, str], int] = {}
    for pod in objs.pods:
        if not pod.node_name:
            continue
        if pod.node_name not in names:
            orphans.append(pod)
            continue
        for resource, amount in pod.requests.items():
            key = (pod.node_name, resource)
            total = totals.get(key, 0) + amount
            totals[key] = total
            if total > MAX_INT64:
                raise LoadError(
                    "cluster",
                    None,
                    "",
                    f"Pod {pod.key}: spec.containers[*].resources.requests.{resource}",
                    f"the pods bound to node {shown(pod.node_name)} request more {resource} in total than int64 holds ({MAX_INT64})",
                )
    if orphans:
        first = orphans[0]
        more = f" and {len(orphans) - 1} more" if len(orphans) > 1 else ""
        objs.warnings.append(
            f"warning: pod {first.key}{more} bound to a node that no file defines ({shown(first.node_name)}); "
            "such pods are kept but count on no node"
        )


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while objects are built in bulk.

    Loading 100000 pods creates millions of long-lived objects; the collector would rescan the
    growing heap again and again (12% of a large load) and find nothing to free. Reference
    counting still frees everything else meanwhile; the collector's state is restored after.
    The objects made meanwhile go straight to the oldest generation (freeze, then unfreeze):
    else the first allocation after the pause would scan all of them as young objects (8% of
    a large load), and the next older generation's collection once more.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if gc.get_freeze_count() == 0:  # else unfreezing would undo a freeze made by the host
            gc.freeze()
            gc.unfreeze()
        if was_enabled:
            gc.enable()


def load_cluster(paths: list[str]) -> ClusterObjects:
    """Read every object from the files and folders; raise LoadError on the first bad one."""
    reader = _Reader()
    with _collector_paused():
        for path in _files(paths):
            try:
                with path.open("rb") as stream:
                    reader.read(str(path), stream, json_text=path.suffix == ".json")
            except OSError as exc:
                raise LoadError(str(path), None, "", "", f"cannot read: {exc.strerror or exc}") from exc
        return reader.finish(paths)


def load_cluster_text(data: str | bytes, source: str = "<upload>") -> ClusterObjects:
    """Read objects from YAML or JSON text (an upload) with the same bounds and messages as files.

    `source` stands for the file name in messages; JSON is recognised by a `.json` source or by
    text starting with `{` or `[`.
    """
    reader = _Reader()
    json_text = source.endswith(".json") or looks_like_json(data)
    with _collector_paused():
        try:
            reader.read(source, data, json_text=json_text)
        except LoadError as exc:
            if exc.syntax and json_text and not source.endswith(".json"):
                # `{a: b}` is YAML's flow style, not JSON: read it as YAML (JSON is YAML too).
                reader = _Reader()
                reader.read(source, data, json_text=False)
            else:
                raise
        return reader.finish([source])


def objects_from_documents(documents: Iterable[tuple[str, int, Any]], strict: bool = False) -> ClusterObjects:
    """Objects from parsed documents given as (source, document number, document).

    `source` stands where a file name would in messages. No documents at all is not an error
    here (a host restoring an empty cluster); text from users goes to `load_cluster_text`,
    which also bounds the parsing. With `strict`, new objects are checked as kube-apiserver checks
    them (names, labels, unknown fields, int32 fields; `scheduler.api.validation`).
    """
    reader = _Reader(strict)
    sources: list[str] = []
    for source, number, doc in documents:
        if source not in sources:
            sources.append(source)
        reader.document(source, number, doc)
    return reader.finish(sources, require_objects=False)


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
