"""The resources `/k8s` serves (names, kinds, groups, scopes, verbs), the API's refusals as `Status`
documents (404, 409, 422 worded as the API server words them), and Events between core/v1 and
events.k8s.io/v1."""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass
from typing import Any

from scheduler.api.fields import format_time


@dataclass(frozen=True, slots=True)
class Resource:
    """One served resource: its REST name, kind, group/version, scope and short names."""

    name: str
    kind: str
    group: str
    version: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ("create", "delete", "get", "list", "patch", "update", "watch")
    subresources: tuple[str, ...] = ()

    @property
    def api_version(self) -> str:
        """`v1` or `group/version`."""
        return f"{self.group}/{self.version}" if self.group else self.version


RESOURCES: tuple[Resource, ...] = (
    Resource("pods", "Pod", "", "v1", True, ("po",), subresources=("binding", "status")),
    Resource("nodes", "Node", "", "v1", False, ("no",), subresources=("status",)),
    Resource("namespaces", "Namespace", "", "v1", False, ("ns",), subresources=("status",)),
    Resource("events", "Event", "", "v1", True, ("ev",)),
    Resource("bindings", "Binding", "", "v1", True, (), verbs=("create",)),
    Resource("events", "Event", "events.k8s.io", "v1", True, ("ev",)),
    Resource("priorityclasses", "PriorityClass", "scheduling.k8s.io", "v1", False, ("pc",)),
    Resource("poddisruptionbudgets", "PodDisruptionBudget", "policy", "v1", True, ("pdb",), subresources=("status",)),
    Resource("leases", "Lease", "coordination.k8s.io", "v1", True, ()),
    Resource("podgroups", "PodGroup", "scheduling.sigs.k8s.io", "v1alpha1", True, ("pg", "pgs"), subresources=("status",)),
    Resource(
        "reservations", "Reservation", "scheduling.koordinator.sh", "v1alpha1", False, ("reserv",), subresources=("status",)
    ),
    Resource("nodemetrics", "NodeMetric", "slo.koordinator.sh", "v1alpha1", False, (), subresources=("status",)),
    Resource(
        "noderesourcetopologies",
        "NodeResourceTopology",
        "topology.node.k8s.io",
        "v1alpha1",
        False,
        ("node-res-topo",),
        subresources=("status",),
    ),
)
EXTENSION_KINDS = frozenset({"PodGroup", "Reservation", "NodeMetric", "NodeResourceTopology"})
DOCUMENT_KINDS = frozenset({"Namespace", "PriorityClass", "PodDisruptionBudget", "Event", "Lease"})
BUILTIN_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


def find_resource(group: str, version: str, name: str) -> Resource | None:
    """The resource a URL names, if served."""
    return next((r for r in RESOURCES if (r.group, r.version, r.name) == (group, version, name)), None)


class StatusError(Exception):
    """A request the API refuses: the HTTP code and the `Status` reason (NotFound, Conflict, ...)."""

    def __init__(self, code: int, reason: str, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details or {}

    def status(self) -> dict[str, Any]:
        """The `meta/v1 Status` body."""
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if self.details:
            body["details"] = self.details
        return body


def not_found(res: Resource, name: str) -> StatusError:
    """404 as the API server words it."""
    group = f".{res.group}" if res.group else ""
    return StatusError(404, "NotFound", f'{res.name}{group} "{name}" not found', {"name": name, "kind": res.name})


def conflict(res: Resource, name: str, message: str) -> StatusError:
    """409 Conflict (a stale resourceVersion, a pod already bound)."""
    group = f".{res.group}" if res.group else ""
    return StatusError(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {res.name}{group} "{name}": {message}',
        {"name": name, "kind": res.name},
    )


def invalid(res: Resource, name: str, message: str) -> StatusError:
    """422 Invalid; `message` is `field: what is wrong` (kubectl prints it from the causes)."""
    field, _, what = message.partition(": ")
    cause = {"reason": "FieldValueInvalid", "message": what or message, "field": field if what else ""}
    return StatusError(
        422, "Invalid", f'{res.kind} "{name}" is invalid: {message}', {"name": name, "kind": res.kind, "causes": [cause]}
    )


def events_v1(core: dict[str, Any]) -> dict[str, Any]:
    """A core/v1 Event as events.k8s.io/v1 shows it."""
    doc: dict[str, Any] = {
        "metadata": copy.deepcopy(core.get("metadata") or {}),
        "regarding": core.get("involvedObject") or {},
        "reason": core.get("reason", ""),
        "note": core.get("message", ""),
        "type": core.get("type", "Normal"),
        "reportingController": core.get("reportingComponent") or (core.get("source") or {}).get("component", ""),
        "reportingInstance": core.get("reportingInstance", ""),
        "action": core.get("action", ""),
        "eventTime": core.get("eventTime") or core.get("firstTimestamp"),
    }
    if core.get("related"):
        doc["related"] = core["related"]
    return doc


def core_event(v1: dict[str, Any]) -> dict[str, Any]:
    """An events.k8s.io/v1 Event as the core/v1 Event it is stored as."""
    stamp = v1.get("eventTime") or format_time(time.time())
    return {
        "metadata": copy.deepcopy(v1.get("metadata") or {}),
        "involvedObject": v1.get("regarding") or {},
        "related": v1.get("related"),
        "reason": v1.get("reason", ""),
        "message": v1.get("note", ""),
        "type": v1.get("type", "Normal"),
        "action": v1.get("action", ""),
        "reportingComponent": v1.get("reportingController", ""),
        "reportingInstance": v1.get("reportingInstance", ""),
        "source": {"component": v1.get("reportingController", "")},
        "eventTime": stamp,
        "firstTimestamp": stamp,
        "lastTimestamp": stamp,
        "count": 1,
    }
