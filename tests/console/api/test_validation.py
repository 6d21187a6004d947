"""The console API refuses what kube-apiserver refuses (and what its database cannot hold) with a 400
naming the field and value; nothing is stored and the engine keeps scheduling."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.console.conftest import pod
from tests.support.waits import wait_for


def with_spec(name: str, **spec: Any) -> dict[str, Any]:
    doc = pod(name)
    return {**doc, "spec": {**doc["spec"], **spec}}


def with_meta(name: str, **meta: Any) -> dict[str, Any]:
    doc = pod(name)
    return {**doc, "metadata": {**doc["metadata"], **meta}}


def with_cpu(name: str, cpu: Any) -> dict[str, Any]:
    doc = pod(name)
    doc["spec"]["containers"][0]["resources"]["requests"]["cpu"] = cpu
    return doc


@pytest.mark.parametrize(
    ("body", "field", "text"),
    [
        (with_meta("a/b"), "metadata.name", 'Invalid value: "a/b": a lowercase RFC 1123 subdomain'),
        (with_meta("x" * 254), "metadata.name", "must be no more than 253 characters"),
        (with_meta("Web Server"), "metadata.name", 'Invalid value: "Web Server"'),
        (with_meta("uid", uid="u" * 65), "metadata.uid", "Too long: may not be more than 64 bytes"),
        (with_meta("ns", namespace="Team_A"), "metadata.namespace", 'Invalid value: "Team_A"'),
        (with_spec("prio", priority=2**31), "spec.priority", "cannot unmarshal number 2147483648"),
        (with_spec("unknown", foo=1), "spec.foo", 'unknown field "spec.foo"'),
        (with_cpu("cpu", "99999999999999999999999"), "spec.containers[0].resources.requests.cpu", "99999999999999999999999"),
        (with_meta("nul", annotations={"note": "a\x00b"}), "metadata.annotations.note", "NUL"),
    ],
    ids=["slash", "too-long", "space", "uid", "namespace", "int32", "unknown-field", "cpu", "nul"],
)
def test_create_refuses_what_kube_apiserver_refuses(engine, api, body, field, text) -> None:
    response = api.post("/api/pods/", body, format="json")
    assert response.status_code == 400, response.content
    errors = response.json()
    assert field in errors, errors
    assert text in " ".join(errors[field])
    assert "body: document 1" in " ".join(errors[field])
    assert api.get("/api/pods/").json()["count"] == 0


def test_the_engine_schedules_on_after_refusals(engine, api) -> None:
    for i in range(5):
        assert api.post("/api/pods/", with_meta("bad/" + str(i)), format="json").status_code == 400
        assert api.post("/api/pods/", with_meta("u" + str(i), uid="u" * 80), format="json").status_code == 400
    assert api.post("/api/pods/", pod("fine"), format="json").status_code == 201
    wait_for(lambda: api.get("/api/pods/default/fine/").json()["node"], what="the good pod bound")


def test_yaml_aliases_and_repeated_keys_are_refused(engine, api) -> None:
    text = "kind: Pod\napiVersion: v1\nmetadata: {name: &n aliased}\nspec:\n  containers: [{name: *n, image: i}]\n"
    response = api.post("/api/pods/", text, content_type="application/yaml")
    assert response.status_code == 400, response.content
    assert "alias 'n': YAML aliases are not accepted here" in response.json()["detail"]
    response = api.post("/api/pods/", '{"kind": "Pod", "kind": "Pod"}', content_type="application/json")
    assert response.status_code == 400, response.content
    assert "kind" in response.json()["detail"]


def test_deep_json_is_a_400_not_a_500(engine, api) -> None:
    body = '{"kind": "Pod", "spec": ' + '{"a": ' * 1000 + "1" + "}" * 1000 + "}"
    response = api.post("/api/pods/", body, content_type="application/json")
    assert response.status_code == 400, response.content
    assert "nesting deeper than 100 levels" in response.json()["detail"]
    response = api.post("/api/whatif/", "[" * 1000 + "]" * 1000, content_type="application/json")
    assert response.status_code == 400, response.content


def test_text_postgresql_cannot_store_is_a_400(engine, api) -> None:
    # schemathesis on PostgreSQL: plugin args holding a NUL were stored into a profile version: a 500.
    body = {"args": {"scoringStrategy": {"type": "Least\u0000Allocated"}}}
    response = api.put("/api/plugin-args/NodeResourcesFit/?dry_run=false", body, format="json")
    assert response.status_code == 400, response.content
    assert ".args.scoringStrategy.type: must not contain NUL" in response.json()["document"][0]
    response = api.put("/api/plugin-args/NodeResourcesFit/", '{"args": {"\\ud800": 1}}', content_type="application/json")
    assert response.status_code == 400, response.content
    assert ".args: must not contain NUL characters or lone surrogates" in response.json()["document"][0]
    response = api.get("/api/plugin-args/a%00b/")
    assert response.status_code == 400, response.content


def test_import_and_whatif_check_the_same(engine, api) -> None:
    docs = [pod("good-one"), with_meta("Bad_One")]
    response = api.post("/api/import/", json.dumps(docs), content_type="application/json")
    assert response.status_code == 400, response.content
    assert 'metadata.name: Invalid value: "Bad_One"' in response.json()["metadata.name"][0]
    assert api.get("/api/pods/").json()["count"] == 0
    response = api.post("/api/whatif/", {"pod": with_spec("w", foo=1)}, format="json")
    assert response.status_code == 400, response.content
    assert 'unknown field "spec.foo"' in " ".join(" ".join(v) for v in response.json().values())
