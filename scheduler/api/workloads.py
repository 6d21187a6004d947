"""Services and the workload controllers whose selectors default pod spreading uses.

PodTopologySpread's default constraints (and the score it gives pods without constraints of
their own) select pods with the selectors of the Services selecting the pod and of the pod's
controller when that is a ReplicationController, ReplicaSet or StatefulSet (kubernetes/kubernetes
`pkg/scheduler/framework/plugins/helper/spread.go`, `DefaultSelector`). Only the selector and the
metadata are read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scheduler.api.fields import join, mapping, string_map
from scheduler.api.meta import ObjectMeta, parse_meta
from scheduler.api.selectors import LabelSelector, parse_label_selector, selector_from_map

SERVICE = "Service"
REPLICATION_CONTROLLER = "ReplicationController"
REPLICA_SET = "ReplicaSet"
STATEFUL_SET = "StatefulSet"

# The group/version each controller kind must be owned through (`rcKind`, `rsKind`, `ssKind`).
CONTROLLER_API_VERSIONS = {
    REPLICATION_CONTROLLER: "v1",
    REPLICA_SET: "apps/v1",
    STATEFUL_SET: "apps/v1",
}


@dataclass(frozen=True, slots=True)
class SelectingObject:
    """A Service or a workload controller: its kind, metadata and pod selector.

    `selector` is None when the object has none: a Service without `spec.selector` selects
    nothing (not everything), and a controller without one adds nothing.
    """

    kind: str
    meta: ObjectMeta
    selector: LabelSelector | None

    @property
    def name(self) -> str:
        """metadata.name."""
        return self.meta.name

    @property
    def namespace(self) -> str:
        """metadata.namespace."""
        return self.meta.namespace


def _map_selector(spec: dict[str, Any], path: str) -> LabelSelector | None:
    """A `map[string]string` selector (Service, ReplicationController); absent or null is nil."""
    if spec.get("selector") is None:
        return None
    return selector_from_map(string_map(spec.get("selector"), join(path, "selector")))


def _label_selector(spec: dict[str, Any], path: str) -> LabelSelector | None:
    """A `metav1.LabelSelector` (ReplicaSet, StatefulSet); absent or null is nil."""
    if spec.get("selector") is None:
        return None
    return parse_label_selector(spec.get("selector"), join(path, "selector"))


def _parse(kind: str, raw: Any, path: str, label_selector: bool) -> SelectingObject:
    doc = mapping(raw, path)
    meta = parse_meta(doc.get("metadata"), join(path, "metadata"), namespaced=True)
    spec_path = join(path, "spec")
    spec = mapping(doc.get("spec"), spec_path)
    selector = _label_selector(spec, spec_path) if label_selector else _map_selector(spec, spec_path)
    return SelectingObject(kind, meta, selector)


def parse_service(raw: Any, path: str = "") -> SelectingObject:
    """Parse a v1 Service (`spec.selector`, a label map)."""
    return _parse(SERVICE, raw, path, label_selector=False)


def parse_replication_controller(raw: Any, path: str = "") -> SelectingObject:
    """Parse a v1 ReplicationController (`spec.selector`, a label map)."""
    return _parse(REPLICATION_CONTROLLER, raw, path, label_selector=False)


def parse_replica_set(raw: Any, path: str = "") -> SelectingObject:
    """Parse an apps/v1 ReplicaSet (`spec.selector`, a LabelSelector)."""
    return _parse(REPLICA_SET, raw, path, label_selector=True)


def parse_stateful_set(raw: Any, path: str = "") -> SelectingObject:
    """Parse an apps/v1 StatefulSet (`spec.selector`, a LabelSelector)."""
    return _parse(STATEFUL_SET, raw, path, label_selector=True)
