"""Shadow mode on a cluster whose pods another scheduler places (the console's own engine)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from scheduler.clock import Clock
from scheduler.config.loader import parse_config
from scheduler.kube.backend import KubernetesCluster
from scheduler.kube.shadow import ShadowRecorder
from scheduler.plugins.registry import new_registry
from scheduler.scheduler import Scheduler
from tests.k8sapi.conftest import Console, start_console
from tests.k8sapi.test_backend import create, node, pod
from tests.support.proxy import client_for
from tests.support.waits import wait_for

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")]
PROFILES = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {"schedulerName": "like-default"},
        {
            "schedulerName": "bin-packing",
            "pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}],
        },
    ],
}


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Console]:
    """A console whose engine (profile default-scheduler) places the pods: the cluster's own scheduler."""
    proc, running = start_console(tmp_path_factory.mktemp("shadowvar"))
    try:
        yield running
    finally:
        proc.terminate()
        proc.wait(30)


def test_shadow_reports_agreement_and_disagreeing_pods(live: Console) -> None:
    for i, cpu in enumerate(("4", "8", "16")):
        create(live, node(f"s-node-{i}", cpu=cpu))
    cluster = KubernetesCluster.open(client_for(f"{live.url}/k8s", live.token), Clock(), shadow=True)
    cluster.record_events = False
    sched = Scheduler(parse_config(PROFILES, "test"), cluster, cluster.clock, new_registry(), seed=1, keep_records=False)
    sched.start()
    ours = ShadowRecorder(sched, "bin-packing")
    same = ShadowRecorder(sched, "like-default")
    ours.start(cluster)
    same.start(cluster)
    cluster.watch_all()
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            if not sched.step():
                time.sleep(0.005)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        # Listed, and watching from the list's version: every pod created from here on is seen.
        wait_for(lambda: all(i.watches for i in cluster.informers if i.installed), 10, 0.01, what="the informers watching")
        for i in range(12):
            create(live, pod(f"s-{i}", "default", cpu="500m", scheduler="default-scheduler"))
            # One at a time, as pods arrive in a live cluster: each is decided before the next.
            wait_for(
                lambda n=f"s-{i}": live.request("GET", f"/k8s/api/v1/namespaces/default/pods/{n}")[1]["spec"].get("nodeName"),
                15,
                0.1,
                what="bound",
            )
        wait_for(lambda: ours.settled + ours.missed >= 12 and same.settled + same.missed >= 12, 20, 0.1, what="all settled")
    finally:
        stop.set()
        thread.join(10)
        sched.shutdown()
        cluster.close()
    packing, default = ours.report(), same.report()
    assert packing["compared"] >= 10 and default["compared"] >= 10
    # MostAllocated packs the small node; the cluster's default profile spreads to the large one.
    assert packing["agreementRate"] < default["agreementRate"]
    assert default["agreementRate"] >= 0.75
    assert packing["profiles"]["bin-packing"]["compared"] == packing["compared"]
    first = packing["disagreements"][0]
    assert first["ours"] != first["theirs"] and first["ourRow"]["node"] == first["ours"]
    assert first["theirRow"]["node"] == first["theirs"] and "NodeResourcesFit" in first["ourRow"]["plugins"]
    assert first["ourRow"]["total"] >= first["theirRow"].get("total", 0)
    # Nothing was written by the shadow: every binding is the console engine's.
    assert not any(p.node_name for p in cluster.pods.values() if p.scheduler_name == "bin-packing")
