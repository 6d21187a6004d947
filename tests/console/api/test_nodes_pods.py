"""Nodes, pods, import and queue: success, permission denied, bad input."""

from __future__ import annotations

import json

import pytest
import yaml

from tests.console.conftest import node, pod, settle
from tests.support.waits import wait_for


def test_nodes_list_and_detail(engine, api) -> None:
    body = api.get("/api/nodes/").json()
    assert body["count"] == 3
    first = body["results"][0]
    assert first["name"] == "node-a"
    assert first["allocatable"]["cpu"] == 4000
    assert first["requested"]["pods"] == 0
    detail = api.get("/api/nodes/node-c/").json()
    assert detail["allocatable"]["cpu"] == 2000
    assert detail["nodeInfo"]["allocatable"]["MilliCPU"] == 2000


def test_nodes_filter_by_zone(engine, api) -> None:
    assert [n["name"] for n in api.get("/api/nodes/?zone=zone-b").json()["results"]] == ["node-b"]


def test_node_not_found(engine, api) -> None:
    response = api.get("/api/nodes/nope/")
    assert response.status_code == 404
    assert "cannot find node nope" in response.json()["detail"]


@pytest.mark.parametrize("path", ["/api/nodes/", "/api/pods/", "/api/queue/", "/api/audit/", "/api/profiles/"], ids=lambda p: p)
def test_anonymous_is_refused(engine, anon, path) -> None:
    assert anon.get(path).status_code in (401, 403)


def test_viewer_reads_but_cannot_create(engine, viewer_api) -> None:
    assert viewer_api.get("/api/pods/").status_code == 200
    response = viewer_api.post("/api/pods/", pod("p"), format="json")
    assert response.status_code == 403


def test_create_pod_as_json_is_scheduled(engine, api) -> None:
    response = api.post("/api/pods/", pod("web-1"), format="json")
    assert response.status_code == 201, response.content
    assert response.json()["namespace"] == "default"
    bound = wait_for(lambda: api.get("/api/pods/default/web-1/").json()["node"])
    assert bound in ("node-a", "node-b", "node-c")
    assert api.get("/api/pods/?node=" + bound).json()["count"] == 1


def test_create_pod_as_yaml(engine, api) -> None:
    response = api.post("/api/pods/", yaml.safe_dump(pod("from-yaml")), content_type="application/yaml")
    assert response.status_code == 201, response.content
    assert wait_for(lambda: api.get("/api/pods/default/from-yaml/").json()["phase"] == "Running")


@pytest.mark.parametrize(
    ("body", "field", "text"),
    [
        ({"kind": "Node", "metadata": {"name": "x"}}, "kind", "expected kind Pod"),
        (pod("bad-cpu", cpu="lots"), "spec.containers[0].resources.requests.cpu", "lots"),
        ([1, 2], "body", "expected a Pod object"),
        (
            {**pod("unknown-pc"), "spec": {**pod("u")["spec"], "priorityClassName": "gold"}},
            "spec.priorityClassName",
            "no PriorityClass with name gold",
        ),
    ],
    ids=["not-a-pod", "bad-quantity", "not-an-object", "unknown-priority-class"],
)
def test_create_pod_bad_input(engine, api, body, field, text) -> None:
    response = api.post("/api/pods/", body, format="json")
    assert response.status_code == 400, response.content
    errors = response.json()
    assert field in errors, errors
    assert text in " ".join(errors[field])
    assert api.get("/api/pods/").json()["count"] == 0


def test_create_duplicate_pod_is_refused(engine, api) -> None:
    assert api.post("/api/pods/", pod("twin"), format="json").status_code == 201
    response = api.post("/api/pods/", pod("twin"), format="json")
    assert response.status_code == 400
    assert "already exists" in json.dumps(response.json())


def test_yaml_that_does_not_parse(engine, api) -> None:
    response = api.post("/api/pods/", "kind: Pod\n  metadata: [", content_type="application/yaml")
    assert response.status_code == 400
    assert "invalid YAML: line 2 column 11" in response.json()["detail"]


def test_delete_pod(engine, api) -> None:
    api.post("/api/pods/", pod("gone"), format="json")
    response = api.delete("/api/pods/default/gone/")
    assert response.status_code == 200
    assert api.get("/api/pods/default/gone/").status_code == 404
    assert api.get("/api/audit/?action=pod.delete").json()["count"] == 1


def test_import_is_all_or_nothing(engine, api) -> None:
    good = yaml.safe_dump_all([node("node-d"), pod("imp-1"), pod("imp-2")])
    response = api.post("/api/import/", good, content_type="application/yaml")
    assert response.status_code == 201, response.content
    assert response.json()["created"] == {"Node": 1, "Pod": 2}
    bad = yaml.safe_dump_all([pod("imp-3"), pod("imp-4", memory="many")])
    response = api.post("/api/import/", bad, content_type="application/yaml")
    assert response.status_code == 400
    assert "document 2" in json.dumps(response.json())
    assert api.get("/api/pods/default/imp-3/").status_code == 404


def test_import_refuses_an_alias_bomb(engine, api) -> None:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 9)]
    response = api.post("/api/import/", "\n".join(lines) + "\nkind: Pod\n", content_type="application/yaml")
    assert response.status_code == 400
    assert "excessive aliasing" in json.dumps(response.json())


def test_import_refuses_deep_nesting(engine, api) -> None:
    response = api.post("/api/import/", "[" * 5000 + "]" * 5000, content_type="application/json")
    assert response.status_code == 400
    assert "nest" in json.dumps(response.json()).lower()


def test_import_empty_file(engine, api) -> None:
    response = api.post("/api/import/", "", content_type="application/yaml")
    assert response.status_code == 400
    assert "no objects" in json.dumps(response.json())


def test_upload_over_the_limit(engine, api, settings) -> None:
    settings.UPLOAD_MAX_BYTES = 2048
    response = api.post("/api/import/", "#" * 5000, content_type="application/yaml")
    assert response.status_code == 413
    assert "over the limit of 2048 bytes" in response.json()["detail"]


def test_queue_says_why_a_pod_waits(engine, api) -> None:
    api.post("/api/pods/", pod("huge", cpu="64"), format="json")

    def waiting():
        return api.get("/api/queue/").json()["unschedulable"]

    rows = wait_for(waiting)
    assert rows[0]["pod"] == "default/huge"
    assert rows[0]["plugins"] == ["NodeResourcesFit"]
    assert "NodeResourcesFit" in rows[0]["reason"]
    settle(engine)


def test_lists_are_paged_by_the_engine(engine, api) -> None:
    """Only the page crosses from the engine: count is the whole filtered list, next/previous link pages."""
    body = api.post(
        "/api/import/", json.dumps([pod(f"p{i}", cpu="64", namespace="paged") for i in range(7)]), content_type="application/json"
    )
    assert body.status_code == 201, body.content
    first = api.get("/api/pods/?namespace=paged&limit=3").json()
    assert first["count"] == 7
    assert [r["name"] for r in first["results"]] == ["p0", "p1", "p2"]
    assert first["previous"] is None and "offset=3" in first["next"]
    last = api.get("/api/pods/?namespace=paged&limit=3&offset=6").json()
    assert [r["name"] for r in last["results"]] == ["p6"] and last["next"] is None
    assert api.get("/api/pods/?namespace=paged&phase=Running").json()["count"] == 0
    assert api.get("/api/pods/?namespace=paged&profile=default-scheduler&phase=Pending").json()["count"] == 7
    nodes = api.get("/api/nodes/?limit=2&offset=1").json()
    assert nodes["count"] == 3 and [n["name"] for n in nodes["results"]] == ["node-b", "node-c"]
    assert api.get("/api/nodes/?zone=nowhere").json() == {"count": 0, "next": None, "previous": None, "results": []}
    assert [n["name"] for n in api.get("/api/nodes/?name=-c").json()["results"]] == ["node-c"]

    def waiting():
        body = api.get("/api/queue/?limit=2&offset=1").json()
        return body if body["counts"]["unschedulable"] == 7 else None

    queue = wait_for(waiting)
    assert [r["pod"] for r in queue["unschedulable"]] == ["paged/p1", "paged/p2"]
    assert queue["counts"] == {"active": 0, "backoff": 0, "unschedulable": 7, "gated": 0}
    settle(engine)


def test_list_pages_have_a_largest_size() -> None:
    from schedconsole.engine.bridge.common import LIST_LIMIT_MAX, window

    assert window(5, 10**6, 3) == (5, LIST_LIMIT_MAX)
    assert window(-4, 0, 3) == (0, 1)
    assert window(0, None, 12345) == (0, 12345)
