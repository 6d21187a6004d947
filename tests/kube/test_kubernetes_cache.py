"""The `kubernetes` backend's cache without a server: an Event names its pod's uid (looked up by
namespace and name), and a deletion without a uid finds the pod the same way."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.clock import Clock
from scheduler.kube.backend import KubernetesCluster
from tests.support import builders


def pod_doc(name: str, uid: str, rv: int, namespace: str = "ns") -> dict[str, Any]:
    return builders.pod_doc(name, namespace, uid=uid, resourceVersion=str(rv))


def regarding_uid(cluster: KubernetesCluster, obj: str) -> str:
    cluster.broadcaster._cache.clear()  # each a new Event, not a series
    cluster.record("Normal", "Scheduled", obj, "assigned")
    uid: str = cluster.broadcaster._out.pop()[2]["regarding"]["uid"]
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


class _Refusing:
    """A connection whose every request is refused with kube-apiserver's 409 for a bound pod."""

    def __init__(self, resent: bool) -> None:
        self.resent = resent

    def request(self, *args: Any, **kwargs: Any) -> Any:
        from scheduler.kube.client import RemoteError

        raise RemoteError(
            409, "Conflict", 'Operation cannot be fulfilled on pods/binding "a": pod a is already assigned to node "n1"'
        )


@pytest.mark.parametrize(
    ("resent", "node", "bound"),
    [(True, "n1", True), (True, "n2", False), (False, "n1", False)],
    ids=["sent again, same node: bound", "sent again, another node: refused", "sent once: refused"],
)
def test_a_binding_sent_again_that_finds_the_pod_on_its_node_was_taken(resent: bool, node: str, bound: bool) -> None:
    from scheduler.kube.client import RemoteError

    cluster = KubernetesCluster(clock=Clock(), connection=_Refusing(resent))
    cluster._apply("Pod", "ADDED", pod_doc("a", "uid-a", 1))
    if bound:
        cluster.bind(cluster.pods["uid-a"], node)
    else:
        with pytest.raises(RemoteError):
            cluster.bind(cluster.pods["uid-a"], node)
