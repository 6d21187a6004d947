"""The `kubernetes`-client backend against the simulated cluster's API, with injected faults."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from scheduler.kube.leaderelection import LeaderElector
from tests.k8sapi.conftest import Console, start_console
from tests.support.builders import node_doc, pod_doc
from tests.support.engines import RemoteEngine, cache_matches
from tests.support.proxy import FaultProxy, Rule, client_for
from tests.support.waits import wait_for

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")]


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Console]:
    """A console whose /k8s plays the real cluster."""
    proc, running = start_console(tmp_path_factory.mktemp("backendvar"))
    try:
        yield running
    finally:
        proc.terminate()
        proc.wait(30)


def node(name: str, cpu: str = "4") -> dict[str, Any]:
    return node_doc(name, cpu)


def pod(name: str, namespace: str, cpu: str = "250m", scheduler: str = "remote-scheduler") -> dict[str, Any]:
    return pod_doc(name, namespace, cpu, "64Mi", spec={"schedulerName": scheduler})


def create(api: Console, doc: dict[str, Any]) -> None:
    kind = doc["kind"]
    if kind == "Node":
        path = "/k8s/api/v1/nodes"
    elif kind == "Namespace":
        path = "/k8s/api/v1/namespaces"
    else:
        path = f"/k8s/api/v1/namespaces/{doc['metadata']['namespace']}/pods"
    code, body = api.request("POST", path, doc)
    assert code == 201, body


def test_faults_every_pod_bound_once_or_reported_and_no_stale_informer(api: Console) -> None:
    ns = "faults"
    create(api, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    for i in range(4):
        create(api, node(f"f-node-{i}"))
    proxy = FaultProxy(api.url, api.token)
    proxy.rules = [
        Rule("GET", r"/api/v1/pods\?.*watch=true", "close-after:3", count=2),  # watch closed mid-stream
        Rule("GET", r"/api/v1/nodes\?.*watch=true", "gone", count=1),  # 410 Gone: relist
        Rule("POST", r"/pods/contested/binding", "rival:f-node-3"),  # another scheduler wins: our bind gets 409
        Rule("POST", r"/binding$", "retry-after:429:1", count=3),  # throttled, retried after Retry-After
        Rule("POST", r"/binding$", "status:500", count=2, skip=4),  # binding fails: the pod is retried
        Rule("POST", r"/binding$", "delay:2", count=2, skip=8),  # a slow API server
        Rule("GET", r"/api/v1/pods\?.*watch=true", "delay:2", count=1, skip=3),
    ]
    proxy.start()
    runner = RemoteEngine(client_for(proxy.url, api.token), resync_seconds=4, watch_seconds=30, read_timeout=10)
    names = [f"p-{i}" for i in range(24)] + ["contested"]
    try:
        for name in names:
            create(api, pod(name, ns))
        # A pod nothing can hold: reported (FailedScheduling), never bound.
        create(api, pod("too-big", ns, cpu="64"))

        def all_bound() -> bool:
            _, listed = api.request("GET", f"/k8s/api/v1/namespaces/{ns}/pods")
            return (
                all((p["spec"].get("nodeName") or p["metadata"]["name"] == "too-big") for p in listed["items"])
                and len(listed["items"]) == 26
            )

        wait_for(all_bound, 90, 0.1, what="every pod bound")
        # The informers catch up (a resync repairs what a broken watch missed): the cache equals a fresh list.
        wait_for(lambda: cache_matches(runner.cluster), 30, 0.1, what="cache equals a fresh list")
    finally:
        runner.stop()
        proxy.stop()
    _, listed = api.request("GET", f"/k8s/api/v1/namespaces/{ns}/pods")
    bound = {p["metadata"]["name"]: p["spec"].get("nodeName") for p in listed["items"]}
    assert bound["contested"] == "f-node-3"  # the rival's binding stands
    assert proxy.bindings["contested"] == 0  # ours was refused (409)
    assert all(proxy.bindings[n] == 1 for n in names if n != "contested"), proxy.bindings
    assert not bound["too-big"]
    reported = {(e["regarding"]["name"], e["reason"]) for e in proxy.events}
    assert ("too-big", "FailedScheduling") in reported
    assert ("contested", "FailedScheduling") in reported
    assert ("p-0", "Scheduled") in reported
    failed = next(e for e in proxy.events if e["regarding"]["name"] == "too-big")
    assert failed["note"].startswith("0/") and "Insufficient cpu" in failed["note"]
    assert failed["reportingController"] == "remote-scheduler" and failed["action"] == "Scheduling"
    assert proxy.applied["close-after"] == 2 and proxy.applied["gone"] == 1 and proxy.applied["retry-after"] == 3
    assert proxy.applied["status"] == 2 and proxy.applied["delay"] >= 2 and proxy.applied["rival"] == 1
    informers = {i.kind.kind: i for i in runner.cluster.informers}
    assert informers["Node"].relists >= 2  # the initial list and the relist after 410


def test_preemption_through_the_api(api: Console) -> None:
    ns = "preempt"
    create(api, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    create(api, node("pre-node", cpu="1"))
    proxy = FaultProxy(api.url, api.token)
    proxy.start()
    low = pod("low", ns, cpu="800m")
    low["spec"]["nodeSelector"] = {"kubernetes.io/hostname": "pre-node"}
    runner = RemoteEngine(client_for(proxy.url, api.token))
    try:
        create(api, low)
        wait_for(
            lambda: api.request("GET", f"/k8s/api/v1/namespaces/{ns}/pods/low")[1]["spec"].get("nodeName"),
            15,
            0.1,
            what="low bound",
        )
        high = pod("high", ns, cpu="800m")
        high["spec"]["priority"] = 1000
        high["spec"]["nodeSelector"] = {"kubernetes.io/hostname": "pre-node"}
        create(api, high)
        wait_for(
            lambda: api.request("GET", f"/k8s/api/v1/namespaces/{ns}/pods/low")[0] == 404, 30, 0.1, what="the victim deleted"
        )
        wait_for(
            lambda: api.request("GET", f"/k8s/api/v1/namespaces/{ns}/pods/high")[1]["spec"].get("nodeName") == "pre-node",
            30,
            0.1,
            what="preemptor bound",
        )
        # Events go out from the broadcaster's thread after the binding: wait for them, then stop.
        wait_for(
            lambda: ("high", "Scheduled") in [(e["regarding"]["name"], e["reason"]) for e in proxy.events],
            30,
            0.1,
            what="the Scheduled event",
        )
    finally:
        runner.stop()
        proxy.stop()
    reasons = [(e["regarding"]["name"], e["reason"]) for e in proxy.events]
    assert ("low", "Preempted") in reasons and ("high", "Scheduled") in reasons


def test_lease_hands_over_when_the_leader_stops_renewing(api: Console) -> None:
    changes: list[str] = []
    a = LeaderElector(
        client_for(f"{api.url}/k8s", api.token),
        "kube-system",
        "schedconsole",
        "a",
        2,
        1.5,
        0.2,
        on_started=lambda: changes.append("a+"),
        on_stopped=lambda: changes.append("a-"),
    )
    b = LeaderElector(
        client_for(f"{api.url}/k8s", api.token),
        "kube-system",
        "schedconsole",
        "b",
        2,
        1.5,
        0.2,
        on_started=lambda: changes.append("b+"),
    )
    a.start()
    wait_for(lambda: a.leading, 15, 0.1, what="a leads")
    b.start()
    time.sleep(2.5)
    assert a.leading and not b.leading  # a renews: b waits
    a.stop(release=False)  # a dies without releasing
    started = time.monotonic()
    wait_for(lambda: b.leading, 10, 0.1, what="b takes over")
    assert time.monotonic() - started < 2 + 1.5
    _, lease = api.request("GET", "/k8s/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/schedconsole")
    assert lease["spec"]["holderIdentity"] == "b" and lease["spec"]["leaseTransitions"] == 1
    b.stop()
    _, lease = api.request("GET", "/k8s/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/schedconsole")
    assert lease["spec"]["holderIdentity"] == ""  # released on a clean stop
    assert changes[:3] == ["a+", "a-", "b+"]
