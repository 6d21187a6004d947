"""Editing the simulated cluster: a pod or node replaced with an edited document, a node deleted, the
cluster reset to its starting state; operators only, audited, kept across a restart."""

from __future__ import annotations

import yaml

from schedconsole.cluster.models import ClusterObject
from schedconsole.engine import demo
from schedconsole.engine.store import load_documents
from tests.console.conftest import pod, settle
from tests.support.waits import wait_for


def _audit(api, action: str) -> list[dict]:
    return api.get(f"/api/audit/?action={action}").json()["results"]


def test_an_edited_pod_replaces_the_pod_and_is_scheduled_again(engine, api) -> None:
    api.post("/api/pods/", pod("web", cpu="500m"), format="json")
    wait_for(lambda: api.get("/api/pods/default/web/").json()["node"])
    settle(engine)
    old = api.get("/api/pods/default/web/").json()
    manifest = old["manifest"]
    manifest["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "1500m"
    manifest["spec"].pop("nodeName", None)  # as the editor's user would, to place it again
    response = api.put("/api/pods/default/web/", yaml.safe_dump(manifest), content_type="application/yaml")
    assert response.status_code == 200, response.json()
    new = response.json()
    assert new["uid"] != old["uid"] and new["requests"]["cpu"] == 1500
    wait_for(lambda: api.get("/api/pods/default/web/").json()["node"])
    settle(engine)
    (entry,) = _audit(api, "pod.replace")
    assert entry["target"] == "default/web" and entry["user"] == "olga"
    stored = [d for d in load_documents() if d["kind"] == "Pod" and d["metadata"]["name"] == "web"]
    assert len(stored) == 1 and stored[0]["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "1500m"


def test_an_edit_is_checked_before_anything_changes(engine, api) -> None:
    api.post("/api/pods/", pod("web"), format="json")
    settle(engine)
    manifest = api.get("/api/pods/default/web/").json()["manifest"]
    renamed = {**manifest, "metadata": {**manifest["metadata"], "name": "other"}}
    response = api.put("/api/pods/default/web/", renamed, format="json")
    assert response.status_code == 400 and "the name cannot change" in str(response.json())
    bad = {**manifest, "spec": {**manifest["spec"], "priority": 2**31}}
    response = api.put("/api/pods/default/web/", bad, format="json")
    assert response.status_code == 400 and "int32" in str(response.json())
    assert api.get("/api/pods/default/web/").json()["uid"] == manifest["metadata"]["uid"]  # untouched
    assert api.put("/api/pods/default/nope/", manifest, format="json").status_code == 404


def test_an_edited_node_keeps_its_pods_and_a_deleted_node_takes_them(engine, api) -> None:
    api.post("/api/pods/", pod("on-c", nodeName="node-c"), format="json")
    settle(engine)
    document = api.get("/api/nodes/node-c/").json()["nodeInfo"]["node"]
    document["spec"] = {"taints": [{"key": "maintenance", "value": "now", "effect": "NoSchedule"}]}
    response = api.put("/api/nodes/node-c/", document, format="json")
    assert response.status_code == 200, response.json()
    assert response.json()["taints"] == [{"key": "maintenance", "value": "now", "effect": "NoSchedule"}]
    assert api.get("/api/pods/default/on-c/").json()["node"] == "node-c"
    settle(engine)
    nodes = [d for d in load_documents() if d["kind"] == "Node" and d["metadata"]["name"] == "node-c"]
    assert len(nodes) == 1 and nodes[0]["spec"]["taints"][0]["key"] == "maintenance"
    gone = api.delete("/api/nodes/node-c/").json()
    assert gone["podsDeleted"] == ["default/on-c"]
    assert api.get("/api/nodes/node-c/").status_code == 404
    assert api.get("/api/pods/default/on-c/").status_code == 404
    assert [e["target"] for e in _audit(api, "node.delete")] == ["node-c"]
    assert [e["target"] for e in _audit(api, "node.replace")] == ["node-c"]


def test_viewers_cannot_edit_delete_or_reset(engine, api, viewer_api) -> None:
    api.post("/api/pods/", pod("web"), format="json")
    settle(engine)
    manifest = api.get("/api/pods/default/web/").json()["manifest"]
    assert viewer_api.put("/api/pods/default/web/", manifest, format="json").status_code == 403
    assert viewer_api.put("/api/nodes/node-a/", {"kind": "Node"}, format="json").status_code == 403
    assert viewer_api.delete("/api/nodes/node-a/").status_code == 403
    assert viewer_api.post("/api/cluster/reset/", {"confirm": True}, format="json").status_code == 403
    assert api.get("/api/nodes/").json()["count"] == 3


def test_reset_brings_back_the_starting_cluster(start_engine, api, settings) -> None:
    settings.DEMO_CLUSTER = True
    host = start_engine(demo.cluster_documents(), demo.config_document())
    settle(host)
    api.post("/api/pods/", pod("extra"), format="json")
    assert api.delete("/api/nodes/node-00/").status_code == 200
    api.post(
        "/api/import/", [{"apiVersion": "v1", "kind": "PriorityClass", "metadata": {"name": "extra"}, "value": 5}], format="json"
    )
    assert api.post("/api/cluster/reset/", {"confirm": False}, format="json").status_code == 400
    response = api.post("/api/cluster/reset/", {"confirm": True}, format="json")
    assert response.status_code == 200, response.json()
    done = response.json()
    assert done["deleted"]["Node"] == 47 and done["created"]["Node"] == 48
    assert api.get("/api/nodes/").json()["count"] == 48
    assert api.get("/api/pods/default/extra/").status_code == 404
    settle(host)
    (entry,) = _audit(api, "cluster.reset")
    assert entry["user"] == "olga" and entry["after"]["created"]["Node"] == 48
    # What survives a restart is the starting cluster, not what was there before the reset.
    stored = load_documents()
    assert sum(d["kind"] == "Node" for d in stored) == 48
    assert not any(d["kind"] == "PriorityClass" and d["metadata"]["name"] == "extra" for d in stored)
    assert not ClusterObject.objects.filter(name="extra", deleted=False).exists()


def test_an_edit_drops_what_the_server_set_and_the_old_results() -> None:
    from schedconsole.engine.bridge.edits import fresh

    edited = pod("web")
    edited["metadata"].update(
        uid="old", resourceVersion="7", annotations={"team": "a", "kube-scheduler-simulator.sigs.k8s.io/selected-node": "n"}
    )
    edited["status"] = {"phase": "Running"}
    out = fresh(edited)
    assert out["metadata"]["annotations"] == {"team": "a"} and "uid" not in out["metadata"] and "status" not in out
