"""Cluster mode against a real kube-apiserver: every pod bound once, Events as kube-scheduler
writes them, and the connection kept across kube-apiserver's idle timeout."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.kube.client import connect
from scheduler.kube.inflight import InFlight, _closed
from tests.support.builders import node_doc, pod_doc
from tests.support.controlplane import Api, ControlPlane, Kubelet, namespace
from tests.support.engines import RemoteEngine
from tests.support.waits import wait_for

pytestmark = pytest.mark.realcluster
NS = "binding"
TWO_PROFILES = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {"schedulerName": "remote-scheduler"},
        {
            "schedulerName": "remote-binpacking",
            "pluginConfig": [
                {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}},
            ],
        },
    ],
}


def pod(name: str, cpu: str = "500m", scheduler: str = "remote-scheduler") -> dict[str, Any]:
    return pod_doc(name, NS, cpu, "64Mi", spec={"schedulerName": scheduler})


def pods(api: Api) -> dict[str, dict[str, Any]]:
    return {p["metadata"]["name"]: p for p in api.items(f"/api/v1/namespaces/{NS}/pods")}


@pytest.fixture(scope="module")
def engine(control_plane: ControlPlane, api: Api, kubelet: Kubelet) -> Any:
    namespace(api, NS)
    for i in range(3):
        kubelet.add_node(node_doc(f"node-{i}", cpu="2", memory="4Gi"))
    running = RemoteEngine(connect(control_plane.admin_kubeconfig), TWO_PROFILES)
    yield running
    running.stop()


def test_every_pod_is_bound_once(api: Api, engine: RemoteEngine) -> None:
    for i in range(8):
        api.create(pod(f"p-{i}"))
    wait_for(lambda: all(p["spec"].get("nodeName") for p in pods(api).values()), 30, 0.1, what="every pod bound")
    placed = {name: p["spec"]["nodeName"] for name, p in pods(api).items()}
    assert len(placed) == 8
    per_node = {n: sum(1 for v in placed.values() if v == n) for n in set(placed.values())}
    assert all(count <= 4 for count in per_node.values()), per_node  # 2 CPUs, 500m each
    events = api.items(f"/apis/events.k8s.io/v1/namespaces/{NS}/events")
    scheduled = [e for e in events if e["reason"] == "Scheduled"]
    assert sorted(e["regarding"]["name"] for e in scheduled) == sorted(placed)
    assert all(
        e["note"] == f"Successfully assigned {NS}/{e['regarding']['name']} to {placed[e['regarding']['name']]}" for e in scheduled
    )


def _closed_by_server(inflight: InFlight) -> bool:
    """Whether kube-apiserver has closed every connection `inflight` holds idle."""
    idle = [entry[0] for entry in inflight._idle]
    return bool(idle) and all(_closed(wire.sock) for wire in idle)


def test_a_binding_after_the_api_servers_idle_timeout(control_plane: ControlPlane, api: Api, engine: RemoteEngine) -> None:
    api.create(pod("before-quiet", cpu="100m"))
    wait_for(lambda: pods(api)["before-quiet"]["spec"].get("nodeName"), 30, 0.1, what="a first binding")
    # A connection opened ahead for bindings and not used: kube-apiserver closes it when no request
    # starts on it within 32 s (ReadHeaderTimeout; a kept-alive one after 90 s).
    inflight = InFlight(connect(control_plane.admin_kubeconfig))
    api.create(pod("by-hand", scheduler="nobody"))
    path = f"/api/v1/namespaces/{NS}/pods/by-hand/binding"
    binding = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "by-hand"},
        "target": {"kind": "Node", "name": "node-0"},
    }
    answers: list[tuple[Any, BaseException | None]] = []

    def send() -> bool:
        return inflight.send("POST", path, binding, "application/json", lambda body, error: answers.append((body, error)))

    assert not send()  # no connection yet: one is opened ahead
    wait_for(lambda: _closed_by_server(inflight), 60, 0.5, what="kube-apiserver closed the connection opened ahead")
    assert not send(), "sent on a connection the server had closed"
    wait_for(send, 10, 0.05, what="sent on a fresh connection")
    wait_for(lambda: inflight.poll() or answers, 10, 0.05, what="the answer")
    assert answers[0][1] is None, answers
    inflight.close()
    # The engine, quiet as long, binds the next pod at once.
    api.create(pod("after-quiet", cpu="100m"))
    wait_for(lambda: pods(api)["after-quiet"]["spec"].get("nodeName"), 30, 0.1, what="the binding after the quiet")
    events = api.items(f"/apis/events.k8s.io/v1/namespaces/{NS}/events")
    failed = [e["note"] for e in events if e["regarding"]["name"] == "after-quiet" and e["reason"] == "FailedScheduling"]
    assert not failed, failed


def _scheduled_condition(api: Api, ns: str, name: str) -> dict[str, Any] | None:
    pod = api.get(f"/api/v1/namespaces/{ns}/pods/{name}")
    return next((c for c in pod["status"].get("conditions") or [] if c["type"] == "PodScheduled"), None)


def test_unschedulable_pods_get_kube_schedulers_condition_and_events_per_profile(
    control_plane: ControlPlane, api: Api, kubelet: Kubelet, engine: RemoteEngine
) -> None:
    ns = "conditions"
    namespace(api, ns)
    kube_scheduler = control_plane.kube_scheduler(control_plane.kube_scheduler_config())
    try:
        for name, scheduler in (("huge-ours", "remote-scheduler"), ("huge-theirs", "default-scheduler")):
            api.create(pod_doc(name, ns, "64", "64Mi", spec={"schedulerName": scheduler}))
        ours = wait_for(lambda: _scheduled_condition(api, ns, "huge-ours"), 30, 0.1, what="our PodScheduled condition")
        theirs = wait_for(lambda: _scheduled_condition(api, ns, "huge-theirs"), 30, 0.1, what="kube-scheduler's condition")
    finally:
        kube_scheduler.terminate()
        kube_scheduler.wait(30)
    assert (ours["status"], ours["reason"]) == (theirs["status"], theirs["reason"]) == ("False", "Unschedulable")
    assert ours["message"] == theirs["message"], (ours, theirs)
    # A node big enough but tainted: the pod is tried again and fails again; its Event becomes a series.
    taint = {"key": "dedicated", "value": "x", "effect": "NoSchedule"}
    kubelet.add_node(node_doc("node-tainted", cpu="128", memory="4Gi", spec={"taints": [taint]}))
    events = lambda: [  # noqa: E731  # read twice below
        e for e in api.items(f"/apis/events.k8s.io/v1/namespaces/{ns}/events") if e["regarding"]["name"] == "huge-ours"
    ]
    wait_for(lambda: (events()[0].get("series") or {}).get("count") == 2, 30, 0.1, what="a series of two FailedScheduling")
    [failed] = events()
    assert (failed["reason"], failed["reportingController"]) == ("FailedScheduling", "remote-scheduler")
    assert failed["note"].startswith("0/3 nodes are available")  # the first note stays, as client-go's
    # Another profile's Events carry its name.
    api.create(pod_doc("packed", ns, "100m", "64Mi", spec={"schedulerName": "remote-binpacking"}))
    wait_for(lambda: api.get(f"/api/v1/namespaces/{ns}/pods/packed")["spec"].get("nodeName"), 30, 0.1, what="packed bound")
    scheduled = wait_for(
        lambda: [e for e in api.items(f"/apis/events.k8s.io/v1/namespaces/{ns}/events") if e["regarding"]["name"] == "packed"],
        30,
        0.1,
        what="packed's Event",
    )
    assert scheduled[0]["reportingController"] == "remote-binpacking"
    assert scheduled[0]["reportingInstance"].startswith("remote-binpacking-")


def test_a_series_whose_event_was_deleted_is_created_again(api: Api, kubelet: Kubelet, engine: RemoteEngine) -> None:
    """The Event of an unschedulable pod deleted between its first and second FailedScheduling:
    the series patch gets 404 and the Event is created again, name and series count 2 with it,
    as client-go's broadcaster does (it was dropped before). Runs last: it adds a node."""
    api.create(pod("too-big", cpu="64"))

    def events() -> list[dict[str, Any]]:
        return [e for e in api.items(f"/apis/events.k8s.io/v1/namespaces/{NS}/events") if e["regarding"]["name"] == "too-big"]

    [first] = wait_for(events, 30, 0.1, what="too-big's FailedScheduling")
    assert first["reason"] == "FailedScheduling" and "series" not in first
    name = first["metadata"]["name"]
    api.ok("DELETE", f"/apis/events.k8s.io/v1/namespaces/{NS}/events/{name}")
    recreated_before = engine.cluster.broadcaster.recreated
    # A node added (too small as well) makes the pod try again: its second FailedScheduling.
    kubelet.add_node(node_doc("node-small", cpu="1", memory="1Gi"))
    wait_for(lambda: [e for e in events() if (e.get("series") or {}).get("count") == 2], 30, 0.1, what="the Event again")
    [again] = events()
    assert again["metadata"]["name"] == name and again["reason"] == "FailedScheduling"
    assert again["note"] == first["note"] and again["reportingController"] == "remote-scheduler"
    assert engine.cluster.broadcaster.recreated == recreated_before + 1
