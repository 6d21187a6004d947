"""Gangs over a real kube-apiserver with the PodGroup CRD in both published forms (Koordinator's
and scheduler-plugins' without a status subresource, and one with it), and the CRD installed
after the engine started: a gang that fits binds, one short of members waits, the PodGroup's
status is written, and the engine keeps running."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from scheduler.kube.client import connect
from tests.support.builders import node_doc, pod_doc
from tests.support.controlplane import Api, ControlPlane, Kubelet, namespace
from tests.support.engines import RemoteEngine
from tests.support.waits import wait_for

pytestmark = pytest.mark.realcluster
PROFILE = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {"schedulerName": "gang-scheduler", "plugins": {"multiPoint": {"enabled": [{"name": "Coscheduling"}]}}},
        {"schedulerName": "plain-scheduler"},
    ],
}
GROUP = "scheduling.sigs.k8s.io"


def _plural(kind: str) -> str:
    lower = kind.lower()
    return lower[:-1] + "ies" if lower.endswith("y") else lower + "s"


def crd(group: str, kind: str, namespaced: bool, status_subresource: bool) -> dict[str, Any]:
    """A CustomResourceDefinition of `kind` (v1alpha1, any fields kept)."""
    plural = _plural(kind)
    version: dict[str, Any] = {
        "name": "v1alpha1",
        "served": True,
        "storage": True,
        "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
    }
    if status_subresource:
        version["subresources"] = {"status": {}}
    meta: dict[str, Any] = {"name": f"{plural}.{group}"}
    if group.endswith(".k8s.io"):
        meta["annotations"] = {"api-approved.kubernetes.io": "unapproved, experimental-only"}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": meta,
        "spec": {
            "group": group,
            "names": {"kind": kind, "plural": plural, "singular": kind.lower()},
            "scope": "Namespaced" if namespaced else "Cluster",
            "versions": [version],
        },
    }


def pod_group_crd(status_subresource: bool) -> dict[str, Any]:
    """The PodGroup CRD as Koordinator and scheduler-plugins publish it (no subresources), or with
    the status subresource."""
    version: dict[str, Any] = {
        "name": "v1alpha1",
        "served": True,
        "storage": True,
        "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
    }
    if status_subresource:
        version["subresources"] = {"status": {}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {
            "name": f"podgroups.{GROUP}",
            # *.k8s.io groups need it; scheduler-plugins' CRD carries this one.
            "annotations": {"api-approved.kubernetes.io": "https://github.com/kubernetes-sigs/scheduler-plugins/pull/50"},
        },
        "spec": {
            "group": GROUP,
            "names": {"kind": "PodGroup", "plural": "podgroups", "singular": "podgroup", "shortNames": ["pg"]},
            "scope": "Namespaced",
            "versions": [version],
        },
    }


def install_crd(api: Api, status_subresource: bool) -> None:
    api.create(pod_group_crd(status_subresource))
    wait_for(
        lambda: any(
            c["type"] == "Established" and c["status"] == "True" for c in (_crd(api).get("status") or {}).get("conditions") or []
        ),
        30,
        0.1,
        what="PodGroup CRD established",
    )
    wait_for(lambda: api.request("GET", f"/apis/{GROUP}/v1alpha1/podgroups")[0] == 200, 30, 0.1, what="podgroups served")


def _crd(api: Api) -> dict[str, Any]:
    return dict(api.get(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/podgroups.{GROUP}"))


def pod_group(ns: str, name: str, min_member: int) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"minMember": min_member},
    }


def member(ns: str, name: str, group: str) -> dict[str, Any]:
    spec = {"schedulerName": "gang-scheduler"}
    return pod_doc(name, ns, "500m", "64Mi", spec=spec, labels={"pod-group.scheduling.sigs.k8s.io": group})


def node_of(api: Api, ns: str, name: str) -> str:
    return str(api.get(f"/api/v1/namespaces/{ns}/pods/{name}")["spec"].get("nodeName") or "")


def phase_of(api: Api, ns: str, name: str) -> str:
    return str((api.get(f"/apis/{GROUP}/v1alpha1/namespaces/{ns}/podgroups/{name}").get("status") or {}).get("phase") or "")


@pytest.fixture(scope="module")
def nodes(api: Api, kubelet: Kubelet) -> None:
    for i in range(2):
        kubelet.add_node(node_doc(f"node-{i}", cpu="4", memory="8Gi"))


def gangs_schedule(api: Api, engine: RemoteEngine, ns: str) -> None:
    """A gang of 2 that fits binds (its PodGroup Scheduled); a gang of 3 with 2 members waits; a
    pod of the other profile binds meanwhile; the engine keeps running."""
    namespace(api, ns)
    api.create(pod_group(ns, "fits", 2))
    api.create(pod_group(ns, "short", 3))
    for i in range(2):
        api.create(member(ns, f"fits-{i}", "fits"))
        api.create(member(ns, f"short-{i}", "short"))
    wait_for(lambda: all(node_of(api, ns, f"fits-{i}") for i in range(2)), 30, 0.1, what="the gang that fits bound")
    wait_for(lambda: phase_of(api, ns, "fits") == "Scheduled", 30, 0.1, what="PodGroup fits Scheduled")
    api.create(pod_doc("solo", ns, "100m", "64Mi", spec={"schedulerName": "plain-scheduler"}))
    wait_for(lambda: node_of(api, ns, "solo"), 30, 0.1, what="a pod of the other profile bound")
    assert not node_of(api, ns, "short-0") and not node_of(api, ns, "short-1")
    assert phase_of(api, ns, "short") in ("Pending", "PreScheduling", "Scheduling")
    assert engine.alive


@pytest.fixture
def engine(control_plane: ControlPlane, nodes: None) -> Iterator[RemoteEngine]:
    running = RemoteEngine(connect(control_plane.admin_kubeconfig), PROFILE, install_poll_seconds=0.5)
    yield running
    running.stop()


def test_crd_installed_after_start_without_status_subresource(api: Api, engine: RemoteEngine) -> None:
    # The engine started before the CRD existed: its PodGroup informer keeps looking for it.
    install_crd(api, status_subresource=False)
    gangs_schedule(api, engine, "gangs-plain")


def test_crd_with_status_subresource(api: Api, control_plane: ControlPlane, nodes: None) -> None:
    api.request("DELETE", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/podgroups.{GROUP}")  # the other form
    wait_for(
        lambda: api.request("GET", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/podgroups.{GROUP}")[0] == 404,
        60,
        0.2,
        what="CRD gone",
    )
    install_crd(api, status_subresource=True)
    running = RemoteEngine(connect(control_plane.admin_kubeconfig), PROFILE)
    try:
        gangs_schedule(api, running, "gangs-status")
    finally:
        running.stop()


KOORDINATOR_KINDS = [
    (
        "scheduling.koordinator.sh",
        "Reservation",
        {
            "metadata": {"name": "web-slot"},
            "spec": {
                "owners": [{"labelSelector": {"matchLabels": {"app": "web"}}}],
                "template": {"spec": {"containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": "1"}}}]}},
                "ttl": "0s",
            },
        },
    ),
    ("slo.koordinator.sh", "NodeMetric", {"metadata": {"name": "node-0"}, "spec": {}}),
    ("topology.node.k8s.io", "NodeResourceTopology", {"metadata": {"name": "node-0"}, "topologyPolicies": ["None"], "zones": []}),
]


def test_koordinator_crds_installed_after_start_are_picked_up(api: Api, engine: RemoteEngine) -> None:
    for group, kind, _ in KOORDINATOR_KINDS:
        api.create(crd(group, kind, namespaced=False, status_subresource=kind == "Reservation"))
    for group, kind, doc in KOORDINATOR_KINDS:
        path = f"/apis/{group}/v1alpha1/{_plural(kind)}"
        wait_for(lambda p=path: api.request("GET", p)[0] == 200, 30, 0.1, what=f"{kind} served")
        api.ok("POST", path, {"apiVersion": f"{group}/v1alpha1", "kind": kind, **doc})
    for _, kind, doc in KOORDINATOR_KINDS:
        name = doc["metadata"]["name"]
        wait_for(
            lambda k=kind, n=name: any(d["metadata"]["name"] == n for d in engine.cluster.extensions.get(k, ())),
            30,
            0.1,
            what=f"the engine sees {kind} {name}",
        )
    installed = {i.kind.kind: i.installed for i in engine.cluster.informers}
    assert all(installed[kind] for _, kind, _ in KOORDINATOR_KINDS), installed
    assert engine.alive
