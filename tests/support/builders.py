"""Builders of API objects for tests: nodes, pods and snapshots."""

from __future__ import annotations

from typing import Any

from scheduler.api.objects import Node, Pod, parse_node, parse_pod
from scheduler.framework.snapshot import Snapshot


def node_doc(
    name: str,
    cpu: str = "4",
    memory: str = "16Gi",
    pods: int = 110,
    labels: dict[str, str] | None = None,
    spec: dict[str, Any] | None = None,
    capacity: bool = False,
    images: list[dict[str, Any]] | None = None,
    extra: dict[str, str] | None = None,
    hostname: bool = True,
) -> dict[str, Any]:
    """A Node document: the hostname label (unless `hostname` is false) plus `labels`; allocatable
    cpu, memory, pods and `extra` (and the same capacity when asked); `spec` and `images` only when given."""
    allocatable = {"cpu": cpu, "memory": memory, "pods": str(pods), **(extra or {})}
    status: dict[str, Any] = {"allocatable": allocatable}
    if capacity:
        status["capacity"] = dict(allocatable)
    if images is not None:
        status["images"] = images
    doc: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {**({"kubernetes.io/hostname": name} if hostname else {}), **(labels or {})}},
    }
    if spec is not None:
        doc["spec"] = spec
    doc["status"] = status
    return doc


def pod_doc(
    name: str,
    namespace: str | None = "default",
    cpu: str | None = None,
    memory: str | None = None,
    image: str = "x",
    node_name: str = "",
    priority: int | None = None,
    spec: dict[str, Any] | None = None,
    containers: list[dict[str, Any]] | None = None,
    status: dict[str, Any] | None = None,
    **metadata: Any,
) -> dict[str, Any]:
    """A Pod document with one container `c` (requesting `cpu` and `memory` when given) or the
    given `containers`; `spec` adds fields, `metadata` adds labels, uid, annotations and the like.
    `namespace=None` leaves the namespace out; `status` only when given."""
    if containers is None:
        container: dict[str, Any] = {"name": "c", "image": image}
        requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
        if requests:
            container["resources"] = {"requests": requests}
        containers = [container]
    body: dict[str, Any] = {"containers": containers, **(spec or {})}
    if node_name:
        body["nodeName"] = node_name
    if priority is not None:
        body["priority"] = priority
    meta: dict[str, Any] = {"name": name} if namespace is None else {"name": name, "namespace": namespace}
    doc = {"apiVersion": "v1", "kind": "Pod", "metadata": {**meta, **metadata}, "spec": body}
    if status is not None:
        doc["status"] = status
    return doc


def make_node(
    name: str,
    cpu: str | int = "4",
    memory: str | int = "32Gi",
    pods: int = 110,
    labels: dict[str, str] | None = None,
    taints: list[dict[str, str]] | None = None,
    unschedulable: bool = False,
    images: list[tuple[list[str], int]] | None = None,
    extra: dict[str, str | int] | None = None,
) -> Node:
    """A node with allocatable = capacity as given."""
    return parse_node(
        node_doc(
            name,
            str(cpu),
            str(memory),
            pods,
            labels,
            spec={"taints": taints or [], "unschedulable": unschedulable},
            capacity=True,
            images=[{"names": n, "sizeBytes": s} for n, s in (images or [])],
            extra={k: str(v) for k, v in (extra or {}).items()},
        )
    )


def make_pod(
    name: str,
    namespace: str = "default",
    cpu: str | int | None = None,
    memory: str | int | None = None,
    node_name: str = "",
    labels: dict[str, str] | None = None,
    containers: list[dict[str, Any]] | None = None,
    priority: int | None = None,
    spec: dict[str, Any] | None = None,
    annotations: dict[str, str] | None = None,
) -> Pod:
    """A pod with one container requesting cpu/memory (or the given containers) and extra spec."""
    if containers is None:
        requests = {k: str(v) for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
        containers = [{"name": "c", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": requests}}]
    return parse_pod(
        pod_doc(
            name,
            namespace,
            node_name=node_name,
            priority=priority,
            spec=spec,
            containers=containers,
            uid=f"uid-{namespace}-{name}",
            labels=labels or {},
            annotations=annotations or {},
        )
    )


def make_snapshot(nodes: list[Node], pods: list[Pod] = (), namespaces: dict[str, dict[str, str]] | None = None) -> Snapshot:  # type: ignore[assignment]
    """A snapshot with the nodes, and the pods that have a nodeName accounted on them."""
    snap = Snapshot()
    for node in nodes:
        snap.add_node(node)
    for pod in pods:
        if pod.node_name:
            snap.add_pod(pod, pod.node_name)
    snap.namespaces = dict(namespaces or {})
    for pod in pods:
        snap.namespaces.setdefault(pod.namespace, {"kubernetes.io/metadata.name": pod.namespace})
    return snap
