"""The `kubernetes` backend's cache without a server: an Event names its pod's uid (looked up by
namespace and name), and a deletion without a uid finds the pod the same way."""

from __future__ import annotations

from typing import Any

from scheduler.clock import Clock
from scheduler.cluster.kubernetes import KubernetesCluster


def pod_doc(name: str, uid: str, rv: int, namespace: str = "ns") -> dict[str, Any]:
    return {
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "uid": uid, "resourceVersion": str(rv)},
        "spec": {"containers": [{"name": "c", "image": "x"}]},
    }


def regarding_uid(cluster: KubernetesCluster, obj: str) -> str:
    cluster.record("Normal", "Scheduled", obj, "assigned")
    uid: str = cluster._events_out.pop()["regarding"]["uid"]
    return uid


def test_event_and_deletion_find_the_pod_by_name() -> None:
    cluster = KubernetesCluster(clock=Clock())
    cluster.record_events = True
    cluster._apply("Pod", "ADDED", pod_doc("a", "uid-a", 1))
    cluster._apply("Pod", "ADDED", pod_doc("a", "uid-a-other", 2, namespace="other"))
    cluster._apply("Pod", "ADDED", pod_doc("b", "uid-b", 3))
    assert regarding_uid(cluster, "ns/a") == "uid-a"
    assert regarding_uid(cluster, "other/a") == "uid-a-other"
    assert regarding_uid(cluster, "ns/missing") == ""
    # A deletion whose document has no uid (a relist's tombstone) still removes the right pod.
    cluster._apply("Pod", "DELETED", {"kind": "Pod", "metadata": {"name": "a", "namespace": "ns"}})
    assert set(cluster.pods) == {"uid-a-other", "uid-b"}
    assert regarding_uid(cluster, "ns/a") == ""
    # Recreated under the same name: the new uid.
    cluster._apply("Pod", "ADDED", pod_doc("a", "uid-a2", 4))
    assert regarding_uid(cluster, "ns/a") == "uid-a2"
    cluster._apply("Pod", "DELETED", pod_doc("a", "uid-a2", 5))
    assert regarding_uid(cluster, "ns/a") == ""
    assert regarding_uid(cluster, "ns/b") == "uid-b"
