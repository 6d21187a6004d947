"""Reading cluster files: kinds, lists, folders, warnings, and errors naming file, document and field."""

from __future__ import annotations

import json
import pathlib

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
    svc = "apiVersion: v1\nkind: Service\nmetadata: {name: s}\n"
    path = write(tmp_path, "c.yaml", svc + "---\n" + svc.replace("name: s", "name: t") + "---\n" + NODE)
    objs = load_cluster([path])
    assert len(objs.warnings) == 1 and "Service" in objs.warnings[0]
    assert len(objs.nodes) == 1


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
        (NODE + "---\n" + POD.replace("image: i", "image: i, resources: {requests: {cpu: lots}}"), ["e.yaml", "document 2", "Pod ns/p", "spec.containers[0].resources.requests.cpu", "lots"]),
        ("apiVersion: v1\nmetadata: {name: x}\n", ["e.yaml", "document 1", "kind", "is required"]),
        (NODE + "---\n" + NODE, ["e.yaml", "document 2", "duplicate Node"]),
        (POD.replace("spec: {", "spec: {priorityClassName: nope, "), ["spec.priorityClassName", "no PriorityClass with name nope was found"]),
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
