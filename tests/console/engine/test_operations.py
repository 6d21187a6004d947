"""Engine operations at the Celery boundary: plain JSON out, the same dataclass back in."""

from __future__ import annotations

import dataclasses
import json

import pytest

from schedconsole.engine import operations as ops
from schedconsole.engine.bridge import BadInput

SAMPLES: list[ops.Operation[object]] = [
    ops.ListNodes(zone="zone-a", name="node", offset=5, limit=10),
    ops.GetNode(name="node-a"),
    ops.ListPods(namespace="default", phase="Pending", limit=None),
    ops.GetPod(namespace="default", name="p"),
    ops.GetNodesPage(q="topology.kubernetes.io/zone=a", sort="-cpu"),
    ops.WhatIf(pod={"kind": "Pod", "metadata": {"name": "p"}}, profile=None),
    ops.Compare(pod={"kind": "Pod"}, profiles=["a", "b"]),
    ops.PreviewThresholds(document={"kind": "KubeSchedulerConfiguration"}, profile="a", pods=["ns/p"], nodes=False),
    ops.Create(documents=[{"kind": "Node"}], source="test"),
    ops.ReplacePod(namespace="default", name="p", document={"kind": "Pod", "metadata": {"name": "p"}}),
    ops.ResetCluster(documents=[{"kind": "Node"}]),
    ops.SetDebugFlags(top_n=3, filter_failure=True),
    ops.PluginTiming(every=1),
    ops.Dispatch(method="PUT", path="/debug/flags/s", body=b"\x00\xff 4", query={"a": "b"}),
    ops.K8sRequest(verb="list", group="", version="v1", resource="pods", query={"watch": "1"}, body=None),
    ops.StartSync(kubeconfig="/k", context="c", in_cluster=False, keep_bindings=False),
    ops.Ping(),
]


@pytest.mark.parametrize("op", SAMPLES, ids=lambda op: type(op).__name__)
def test_an_operation_crosses_as_json_and_comes_back_equal(op: ops.Operation[object]) -> None:
    name, fields = ops.to_wire(op)
    assert name == op.wire_name
    name, fields = json.loads(json.dumps([name, fields]))  # what Celery's JSON serializer does
    assert ops.from_wire(name, fields) == op


def test_every_operation_has_its_own_wire_name() -> None:
    names = [op.wire_name for op in ops.OPERATIONS.values()]
    assert len(names) == len(set(names)) == 38
    assert all(dataclasses.is_dataclass(op) for op in ops.OPERATIONS.values())


@pytest.mark.parametrize(
    ("name", "fields", "field", "message"),
    [
        ("nope", {}, "operation", "unknown engine operation 'nope'"),
        ("node", {"name": "a", "colour": "red"}, "colour", "has no field 'colour'"),
        ("node", {}, "operation", "missing 1 required positional argument: 'name'"),
    ],
    ids=["unknown-operation", "unknown-field", "missing-field"],
)
def test_what_the_engine_does_not_know_is_refused_by_name(name: str, fields: dict[str, object], field: str, message: str) -> None:
    with pytest.raises(BadInput) as refused:
        ops.from_wire(name, fields)
    assert refused.value.field == field and message in refused.value.message
