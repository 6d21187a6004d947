"""The real kubectl against the simulated cluster's Kubernetes API (/k8s)."""

from __future__ import annotations

import json
import threading
import time

import yaml

from tests.k8sapi.conftest import Console
from tests.support.waits import wait_for

MANIFEST = """
apiVersion: v1
kind: Node
metadata:
  name: node-a
  labels: {topology.kubernetes.io/zone: zone-a}
status:
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
---
apiVersion: v1
kind: Node
metadata:
  name: node-b
  labels: {topology.kubernetes.io/zone: zone-b}
status:
  allocatable: {cpu: "2", memory: 8Gi, pods: "110"}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: v1
kind: Pod
metadata: {name: web-1, labels: {app: web}}
spec:
  priorityClassName: high
  containers: [{name: c, image: nginx, resources: {requests: {cpu: 500m, memory: 128Mi}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: web-2, labels: {app: web}}
spec:
  containers: [{name: c, image: nginx, resources: {requests: {cpu: 500m, memory: 128Mi}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: db-1, labels: {app: db}}
spec:
  containers: [{name: c, image: postgres, resources: {requests: {cpu: "1", memory: 1Gi}}}]
"""


def _running(out: list[str]) -> dict[str, str]:
    """The pods a `kubectl get pods -w -o wide` output shows Running, with their nodes."""
    rows = [line.split() for line in out[1:] if line.strip()]
    return {row[0]: row[6] for row in rows if len(row) > 6 and row[2] == "Running"}


def _pod(console: Console, name: str) -> dict:
    return yaml.safe_load(console.kubectl("get", "pod", name, "-o", "yaml").stdout)


def test_apply_then_watch_sees_the_engine_bind_every_pod(console: Console, tmp_path) -> None:
    watch = console.watch("get", "pods", "-w", "-o", "wide")
    assert watch.stdout is not None
    out: list[str] = []
    reader = threading.Thread(target=lambda: out.extend(watch.stdout), daemon=True)  # type: ignore[arg-type]
    reader.start()
    try:
        time.sleep(1.0)  # the watch opens (kubectl prints nothing before the first event)
        (tmp_path / "cluster.yaml").write_text(MANIFEST)
        applied = console.kubectl("apply", "-f", str(tmp_path / "cluster.yaml")).stdout
        assert (
            "node/node-a created" in applied
            and "pod/web-1 created" in applied
            and "priorityclass.scheduling.k8s.io/high created" in applied
        )
        for name in ("web-1", "web-2", "db-1"):
            wait_for(lambda n=name: (_pod(console, n).get("spec") or {}).get("nodeName"), 15, 0.1, what=f"{name} bound")
        wait_for(lambda: set(_running(out)) == {"web-1", "web-2", "db-1"}, 15, 0.05, what="the watch showing every pod Running")
    finally:
        watch.terminate()
        watch.wait(10)
        reader.join(10)
    lines = [line.split() for line in out if line.strip()]
    assert lines[0][:3] == ["NAME", "READY", "STATUS"]
    running = _running(out)
    assert set(running) == {"web-1", "web-2", "db-1"}
    assert set(running.values()) <= {"node-a", "node-b"}
    # Pending first (the creation), then Running on a node (the engine's binding).
    assert any(row[0] == "web-1" and row[2] == "Pending" for row in lines[1:])


def test_get_yaml_shows_the_engines_fields(console: Console) -> None:
    pod = _pod(console, "web-1")
    assert pod["kind"] == "Pod" and pod["apiVersion"] == "v1"
    assert pod["spec"]["priority"] == 1000  # the Priority admission step
    assert pod["spec"]["schedulerName"] == "default-scheduler"
    assert pod["status"]["phase"] == "Running"
    assert int(pod["metadata"]["resourceVersion"]) > 0 and pod["metadata"]["uid"]
    listed = json.loads(console.kubectl("get", "nodes", "-o", "json").stdout)
    assert listed["kind"] == "List" and [n["metadata"]["name"] for n in listed["items"]] == ["node-a", "node-b"]
    wide = console.kubectl("get", "pods", "-o", "wide").stdout.splitlines()
    assert wide[0].split()[:9] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED", "NODE"]


def test_the_console_shows_the_same_objects(console: Console) -> None:
    code, body = console.request("GET", "/api/pods/?namespace=default")
    assert code == 200
    nodes = {row["name"]: row["node"] for row in body["results"]}
    for name in ("web-1", "web-2", "db-1"):
        assert nodes[name] == _pod(console, name)["spec"]["nodeName"]


def test_selectors_and_paging(console: Console) -> None:
    web = console.kubectl("get", "pods", "-l", "app=web", "-o", "name").stdout.split()
    assert web == ["pod/web-1", "pod/web-2"]
    not_web = console.kubectl("get", "pods", "-l", "app notin (web)", "-o", "name").stdout.split()
    assert not_web == ["pod/db-1"]
    node = _pod(console, "db-1")["spec"]["nodeName"]
    on_node = console.kubectl("get", "pods", "--field-selector", f"spec.nodeName={node}", "-o", "name").stdout.split()
    assert "pod/db-1" in on_node
    paged = console.kubectl("get", "pods", "--chunk-size=1", "-o", "name").stdout.split()
    assert paged == ["pod/db-1", "pod/web-1", "pod/web-2"]
    code, page = console.request("GET", "/k8s/api/v1/namespaces/default/pods?limit=2")
    assert code == 200 and len(page["items"]) == 2 and page["metadata"]["remainingItemCount"] == 1
    code, rest = console.request("GET", f"/k8s/api/v1/namespaces/default/pods?limit=2&continue={page['metadata']['continue']}")
    assert [p["metadata"]["name"] for p in rest["items"]] == ["web-2"] and "continue" not in rest["metadata"]


def test_patch_strategic_merge_and_json(console: Console) -> None:
    console.kubectl("patch", "pod", "web-2", "-p", '{"metadata":{"labels":{"tier":"front"}}}')
    console.kubectl("patch", "pod", "web-2", "--type=merge", "-p", '{"metadata":{"annotations":{"note":"hello"}}}')
    console.kubectl("patch", "pod", "web-2", "--type=json", "-p", '[{"op":"add","path":"/metadata/labels/extra","value":"yes"}]')
    console.kubectl(
        "patch", "node", "node-b", "-p", '{"spec":{"taints":[{"key":"dedicated","value":"gpu","effect":"NoSchedule"}]}}'
    )
    pod = _pod(console, "web-2")
    assert pod["metadata"]["labels"] == {"app": "web", "tier": "front", "extra": "yes"}
    assert pod["metadata"]["annotations"]["note"] == "hello"
    node = yaml.safe_load(console.kubectl("get", "node", "node-b", "-o", "yaml").stdout)
    assert node["spec"]["taints"] == [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
    refused = console.kubectl("patch", "pod", "web-2", "-p", '{"spec":{"nodeName":"node-a"}}', check=False)
    assert refused.returncode != 0 and "Forbidden: pod updates may not change fields" in refused.stderr


def test_stale_update_gets_409(console: Console, tmp_path) -> None:
    stale = console.kubectl("get", "pod", "web-1", "-o", "json").stdout
    console.kubectl("label", "pod", "web-1", "changed=yes")
    (tmp_path / "stale.json").write_text(stale)
    done = console.kubectl("replace", "-f", str(tmp_path / "stale.json"), check=False)
    assert done.returncode != 0
    assert 'Operation cannot be fulfilled on pods "web-1": the object has been modified' in done.stderr
    code, body = console.request("PUT", "/k8s/api/v1/namespaces/default/pods/web-1", json.loads(stale))
    assert code == 409 and body["reason"] == "Conflict"


def test_binding_for_a_pod_of_another_scheduler(console: Console, tmp_path) -> None:
    (tmp_path / "other.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: other-1}\nspec:\n  schedulerName: another-scheduler\n  containers: [{name: c, image: busybox}]\n"
    )
    console.kubectl("create", "-f", str(tmp_path / "other.yaml"))
    time.sleep(1.0)
    assert not _pod(console, "other-1")["spec"].get("nodeName")  # no profile of ours schedules it
    (tmp_path / "binding.yaml").write_text(
        "apiVersion: v1\nkind: Binding\nmetadata: {name: other-1}\ntarget: {apiVersion: v1, kind: Node, name: node-a}\n"
    )
    created = console.kubectl("create", "-f", str(tmp_path / "binding.yaml"))
    assert "binding/other-1 created" in created.stdout
    pod = _pod(console, "other-1")
    assert pod["spec"]["nodeName"] == "node-a" and pod["status"]["phase"] == "Running"
    again = console.kubectl("create", "-f", str(tmp_path / "binding.yaml"), check=False)
    assert again.returncode != 0 and 'pod other-1 is already assigned to node "node-a"' in again.stderr


def test_delete_is_graceful_for_bound_pods(console: Console) -> None:
    code, body = console.request("DELETE", "/k8s/api/v1/namespaces/default/pods/db-1")
    assert code == 200 and body["metadata"]["deletionTimestamp"] and body["metadata"]["deletionGracePeriodSeconds"] == 30
    wait_for(lambda: console.kubectl("get", "pod", "db-1", check=False).returncode != 0, 15, 0.1, what="db-1 gone")
    gone = console.kubectl("get", "pod", "db-1", check=False)
    assert 'pods "db-1" not found' in gone.stderr
    console.kubectl("delete", "pod", "other-1")
    assert "other-1" not in console.kubectl("get", "pods", "-o", "name").stdout


def test_watch_from_a_version_too_old_gets_410(console: Console) -> None:
    event = console.lines("/k8s/api/v1/namespaces/default/pods?watch=1&resourceVersion=1&timeoutSeconds=3")[0]
    assert event["type"] == "ERROR" and event["object"]["code"] == 410 and event["object"]["reason"] == "Expired"


def test_watch_sends_bookmarks_and_ends_at_its_timeout(console: Console) -> None:
    _, listed = console.request("GET", "/k8s/api/v1/namespaces/default/pods")
    rv = listed["metadata"]["resourceVersion"]
    started = time.monotonic()
    events = console.lines(
        f"/k8s/api/v1/namespaces/default/pods?watch=1&resourceVersion={rv}&allowWatchBookmarks=true&timeoutSeconds=3"
    )
    assert time.monotonic() - started < 15
    assert any(e["type"] == "BOOKMARK" and int(e["object"]["metadata"]["resourceVersion"]) >= int(rv) for e in events)


def test_koordinator_kinds_and_events(console: Console, tmp_path) -> None:
    (tmp_path / "koord.yaml").write_text(
        """
apiVersion: scheduling.sigs.k8s.io/v1alpha1
kind: PodGroup
metadata: {name: gang-a}
spec: {minMember: 2}
---
apiVersion: slo.koordinator.sh/v1alpha1
kind: NodeMetric
metadata: {name: node-a}
spec: {}
"""
    )
    out = console.kubectl("apply", "-f", str(tmp_path / "koord.yaml")).stdout
    assert "podgroup.scheduling.sigs.k8s.io/gang-a created" in out and "nodemetric.slo.koordinator.sh/node-a created" in out
    group = yaml.safe_load(console.kubectl("get", "podgroup", "gang-a", "-o", "yaml").stdout)
    assert group["spec"]["minMember"] == 2 and group["metadata"]["namespace"] == "default"
    console.kubectl("patch", "podgroup", "gang-a", "--type=merge", "-p", '{"spec":{"minMember":3}}')
    assert yaml.safe_load(console.kubectl("get", "pg", "gang-a", "-o", "yaml").stdout)["spec"]["minMember"] == 3
    console.kubectl("delete", "podgroup", "gang-a")
    assert "gang-a" not in console.kubectl("get", "podgroups", "-o", "name").stdout
    events = console.kubectl("get", "events").stdout
    assert "Scheduled" in events and "Successfully assigned default/web-1" in events


def test_tokens_and_roles(console: Console) -> None:
    anonymous = console.kubectl("get", "pods", token="not-a-token", check=False)
    assert anonymous.returncode != 0
    assert "Unauthorized" in anonymous.stderr or "logged in" in anonymous.stderr
    assert "web-1" in console.kubectl("get", "pods", token=console.viewer_token).stdout
    denied = console.kubectl("label", "pod", "web-1", "by=viewer", token=console.viewer_token, check=False)
    assert denied.returncode != 0 and "Forbidden" in denied.stderr + denied.stdout
