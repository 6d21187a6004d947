"""`meta.k8s.io/v1 Table` responses: what `kubectl get` (and `-o wide`) prints, as the API server's
table convertors build them (priority-1 columns are the wide ones)."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

Row = list[Any]
Column = tuple[str, str, int, str]  # name, type, priority, description


def age(stamp: str | None, now: float | None = None) -> str:
    """kubectl's short human duration (`duration.HumanDuration`): 42s, 5m10s, 3h, 12d, 2y."""
    if not stamp:
        return "<unknown>"
    try:
        then = datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return "<invalid>"
    seconds = int((now if now is not None else time.time()) - then)
    if seconds < 0:
        return "0s"
    if seconds < 120:
        return f"{seconds}s"
    minutes = seconds // 60
    if minutes < 10:
        return f"{minutes}m{seconds % 60}s" if seconds % 60 else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 8:
        return f"{hours}h{minutes % 60}m" if minutes % 60 else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    days = hours // 24
    if days < 730:
        return f"{days}d"
    return f"{days // 365}y"


def _pod(doc: dict[str, Any]) -> Row:
    meta, spec, status = doc.get("metadata") or {}, doc.get("spec") or {}, doc.get("status") or {}
    containers = spec.get("containers") or []
    statuses = status.get("containerStatuses")
    phase = status.get("phase") or "Pending"
    ready = (
        sum(1 for s in statuses if s.get("ready"))
        if isinstance(statuses, list)
        else (len(containers) if phase == "Running" else 0)
    )
    shown = "Terminating" if meta.get("deletionTimestamp") else status.get("reason") or phase
    gates = spec.get("readinessGates") or []
    return [
        meta.get("name", ""),
        f"{ready}/{len(containers)}",
        shown,
        0,
        age(meta.get("creationTimestamp")),
        status.get("podIP") or "<none>",
        spec.get("nodeName") or "<none>",
        status.get("nominatedNodeName") or "<none>",
        f"0/{len(gates)}" if gates else "<none>",
    ]


def _node(doc: dict[str, Any]) -> Row:
    meta, spec, status = doc.get("metadata") or {}, doc.get("spec") or {}, doc.get("status") or {}
    ready = next((c for c in status.get("conditions") or [] if c.get("type") == "Ready"), None)
    state = "Ready" if ready is None or ready.get("status") == "True" else "NotReady"
    if spec.get("unschedulable"):
        state += ",SchedulingDisabled"
    roles = sorted(k.split("/", 1)[1] for k in (meta.get("labels") or {}) if k.startswith("node-role.kubernetes.io/"))
    info = status.get("nodeInfo") or {}
    addresses = {a.get("type"): a.get("address") for a in status.get("addresses") or [] if isinstance(a, dict)}
    return [
        meta.get("name", ""),
        state,
        ",".join(roles) or "<none>",
        age(meta.get("creationTimestamp")),
        info.get("kubeletVersion", ""),
        addresses.get("InternalIP") or "<none>",
        addresses.get("ExternalIP") or "<none>",
        info.get("osImage") or "<unknown>",
        info.get("kernelVersion") or "<unknown>",
        info.get("containerRuntimeVersion") or "<unknown>",
    ]


def _event(doc: dict[str, Any]) -> Row:
    regarding = doc.get("involvedObject") or doc.get("regarding") or {}
    return [
        age(doc.get("lastTimestamp") or doc.get("eventTime") or (doc.get("metadata") or {}).get("creationTimestamp")),
        doc.get("type", ""),
        doc.get("reason", ""),
        f"{str(regarding.get('kind', '')).lower()}/{regarding.get('name', '')}",
        doc.get("message") or doc.get("note") or "",
    ]


def _priority_class(doc: dict[str, Any]) -> Row:
    meta = doc.get("metadata") or {}
    return [
        meta.get("name", ""),
        doc.get("value", 0),
        bool(doc.get("globalDefault")),
        age(meta.get("creationTimestamp")),
        doc.get("preemptionPolicy", ""),
    ]


def _generic(doc: dict[str, Any]) -> Row:
    meta = doc.get("metadata") or {}
    return [meta.get("name", ""), age(meta.get("creationTimestamp"))]


def _phase(doc: dict[str, Any]) -> Row:
    meta = doc.get("metadata") or {}
    return [meta.get("name", ""), (doc.get("status") or {}).get("phase", ""), age(meta.get("creationTimestamp"))]


NAME: Column = ("Name", "string", 0, "Name must be unique within a namespace.")
AGE: Column = ("Age", "string", 0, "CreationTimestamp is a timestamp representing the server time when this object was created.")
TABLES: dict[str, tuple[list[Column], Callable[[dict[str, Any]], Row]]] = {
    "Pod": (
        [
            NAME,
            ("Ready", "string", 0, "The aggregate readiness state of this pod for accepting traffic."),
            ("Status", "string", 0, "The aggregate status of the containers in this pod."),
            ("Restarts", "string", 0, "The number of times the containers in this pod have been restarted."),
            AGE,
            ("IP", "string", 1, "IP address allocated to the pod."),
            ("Node", "string", 1, "Name of the Node this pod is bound to."),
            ("Nominated Node", "string", 1, "Name of the node nominated by the scheduler, if any."),
            ("Readiness Gates", "string", 1, "Pod readiness gates."),
        ],
        _pod,
    ),
    "Node": (
        [
            NAME,
            ("Status", "string", 0, "The status of the node"),
            ("Roles", "string", 0, "The roles of the node"),
            AGE,
            ("Version", "string", 0, "Kubelet Version reported by the node."),
            ("Internal-IP", "string", 1, "List of addresses reachable to the node."),
            ("External-IP", "string", 1, "List of addresses reachable to the node."),
            ("OS-Image", "string", 1, "OS Image reported by the node."),
            ("Kernel-Version", "string", 1, "Kernel Version reported by the node."),
            ("Container-Runtime", "string", 1, "Container Runtime Version reported by the node."),
        ],
        _node,
    ),
    "Event": (
        [
            ("Last Seen", "string", 0, "Time since the event was last seen."),
            ("Type", "string", 0, "Type of this event (Normal, Warning)."),
            ("Reason", "string", 0, "Why the event was emitted."),
            ("Object", "string", 0, "The object this event is about."),
            ("Message", "string", 0, "A human-readable description of the status of this event."),
        ],
        _event,
    ),
    "PriorityClass": (
        [
            NAME,
            ("Value", "integer", 0, "The priority value."),
            ("Global-Default", "boolean", 0, "Whether this class is the default."),
            AGE,
            ("Preemption-Policy", "string", 1, "Whether pods of this class may preempt."),
        ],
        _priority_class,
    ),
    "Namespace": ([NAME, ("Status", "string", 0, "The phase of the namespace."), AGE], _phase),
    "Reservation": ([NAME, ("Phase", "string", 0, "The phase of the reservation."), AGE], _phase),
    "PodGroup": ([NAME, ("Phase", "string", 0, "The phase of the pod group."), AGE], _phase),
}


def table(
    kind: str, docs: list[dict[str, Any]], list_meta: dict[str, Any], include: str = "Metadata", headers: bool = True
) -> dict[str, Any]:
    """A Table of the documents (`includeObject`: None, Metadata or Object)."""
    columns, row = TABLES.get(kind, ([NAME, AGE], _generic))
    rows = []
    for doc in docs:
        entry: dict[str, Any] = {"cells": row(doc)}
        if include == "Object":
            entry["object"] = doc
        elif include != "None":
            entry["object"] = {
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": doc.get("metadata") or {},
            }
        rows.append(entry)
    out: dict[str, Any] = {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": list_meta}
    if headers:
        out["columnDefinitions"] = [
            {"name": n, "type": t, "format": "name" if n == "Name" else "", "description": d, "priority": p}
            for n, t, p, d in columns
        ]
    out["rows"] = rows
    return out


def wants_table(accept: str) -> bool:
    """Whether the client asked for a Table (kubectl's `get` does, before plain JSON)."""
    return "as=Table" in accept
