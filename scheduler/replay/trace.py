"""A recorded window of cluster changes: the objects at its start and what happened during it.

A trace is what a replay reads: nodes and pods at the window's start (the pods that were pending
then arrive at the start), then arrivals, deletions and node changes on the virtual clock. It
comes from a trace the bench reads (openb: creation and deletion times per task) or from the
console's log of object changes (`trace_from_changes`). Recorded bindings are kept as events too:
they say where the recorded run had placed a pod, which the window's starting state uses (a pod
bound before the window starts is bound there), while the replay itself makes its own decisions.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scheduler.api.loader import ClusterObjects
from scheduler.api.objects import Node, Pod, parse_node, parse_pod
from scheduler.bench.openb import OPENB_PODS, int_field, openb_nodes, openb_pods, read_csv

ADD, DELETE, BIND = "add", "delete", "bind"
ACTIONS = (ADD, DELETE, BIND)


class TraceInputError(ValueError):
    """A change or trace row the replay cannot read; the message names the row and the field."""


@dataclass(frozen=True, slots=True)
class TraceEvent:
    """One change at a moment: a pod or node added (or, for a node, replaced), deleted, or a
    recorded binding (`node` names where the recorded run placed the pod)."""

    at: float
    action: str
    kind: str
    name: str
    """A pod's `namespace/name`, a node's name."""
    pod: Pod | None = None
    node: Node | None = None
    bound_to: str = ""


@dataclass(slots=True)
class Trace:
    """Objects at `start` and the events of [start, end], ordered by time (ties in recorded order)."""

    source: str
    start: float
    end: float
    objects: ClusterObjects
    events: list[TraceEvent] = field(default_factory=list)
    carried: list[str] = field(default_factory=list)
    """Pods pending at `start` (keys): they arrive at `start`, before the window's first event."""
    repacked: bool = False
    """A later segment of a cut window: its carried-in pods are placed again by the candidate
    (their waits are not counted; the earlier segment counted them)."""

    def window(self, start: float, end: float) -> Trace:
        """The sub-window [start, end]: events before `start` folded into its starting objects
        (nodes added, replaced or deleted; pods created, deleted, or bound where the recorded run
        bound them); pods alive and unbound at `start` are carried in, pending."""
        start, end = max(start, self.start), min(end, self.end)
        nodes: dict[str, Node] = {n.name: n for n in self.objects.nodes}
        pods: dict[str, Pod] = {p.key: p for p in self.objects.pods}
        inside: list[TraceEvent] = []
        for ev in self.events:
            if ev.at > end:
                break
            if ev.at >= start:
                inside.append(ev)
                continue
            _fold(ev, nodes, pods)
        objects = dataclasses.replace(self.objects, nodes=list(nodes.values()), pods=list(pods.values()))
        carried = [p.key for p in objects.pods if not p.node_name]
        return Trace(self.source, start, end, objects, inside, carried)

    def segments(self, count: int) -> list[Trace]:
        """The window cut into `count` sub-windows of equal virtual time (the last one takes the rest)."""
        if count < 1:
            raise TraceInputError(f"segments: invalid value {count}; must be 1 or more")
        width = (self.end - self.start) / count
        bounds = [self.start + i * width for i in range(count)] + [self.end]
        out = []
        for i in range(count):
            sub = self.window(bounds[i], bounds[i + 1])
            # An event exactly on a boundary belongs to the later segment only.
            if i + 1 < count:
                sub.events = [ev for ev in sub.events if ev.at < bounds[i + 1]]
            sub.repacked = i > 0
            out.append(sub)
        return out

    @property
    def arrivals(self) -> int:
        """Pods that arrive during the window (carried-in pods included)."""
        return len(self.carried) + sum(1 for ev in self.events if ev.kind == "Pod" and ev.action == ADD)


def _fold(ev: TraceEvent, nodes: dict[str, Node], pods: dict[str, Pod]) -> None:
    if ev.kind == "Node":
        if ev.action == DELETE:
            nodes.pop(ev.name, None)
            for key in [k for k, p in pods.items() if p.node_name == ev.name]:
                del pods[key]  # pod GC deletes the pods of a deleted node
        elif ev.node is not None:
            nodes[ev.name] = ev.node
        return
    if ev.action == ADD and ev.pod is not None:
        pods[ev.name] = ev.pod
    elif ev.action == DELETE:
        pods.pop(ev.name, None)
    elif ev.action == BIND and ev.name in pods and ev.bound_to in nodes and not pods[ev.name].node_name:
        pods[ev.name] = pods[ev.name].with_changes(node_name=ev.bound_to, phase="Running", start_time=ev.at)


# ----- openb -----------------------------------------------------------------------------------------
def openb_trace(data: Path, nodes: int | None = None, pods: int | None = None) -> Trace:
    """Alibaba's openb GPU-cluster trace as the bench reads it, with time: each task arrives at its
    `creation_time` and is deleted at its `deletion_time` (seconds from the trace's start; 0 or
    empty: never). `nodes` and `pods` keep the first N of each (pods in creation order)."""
    all_nodes = openb_nodes(data)
    all_pods = openb_pods(data)
    path = data / OPENB_PODS
    times: dict[str, tuple[int, int]] = {}
    for i, row in enumerate(read_csv(path, ("name", "creation_time", "deletion_time")), start=2):
        created = int_field(path, i, "creation_time", row["creation_time"])
        deleted = int_field(path, i, "deletion_time", row["deletion_time"])
        times[row["name"]] = (created, deleted)
    kept_nodes = all_nodes[:nodes] if nodes is not None else all_nodes
    kept_pods = all_pods[:pods] if pods is not None else all_pods
    events: list[TraceEvent] = []
    for pod in kept_pods:
        created, deleted = times[pod.name]
        events.append(TraceEvent(float(created), ADD, "Pod", pod.key, pod=pod))
        if deleted > created:
            events.append(TraceEvent(float(deleted), DELETE, "Pod", pod.key))
    events.sort(key=lambda ev: ev.at)  # stable: arrivals keep creation order
    end = max((ev.at for ev in events), default=0.0)
    return Trace("openb", 0.0, end, ClusterObjects(nodes=list(kept_nodes)), events)


# ----- the console's change log ----------------------------------------------------------------------
def trace_from_changes(
    changes: Iterable[Mapping[str, Any]], start: float, end: float, base: ClusterObjects | None = None, source: str = "console"
) -> Trace:
    """A trace from recorded object changes, oldest first: each `{"at": epoch seconds, "action":
    "add"|"delete"|"bind", "kind": "Pod"|"Node", "namespace", "name", "document"?, "node"?}` (a
    document for adds, the node for bindings). `base` holds the other objects the pods need
    (namespaces, priority classes, PDBs, ...); its nodes and pods are ignored. Priorities are
    resolved from `base`'s priority classes as admission would have."""
    objects = dataclasses.replace(base, nodes=[], pods=[]) if base is not None else ClusterObjects()
    classes = {pc.name: pc.value for pc in objects.priority_classes}
    default = next((pc.value for pc in objects.priority_classes if pc.global_default), 0)
    events: list[TraceEvent] = []
    for number, change in enumerate(changes, start=1):
        events.append(_change_event(number, change, classes, default))
    events.sort(key=lambda ev: ev.at)
    whole = Trace(source, min(start, end), end, objects, events)
    return whole.window(start, end)


def _change_event(number: int, change: Mapping[str, Any], classes: Mapping[str, int], default: int) -> TraceEvent:
    where = f"change {number}"
    action, kind = change.get("action"), change.get("kind")
    if action not in ACTIONS:
        raise TraceInputError(f"{where}: action: invalid value {action!r}; must be one of {', '.join(ACTIONS)}")
    if kind not in ("Pod", "Node"):
        raise TraceInputError(f"{where}: kind: invalid value {kind!r}; must be Pod or Node")
    at = change.get("at")
    if not isinstance(at, int | float) or isinstance(at, bool):
        raise TraceInputError(f"{where}: at: invalid value {at!r}; must be seconds since the epoch")
    name = str(change.get("name") or "")
    key = f"{change.get('namespace') or ''}/{name}" if kind == "Pod" else name
    if action == BIND:
        return TraceEvent(float(at), BIND, str(kind), key, bound_to=str(change.get("node") or ""))
    if action == DELETE:
        return TraceEvent(float(at), DELETE, str(kind), key)
    document = change.get("document")
    if not isinstance(document, dict):
        raise TraceInputError(f"{where}: document: a {kind} added must carry its document")
    try:
        if kind == "Node":
            return TraceEvent(float(at), ADD, "Node", key, node=parse_node(document, where))
        pod = parse_pod(document, where)
    except ValueError as exc:
        raise TraceInputError(f"{where}: {exc}") from exc
    if pod.priority is None:
        pod.priority = classes.get(pod.priority_class_name, default) if pod.priority_class_name else default
    return TraceEvent(float(at), ADD, "Pod", pod.key, pod=pod)
