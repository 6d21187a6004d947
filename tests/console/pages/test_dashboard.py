"""The dashboard's engine reads (paged, side-effect free) and its pages."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from django.test import Client

from schedconsole.engine import operations as ops
from schedconsole.engine.client import EngineCallError, call
from schedconsole.profiles.models import AuditEntry, ProfileVersion
from tests.console.conftest import node, pod, settle
from tests.support.waits import wait_for

LOADAWARE = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {"schedulerName": "default-scheduler", "plugins": {"multiPoint": {"enabled": [{"name": "LoadAwareScheduling"}]}}},
        {
            "schedulerName": "bin-packing",
            "pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}],
        },
    ],
}


def node_metric(name: str) -> dict[str, Any]:
    """A NodeMetric the simulated koordlet fills from the node's pods (usage = requests)."""
    return {
        "apiVersion": "slo.koordinator.sh/v1alpha1",
        "kind": "NodeMetric",
        "metadata": {"name": name, "annotations": {"simulation.schedconsole.io/usage-ratio": "1.0"}},
        "spec": {"metricCollectPolicy": {"reportIntervalSeconds": 60}},
    }


# Three 4-CPU nodes; node-a 75% used, node-b 25%, node-c 0%. LoadAware's cpu threshold is 65%.
LOADED = [
    node("node-a"),
    node("node-b"),
    node("node-c"),
    pod("busy-a", cpu="3", nodeName="node-a"),
    pod("busy-b", cpu="1", nodeName="node-b"),
    node_metric("node-a"),
    node_metric("node-b"),
    node_metric("node-c"),
]


@pytest.fixture
def loaded(start_engine):
    """An engine over LOADED with LoadAwareScheduling in the default profile."""
    host = start_engine(LOADED, LOADAWARE)
    settle(host)
    return host


def _create(host, *docs: dict[str, Any]) -> None:
    host.call(ops.Create(documents=list(docs), source="test"))
    settle(host)


def test_nodes_page_filters_sorts_and_pages(engine) -> None:
    _create(engine, pod("p1", cpu="1500m"), pod("p2", cpu="1"))
    page = call(ops.GetNodesPage(q="", sort="-cpu", offset=0, limit=2))
    assert page["count"] == 3 and len(page["results"]) == 2
    used = [r["used"]["cpu"] for r in page["results"]]
    assert used == sorted(used, reverse=True) and used[0] > 0
    zone = call(ops.GetNodesPage(q="topology.kubernetes.io/zone=zone-b", sort="name"))
    assert [r["name"] for r in zone["results"]] == ["node-b"]
    assert call(ops.GetNodesPage(q="topology.kubernetes.io/zone=nowhere"))["count"] == 0
    assert call(ops.GetNodesPage(q="node-c"))["results"][0]["name"] == "node-c"
    assert call(ops.GetNodesPage(limit=100000))["limit"] == 200  # never the whole list
    with pytest.raises(EngineCallError) as refused:
        call(ops.GetNodesPage(sort="colour"))
    assert refused.value.status == 400 and refused.value.field == "sort"


def test_pending_page_and_why_with_the_smallest_change(engine) -> None:
    _create(engine, pod("huge", cpu="5"))
    page = call(ops.GetPendingPage(queue="unschedulable"))
    assert page["count"] == 1
    row = page["results"][0]
    assert row["key"] == "default/huge" and row["plugins"] == ["NodeResourcesFit"]
    why = call(ops.Explain(namespace="default", name="huge"))
    assert why["outcome"] == "Unschedulable" and why["queue"] == "unschedulable"
    (fit,) = why["groups"]
    assert fit["plugin"] == "NodeResourcesFit" and fit["nodes"] == 3 and fit["reasons"] == {"Insufficient cpu": 3}
    assert fit["advice"] == [
        {
            "text": "asks for 5 CPU, 1 more than the most any node has free: if it asked for 4 CPU instead, 2 nodes would have room for it (checked: the cycle would place it on node-a)",
            "enough": True,
            "then": [],
        }
    ]
    # Explaining changed nothing: the pod still waits, nothing was bound.
    assert call(ops.GetPod(namespace="default", name="huge"))["node"] is None
    assert call(ops.GetStats())["scheduled"] == 0


def test_why_names_the_loadaware_threshold_that_would_pass(loaded) -> None:
    # node-a and node-b lack the CPU; empty node-c would be at 74% with the pod's estimate (85% of 3500m).
    _create(loaded, pod("wide", cpu="3500m"))
    why = call(ops.Explain(namespace="default", name="wide"))
    groups = {g["plugin"]: g for g in why["groups"]}
    assert groups["NodeResourcesFit"]["nodes"] == 2
    assert groups["LoadAwareScheduling"]["reasons"] == {"node(s) cpu usage exceed threshold": 1}
    assert groups["LoadAwareScheduling"]["advice"] == [
        {
            "text": "1 node rejected by LoadAwareScheduling: 1 would pass if the profile's cpu usage threshold were 75% instead of 65% (checked: the cycle would place it on node-c)",
            "enough": True,
            "then": [],
        }
    ]
    assert call(ops.GetPluginArgs())["default-scheduler"]["LoadAwareScheduling"]["usageThresholds"]["cpu"] == 65


def test_overview_reads_loadaware_estimates(loaded) -> None:
    la = call(ops.GetOverview())["loadaware"]["default-scheduler"]
    assert la["percent"]["cpu"] == [75, 25, 0] and la["thresholds"]["cpu"] == 65
    assert la["reported"] == 3 and la["passing"] == 2
    assert call(ops.GetNominated()) == {"count": 0, "results": []}


def test_threshold_preview_counts_nodes_and_changes_nothing(loaded) -> None:
    _create(loaded, pod("mid", cpu="500m"))
    document = copy.deepcopy(LOADAWARE)
    document["profiles"][0]["pluginConfig"] = [{"name": "LoadAwareScheduling", "args": {"usageThresholds": {"cpu": 80}}}]
    preview = call(ops.PreviewThresholds(document=document, profile="default-scheduler", pods=["default/busy-a", "default/mid"]))
    assert preview["nodes"] == {
        "total": 3,
        "reported": 3,
        "expired": 0,
        "passingNow": 2,
        "passingAfter": 3,
        "newlyPassing": 1,
        "newlyFailing": 0,
    }
    assert preview["before"]["usageThresholds"]["cpu"] == 65 and preview["after"]["usageThresholds"]["cpu"] == 80
    assert [p["pod"] for p in preview["pods"]] == ["default/busy-a", "default/mid"]
    # The running args are untouched, and the next cycle still filters at 65%.
    assert call(ops.GetPluginArgs())["default-scheduler"]["LoadAwareScheduling"]["usageThresholds"]["cpu"] == 65
    _create(loaded, pod("after", cpu="500m"))
    why = call(ops.Explain(namespace="default", name="after"))
    assert why["outcome"] == "Bound"
    assert call(ops.GetPod(namespace="default", name="after"))["node"] != "node-a"


def test_threshold_preview_refuses_fields_that_change_estimates(loaded) -> None:
    document = copy.deepcopy(LOADAWARE)
    document["profiles"][0]["pluginConfig"] = [{"name": "LoadAwareScheduling", "args": {"estimatedScalingFactors": {"cpu": 50}}}]
    with pytest.raises(EngineCallError) as refused:
        call(ops.PreviewThresholds(document=document, profile="default-scheduler", pods=[]))
    assert refused.value.status == 400 and refused.value.field == "estimatedScalingFactors"
    with pytest.raises(EngineCallError) as no_plugin:
        call(ops.PreviewThresholds(document=LOADAWARE, profile="bin-packing", pods=[]))
    assert "does not run LoadAwareScheduling" in no_plugin.value.message


def test_whatif_diff_and_compare_summary(engine, api) -> None:
    huge = pod("huge", cpu="5")
    _create(engine, huge)
    fits = copy.deepcopy(huge)
    fits["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "3"
    body = api.post("/api/whatif/diff/", {"pod": fits, "original": huge}, format="json")
    assert body.status_code == 200, body.content
    data = body.json()
    assert data["result"]["outcome"] == "Scheduled" and data["base"]["outcome"] == "Unschedulable"
    assert data["diff"]["outcome"] == ["Unschedulable", "Scheduled"] and data["diff"]["rejectedNodes"] == [3, 1]
    assert data["result"]["rejectedBy"] == {"NodeResourcesFit": 1}
    assert len(data["result"]["totals"]) <= 10
    compare = api.post(
        "/api/compare/summary/", {"pod": pod("small"), "profiles": ["default-scheduler", "bin-packing"]}, format="json"
    ).json()
    assert {r["node"] for r in compare["rows"]} == {"node-a", "node-b", "node-c"}
    assert all(r["delta"] == r["b"] - r["a"] for r in compare["rows"])
    assert call(ops.GetStats())["pods"] == 1  # neither created anything
    bad = api.post("/api/whatif/diff/", "pod: [unclosed\n", content_type="application/yaml")
    assert bad.status_code == 400


def test_overview_counts(engine) -> None:
    _create(engine, pod("huge", cpu="5"), pod("ok", cpu="100m"))
    data = call(ops.GetOverview())
    assert data["nodes"] == ["node-a", "node-b", "node-c"]
    assert len(data["utilization"]["cpu"]) == 3 and max(data["utilization"]["cpu"]) > 0
    assert data["queue"]["unschedulable"] == 1
    assert data["pendingByPlugin"] == {"NodeResourcesFit": 1}
    assert data["loadaware"] == {} and data["gangsWaiting"] == []


PAGES = [
    "/overview/",
    "/overview/?fragment=1",
    "/pods/",
    "/pods/default/huge/",
    "/pods/default/ok/",
    "/nodes/",
    "/nodes/?sort=-memory&q=node",
    "/nodes/node-a/",
    "/gangs/",
    "/preemption/",
    "/profiles/",
    "/profiles/?version=1",
    "/thresholds/",
    "/plugin-api/",
    "/",
]


def test_every_page_renders_under_a_megabyte(engine, operator) -> None:
    _create(engine, pod("huge", cpu="5"), pod("ok", cpu="100m"))
    wait_for(lambda: call(ops.GetPod(namespace="default", name="ok"))["node"])
    client = Client()
    client.force_login(operator)
    for path in PAGES:
        response = client.get(path)
        assert response.status_code == 200, (path, response.status_code)
        assert len(response.content) < 1_000_000, path
        assert b"operator" in response.content or "fragment" in path, path
    assert client.get("/pods/default/nope/").status_code == 404
    assert client.get("/nodes/nope/").status_code == 404
    assert b"Insufficient cpu" in client.get("/pods/default/huge/").content
    assert b"Bound to" in client.get("/pods/default/ok/").content


def test_pages_need_a_login(transactional_db) -> None:
    for path in PAGES:
        response = Client().get(path)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/"), path


def test_profile_apply_refuses_bad_input_and_rolls_back(engine, operator) -> None:
    client = Client()
    client.force_login(operator)
    bad = client.post(
        "/profiles/apply/",
        {"text": "kind: KubeSchedulerConfiguration\napiVersion: kubescheduler.config.k8s.io/v1\npercentageOfNodesToScore: 900\n"},
        follow=True,
    )
    assert b"Not applied: percentageOfNodesToScore" in bad.content
    assert b"percentageOfNodesToScore: 900" in bad.content  # the text is kept in the editor
    assert ProfileVersion.objects.count() == 1
    good = client.post(
        "/profiles/apply/",
        {
            "text": "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: solo\n",
            "comment": "one profile",
        },
        follow=True,
    )
    assert b"Version 2 is active." in good.content
    assert call(ops.GetStats())["profiles"] == ["solo"]
    back = client.post("/profiles/1/activate/", follow=True)
    assert b"Version 1 is active." in back.content
    assert call(ops.GetStats())["profiles"] == ["default-scheduler", "bin-packing"]
    assert AuditEntry.objects.filter(action="profile.activate", target="v1").exists()
    diff = client.post("/profiles/diff/", {"text": "a: 1\n"}).json()["lines"]
    assert ["add", "+a: 1"] in diff and any(kind == "del" for kind, _ in diff)


def test_viewers_cannot_change_profiles(engine, viewer) -> None:
    client = Client()
    client.force_login(viewer)
    assert client.post("/profiles/1/activate/").status_code == 403
    assert client.post("/profiles/apply/", {"text": "kind: x"}).status_code == 403
    page = client.get("/profiles/").content.decode()
    assert 'id="apply" type="submit" disabled' in page


def test_threshold_dry_run_through_the_api_previews(loaded, api) -> None:
    response = api.put(
        "/api/plugin-args/LoadAwareScheduling/?dry_run=true",
        {"args": {"usageThresholds": {"cpu": 80}}, "profile": "default-scheduler"},
        format="json",
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["dryRun"] is True and body["preview"]["nodes"]["passingAfter"] == 3
    assert ProfileVersion.objects.count() == 1
    applied = api.put(
        "/api/plugin-args/LoadAwareScheduling/",
        {"args": {"usageThresholds": {"cpu": 80}}, "profile": "default-scheduler"},
        format="json",
    )
    assert applied.status_code == 200 and applied.json()["version"] == 2
    assert call(ops.GetPluginArgs())["default-scheduler"]["LoadAwareScheduling"]["usageThresholds"]["cpu"] == 80


def test_preemption_timeline_pairs_each_call_and_follows_the_retries() -> None:
    from types import SimpleNamespace as NS

    from schedconsole.engine.bridge.preemptions import PreemptionTimeline
    from schedconsole.pages.koord_views import timeline_rows

    line = PreemptionTimeline(keep=2)

    def api(at: float, call: str, target: str, phase: str, error: str = "") -> None:
        line.on_api_call(
            NS(at=at, preemptor="shop/urgent", preemptor_uid="u", target=target, call=call, phase=phase, error=error)
        )

    def attempt(at: float, outcome: str, node: str | None = None, nominated: str | None = None, update: bool = False) -> None:
        rec = NS(
            at=at,
            uid="u",
            pod="shop/urgent",
            outcome=outcome,
            node=node,
            nominated_node=nominated,
            victims=["batch/a"],
            message="m",
        )
        line.on_record(rec, update)

    api(1.0, "nominatedNodeName patch", "shop/urgent", "started")
    api(1.001, "nominatedNodeName patch", "shop/urgent", "finished")
    attempt(1.0, "Nominated", nominated="n1")
    api(1.1, "delete", "batch/a", "started")
    api(1.3, "delete", "batch/a", "error", "etcdserver: request timed out")
    api(1.4, "preemption", "shop/urgent", "error")
    api(2.0, "delete", "batch/a", "started")
    attempt(2.5, "Scheduled", node="n1")
    attempt(2.5, "Error", update=True)  # the binding failed after all
    (story,) = line.page()["results"]
    assert story["nominated"] == "n1" and story["victims"] == ["batch/a"] and story["state"] == "retry: Error"
    rows = timeline_rows(story["events"])
    assert [(r["call"], r["result"]) for r in rows] == [
        ("nominatedNodeName patch", "finished"),
        ("nominated", "finished"),
        ("delete", "error"),
        ("preemption", "error"),
        ("delete", "in progress"),
        ("retry", "Error"),
    ]
    assert rows[2]["ms"] == 200.0 and rows[2]["error"] == "etcdserver: request timed out"
    for uid in ("v", "w"):  # only the newest `keep` preemptors stay
        line.on_record(
            NS(at=3.0, uid=uid, pod=f"shop/{uid}", outcome="Nominated", node=None, nominated_node="n2", victims=[], message="")
        )
    assert [s["uid"] for s in line.page()["results"]] == ["w", "v"]


def test_preemption_page_shows_the_calls_as_they_happened(start_engine, operator) -> None:
    from django.test import Client

    lows = [
        {**pod(f"low{i}", cpu="1500m"), "spec": {**pod(f"low{i}", cpu="1500m")["spec"], "nodeName": "node-a"}} for i in range(2)
    ]
    classes = [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "urgent"}, "value": 1000}]
    host = start_engine([node("node-a", cpu="4"), *lows, *classes])
    _create(host, {**pod("urgent", cpu="2"), "spec": {**pod("urgent", cpu="2")["spec"], "priorityClassName": "urgent"}})
    story = wait_for(lambda: next((s for s in call(ops.GetPreemptionTimeline())["results"] if s["state"] == "bound"), None))
    calls = [(e["call"], e["phase"]) for e in story["events"]]
    assert story["pod"] == "default/urgent" and story["nominated"] == "node-a" and len(story["victims"]) == 1
    assert (
        ("DisruptionTarget patch", "finished") in calls
        and ("delete", "finished") in calls
        and calls[-1] == ("retry", "Scheduled")
    )
    client = Client()
    client.force_login(operator)
    page = client.get("/preemption/").content.decode()
    assert "default/urgent" in page and "DisruptionTarget patch" in page and "nominatedNodeName patch" in page


NUMA_CONFIG = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{"schedulerName": "default-scheduler", "plugins": {"multiPoint": {"enabled": [{"name": "NodeNUMAResource"}]}}}],
}


def _nrt(name: str) -> dict[str, Any]:
    """Two sockets of four cores with two hyperthreads each (CPUs 0-15)."""
    import json

    detail = [{"id": cpu, "core": cpu // 2 % 4, "socket": cpu // 8, "node": cpu // 8} for cpu in range(16)]
    return {
        "apiVersion": "topology.node.k8s.io/v1alpha1",
        "kind": "NodeResourceTopology",
        "metadata": {"name": name, "annotations": {"node.koordinator.sh/cpu-topology": json.dumps({"detail": detail})}},
        "topologyPolicies": ["None"],
        "zones": [],
    }


def test_node_page_draws_the_numa_cpu_map(start_engine, operator) -> None:
    host = start_engine([node("n1", cpu="16", memory="64Gi"), _nrt("n1")], NUMA_CONFIG)
    lsr = pod("lsr", cpu="2", memory="1Gi")
    lsr["metadata"]["labels"]["koordinator.sh/qosClass"] = "LSR"
    lsr["spec"]["containers"][0]["resources"]["limits"] = {"cpu": "2", "memory": "1Gi"}
    _create(host, lsr)
    assert call(ops.GetPod(namespace="default", name="lsr"))["node"] == "n1"
    data = call(ops.GetNodePage(name="n1"))
    sockets = data["numaMap"]
    assert [s["socket"] for s in sockets] == [0, 1] and all(len(s["cores"]) == 4 for s in sockets)
    cpus = [c for s in sockets for core in s["cores"] for c in core["cpus"]]
    allocated = [c for c in cpus if c["state"] == "allocated"]
    assert len(cpus) == 16 and len(allocated) == 2
    assert all(c["pods"] == ["default/lsr"] for c in allocated)
    client = Client()
    client.force_login(operator)
    page = client.get("/nodes/n1/").content.decode()
    assert page.count('class="cpu allocated"') == 2 + 1  # two CPUs and the legend
    assert "default/lsr" in page


def test_threshold_preview_is_asked_in_chunks(loaded, monkeypatch) -> None:
    from schedconsole.profiles import services

    monkeypatch.setattr(services, "PREVIEW_CHUNK", 1)
    document = copy.deepcopy(LOADAWARE)
    document["profiles"][0]["pluginConfig"] = [{"name": "LoadAwareScheduling", "args": {"usageThresholds": {"cpu": 80}}}]
    whole = call(ops.PreviewThresholds(document=document, profile="default-scheduler", pods=["default/busy-a", "default/busy-b"]))
    chunked = services.threshold_preview(document, "default-scheduler", ["default/busy-a", "default/busy-b"])
    assert chunked == whole
