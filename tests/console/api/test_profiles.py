"""Profiles, plugin args, what-if, compare and debug flags."""

from __future__ import annotations

import copy
import json

import pytest
import yaml

from schedconsole.engine import operations as ops
from tests.console.conftest import TWO_PROFILES, pod
from tests.support.waits import wait_for


def _config(*profiles: dict) -> dict:
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "profiles": list(profiles)}


def test_versions_list_and_detail(engine, api) -> None:
    body = api.get("/api/profiles/").json()
    assert body["count"] == 1
    assert body["results"][0]["active"] is True
    assert api.get("/api/profiles/1/").json()["document"] == TWO_PROFILES


def test_validate_accepts_without_applying(engine, api, viewer_api) -> None:
    doc = _config({"schedulerName": "only-one"})
    response = viewer_api.post("/api/profiles/validate/", doc, format="json")
    assert response.status_code == 200, response.content
    assert response.json() == {"valid": True, "profiles": ["only-one"]}
    assert api.get("/api/profiles/").json()["count"] == 1


INVALID = [
    (_config({"schedulerName": "a"}, {"schedulerName": "a"}), "profiles[1].schedulerName", "Duplicate value"),
    (_config({"schedulerName": "a", "plugins": {"score": {"enabled": [{"name": "NoSuchPlugin"}]}}}), "", "NoSuchPlugin"),
    (
        _config({"schedulerName": "a"}, {"schedulerName": "b", "plugins": {"queueSort": {"disabled": [{"name": "*"}]}}}),
        "",
        "queueSort",
    ),
    (
        _config(
            {"schedulerName": "a", "pluginConfig": [{"name": "DefaultPreemption", "args": {"minCandidateNodesPercentage": 200}}]}
        ),
        "",
        "200",
    ),
    ({**_config({"schedulerName": "a"}), "bogusField": 1}, "", "bogusField"),
]


@pytest.mark.parametrize(
    ("doc", "field", "text"),
    INVALID,
    ids=["duplicate-name", "unknown-plugin", "differing-queue-sort", "out-of-range", "unknown-field"],
)
def test_invalid_profiles_are_refused_and_nothing_changes(engine, api, doc, field, text) -> None:
    for url in ("/api/profiles/validate/", "/api/profiles/"):
        response = api.post(url, doc, format="json")
        assert response.status_code == 400, response.content
        body = json.dumps(response.json())
        assert text in body
        if field:
            assert field in body
    assert api.get("/api/profiles/").json()["count"] == 1
    assert sorted(engine.call(ops.GetStats())["profiles"]) == ["bin-packing", "default-scheduler"]


def test_yaml_that_does_not_parse_is_refused(engine, api) -> None:
    response = api.post("/api/profiles/", "profiles: [", content_type="application/yaml")
    assert response.status_code == 400


def test_apply_and_roll_back(engine, api, operator) -> None:
    doc = _config({"schedulerName": "default-scheduler"}, {"schedulerName": "gpu"})
    response = api.post("/api/profiles/", {"document": doc, "comment": "add gpu"}, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["version"] == 2 and response.json()["active"] is True
    assert response.json()["author"] == operator.username
    assert sorted(engine.call(ops.GetStats())["profiles"]) == ["default-scheduler", "gpu"]
    # A pod for the new profile is scheduled by it.
    api.post("/api/pods/", pod("g", schedulerName="gpu"), format="json")
    assert wait_for(lambda: api.get("/api/pods/default/g/").json()["node"])
    back = api.post("/api/profiles/1/activate/")
    assert back.status_code == 200 and back.json()["active"] is True
    assert sorted(engine.call(ops.GetStats())["profiles"]) == ["bin-packing", "default-scheduler"]
    versions = {v["version"]: v["active"] for v in api.get("/api/profiles/").json()["results"]}
    assert versions == {1: True, 2: False}
    actions = [a["action"] for a in api.get("/api/audit/").json()["results"]]
    assert actions.count("profile.activate") == 2  # v2, then back to v1


def test_yaml_profile_body(engine, api) -> None:
    text = yaml.safe_dump(_config({"schedulerName": "default-scheduler"}))
    response = api.post("/api/profiles/", text, content_type="application/yaml")
    assert response.status_code == 201, response.content
    assert engine.call(ops.GetStats())["profiles"] == ["default-scheduler"]


def test_viewer_cannot_change_profiles(engine, viewer_api) -> None:
    assert viewer_api.post("/api/profiles/", _config({"schedulerName": "x"}), format="json").status_code == 403
    assert viewer_api.post("/api/profiles/1/activate/").status_code == 403


def test_plugin_args_dry_run_and_apply(engine, api) -> None:
    current = api.get("/api/plugin-args/").json()
    assert current["bin-packing"]["NodeResourcesFit"]["scoringStrategy"]["type"] == "MostAllocated"
    args = {
        "scoringStrategy": {
            "type": "LeastAllocated",
            "resources": [{"name": "cpu", "weight": 2}, {"name": "memory", "weight": 1}],
        }
    }
    preview = api.put("/api/plugin-args/NodeResourcesFit/?dry_run=true", {"profile": "bin-packing", "args": args}, format="json")
    assert preview.status_code == 200, preview.content
    assert preview.json()["dryRun"] is True
    assert preview.json()["before"]["bin-packing"]["scoringStrategy"]["type"] == "MostAllocated"
    assert api.get("/api/profiles/").json()["count"] == 1
    applied = api.put("/api/plugin-args/NodeResourcesFit/", {"profile": "bin-packing", "args": args}, format="json")
    assert applied.status_code == 200, applied.content
    assert applied.json()["version"] == 2
    live = api.get("/api/plugin-args/").json()["bin-packing"]["NodeResourcesFit"]
    assert live["scoringStrategy"]["type"] == "LeastAllocated"
    assert api.get("/api/audit/?action=plugin-args.apply").json()["count"] == 1


@pytest.mark.parametrize(
    ("plugin", "body", "text"),
    [
        ("DefaultPreemption", {"args": {"minCandidateNodesPercentage": 101}}, "minCandidateNodesPercentage"),
        ("NodeResourcesFit", {"profile": "nope", "args": {}}, "unknown profile 'nope'"),
        ("NodeResourcesFit", {"args": "x"}, "expected an object"),
        ("NodeResourcesFit", {"args": {"scoringStrategy": {"type": "Sideways"}}}, "Sideways"),
    ],
    ids=["out-of-range", "unknown-profile", "not-an-object", "bad-strategy"],
)
def test_plugin_args_bad_input(engine, api, plugin, body, text) -> None:
    response = api.put(f"/api/plugin-args/{plugin}/", body, format="json")
    assert response.status_code == 400, response.content
    assert text in json.dumps(response.json())
    assert api.get("/api/profiles/").json()["count"] == 1


def test_whatif_changes_nothing(engine, api, viewer_api) -> None:
    before = engine.call(ops.GetStats())
    response = viewer_api.post("/api/whatif/", {"pod": pod("what", cpu="1")}, format="json")
    assert response.status_code == 200, response.content
    result = response.json()
    assert result["outcome"] == "Scheduled"
    assert result["node"] in result["totals"]
    assert set(result["scores"]) == {"node-a", "node-b", "node-c"}
    assert "NodeResourcesFit" in result["scores"]["node-a"]
    after = engine.call(ops.GetStats())
    assert after["pods"] == before["pods"] and after["attempts"] == before["attempts"]


def test_whatif_unschedulable_gives_reasons(engine, api) -> None:
    result = api.post("/api/whatif/", {"pod": pod("big", cpu="3")}, format="json").json()
    assert result["outcome"] == "Scheduled"
    result = api.post("/api/whatif/", {"pod": pod("huge", cpu="30")}, format="json").json()
    assert result["outcome"] == "Unschedulable"
    assert result["message"] == "0/3 nodes are available: 3 Insufficient cpu."
    assert result["filter"]["node-c"]["plugin"] == "NodeResourcesFit"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"pod": {"kind": "Node"}}, "pod.kind"),
        ({"pod": 5}, "pod"),
        ({}, "pod"),
        ({"pod": pod("x"), "profile": "nope"}, "profile"),
    ],
    ids=["node-not-pod", "number", "missing", "unknown-profile"],
)
def test_whatif_bad_input(engine, api, body, field) -> None:
    response = api.post("/api/whatif/", body, format="json")
    assert response.status_code == 400, response.content
    assert field in response.json()


def test_compare_two_profiles(engine, api) -> None:
    api.post("/api/pods/", pod("filler", cpu="3"), format="json")
    wait_for(lambda: api.get("/api/pods/default/filler/").json()["node"])
    response = api.post(
        "/api/compare/", {"pod": pod("cmp", cpu="500m"), "profiles": ["default-scheduler", "bin-packing"]}, format="json"
    )
    assert response.status_code == 200, response.content
    body = response.json()
    a, b = body["results"]
    assert a["profile"] == "default-scheduler" and b["profile"] == "bin-packing"
    node = next(iter(body["deltas"]))
    assert body["deltas"][node]["total"] == b["totals"][node] - a["totals"][node]
    assert (
        body["deltas"][node]["plugins"]["NodeResourcesFit"]
        == b["scores"][node]["NodeResourcesFit"] - a["scores"][node]["NodeResourcesFit"]
    )
    bad = api.post("/api/compare/", {"pod": pod("cmp"), "profiles": ["default-scheduler"]}, format="json")
    assert bad.status_code == 400 and "profiles" in bad.json()


def test_debug_flags(engine, api, viewer_api) -> None:
    assert api.get("/api/debug-flags/").json() == {"debugTopNScores": 3, "debugFilterFailure": False}
    response = api.put("/api/debug-flags/", {"debugTopNScores": 10, "debugFilterFailure": True}, format="json")
    assert response.json() == {"debugTopNScores": 10, "debugFilterFailure": True}
    assert viewer_api.put("/api/debug-flags/", {"debugTopNScores": 1}, format="json").status_code == 403
    for bad, field in (
        ({"debugTopNScores": -1}, "debugTopNScores"),
        ({"debugTopNScores": "x"}, "debugTopNScores"),
        ({"debugFilterFailure": "maybe"}, "debugFilterFailure"),
        ({"other": 1}, "non_field_errors"),
    ):
        response = api.put("/api/debug-flags/", bad, format="json")
        assert response.status_code == 400 and field in response.json(), (bad, response.content)
    assert api.get("/api/debug-flags/").json()["debugTopNScores"] == 10
    entry = api.get("/api/audit/?action=debug-flags.set").json()["results"][0]
    assert entry["before"]["debugTopNScores"] == 3 and entry["after"]["debugTopNScores"] == 10


def test_profile_change_keeps_running_when_build_fails(engine, api) -> None:
    doc = copy.deepcopy(TWO_PROFILES)
    doc["profiles"][1]["plugins"] = {"bind": {"disabled": [{"name": "*"}]}}
    response = api.post("/api/profiles/", doc, format="json")
    assert response.status_code == 400
    assert sorted(engine.call(ops.GetStats())["profiles"]) == ["bin-packing", "default-scheduler"]
