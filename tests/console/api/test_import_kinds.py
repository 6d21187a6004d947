"""`POST /api/import/` creates every kind the engine reads (the kinds `simulate --cluster` lists),
and what it created is still there after a restart; nothing is dropped in silence."""

from __future__ import annotations

import yaml

from tests.console.conftest import SMALL_CLUSTER, TWO_PROFILES, settle

LISTED = [
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}},
    {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "gold"}, "value": 1000},
    {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "keep", "namespace": "team"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "x"}}},
    },
    {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": "pv-1"},
        "spec": {
            "capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": "slow",
            "hostPath": {"path": "/x"},
        },
    },
    {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "claim", "namespace": "team"},
        "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "slow", "resources": {"requests": {"storage": "1Gi"}}},
    },
    {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "slow"},
        "provisioner": "kubernetes.io/no-provisioner",
        "volumeBindingMode": "WaitForFirstConsumer",
    },
    {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "node-a"}, "spec": {"drivers": []}},
    {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": "ebs.csi.aws.com"}, "spec": {}},
    {
        "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": "gang", "namespace": "team"},
        "spec": {"minMember": 2},
    },
    {
        "apiVersion": "scheduling.koordinator.sh/v1alpha1",
        "kind": "Reservation",
        "metadata": {"name": "hold"},
        "spec": {
            "template": {"spec": {"containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": "1"}}}]}},
            "owners": [{"labelSelector": {"matchLabels": {"app": "x"}}}],
        },
    },
    {
        "apiVersion": "slo.koordinator.sh/v1alpha1",
        "kind": "NodeMetric",
        "metadata": {"name": "node-a"},
        "spec": {"metricCollectPolicy": {"reportIntervalSeconds": 60}},
    },
    {
        "apiVersion": "topology.node.k8s.io/v1alpha1",
        "kind": "NodeResourceTopology",
        "metadata": {"name": "node-b"},
        "topologyPolicies": ["None"],
        "zones": [
            {
                "name": "node-0",
                "type": "Node",
                "resources": [{"name": "cpu", "capacity": "4", "allocatable": "4", "available": "4"}],
            }
        ],
    },
]


def _names(host, kind: str) -> list[str]:
    cluster = host.engine.cluster
    held = {
        "Namespace": cluster.namespaces,
        "PriorityClass": cluster.priority_classes,
        "PodDisruptionBudget": cluster.pdbs,
        "PersistentVolume": cluster.persistent_volumes,
        "PersistentVolumeClaim": cluster.persistent_volume_claims,
        "StorageClass": cluster.storage_classes,
        "CSINode": cluster.csi_nodes,
        "CSIDriver": cluster.csi_drivers,
    }
    if kind in held:
        return sorted(held[kind])
    return sorted(d["metadata"]["name"] for d in cluster.extensions.get(kind, ()))


def test_every_listed_kind_is_imported_and_survives_a_restart(start_engine, api) -> None:
    # A NodeResourceTopology answered 201 and was dropped; so were volumes, PodGroups, NodeMetrics.
    host = start_engine(SMALL_CLUSTER, TWO_PROFILES)
    response = api.post("/api/import/", yaml.safe_dump_all(LISTED), content_type="application/yaml")
    assert response.status_code == 201, response.content
    kinds = [d["kind"] for d in LISTED]
    assert response.json() == {"created": dict.fromkeys(kinds, 1), "warnings": []}
    expected = {kind: _names(host, kind) for kind in kinds}
    for doc in LISTED:
        name = doc["metadata"]["name"]
        key = f"team/{name}" if doc["kind"] in ("PodDisruptionBudget", "PersistentVolumeClaim") else name
        assert key in expected[doc["kind"]], doc["kind"]
    settle(host)
    host.stop()
    again = start_engine()
    assert {kind: _names(again, kind) for kind in kinds} == expected


def test_importing_an_object_that_exists_is_refused_by_name(engine, api) -> None:
    nrt = yaml.safe_dump(LISTED[-1])
    assert api.post("/api/import/", nrt, content_type="application/yaml").status_code == 201
    again = api.post("/api/import/", nrt, content_type="application/yaml")
    assert again.status_code == 400
    assert again.json() == {"metadata.name": ['NodeResourceTopology "node-b" already exists']}


def test_a_kind_the_engine_does_not_read_is_named(engine, api) -> None:
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}
    alone = api.post("/api/import/", yaml.safe_dump(config_map), content_type="application/yaml")
    assert alone.status_code == 400
    assert "skipping objects of kind 'ConfigMap' (not used by the scheduler)" in alone.json()["file"][0]
    mixed = api.post("/api/import/", yaml.safe_dump_all([config_map, LISTED[0]]), content_type="application/yaml")
    assert mixed.status_code == 201
    assert mixed.json() == {
        "created": {"Namespace": 1},
        "warnings": ["warning: body: skipping objects of kind 'ConfigMap' (not used by the scheduler)"],
    }


def test_the_exported_cluster_imports_back_into_an_empty_console(start_engine, api) -> None:
    from schedconsole.cluster.models import ClusterObject
    from tests.console.conftest import pod

    host = start_engine([*SMALL_CLUSTER, pod("bound", nodeName="node-a"), pod("waiting", cpu="64")], TWO_PROFILES)
    api.post("/api/import/", yaml.safe_dump_all(LISTED), content_type="application/yaml")
    settle(host)
    response = api.get("/api/export/")
    assert response.status_code == 200 and response["Content-Type"] == "application/yaml"
    exported = yaml.safe_load(response.content)
    kinds = sorted(d["kind"] for d in exported["items"])
    assert kinds == sorted(["Node"] * 3 + ["Pod"] * 2 + [d["kind"] for d in LISTED])
    host.stop()
    ClusterObject.objects.all().delete()
    empty = start_engine()
    assert empty.engine is not None and not empty.engine.cluster.nodes
    back = api.post("/api/import/", response.content, content_type="application/yaml")
    assert back.status_code == 201, back.content
    assert sum(back.json()["created"].values()) == len(exported["items"])
    assert api.get("/api/pods/default/bound/").json()["node"] == "node-a"
