"""Faults after binding against a real kube-apiserver never end the engine loop: a plugin that
raises at PostBind (every pod) and in its queueing hint, and kube-apiserver answering 500 to the
binding, the PodScheduled=False status patch and the Event writes (a ValidatingWebhookConfiguration
whose webhook cannot be reached, failurePolicy Fail: `Internal error occurred: failed calling
webhook`). Each fault is logged and counted (`schedconsole_background_errors_total{source}`), the
refused binding is a FailedScheduling attempt retried with backoff, and once the webhook is gone
the pod binds. An Event written while kube-apiserver is down is tried again and arrives once it
is back."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from scheduler.kube.client import connect
from tests.support import faulty
from tests.support.builders import node_doc, pod_doc
from tests.support.controlplane import Api, ControlPlane, Kubelet
from tests.support.engines import RemoteEngine
from tests.support.waits import wait_for

pytestmark = pytest.mark.realcluster
NS = "containment"
WEBHOOK = "fail-writes"


def errors(engine: RemoteEngine) -> dict[str, float]:
    counted = engine.scheduler.metrics.as_json().get("schedconsole_background_errors_total", [])
    return {s["labels"]["source"]: s["value"] for s in counted}


def pod(api: Api, name: str) -> dict[str, Any]:
    return dict(api.get(f"/api/v1/namespaces/{NS}/pods/{name}"))


@pytest.fixture(scope="module")
def engine(control_plane: ControlPlane, api: Api, kubelet: Kubelet) -> Iterator[tuple[RemoteEngine, faulty.Faulty]]:
    api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS, "labels": {"containment": "yes"}}})
    api.create({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default", "namespace": NS}})
    for i in range(2):
        kubelet.add_node(node_doc(f"node-{i}", cpu="4", memory="8Gi"))
    registry, plugin = faulty.registry()
    # Watches of 6 s: kube-apiserver's graceful shutdown waits up to 60 s for HTTP/1.1 watches
    # (the restart below), as in test_resilience.py.
    running = RemoteEngine(connect(control_plane.admin_kubeconfig), faulty.config(), registry, watch_seconds=6)
    yield running, plugin
    running.stop()  # fails the test if the loop died


def test_plugin_faults_after_binding(api: Api, kubelet: Kubelet, engine: tuple[RemoteEngine, faulty.Faulty]) -> None:
    running, plugin = engine
    for i in range(4):
        api.create(pod_doc(f"p-{i}", NS, "250m", "64Mi"))
    api.create(pod_doc("waiter", NS, "250m", "64Mi", labels={faulty.WAIT: "yes"}))
    wait_for(lambda: all(pod(api, f"p-{i}")["spec"].get("nodeName") for i in range(4)), 30, 0.1, what="p-0..3 bound")
    wait_for(lambda: errors(running).get("PostBind/Faulty") == 4, 30, 0.05, what="four PostBind faults counted")
    # A node the waiter fits: the hint raises for the Node event, the pod is queued anyway.
    kubelet.add_node(node_doc("node-ready", cpu="4", memory="8Gi", labels={faulty.READY: "true"}))
    wait_for(lambda: pod(api, "waiter")["spec"].get("nodeName") == "node-ready", 30, 0.1, what="the waiter bound")
    counted = errors(running)
    assert counted["QueueingHint/Faulty"] == plugin.hints >= 1
    assert counted["PostBind/Faulty"] == plugin.post_binds == 5
    assert running.alive


def test_plugin_faults_within_the_scheduling_cycle(api: Api, engine: tuple[RemoteEngine, faulty.Faulty]) -> None:
    """A plugin raising at PreFilter, Filter, Score, Reserve or Permit (and the cycle's own code
    raising on its unreadable PreFilter answer): each attempt is an Error status as kube-scheduler
    wraps it: a FailedScheduling Event with that note (repeated after the backoff: a series),
    PodScheduled=False with reason SchedulerError; counted; the pod binds once the fault is gone."""
    running, _ = engine
    expected = {
        "PreFilter": f'running PreFilter plugin "Faulty": prefilter fault for {NS}/raise-prefilter',
        "Filter": f'running "Faulty" filter plugin: filter fault for {NS}/raise-filter',
        "Score": f'running Score plugin "Faulty": score fault for {NS}/raise-score',
        "Reserve": f'running Reserve plugin "Faulty": reserve fault for {NS}/raise-reserve',
        "Permit": f'running Permit plugin "Faulty": permit fault for {NS}/raise-permit',
        "Result": "'str' object has no attribute 'node_names'",
    }
    before = errors(running)
    for point in expected:
        api.create(pod_doc(f"raise-{point.lower()}", NS, "250m", "64Mi", labels={faulty.RAISE: point}))
    api.create(pod_doc("beside-faults", NS, "250m", "64Mi"))

    def failed_twice(point: str) -> bool:
        name = f"raise-{point.lower()}"
        events = api.items(f"/apis/events.k8s.io/v1/namespaces/{NS}/events")
        return any(
            e["regarding"]["name"] == name
            and e["reason"] == "FailedScheduling"
            and e.get("note") == expected[point]
            and e.get("series", {}).get("count", 1) >= 2
            for e in events
        )

    for point in expected:
        wait_for(lambda point=point: failed_twice(point), 60, 0.2, what=f"two FailedScheduling Events of the {point} fault")
    wait_for(lambda: pod(api, "beside-faults")["spec"].get("nodeName"), 30, 0.1, what="the pod beside the faults bound")
    for point, message in expected.items():
        found = pod(api, f"raise-{point.lower()}")
        assert not found["spec"].get("nodeName")
        (condition,) = [c for c in found["status"]["conditions"] if c["type"] == "PodScheduled"]
        assert (condition["status"], condition["reason"], condition["message"]) == ("False", "SchedulerError", message)
        source = "scheduling cycle" if point == "Result" else f"{point}/Faulty"
        assert errors(running).get(source, 0) - before.get(source, 0) >= 2, source
    assert running.alive
    for point in expected:
        patch = {"metadata": {"labels": {faulty.RAISE: None}}}
        api.ok("PATCH", f"/api/v1/namespaces/{NS}/pods/raise-{point.lower()}", patch, "application/merge-patch+json")
    for point in expected:
        name = f"raise-{point.lower()}"
        wait_for(lambda name=name: pod(api, name)["spec"].get("nodeName"), 60, 0.2, what=f"{name} bound once its fault is gone")
    assert running.alive


def _webhook() -> dict[str, Any]:
    def rule(group: str, resource: str, *operations: str) -> dict[str, Any]:
        return {
            "apiGroups": [group],
            "apiVersions": ["v1"],
            "operations": list(operations),
            "resources": [resource],
            "scope": "Namespaced",
        }

    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": WEBHOOK},
        "webhooks": [
            {
                "name": "fail.writes.schedconsole.test",
                "clientConfig": {"url": "https://127.0.0.1:9/validate"},  # nothing listens: 500
                "rules": [
                    rule("", "pods/binding", "CREATE"),
                    rule("", "pods/status", "UPDATE"),
                    rule("events.k8s.io", "events", "CREATE", "UPDATE"),
                ],
                "namespaceSelector": {"matchLabels": {"containment": "yes"}},
                "failurePolicy": "Fail",
                "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
                "timeoutSeconds": 1,
            }
        ],
    }


def _refused(api: Api) -> bool:
    event = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"generateName": "probe-", "namespace": NS},
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "reportingController": "test",
        "reportingInstance": "test",
        "action": "Probe",
        "reason": "Probe",
        "type": "Normal",
        "regarding": {"kind": "Pod", "namespace": NS, "name": "probe"},
    }
    status, _ = api.request("POST", f"/apis/events.k8s.io/v1/namespaces/{NS}/events", event)
    return status == 500


def test_api_server_500s_on_binding_status_and_events(api: Api, engine: tuple[RemoteEngine, faulty.Faulty]) -> None:
    running, _ = engine
    api.create(_webhook())
    wait_for(lambda: _refused(api), 30, 0.2, what="kube-apiserver calling the webhook (500)")
    before = errors(running)
    api.create(pod_doc("blocked", NS, "250m", "64Mi"))

    def refused_twice() -> bool:
        records = [r for r in running.scheduler.records if r.pod == f"{NS}/blocked"]
        return len(records) >= 2 and all(r.outcome == "Error" for r in records)

    wait_for(refused_twice, 60, 0.1, what="two refused bindings")
    records = [r for r in running.scheduler.records if r.pod == f"{NS}/blocked"]
    assert "failed calling webhook" in records[0].message, records[0].message
    assert not pod(api, "blocked")["spec"].get("nodeName")
    wait_for(
        lambda: (
            errors(running).get("pod status", 0) > before.get("pod status", 0)
            and errors(running).get("events", 0) > before.get("events", 0)
        ),
        30,
        0.1,
        what="the status patch and the Events refused, counted",
    )
    assert "failed calling webhook" in running.scheduler.metrics.last_background_error["pod status"]
    assert running.cluster.broadcaster.retrying == 0  # answered by the server: not tried again, as client-go
    assert running.alive
    api.ok("DELETE", f"/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/{WEBHOOK}")
    wait_for(lambda: pod(api, "blocked")["spec"].get("nodeName"), 60, 0.2, what="bound once the webhook is gone")
    assert running.alive


def test_events_written_during_an_outage_arrive_after_it(
    control_plane: ControlPlane, api: Api, engine: tuple[RemoteEngine, faulty.Faulty]
) -> None:
    running, _ = engine
    broadcaster = running.cluster.broadcaster
    # client-go's 10 s between tries: 12 tries span two minutes, past kube-apiserver's graceful
    # shutdown (up to 60 s once it refuses connections) and its start on a loaded machine.
    sent_before = broadcaster.sent

    def record_once_down() -> None:
        def down() -> bool:
            try:
                api.request("GET", "/readyz", timeout=1)
            except Exception:  # refused: the process is gone
                return True
            return False

        wait_for(down, 60, 0.05, what="kube-apiserver down")
        running.cluster.record("Normal", "Scheduled", f"{NS}/outage-probe", "recorded while kube-apiserver was down")

    recorder = threading.Thread(target=record_once_down)
    recorder.start()
    control_plane.restart_apiserver(down_for=3.0)
    recorder.join(10)
    assert broadcaster.retried >= 1

    def arrived() -> bool:
        events = api.items(f"/apis/events.k8s.io/v1/namespaces/{NS}/events")
        return any(e.get("note") == "recorded while kube-apiserver was down" for e in events)

    wait_for(arrived, 90, 0.5, what=f"the Event written after the restart ({broadcaster.retrying} waiting)")
    assert broadcaster.sent > sent_before and broadcaster.retrying == 0
    assert running.alive
