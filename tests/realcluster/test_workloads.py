"""Workload gangs over a real kube-apiserver v1.35 serving scheduling.k8s.io/v1alpha1 (gate
GenericWorkload on, the API enabled by --runtime-config): the engine with GangScheduling binds a
gang whose Workload exists and minCount pods came, and holds one short of minCount; the real
kube-scheduler v1.35.4 with GenericWorkload and GangScheduling on decides the same."""

from __future__ import annotations

import pathlib
from collections.abc import Iterator
from typing import Any

import pytest

from scheduler.kube.client import connect
from tests.support.builders import node_doc, pod_doc
from tests.support.controlplane import Api, ControlPlane, Kubelet, namespace
from tests.support.engines import RemoteEngine
from tests.support.waits import wait_for

pytestmark = pytest.mark.realcluster
NS = "workloads"
PROFILE = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{"schedulerName": "gang-scheduler", "plugins": {"multiPoint": {"enabled": [{"name": "GangScheduling"}]}}}],
}


@pytest.fixture(scope="module")
def control_plane(k8s_binaries: pathlib.Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    """This module's control plane serves the Workload API."""
    flags = "--feature-gates=GenericWorkload=true --runtime-config=scheduling.k8s.io/v1alpha1=true"
    plane = ControlPlane(tmp_path_factory.mktemp("k8s"), k8s_binaries, apiserver_flags=flags).start()
    try:
        yield plane
    finally:
        plane.stop()


def workload(name: str, min_count: int) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1alpha1",
        "kind": "Workload",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"podGroups": [{"name": "workers", "policy": {"gang": {"minCount": min_count}}}]},
    }


def member(name: str, workload_name: str, ns: str = NS, scheduler: str = "gang-scheduler") -> dict[str, Any]:
    spec = {"schedulerName": scheduler, "workloadRef": {"name": workload_name, "podGroup": "workers"}}
    return pod_doc(name, ns, "500m", "64Mi", spec=spec)


def nodes_of(api: Api, ns: str = NS) -> dict[str, str]:
    return {p["metadata"]["name"]: p["spec"].get("nodeName", "") for p in api.items(f"/api/v1/namespaces/{ns}/pods")}


def test_a_gang_binds_when_its_workload_and_min_count_pods_exist(control_plane: ControlPlane, api: Api, kubelet: Kubelet) -> None:
    namespace(api, NS)
    for i in range(2):
        kubelet.add_node(node_doc(f"node-{i}", cpu="4", memory="8Gi"))
    engine = RemoteEngine(connect(control_plane.admin_kubeconfig), PROFILE)
    try:
        api.create(member("short-0", "short"))
        api.create(workload("short", 2))
        api.create(member("train-0", "train"))
        api.create(member("train-1", "train"))
        # The API server keeps spec.workloadRef (GenericWorkload on).
        assert api.get(f"/api/v1/namespaces/{NS}/pods/train-0")["spec"]["workloadRef"]["name"] == "train"
        api.create(workload("train", 2))
        wait_for(lambda: all(nodes_of(api).get(n) for n in ("train-0", "train-1")), 30, what="the gang bound")
        assert nodes_of(api)["short-0"] == ""
        assert not any(r.pod == f"{NS}/short-0" for r in engine.scheduler.records)  # held by PreEnqueue
    finally:
        engine.stop()


def test_kube_scheduler_decides_the_same(control_plane: ControlPlane, api: Api, kubelet: Kubelet) -> None:
    ns = "workloads-kube"
    namespace(api, ns)
    gates = "--feature-gates=GenericWorkload=true,GangScheduling=true"
    proc = control_plane.kube_scheduler(None, gates, "-v=3")
    try:
        for doc in (member("short-0", "short", ns, "default-scheduler"), member("train-0", "train", ns, "default-scheduler")):
            api.create(doc)
        api.create({**workload("short", 2), "metadata": {"name": "short", "namespace": ns}})
        api.create(member("train-1", "train", ns, "default-scheduler"))
        api.create({**workload("train", 2), "metadata": {"name": "train", "namespace": ns}})
        wait_for(lambda: all(nodes_of(api, ns).get(n) for n in ("train-0", "train-1")), 60, what="kube-scheduler bound the gang")
        assert nodes_of(api, ns)["short-0"] == ""
    finally:
        proc.terminate()
        proc.wait(30)
