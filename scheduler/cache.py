"""The scheduler cache: bound and assumed pods over the shared snapshot (`internal/cache`).

A pod is assumed on its node as soon as the scheduling cycle picks it, so the next cycle sees
its resources before binding finishes; the informer's add confirms it, a binding failure
forgets it.
"""

from __future__ import annotations

from scheduler.api.objects import Node, Pod
from scheduler.framework.snapshot import Snapshot


class Cache:
    """Nodes and the pods on them; owns every mutation of the snapshot."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self._assumed: dict[str, Pod] = {}
        self._binding_finished: set[str] = set()
        self._pods: dict[str, Pod] = {}

    def add_node(self, node: Node) -> None:
        """Add or update a node."""
        self.snapshot.add_node(node)

    def remove_node(self, name: str) -> None:
        """Remove a node; its pods stay known until they are deleted."""
        self.snapshot.remove_node(name)

    def assume(self, pod: Pod) -> None:
        """Account a pod on pod.node_name before it is bound."""
        if pod.uid in self._pods or pod.uid in self._assumed:
            raise ValueError(f"pod {pod.key} is in the cache, so can't be assumed")
        self.snapshot.add_pod(pod, pod.node_name)
        self._assumed[pod.uid] = pod

    def finish_binding(self, pod: Pod) -> None:
        """Binding succeeded; the informer's add will confirm the pod."""
        if pod.uid in self._assumed:
            self._binding_finished.add(pod.uid)

    def forget(self, pod: Pod) -> None:
        """Undo assume after a failure."""
        if self._assumed.pop(pod.uid, None) is not None:
            self.snapshot.remove_pod(pod)
        self._binding_finished.discard(pod.uid)

    def is_assumed(self, uid: str) -> bool:
        """Whether a pod is assumed and not yet confirmed."""
        return uid in self._assumed

    def add_pod(self, pod: Pod) -> None:
        """A bound pod seen by the informer; confirms an assumed pod (moving it if needed)."""
        assumed = self._assumed.pop(pod.uid, None)
        self._binding_finished.discard(pod.uid)
        if assumed is not None and self.snapshot.replace_pod(pod):
            # Our own binding confirmed: the pod is accounted there already.
            self._pods[pod.uid] = pod
            return
        if assumed is not None or pod.uid in self._pods:
            self.snapshot.remove_pod(assumed or self._pods[pod.uid])
        self._pods[pod.uid] = pod
        self.snapshot.add_pod(pod, pod.node_name)

    def update_pod(self, old: Pod, new: Pod) -> None:
        """A bound pod changed."""
        if self.snapshot.replace_pod(new):
            self._pods[new.uid] = new
            return
        self.snapshot.remove_pod(old)
        self._pods[new.uid] = new
        self.snapshot.add_pod(new, new.node_name)

    def remove_pod(self, pod: Pod) -> None:
        """A bound (or assumed) pod was deleted."""
        self._assumed.pop(pod.uid, None)
        self._pods.pop(pod.uid, None)
        self.snapshot.remove_pod(pod)

    def pod(self, uid: str) -> Pod | None:
        """A bound or assumed pod by uid."""
        return self._pods.get(uid) or self._assumed.get(uid)
