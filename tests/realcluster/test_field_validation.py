"""`fieldValidation` on PATCH, beside the real kube-apiserver: the same patch sent to both answers
the same code, the same `Warning` headers and the same Status message. A strategic merge patch's
refusal shows the patch as Go prints it, compared whole; a merge or JSON patch's shows the patched
object (ours has no managedFields, no admission's volumes), so that value is left out."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from scheduler.apiserver.patches import JSON_MERGE, JSON_PATCH, STRATEGIC
from scheduler.apiserver.server import APIServer
from scheduler.clock import Clock
from scheduler.cluster.simulated import SimulatedCluster
from tests.support.controlplane import Api

pytestmark = pytest.mark.realcluster

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "fv"},
    "spec": {"containers": [{"name": "c", "image": "nginx"}]},
}
PATCHES = [
    (JSON_MERGE, {"spec": {"foo": 1, "bar": {"x": 1}}, "metadata": {"labels": {"a": "b"}}}),
    (STRATEGIC, {"spec": {"foo": 1, "bar": {"x": 1.5, "y": [1, "a b", None, True, 1e21, 0.00001]}}}),
    (STRATEGIC, {"spec": {"containers": [{"name": "c", "zzz": 1}]}, "metadata": {"labels": {"a": "c"}}}),
    (JSON_PATCH, [{"op": "add", "path": "/spec/foo", "value": 1}]),
    (JSON_MERGE, {"spec": {"priority": 2**40}}),
]
INVALID_VALUE = re.compile(r'Invalid value: "(?:[^"\\]|\\.)*"')


def real_patch(api: Api, query: str, content_type: str, patch: Any) -> tuple[int, dict[str, Any], list[str]]:
    answer = api.http.request(
        "PATCH",
        f"{api.server}/api/v1/namespaces/default/pods/fv{query}",
        body=json.dumps(patch).encode(),
        headers={"Authorization": f"Bearer {api.token}", "Content-Type": content_type, "Accept": "application/json"},
    )
    return answer.status, json.loads(answer.data), answer.headers.getlist("Warning")


@pytest.mark.parametrize("mode", ["Strict", "Warn", "Ignore", "", "Sometimes"])
@pytest.mark.parametrize(("content_type", "patch"), PATCHES, ids=["merge", "strategic", "strategic-list", "json", "int32"])
def test_patch_field_validation_as_kube_apiserver(api: Api, content_type: str, patch: Any, mode: str) -> None:
    api.request("DELETE", "/api/v1/namespaces/default/pods/fv?gracePeriodSeconds=0")
    api.ok("POST", "/api/v1/namespaces/default/pods", POD)
    ours = APIServer(SimulatedCluster(clock=Clock()))
    base = {"group": "", "version": "v1", "resource": "pods", "namespace": "default"}
    assert ours.handle({**base, "verb": "create", "body": POD, "query": {}})[0] == 201
    query = {"fieldValidation": mode} if mode else {}
    code, body, warnings = ours.handle_warned(
        {**base, "verb": "patch", "name": "fv", "body": patch, "query": query, "contentType": content_type}
    )
    want_code, want_body, want_warnings = real_patch(api, f"?fieldValidation={mode}" if mode else "", content_type, patch)
    assert code == want_code, (body, want_body)
    assert [f"299 - {json.dumps(w)}" for w in warnings] == want_warnings
    if code < 300:
        assert "foo" not in body["spec"] and "zzz" not in body["spec"]["containers"][0]  # dropped, as kube-apiserver drops them
        return
    message, want = body["message"], want_body["message"]
    if content_type != STRATEGIC:
        message, want = INVALID_VALUE.sub("Invalid value: ...", message), INVALID_VALUE.sub("Invalid value: ...", want)
    assert message == want
    assert body["reason"] == want_body["reason"]
    assert [c["field"] for c in body["details"]["causes"]] == [c["field"] for c in want_body["details"]["causes"]]
