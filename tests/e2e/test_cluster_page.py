"""The cluster page in headless Chromium: a console in shadow mode shows its mode, API server,
informers, agreement rate and the disagreeing pods with both score rows; a simulated console
starts and stops the continuous sync of the same live cluster from the page.

The live cluster is `scheduler.apiserver.httpserver` (the API over plain HTTP), where the test plays
the cluster's own scheduler by creating Bindings.
"""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import PASSWORD, login
from tests.e2e.test_dashboard import shoot
from tests.support.builders import node_doc, pod_doc
from tests.support.servers import ROOT, ConsoleProcess, start_console
from tests.support.waits import wait_for

pytestmark = pytest.mark.e2e

pytest.importorskip("kubernetes")


def _send(url: str, method: str, body: Any = None, token: str = "") -> Any:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Token {token}"
    data = json.dumps(body).encode() if body is not None else None
    with urllib.request.urlopen(urllib.request.Request(url, data=data, method=method, headers=headers), timeout=20) as answer:
        return json.loads(answer.read())


def _start_console(var: Path, env_extra: dict[str, str]) -> ConsoleProcess:
    return start_console(var, {"SCHEDCONSOLE_ADMIN_PASSWORD": PASSWORD, "SCHEDCONSOLE_DEMO": "false", **env_extra})


def _node(name: str, cpu: str) -> dict[str, Any]:
    return node_doc(name, cpu, "32Gi")


def _pod(name: str) -> dict[str, Any]:
    return pod_doc(name, "default", "500m", "256Mi")


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The live cluster (two nodes, a small and a big one) and a kubeconfig naming it."""
    var = tmp_path_factory.mktemp("live")
    cluster = var / "cluster.json"
    cluster.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [_node("small", "4"), _node("big", "32")]}))
    proc = subprocess.Popen(
        [sys.executable, "-m", "scheduler.apiserver.httpserver", "--cluster", str(cluster)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().split(": ", 1)[1].strip()
    kubeconfig = var / "kubeconfig"
    kubeconfig.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "live", "cluster": {"server": url}}],
                "users": [{"name": "u", "user": {"token": "unused"}}],
                "contexts": [{"name": "live", "context": {"cluster": "live", "user": "u"}}],
                "current-context": "live",
            }
        )
    )
    try:
        yield url, kubeconfig
    finally:
        proc.terminate()
        proc.wait(10)


def test_shadow_mode_page(live: tuple[str, Path], browser: Any, tmp_path: Path) -> None:
    url, kubeconfig = live
    console = _start_console(tmp_path, {"SCHEDCONSOLE_MODE": "shadow", "SCHEDCONSOLE_KUBECONFIG": str(kubeconfig)})
    try:
        status = lambda: _send(console.url + "/api/cluster/", "GET", token=console.token)  # noqa: E731
        names = [f"shadow-{i}" for i in range(3)]
        for name in names:
            _send(url + "/api/v1/namespaces/default/pods", "POST", _pod(name))
        wait_for(lambda: status()["shadow"]["waiting"] >= len(names), 30, 0.2, what="the shadow saw the pods pending")
        # The cluster's own scheduler packs every pod onto the small node; ours spreads to the big one.
        for name in names:
            binding = {
                "apiVersion": "v1",
                "kind": "Binding",
                "metadata": {"name": name},
                "target": {"kind": "Node", "name": "small"},
            }
            _send(url + f"/api/v1/namespaces/default/pods/{name}/binding", "POST", binding)
        report = wait_for(lambda: (s := status()["shadow"])["compared"] >= len(names) and s, 30, 0.2, what="every pod settled")
        assert report["disagreements"], report

        page = login(browser, console)
        page.click("nav >> text=Cluster")
        page.wait_for_selector("#shadow")
        assert page.inner_text("#mode") == "shadow mode"
        assert url in page.inner_text("#engine-cluster")
        informers = page.inner_text("#informers")
        assert "Pod" in informers and "synced" in informers
        rate = page.inner_text("#shadow .rate")
        assert rate.endswith("%") and rate == f"{round(report['profiles']['default-scheduler']['agreementRate'] * 100)}%"
        first = page.locator(".disagreement").first
        assert "the cluster chose small" in first.inner_text()
        assert first.locator("tr.ours td").nth(1).inner_text() == "big"
        assert first.locator("tr.theirs td").nth(1).inner_text() == "small"
        assert "NodeResourcesFit" in first.locator("thead").inner_text()
        assert page.locator("#sync").count() == 0  # the sync belongs to simulated mode
        shoot(page, "cluster-shadow")
        page.close()
    finally:
        console.stop(20)


def test_sync_started_and_stopped_from_the_page(live: tuple[str, Path], browser: Any, tmp_path: Path) -> None:
    url, kubeconfig = live
    placed = _pod("placed")
    placed["spec"]["nodeName"] = "small"
    _send(url + "/api/v1/namespaces/default/pods", "POST", placed)
    console = _start_console(tmp_path, {"SCHEDCONSOLE_KUBECONFIG": str(kubeconfig)})
    try:
        page = login(browser, console)
        page.goto(console.url + "/cluster/")
        assert page.inner_text("#mode") == "simulated mode"
        assert "Not started" in page.inner_text("#sync")
        page.check("input[name=bindings][value=keep]")
        page.click("button[value=start]")
        page.wait_for_selector("#sync-state")

        def mirrored() -> bool:
            page.goto(console.url + "/cluster/")
            return page.inner_text("#sync-state") == "running" and "Node: 2" in page.inner_text("#mirrored")

        wait_for(mirrored, 30, 0.2, what="the live nodes mirrored")
        assert url in page.inner_text("#sync")
        # The live cluster's pods arrive too, bound where the live cluster bound them.
        nodes = {n["name"] for n in _send(console.url + "/api/nodes/", "GET", token=console.token)["results"]}
        assert nodes == {"small", "big"}
        pod = _send(console.url + "/api/pods/default/placed/", "GET", token=console.token)
        assert pod["node"] == "small"
        shoot(page, "cluster-sync")
        page.click("button[value=stop]")
        page.wait_for_selector(".messages")
        assert page.inner_text("#sync-state") == "stopped"
        page.close()
    finally:
        console.stop(20)
