"""Builders for pods, nodes, snapshots and a plugin handle, shared by all tests."""

from __future__ import annotations

from typing import Any

from scheduler.api.objects import Node, Pod, parse_node, parse_pod
from scheduler.framework.snapshot import Snapshot


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
    alloc: dict[str, Any] = {"cpu": str(cpu), "memory": str(memory), "pods": str(pods)}
    alloc.update({k: str(v) for k, v in (extra or {}).items()})
    return parse_node(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
            "spec": {"taints": taints or [], "unschedulable": unschedulable},
            "status": {
                "allocatable": alloc,
                "capacity": dict(alloc),
                "images": [{"names": n, "sizeBytes": s} for n, s in (images or [])],
            },
        }
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
    body: dict[str, Any] = {"containers": containers, **(spec or {})}
    if node_name:
        body["nodeName"] = node_name
    if priority is not None:
        body["priority"] = priority
    return parse_pod(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": name,
                "namespace": namespace,
                "uid": f"uid-{namespace}-{name}",
                "labels": labels or {},
                "annotations": annotations or {},
            },
            "spec": body,
        }
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


class FakeHandle:
    """The parts of the framework handle plugins use in unit tests."""

    def __init__(self, snapshot: Snapshot, now: float = 1767225600.0, profile_name: str = "default-scheduler") -> None:
        self.snapshot = snapshot
        self.profile_name = profile_name
        self._now = now
        self.activated: list[Pod] = []

    def now(self) -> float:
        return self._now

    def cluster(self) -> Any:
        return None

    def waiting_pods(self) -> list[Any]:
        return []

    def get_waiting_pod(self, uid: str) -> Any:
        return None

    def activate(self, pods: list[Pod]) -> None:
        self.activated.extend(pods)


def assert_batch_filter_agrees(plugin: Any, state: Any, pod: Pod, snapshot: Snapshot, positions: Any) -> None:
    """`filter_batch` gives, for every position, the code and reasons `filter` gives node by node."""
    from scheduler.framework.types import Code

    result = plugin.filter_batch(state, pod, snapshot, positions)
    assert len(result.codes) == len(positions)
    for i, pos in enumerate(list(positions)):
        status = plugin.filter(state, pod, snapshot.node_infos[int(pos)])
        assert Code(int(result.codes[i])) == status.code, (snapshot.names[int(pos)], status)
        if status.code != Code.SUCCESS:
            assert result.reasons(i) == status.reasons, snapshot.names[int(pos)]


def assert_batch_score_agrees(plugin: Any, state: Any, pod: Pod, snapshot: Snapshot, positions: Any) -> None:
    """`score_batch` equals `score` node by node, and NormalizeScore turns both into the same array."""
    import numpy as np

    batch = plugin.score_batch(state, pod, snapshot, positions)
    single = []
    for pos in list(positions):
        value, status = plugin.score(state, pod, snapshot.node_infos[int(pos)])
        assert status.success, status
        single.append(value)
    per_node = np.asarray(single, dtype=np.int64)
    assert batch.dtype == np.int64
    assert batch.tolist() == per_node.tolist()
    ext = plugin.score_extensions()
    if ext is not None:
        a, b = batch.copy(), per_node.copy()
        assert ext.normalize_score(state, pod, a).success
        assert ext.normalize_score(state, pod, b).success
        assert a.tolist() == b.tolist()
