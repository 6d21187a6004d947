"""Default spreading's selector from cluster files: Services, controllers and owner references.

Upstream: kubernetes/kubernetes `pkg/scheduler/framework/plugins/helper/spread.go`
(`DefaultSelector`, `GetPodServices`) and its `spread_test.go`.
"""

from __future__ import annotations

import pathlib
from typing import Any

import pytest
import yaml

from scheduler.api.loader import load_cluster
from scheduler.api.objects import Pod
from scheduler.clock import VirtualClock
from scheduler.cluster.simulated import SimulatedCluster
from scheduler.config.loader import default_config
from scheduler.plugins.podtopologyspread.common import default_selector
from scheduler.plugins.registry import new_registry
from scheduler.scheduler import Scheduler
from tests.support import builders

START = 1767225600.0


def load(tmp_path: pathlib.Path, docs: list[dict[str, Any]]) -> SimulatedCluster:
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return SimulatedCluster.from_objects(load_cluster([str(path)]), VirtualClock(START))


def service(name: str, namespace: str, selector: dict[str, str] | None) -> dict[str, Any]:
    spec: dict[str, Any] = {"ports": [{"port": 80}]}
    if selector is not None:
        spec["selector"] = selector
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def pod_doc(
    name: str, labels: dict[str, str], owners: list[dict[str, Any]] | None = None, namespace: str = "test"
) -> dict[str, Any]:
    return builders.pod_doc(name, namespace, image="i", labels=labels, **({"ownerReferences": owners} if owners else {}))


def pod_of(cluster: SimulatedCluster, name: str) -> Pod:
    return next(p for p in cluster.list_pods() if p.name == name)


# spread_test.go TestGetPodServices: services service-0..2 select app=test-0..2 in namespace test;
# pods test-pod-0..4 carry app=test-i and label=label-i.
@pytest.mark.parametrize(
    ("index", "want"), [(0, ["app=test-0"]), (1, ["app=test-1"]), (2, ["app=test-2"]), (3, []), (4, [])], ids=lambda v: str(v)
)
def test_get_pod_services(tmp_path: pathlib.Path, index: int, want: list[str]) -> None:
    docs = [service(f"service-{i}", "test", {"app": f"test-{i}"}) for i in range(3)]
    docs += [pod_doc(f"test-pod-{i}", {"app": f"test-{i}", "label": f"label-{i}"}) for i in range(5)]
    cluster = load(tmp_path, docs)
    selector = default_selector(pod_of(cluster, f"test-pod-{index}"), cluster)
    assert [f"{r.key}={r.values[0]}" for r in selector.requirements] == want


def owner(kind: str, name: str, api_version: str, controller: bool = True) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "name": name, "uid": f"uid-{name}", "controller": controller}


CONTROLLERS = [
    {
        "apiVersion": "v1",
        "kind": "ReplicationController",
        "metadata": {"name": "rc", "namespace": "test"},
        "spec": {"selector": {"rc": "x"}},
    },
    {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "rs", "namespace": "test"},
        "spec": {"selector": {"matchExpressions": [{"key": "rs", "operator": "In", "values": ["x", "y"]}]}},
    },
    {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "ss", "namespace": "test"},
        "spec": {"selector": {"matchLabels": {"ss": "x"}}},
    },
    {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "rs", "namespace": "other"},
        "spec": {"selector": {"matchLabels": {"elsewhere": "x"}}},
    },
    {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "nil-selector", "namespace": "test"}, "spec": {}},
    service("svc", "test", {"app": "web"}),
    service("headless", "test", None),
    service("svc", "other", {"app": "web"}),
]


@pytest.mark.parametrize(
    ("owners", "want"),
    [
        ([], ["app In web"]),
        ([owner("ReplicationController", "rc", "v1")], ["app In web", "rc In x"]),
        ([owner("ReplicaSet", "rs", "apps/v1")], ["app In web", "rs In x,y"]),
        ([owner("StatefulSet", "ss", "apps/v1")], ["app In web", "ss In x"]),
        ([owner("ReplicaSet", "rs", "apps/v1", controller=False)], ["app In web"]),
        ([owner("ReplicaSet", "rs", "extensions/v1beta1")], ["app In web"]),
        ([owner("ReplicaSet", "missing", "apps/v1")], ["app In web"]),
        ([owner("ReplicaSet", "nil-selector", "apps/v1")], ["app In web"]),
        ([owner("Job", "rs", "batch/v1")], ["app In web"]),
        ([owner("Node", "n1", "v1", controller=False), owner("StatefulSet", "ss", "apps/v1")], ["app In web", "ss In x"]),
    ],
    ids=[
        "services-only",
        "replication-controller",
        "replica-set-expressions",
        "stateful-set",
        "owner-not-controller",
        "wrong-group-version",
        "controller-not-found",
        "controller-without-selector",
        "unsupported-kind",
        "controller-after-other-owner",
    ],
)
def test_default_selector_follows_the_controller_reference(
    tmp_path: pathlib.Path, owners: list[dict[str, Any]], want: list[str]
) -> None:
    cluster = load(tmp_path, [*CONTROLLERS, pod_doc("p", {"app": "web", "rc": "x", "rs": "x", "ss": "x"}, owners)])
    selector = default_selector(pod_of(cluster, "p"), cluster)
    assert [f"{r.key} {r.operator} {','.join(r.values)}" for r in selector.requirements] == want


def test_default_spreading_by_service_and_replicaset_picks_node_c(tmp_path: pathlib.Path) -> None:
    # The conformance case default-spreading-service-and-replicaset: upstream
    # scores PodTopologySpread 40/60/100 and picks node-c; without the selector node-b wins.
    case = pathlib.Path(__file__).resolve().parents[2] / "conformance" / "cases" / "default-spreading-service-and-replicaset.yaml"
    cluster = load(tmp_path, yaml.safe_load(case.read_text())["cluster"])
    sched = Scheduler(default_config(), cluster, cluster.clock, new_registry(), seed=1)
    sched.start()
    sched.run()
    (record,) = sched.records
    assert record.node == "node-c"
    assert {n: s["PodTopologySpread"] for n, s in record.scores().items()} == {"node-a": 40, "node-b": 60, "node-c": 100}
