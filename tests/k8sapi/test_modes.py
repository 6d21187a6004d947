"""The console in cluster and shadow mode, against another console's /k8s as the live cluster."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.k8sapi.conftest import Console, start_console
from tests.k8sapi.test_backend import create, node, pod
from tests.support.waits import wait_for

pytestmark = pytest.mark.slow


def kubeconfig(live: Console, path: Path) -> Path:
    """A kubeconfig for the live console's /k8s with its admin token."""
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "live", "cluster": {"server": f"{live.url}/k8s", "insecure-skip-tls-verify": True}}],
                "users": [{"name": "admin", "user": {"token": live.token}}],
                "contexts": [{"name": "live", "context": {"cluster": "live", "user": "admin"}}],
                "current-context": "live",
            }
        )
    )
    return path


def test_shadow_and_cluster_modes(tmp_path_factory: pytest.TempPathFactory) -> None:
    procs = []
    try:
        proc, live = start_console(tmp_path_factory.mktemp("livevar"))
        procs.append(proc)
        for i, cpu in enumerate(("4", "8")):
            create(live, node(f"m-node-{i}", cpu=cpu))
        config = kubeconfig(live, tmp_path_factory.mktemp("kube") / "config")
        assert procs[0].poll() is None, "the live console exited"
        proc, shadow = start_console(
            tmp_path_factory.mktemp("shadowvar"), {"SCHEDCONSOLE_MODE": "shadow", "SCHEDCONSOLE_KUBECONFIG": str(config)}
        )
        procs.append(proc)
        proc, remote = start_console(
            tmp_path_factory.mktemp("clustervar"), {"SCHEDCONSOLE_MODE": "cluster", "SCHEDCONSOLE_KUBECONFIG": str(config)}
        )
        procs.append(proc)

        # Shadow: the live console's engine binds; the shadow compares and changes nothing.
        for i in range(4):
            create(live, pod(f"m-{i}", "default", cpu="500m", scheduler="default-scheduler"))
            wait_for(
                lambda n=f"m-{i}": live.request("GET", f"/k8s/api/v1/namespaces/default/pods/{n}")[1]["spec"].get("nodeName"),
                15,
                0.1,
                what="bound",
            )
        status = wait_for(
            lambda: (s := shadow.request("GET", "/api/cluster/")[1]) and (s["shadow"] or {}).get("compared", 0) >= 3 and s,
            20,
            0.1,
            what="compared",
        )
        assert status["mode"] == "shadow" and status["server"].endswith("/k8s")
        assert status["shadow"]["profile"] == "default-scheduler" and 0 <= status["shadow"]["agreementRate"] <= 1
        assert {i["kind"] for i in status["informers"]} >= {"Pod", "Node"}
        code, body = shadow.request("GET", "/k8s/api/v1/pods")
        assert code == 503 and "shadow mode" in body["message"]
        code, body = shadow.request("POST", "/api/pods/", pod("x", "default"))
        assert code == 400 and "shadow mode" in str(body)

        # Cluster mode: the remote console schedules pods naming its profile, while holding the Lease.
        profile = {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "remote-scheduler"}],
        }
        code, body = remote.request("POST", "/api/profiles/", {"document": profile, "comment": "take over remote-scheduler"})
        assert code == 201, body
        wait_for(lambda: remote.request("GET", "/api/cluster/")[1]["leading"], 30, 0.1, what="the remote console leads")
        create(live, pod("r-0", "default", cpu="500m", scheduler="remote-scheduler"))
        bound = wait_for(
            lambda: live.request("GET", "/k8s/api/v1/namespaces/default/pods/r-0")[1]["spec"].get("nodeName"),
            20,
            0.1,
            what="r-0 bound",
        )
        assert bound in ("m-node-0", "m-node-1")
        _, lease = live.request("GET", "/k8s/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/schedconsole")
        assert lease["spec"]["holderIdentity"] and lease["spec"]["leaseDurationSeconds"] == 15
        _, events = live.request("GET", "/k8s/apis/events.k8s.io/v1/namespaces/default/events")
        assert any(e["regarding"]["name"] == "r-0" and e["reason"] == "Scheduled" for e in events["items"])
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(30)


def test_import_a_live_cluster_into_the_simulated_one(tmp_path_factory: pytest.TempPathFactory) -> None:
    import os
    import subprocess
    import sys

    from tests.support.servers import ROOT

    procs = []
    try:
        proc, live = start_console(tmp_path_factory.mktemp("importlive"))
        procs.append(proc)
        create(live, node("i-node-0"))
        create(live, pod("i-0", "default", scheduler="default-scheduler"))
        create(live, pod("i-1", "default", scheduler="nobody"))
        wait_for(
            lambda: live.request("GET", "/k8s/api/v1/namespaces/default/pods/i-0")[1]["spec"].get("nodeName"),
            15,
            0.1,
            what="i-0 bound",
        )
        config = kubeconfig(live, tmp_path_factory.mktemp("kube2") / "config")
        var = tmp_path_factory.mktemp("importvar")
        env = {
            **os.environ,
            "SCHEDCONSOLE_VAR_DIR": str(var),
            "DJANGO_SETTINGS_MODULE": "schedconsole.settings",
            "SCHEDCONSOLE_DEMO": "false",
        }
        env.pop("REDIS_URL", None)
        env.pop("DATABASE_URL", None)
        subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)
        done = subprocess.run(
            [sys.executable, "manage.py", "import_cluster", "--kubeconfig", str(config)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stderr
        assert "imported into the database" in done.stdout
        proc, copy = start_console(var)
        procs.append(proc)
        _, pods = copy.request("GET", "/api/pods/?namespace=default")
        rows = {row["name"]: row for row in pods["results"]}
        assert rows["i-0"]["node"] == "i-node-0" and rows["i-1"]["node"] is None
        _, nodes = copy.request("GET", "/api/nodes/")
        assert [n["name"] for n in nodes["results"]] == ["i-node-0"]
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(30)
