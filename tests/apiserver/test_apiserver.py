"""The Kubernetes API semantics over the simulated cluster: patches, selectors, versions, watch."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.apiserver.patches import JSON_MERGE, JSON_PATCH, STRATEGIC, PatchError, apply_patch
from scheduler.apiserver.query import SelectorError, labels_match, parse_field_selector, parse_label_selector
from scheduler.apiserver.resources import find_resource
from scheduler.apiserver.server import APIServer
from scheduler.clock import VirtualClock
from scheduler.cluster.simulated import SimulatedCluster
from tests.support.builders import pod_doc

POD_DOC = {
    "metadata": {"name": "p", "labels": {"a": "1"}},
    "spec": {
        "containers": [{"name": "c", "image": "nginx", "env": [{"name": "X", "value": "1"}]}],
        "tolerations": [{"key": "k"}],
    },
}


@pytest.mark.parametrize(
    ("content_type", "patch", "want"),
    [
        (JSON_MERGE, {"metadata": {"labels": {"a": None, "b": "2"}}}, {"b": "2"}),
        (STRATEGIC, {"metadata": {"labels": {"b": "2"}}}, {"a": "1", "b": "2"}),
        (JSON_PATCH, [{"op": "add", "path": "/metadata/labels/c", "value": "3"}], {"a": "1", "c": "3"}),
        (JSON_PATCH, [{"op": "remove", "path": "/metadata/labels/a"}], {}),
    ],
    ids=["merge-deletes-null", "strategic-merges-maps", "json-add", "json-remove"],
)
def test_patch_labels(content_type: str, patch: Any, want: dict[str, str]) -> None:
    assert apply_patch(POD_DOC, content_type, patch)["metadata"].get("labels", {}) == want


def test_strategic_merge_keys_lists_by_merge_key() -> None:
    patch = {
        "spec": {
            "containers": [{"name": "c", "image": "nginx:2", "env": [{"name": "Y", "value": "2"}]}, {"name": "d", "image": "x"}]
        }
    }
    out = apply_patch(POD_DOC, STRATEGIC, patch)
    assert [c["name"] for c in out["spec"]["containers"]] == ["c", "d"]
    assert out["spec"]["containers"][0]["image"] == "nginx:2"
    assert out["spec"]["containers"][0]["env"] == [{"name": "X", "value": "1"}, {"name": "Y", "value": "2"}]
    removed = apply_patch(out, STRATEGIC, {"spec": {"containers": [{"name": "d", "$patch": "delete"}]}})
    assert [c["name"] for c in removed["spec"]["containers"]] == ["c"]
    # A list without a merge key (tolerations) is replaced, as upstream.
    assert apply_patch(POD_DOC, STRATEGIC, {"spec": {"tolerations": [{"key": "z"}]}})["spec"]["tolerations"] == [{"key": "z"}]
    # Merge patches replace lists whole.
    assert apply_patch(POD_DOC, JSON_MERGE, {"spec": {"containers": []}})["spec"]["containers"] == []


@pytest.mark.parametrize(
    ("content_type", "patch"),
    [
        (JSON_PATCH, [{"op": "remove", "path": "/nope"}]),
        (JSON_PATCH, [{"op": "test", "path": "/metadata/name", "value": "q"}]),
        ("text/plain", {}),
    ],
    ids=["remove-missing", "test-fails", "unknown-type"],
)
def test_bad_patches(content_type: str, patch: Any) -> None:
    with pytest.raises(PatchError):
        apply_patch(POD_DOC, content_type, patch)


@pytest.mark.parametrize(
    ("selector", "labels", "want"),
    [
        ("", {}, True),
        ("app=web", {"app": "web"}, True),
        ("app==web,tier!=db", {"app": "web", "tier": "db"}, False),
        ("app in (web, api)", {"app": "api"}, True),
        ("app notin (web)", {}, True),
        ("app", {"app": ""}, True),
        ("!app", {"app": "x"}, False),
    ],
    ids=["empty", "equals", "not-equals", "in", "notin-missing", "exists", "does-not-exist"],
)
def test_label_selectors(selector: str, labels: dict[str, str], want: bool) -> None:
    assert labels_match(parse_label_selector(selector), labels) is want


def test_field_selectors() -> None:
    match = parse_field_selector("status.phase!=Succeeded,status.phase!=Failed,spec.nodeName=", "Pod")
    assert match({"status": {"phase": "Pending"}, "spec": {}})
    assert not match({"status": {"phase": "Failed"}, "spec": {}})
    assert not match({"status": {"phase": "Running"}, "spec": {"nodeName": "n1"}})
    with pytest.raises(SelectorError, match=r"field label not supported: spec\.image"):
        parse_field_selector("spec.image=x", "Pod")


PODS = find_resource("", "v1", "pods")
NODES = find_resource("", "v1", "nodes")


def _api() -> APIServer:
    cluster = SimulatedCluster(clock=VirtualClock(1767225600.0))
    api = APIServer(cluster)
    assert NODES is not None
    api.create(NODES, "", {"kind": "Node", "metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "4", "pods": "10"}}})
    return api


def _pod(name: str, **labels: str) -> dict[str, Any]:
    return pod_doc(name, None, labels=labels)


def test_versions_conflicts_and_no_op_updates() -> None:
    api = _api()
    assert PODS is not None
    created = api.create(PODS, "default", _pod("p", app="web"))
    rv = created["metadata"]["resourceVersion"]
    assert api.update(PODS, "default", "p", created)["metadata"]["resourceVersion"] == rv  # nothing changed
    changed = {**created, "metadata": {**created["metadata"], "labels": {"app": "api"}}}
    newer = api.update(PODS, "default", "p", changed)
    assert int(newer["metadata"]["resourceVersion"]) > int(rv)
    code, body = api.handle(
        {"verb": "update", "version": "v1", "resource": "pods", "namespace": "default", "name": "p", "body": changed}
    )
    assert (code, body["reason"]) == (409, "Conflict")
    code, body = api.handle({"verb": "create", "version": "v1", "resource": "pods", "namespace": "default", "body": _pod("p")})
    assert (code, body["reason"], body["message"]) == (409, "AlreadyExists", 'pods "p" already exists')


def test_watch_follows_selectors_and_expires_old_versions() -> None:
    api = _api()
    assert PODS is not None
    start = int(api.list(PODS, "default")["metadata"]["resourceVersion"])
    api.create(PODS, "default", _pod("p", app="web"))
    api.patch(PODS, "default", "p", JSON_MERGE, {"metadata": {"labels": {"app": "db"}}})
    api.bind("default", "p", {"target": {"name": "n1"}})
    seen = api.watch(PODS, "default", start, label_selector="app=web")["events"]
    # Added, then left the selection: a DELETED of its last matching state.
    assert [(e["type"], e["object"]["metadata"]["labels"]["app"]) for e in seen] == [("ADDED", "web"), ("DELETED", "web")]
    everything = api.watch(PODS, "default", start)["events"]
    assert [e["type"] for e in everything] == ["ADDED", "MODIFIED", "MODIFIED"]
    assert everything[-1]["object"]["spec"]["nodeName"] == "n1"
    code, body = api.handle({"verb": "watch", "version": "v1", "resource": "pods", "query": {"resourceVersion": str(start - 5)}})
    assert (code, body["reason"]) == (410, "Expired")


def test_graceful_delete_then_gone() -> None:
    api = _api()
    assert PODS is not None
    api.create(PODS, "default", {**_pod("p"), "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "x"}]}})
    terminating = api.delete(PODS, "default", "p")
    assert terminating["metadata"]["deletionTimestamp"]
    assert api.get(PODS, "default", "p")["status"]["phase"] == "Running"
    clock = api.cluster.clock
    assert isinstance(clock, VirtualClock)
    clock.advance_to(clock.now() + 2)
    api.tick()
    code, _ = api.handle({"verb": "get", "version": "v1", "resource": "pods", "namespace": "default", "name": "p"})
    assert code == 404


def test_a_long_running_cluster_keeps_the_newest_events_and_deleted_pods() -> None:
    # The console runs for days: every Scheduled or FailedScheduling event and every deleted pod
    # used to be kept forever (a finite simulate or bench run keeps all: no limit).
    api = _api()
    cluster = api.cluster
    cluster.history_limit = 8
    events = find_resource("", "v1", "events")
    assert PODS is not None and events is not None
    start = int(api.list(events, "default")["metadata"]["resourceVersion"])
    for i in range(30):
        cluster.record("Normal", "Scheduled", f"default/p{i}", f"assigned p{i}")
        if i % 7 == 0:
            api.tick()  # the API server takes in new events now and then
        pod = api.create(PODS, "default", _pod(f"p{i}"))
        api.delete(PODS, "default", pod["metadata"]["name"])
    api.tick()
    assert len(cluster.events) <= 10 and cluster.events_dropped + len(cluster.events) == 30
    assert cluster.events[-1].object == "default/p29"
    assert len(cluster.deleted) <= 10 and any(p.name == "p29" for p in cluster.deleted.values())
    kept = api.list(events, "default")["items"]
    assert sorted(e["involvedObject"]["name"] for e in kept) == sorted(f"p{i}" for i in range(22, 30))
    watched = api.watch(events, "default", start)["events"]
    assert [e["type"] for e in watched].count("ADDED") == 30 and [e["type"] for e in watched].count("DELETED") == 22
