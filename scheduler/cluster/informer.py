"""What kube-scheduler's pod informer sees of the pods: only non-terminal ones.

Upstream builds its pod informer with the field selector
`status.phase!=Succeeded,status.phase!=Failed` (kubernetes/kubernetes `pkg/scheduler/scheduler.go`,
`newPodInformer`). The API server's watch then turns changes across that boundary into the
events the scheduler handles: a pod that becomes terminal arrives as a deletion of its last
non-terminal state (`cacheWatcher.convertToWatchEvent`), a pod that leaves a terminal phase
arrives as an addition, and changes among terminal pods are not delivered at all. Any cluster
backend's pod events go through `pod_informer_view` before the cache and queue see them.
"""

from __future__ import annotations

from scheduler.api.objects import Pod
from scheduler.cluster.events import WatchEvent


def visible(pod: Pod | None) -> bool:
    """Whether the pod informer lists this pod (it exists and is not Succeeded or Failed)."""
    return pod is not None and not pod.terminal


def pod_informer_view(event: WatchEvent) -> WatchEvent | None:
    """The event as the field-selected pod informer delivers it, or None when it delivers nothing."""
    if event.kind != "Pod":
        return event
    was, now = visible(event.old), visible(event.new)
    if event.type == "DELETED":
        return event if was else None
    if was and now:
        return event
    if was:
        # Became terminal: a deletion carrying the last state the informer saw.
        return WatchEvent("Pod", "DELETED", event.old, None)
    if now:
        # Created, or left a terminal phase: an addition.
        return WatchEvent("Pod", "ADDED", None, event.new)
    return None
