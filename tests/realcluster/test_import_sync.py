"""`import_cluster` from a real kube-apiserver, then the continuous sync from it, then a restart:
every object is stored once (the sync updates what the import wrote, it adds no second copy), and
the restarted console starts."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from django.core.management import call_command

from schedconsole.cluster.models import ClusterObject
from schedconsole.engine import operations as ops
from tests.console.conftest import _console_settings, start_engine  # noqa: F401  # the console's fixtures
from tests.support.builders import node_doc, pod_doc
from tests.support.controlplane import Api, ControlPlane, Kubelet, namespace
from tests.support.waits import wait_for

pytestmark = pytest.mark.realcluster
NS = "shop"


def stored() -> Counter[tuple[str, str, str]]:
    return Counter(ClusterObject.objects.filter(deleted=False).values_list("kind", "namespace", "name"))


def test_import_then_sync_then_restart_stores_each_object_once(
    control_plane: ControlPlane,
    api: Api,
    kubelet: Kubelet,
    start_engine: Any,  # noqa: F811  # the console fixture imported above
) -> None:
    namespace(api, NS)
    kubelet.add_node(node_doc("n1", cpu="4"))
    api.create({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "shop-high"}, "value": 1000})
    api.create(
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "web", "namespace": NS},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
        }
    )
    api.create(pod_doc("web-0", NS, "100m", "64Mi", node_name="n1", labels={"app": "web"}))
    kubeconfig = control_plane.admin_kubeconfig

    call_command("import_cluster", kubeconfig=kubeconfig)  # no engine running: straight into the database
    imported = stored()
    assert imported[("PriorityClass", "", "system-cluster-critical")] == 1
    assert imported[("PodDisruptionBudget", NS, "web")] == 1

    host = start_engine()
    host.call(ops.StartSync(kubeconfig=kubeconfig))
    wait_for(lambda: (host.call(ops.GetSyncStatus()) or {}).get("state") == "running", 30, 0.1, what="the sync listed")
    api.create({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "shop-low"}, "value": 10})
    wait_for(lambda: stored()[("PriorityClass", "", "shop-low")] == 1, 30, 0.1, what="a later PriorityClass mirrored")
    status = host.call(ops.GetSyncStatus())
    assert status["failures"] == 0, status
    host.stop()

    twice = {key: n for key, n in stored().items() if n > 1}
    assert not twice, f"stored more than once: {twice}"
    host = start_engine()  # was: duplicate PriorityClass 'system-cluster-critical' (first in database document ...)
    assert host.running and not host.failed
