"""Preemption through a real kube-apiserver, with and without a PodDisruptionBudget: victims get
DisruptionTarget and are deleted (the test's kubelet finishes the deletion), the preemptor's one
status patch carries nominatedNodeName and PodScheduled=False, and it is bound where it nominated."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from scheduler.kube.client import connect
from tests.support.builders import node_doc, pod_doc
from tests.support.controlplane import Api, ControlPlane, Kubelet, namespace
from tests.support.engines import RemoteEngine
from tests.support.waits import wait_for

pytestmark = pytest.mark.realcluster
NS = "preempt"


def pod(name: str, cpu: str, priority_class: str, **labels: str) -> dict[str, Any]:
    spec = {"schedulerName": "remote-scheduler", "priorityClassName": priority_class}
    return pod_doc(name, NS, cpu, "64Mi", spec=spec, labels=labels or None)


def node_of(api: Api, name: str) -> str:
    status, body = api.request("GET", f"/api/v1/namespaces/{NS}/pods/{name}")
    return str(body["spec"].get("nodeName") or "") if status == 200 else ""


def gone(api: Api, name: str) -> bool:
    return api.request("GET", f"/api/v1/namespaces/{NS}/pods/{name}")[0] == 404


@pytest.fixture(scope="module")
def engine(control_plane: ControlPlane, api: Api, kubelet: Kubelet) -> Iterator[RemoteEngine]:
    namespace(api, NS)
    for name, value in (("low", 10), ("high", 1000)):
        api.create({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value})
    for name in ("node-a", "node-b"):
        kubelet.add_node(node_doc(name, cpu="2", memory="4Gi"))
    running = RemoteEngine(connect(control_plane.admin_kubeconfig))
    yield running
    running.stop()


class PodWatch:
    """Every state a pod passes through, as (nominatedNodeName, PodScheduled condition) pairs."""

    def __init__(self, api: Api, name: str) -> None:
        self.states: list[tuple[str, dict[str, Any] | None]] = []
        listed = api.get(f"/api/v1/namespaces/{NS}/pods")
        self._thread = threading.Thread(target=self._run, args=(api, name, listed["metadata"]["resourceVersion"]), daemon=True)
        self._thread.start()

    def _run(self, api: Api, name: str, version: str) -> None:
        try:
            self._follow(api, name, version)
        except Exception:  # the control plane stopping at the module's end
            return

    def _follow(self, api: Api, name: str, version: str) -> None:
        for event in api.watch(f"/api/v1/namespaces/{NS}/pods?fieldSelector=metadata.name%3D{name}", version, 30):
            status = event["object"].get("status") or {}
            condition = next((c for c in status.get("conditions") or [] if c["type"] == "PodScheduled"), None)
            self.states.append((status.get("nominatedNodeName") or "", condition))


def test_preemption_without_a_pdb(api: Api, engine: RemoteEngine, kubelet: Kubelet) -> None:
    api.create(pod("low-a", "1500m", "low"))
    api.create(pod("low-b", "1500m", "low"))
    wait_for(lambda: node_of(api, "low-a") and node_of(api, "low-b"), 30, 0.1, what="the low pods bound")
    watch = PodWatch(api, "urgent")
    api.create(pod("urgent", "1500m", "high"))
    wait_for(lambda: node_of(api, "urgent"), 60, 0.1, what="the preemptor bound")
    victims = [name for name in ("low-a", "low-b") if gone(api, name)]
    assert len(victims) == 1, victims
    assert f"{NS}/{victims[0]}" in kubelet.deleted
    nominated = [(node, c) for node, c in watch.states if node]
    assert nominated, watch.states
    node, condition = nominated[0]
    assert node == node_of(api, "urgent")
    # The nomination's patch carries the failed attempt's condition.
    assert condition is not None and (condition["status"], condition["reason"]) == ("False", "Unschedulable"), watch.states
    # With a nomination PostFilter says nothing more (upstream's PostFilterMsg is empty then).
    assert condition["message"] == "0/2 nodes are available: 2 Insufficient cpu.", condition


def test_preemption_spares_the_pod_a_pdb_protects(api: Api, engine: RemoteEngine) -> None:
    for name in ("urgent", "low-a", "low-b"):
        api.request("DELETE", f"/api/v1/namespaces/{NS}/pods/{name}", {"gracePeriodSeconds": 0})
    wait_for(lambda: all(gone(api, n) for n in ("urgent", "low-a", "low-b")), 30, 0.1, what="a clean namespace")
    api.create(pod("guarded", "1500m", "low", app="guarded"))
    wait_for(lambda: node_of(api, "guarded"), 30, 0.1, what="guarded bound")
    api.create(pod("free", "1500m", "low", app="free"))
    wait_for(lambda: node_of(api, "free"), 30, 0.1, what="free bound")
    pdb = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "guarded", "namespace": NS},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "guarded"}}},
    }
    created = api.create(pdb)
    # No disruption controller runs: write the status it would.
    status = {
        "currentHealthy": 1,
        "desiredHealthy": 1,
        "expectedPods": 1,
        "disruptionsAllowed": 0,
        "observedGeneration": created["metadata"]["generation"],
    }
    api.ok(
        "PATCH",
        f"/apis/policy/v1/namespaces/{NS}/poddisruptionbudgets/guarded/status",
        {"status": status},
        "application/merge-patch+json",
    )
    wait_for(lambda: engine.cluster.pdbs.get(f"{NS}/guarded") is not None, 30, 0.1, what="the engine sees the PDB")
    api.create(pod("urgent-2", "1500m", "high"))
    wait_for(lambda: node_of(api, "urgent-2"), 60, 0.1, what="the preemptor bound")
    assert gone(api, "free") and not gone(api, "guarded")
    assert node_of(api, "urgent-2") != node_of(api, "guarded")
