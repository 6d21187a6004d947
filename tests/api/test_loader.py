"""Reading cluster files: kinds, lists, folders, warnings, and errors naming file, document and field."""

from __future__ import annotations

import json
import pathlib
import re

import pytest

from scheduler.api.loader import LoadError, load_cluster

NODE = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '2', memory: 1Gi, pods: '10'}}\n"
POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns}\nspec: {containers: [{name: c, image: i}]}\n"


def write(tmp_path: pathlib.Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_multi_document_list_and_folder(tmp_path: pathlib.Path) -> None:
    write(tmp_path, "a.yaml", NODE + "---\n" + POD)
    items = {"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n2"}}]}
    write(tmp_path, "b.json", json.dumps(items))
    objs = load_cluster([str(tmp_path)])
    assert [n.name for n in objs.nodes] == ["n1", "n2"]
    assert [p.key for p in objs.pods] == ["ns/p"]
    assert objs.pods[0].priority == 0


def test_unknown_kinds_warn_once_per_kind(tmp_path: pathlib.Path) -> None:
    deploy = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: s}\n"
    path = write(tmp_path, "c.yaml", deploy + "---\n" + deploy.replace("name: s", "name: t") + "---\n" + NODE)
    objs = load_cluster([path])
    assert len(objs.warnings) == 1 and "Deployment" in objs.warnings[0]
    assert len(objs.nodes) == 1


SPREADING_KINDS = (
    "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec: {selector: {app: web}}\n---\n"
    "apiVersion: v1\nkind: Service\nmetadata: {name: headless, namespace: shop}\nspec: {clusterIP: None}\n---\n"
    "apiVersion: v1\nkind: ReplicationController\nmetadata: {name: rc}\nspec: {selector: {app: old}}\n---\n"
    "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: rs, namespace: shop}\n"
    "spec: {selector: {matchLabels: {app: web}, matchExpressions: [{key: tier, operator: Exists}]}}\n---\n"
    "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db, namespace: shop}\nspec: {selector: {matchLabels: {app: db}}}\n"
)


def test_services_and_controllers_are_read_for_default_spreading(tmp_path: pathlib.Path) -> None:
    objs = load_cluster([write(tmp_path, "s.yaml", SPREADING_KINDS)])
    assert objs.warnings == []
    assert [(o.kind, o.namespace, o.name) for o in objs.services] == [("Service", "shop", "web"), ("Service", "shop", "headless")]
    web, headless = objs.services
    assert web.selector is not None and web.selector.matches({"app": "web"}) and not web.selector.matches({"app": "db"})
    assert headless.selector is None  # no spec.selector: selects nothing
    assert [(o.namespace, o.name) for o in objs.replication_controllers] == [("default", "rc")]
    (rs,) = objs.replica_sets
    assert rs.selector is not None and [(r.key, r.operator) for r in rs.selector.requirements] == [
        ("app", "In"),
        ("tier", "Exists"),
    ]
    assert [o.name for o in objs.stateful_sets] == ["db"]


def test_owner_references_keep_api_version_and_controller(tmp_path: pathlib.Path) -> None:
    owned = POD.replace(
        "namespace: ns}",
        "namespace: ns, ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: rs, controller: true}, "
        "{apiVersion: v1, kind: Node, name: n1}]}",
    )
    (pod,) = load_cluster([write(tmp_path, "p.yaml", owned)]).pods
    ref = pod.meta.controller_ref()
    assert ref is not None and (ref.api_version, ref.kind, ref.name) == ("apps/v1", "ReplicaSet", "rs")
    assert [r.controller for r in pod.meta.owner_references] == [True, False]


@pytest.mark.parametrize(
    ("doc", "want"),
    [
        (
            "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: rs}\nspec: {selector: {matchExpressions: [{key: a, operator: Near}]}}\n",
            "document 1 (ReplicaSet rs): spec.selector.matchExpressions[0].operator: unsupported operator 'Near'",
        ),
        (
            "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {selector: [app]}\n",
            "document 1 (Service s): spec.selector",
        ),
        (
            "apiVersion: v1\nkind: Service\nmetadata: {name: s}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: s}\n",
            "document 2 (Service s): metadata.name: duplicate Service 'default/s'",
        ),
    ],
    ids=["bad-operator", "selector-not-a-map", "duplicate"],
)
def test_bad_spreading_objects_name_document_and_field(tmp_path: pathlib.Path, doc: str, want: str) -> None:
    with pytest.raises(LoadError, match=re.escape(want)):
        load_cluster([write(tmp_path, "bad.yaml", doc)])


def test_priority_from_class_and_global_default(tmp_path: pathlib.Path) -> None:
    classes = (
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n---\n"
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: dflt}\nvalue: 7\nglobalDefault: true\n---\n"
    )
    pods = POD.replace("spec: {", "spec: {priorityClassName: high, ") + "---\n" + POD.replace("name: p,", "name: q,")
    objs = load_cluster([write(tmp_path, "d.yaml", classes + pods)])
    assert {p.name: p.priority for p in objs.pods} == {"p": 1000, "q": 7}


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("kind: Node\nmetadata: {name: [unclosed\n", ["e.yaml", "invalid YAML", "line"]),
        (
            NODE + "---\n" + POD.replace("image: i", "image: i, resources: {requests: {cpu: lots}}"),
            ["e.yaml", "document 2", "Pod ns/p", "spec.containers[0].resources.requests.cpu", "lots"],
        ),
        ("apiVersion: v1\nmetadata: {name: x}\n", ["e.yaml", "document 1", "kind", "is required"]),
        (NODE + "---\n" + NODE, ["e.yaml", "document 2", "duplicate Node"]),
        (
            POD.replace("spec: {", "spec: {priorityClassName: nope, "),
            ["spec.priorityClassName", "no PriorityClass with name nope was found"],
        ),
    ],
    ids=["bad-yaml", "bad-quantity", "no-kind", "duplicate", "unknown-priority-class"],
)
def test_errors_name_file_document_field(tmp_path: pathlib.Path, text: str, parts: list[str]) -> None:
    with pytest.raises(LoadError) as info:
        load_cluster([write(tmp_path, "e.yaml", text)])
    for part in parts:
        assert part in str(info.value)


def test_missing_path(tmp_path: pathlib.Path) -> None:
    with pytest.raises(LoadError, match="no such file"):
        load_cluster([str(tmp_path / "nope.yaml")])
