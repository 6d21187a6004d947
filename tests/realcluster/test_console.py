"""The console in cluster mode against a real kube-apiserver: it takes the Lease, binds the pods
naming its profiles, and on SIGTERM releases the Lease (a console started next leads at once,
instead of waiting out the old holder's lease)."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import pytest

from tests.support.builders import node_doc, pod_doc
from tests.support.controlplane import Api, ControlPlane, Kubelet, namespace
from tests.support.servers import ConsoleProcess, start_console
from tests.support.waits import wait_for

pytestmark = pytest.mark.realcluster
LEASE = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/schedconsole"


def lease(api: Api) -> dict[str, Any]:
    status, body = api.request("GET", LEASE)
    return dict(body["spec"]) if status == 200 else {}


def cluster_console(control_plane: ControlPlane, var: Path) -> ConsoleProcess:
    env = {
        "SCHEDCONSOLE_MODE": "cluster",
        "SCHEDCONSOLE_KUBECONFIG": control_plane.admin_kubeconfig,
        "SCHEDCONSOLE_DEMO": "false",
    }
    var.mkdir(parents=True, exist_ok=True)
    return start_console(var, env)


def test_cluster_mode_binds_and_releases_the_lease_on_sigterm(
    control_plane: ControlPlane, api: Api, kubelet: Kubelet, tmp_path: Path
) -> None:
    namespace(api, "console")
    kubelet.add_node(node_doc("node-0", cpu="4"))
    first = cluster_console(control_plane, tmp_path / "first")
    try:
        holder = wait_for(lambda: lease(api).get("holderIdentity"), 30, 0.2, what="the console holds the Lease")
        api.create(pod_doc("web", "console", "100m", "64Mi"))  # default-scheduler: the console's profile
        wait_for(lambda: api.get("/api/v1/namespaces/console/pods/web")["spec"].get("nodeName"), 30, 0.2, what="bound")
        first.proc.send_signal(signal.SIGTERM)
        assert first.proc.wait(60) == 0, first.log.read_text()[-3000:]
    finally:
        first.stop()
    released = lease(api)
    assert not released.get("holderIdentity") and released.get("leaseDurationSeconds") == 1, released
    second = cluster_console(control_plane, tmp_path / "second")
    try:
        taken = wait_for(lambda: lease(api).get("holderIdentity"), 10, 0.2, what="the next console leads at once")
        assert taken != holder
    finally:
        second.stop()
