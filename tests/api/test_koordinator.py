"""Koordinator objects and helpers: NodeMetric, NodeResourceTopology, CPU sets, priority classes."""

from __future__ import annotations

import pathlib
from typing import Any

import pytest

from scheduler.api.koordinator import format_cpuset, kube_qos_class, parse_cpuset, parse_node_metric, priority_class
from scheduler.api.loader import LoadError, load_cluster
from tests.support.builders import make_pod

# Koordinator's config/samples/slo_v1alpha1_nodemetric.yaml (spec holds only a comment there).
NODE_METRIC_SAMPLE = """
apiVersion: slo.koordinator.sh/v1alpha1
kind: NodeMetric
metadata:
  name: nodemetric-sample
spec:
  # TODO(user): Add fields here
"""
# The example of docs/proposals/scheduling/20220530-fine-grained-cpu-orchestration.md, shortened.
NRT_PROPOSAL = """
apiVersion: topology.node.k8s.io/v1alpha1
kind: NodeResourceTopology
metadata:
  annotations:
    kubelet.koordinator.sh/cpu-manager-policy: |-
      {"policy": "static", "options": {"full-pcpus-only": "true", "distribute-cpus-across-numa": "true"}}
    node.koordinator.sh/cpu-topology: |-
      {"detail": [{"id": 0, "core": 0, "socket": 0, "node": 0}, {"id": 1, "core": 1, "socket": 1, "node": 1}]}
    node.koordinator.sh/pod-cpu-allocs: |-
      [{"namespace": "default", "name": "static-guaranteed-pod", "uid": "32b14702", "cpu": "4-8", "managedByKubelet": "true"}]
  labels:
    app.kubernetes.io/managed-by: Koordinator
  name: node1
topologyPolicies: ["SingleNUMANodePodLevel"]
zones:
  - name: node-0
    type: Node
    resources:
      - {name: cpu, capacity: 20, allocatable: 15, available: 10}
"""


def test_koordinator_samples_load_as_they_are(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "k.yaml"
    path.write_text(NODE_METRIC_SAMPLE + "---" + NRT_PROPOSAL)
    objs = load_cluster([str(path)])
    assert [d["metadata"]["name"] for d in objs.extensions["NodeMetric"]] == ["nodemetric-sample"]
    assert [d["metadata"]["name"] for d in objs.extensions["NodeResourceTopology"]] == ["node1"]


def test_node_metric_takes_any_report_interval_and_aggregation_type() -> None:
    """koord-scheduler uses reportIntervalSeconds as given (loadaware/helper.go
    getNodeMetricReportInterval) and keeps aggregation types it does not name (a map with free
    keys); neither is refused."""
    doc = {
        "apiVersion": "slo.koordinator.sh/v1alpha1",
        "kind": "NodeMetric",
        "metadata": {"name": "n"},
        "spec": {"metricCollectPolicy": {"reportIntervalSeconds": 0}},
        "status": {
            "updateTime": "2026-01-01T00:00:00Z",
            "nodeMetric": {
                "nodeUsage": {"resources": {"cpu": "1"}},
                "aggregatedNodeUsages": [{"duration": "5m", "usage": {"p42": {"resources": {"cpu": "2"}}}}],
            },
        },
    }
    metric = parse_node_metric(doc)
    assert metric.report_interval == 0
    assert [sorted(a.usage) for a in metric.aggregated] == [["p42"]]


@pytest.mark.parametrize(
    ("doc", "fragments"),
    [
        (
            "apiVersion: slo.koordinator.sh/v1alpha1\nkind: NodeMetric\nmetadata: {name: n}\nstatus: {nodeMetric: {nodeUsage: {resources: {cpu: lots}}}}\n",
            ["document 1 (NodeMetric n)", "status.nodeMetric.nodeUsage.resources.cpu", "lots"],
        ),
        (
            "apiVersion: slo.koordinator.sh/v1alpha1\nkind: NodeMetric\nmetadata: {name: n}\nspec: {metricCollectPolicy: {reportIntervalSeconds: soon}}\n",
            ["spec.metricCollectPolicy.reportIntervalSeconds", "soon"],
        ),
        (
            'apiVersion: topology.node.k8s.io/v1alpha1\nkind: NodeResourceTopology\nmetadata:\n  name: n\n  annotations: {kubelet.koordinator.sh/cpu-manager-policy: \'{"reservedCPUs": "3-1"}\'}\n',
            ["NodeResourceTopology n", "reservedCPUs", "invalid CPU set '3-1'"],
        ),
        (
            "apiVersion: slo.koordinator.sh/v1alpha1\nkind: NodeMetric\nmetadata: {name: n}\n---\napiVersion: slo.koordinator.sh/v1alpha1\nkind: NodeMetric\nmetadata: {name: n}\n",
            ["document 2", "duplicate NodeMetric 'n'"],
        ),
    ],
    ids=["bad quantity", "report interval not an integer", "bad reserved CPUs", "duplicate name"],
)
def test_bad_objects_name_file_document_and_field(tmp_path: pathlib.Path, doc: str, fragments: list[str]) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(doc)
    with pytest.raises(LoadError) as caught:
        load_cluster([str(path)])
    for fragment in fragments:
        assert fragment in str(caught.value)


@pytest.mark.parametrize(
    ("text", "cpus", "canonical"),
    [
        ("", [], ""),
        ("0-3", [0, 1, 2, 3], "0-3"),
        ("3,5,7-15", [3, 5, *range(7, 16)], "3,5,7-15"),
        ("8,10,9", [8, 9, 10], "8-10"),
        ("1, 3", [1, 3], "1,3"),
    ],
    ids=["empty", "range", "the availableCPUs case", "unordered", "spaces"],
)
def test_cpuset_round_trip(text: str, cpus: list[int], canonical: str) -> None:
    assert parse_cpuset(text) == frozenset(cpus)
    assert format_cpuset(parse_cpuset(text)) == canonical


@pytest.mark.parametrize("text", ["a", "3-1", "1-", "1,,2"], ids=["letter", "backwards", "open range", "empty item"])
def test_cpuset_refuses(text: str) -> None:
    with pytest.raises(ValueError):
        parse_cpuset(text)


@pytest.mark.parametrize(
    ("labels", "priority", "want"),
    [
        ({}, 9500, "koord-prod"),
        ({}, 7000, "koord-mid"),
        ({}, 5999, "koord-batch"),
        ({}, 3000, "koord-free"),
        ({}, 0, "koord-batch"),
        ({"koordinator.sh/priority-class": "koord-batch"}, 9500, "koord-batch"),
        ({"koordinator.sh/priority-class": "bogus"}, 9500, "koord-batch"),
        ({"koordinator.sh/qosClass": "LSR"}, 0, "koord-prod"),
        ({"koordinator.sh/qosClass": "BE"}, 0, "koord-batch"),
        ({"koordinator.sh/qosClass": "bogus"}, 0, "koord-batch"),
    ],
    ids=[
        "prod band",
        "mid band",
        "batch band",
        "free band",
        "no band, BestEffort is batch",
        "label wins",
        "unknown label falls back to QoS",
        "LSR is prod",
        "BE is batch",
        "unknown qos label falls back to Kubernetes QoS",
    ],
)
def test_priority_class(labels: dict[str, str], priority: int, want: str) -> None:
    """apis/extension priority_utils.go GetPodPriorityClassWithDefault (the pods request nothing:
    BestEffort, which GetPodQoSClassWithKubeQoS makes BE, hence Batch)."""
    assert priority_class(make_pod("p", labels=labels, priority=priority)) == want


def _container(requests: dict[str, str], limits: dict[str, str] | None = None) -> dict[str, Any]:
    resources: dict[str, Any] = {"requests": requests}
    if limits is not None:
        resources["limits"] = limits
    return {"name": f"c{len(requests)}{len(limits or {})}", "image": "pause", "resources": resources}


@pytest.mark.parametrize(
    ("containers", "spec", "qos", "klass"),
    [
        ([_container({})], None, "BestEffort", "koord-batch"),
        ([_container({"cpu": "1"})], None, "Burstable", "koord-prod"),
        ([_container({"cpu": "1", "memory": "1Gi"}, {"cpu": "1", "memory": "1Gi"})], None, "Guaranteed", "koord-prod"),
        ([_container({}, {"cpu": "1", "memory": "1Gi"})], None, "Guaranteed", "koord-prod"),
        ([_container({"cpu": "1", "memory": "1Gi"}, {"cpu": "2", "memory": "1Gi"})], None, "Burstable", "koord-prod"),
        (
            [_container({"cpu": "1", "memory": "1Gi"}, {"cpu": "1", "memory": "1Gi"}), _container({})],
            None,
            "Burstable",
            "koord-prod",
        ),
        ([_container({})], {"resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}, "Guaranteed", "koord-prod"),
        ([_container({"ephemeral-storage": "1Gi"})], None, "BestEffort", "koord-batch"),
    ],
    ids=[
        "nothing asked",
        "a request",
        "limits equal requests",
        "limits only (requests default to them)",
        "a limit above its request",
        "one container without limits",
        "pod-level limits",
        "only non-QoS resources",
    ],
)
def test_kube_qos_class(containers: list[dict[str, Any]], spec: dict[str, Any] | None, qos: str, klass: str) -> None:
    """k8s.io/kubectl qos.GetPodQOS, and GetPodQoSClassWithKubeQoS / GetPodPriorityClassWithQoS:
    Guaranteed and Burstable pods of no Koordinator class are Prod, BestEffort ones Batch."""
    pod = make_pod("p", containers=containers, spec=spec)
    assert (kube_qos_class(pod), priority_class(pod)) == (qos, klass)
