"""Shadow mode beside the real kube-scheduler on a real control plane (../shared/k8s): a workload
whose decisions are not trivial (nodes of four sizes in three zones, two of them tainted, pods
with varied requests, node affinity, topology spread, inter-pod (anti-)affinity, tolerations and
priorities), our shadow recorder watching while kube-scheduler (the default profile,
`percentageOfNodesToScore: 100`, DynamicResources off) binds every pod. Used by
`tests/realcluster/test_shadow.py` (a small run) and `benchmarks/shadow_agreement.py` (500 pods).
"""

from __future__ import annotations

import random
import threading
from typing import Any

from scheduler.clock import Clock
from scheduler.config.loader import parse_config
from scheduler.kube.backend import KubernetesCluster
from scheduler.kube.client import connect
from scheduler.kube.shadow import ShadowRecorder
from scheduler.plugins.registry import new_registry
from scheduler.scheduler import Scheduler
from tests.support.builders import node_doc, pod_doc
from tests.support.controlplane import Api, ControlPlane, Kubelet, namespace
from tests.support.waits import wait_for

DEFAULT = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
SIZES = (("4", "16Gi"), ("8", "32Gi"), ("16", "64Gi"), ("32", "128Gi"))
IMAGES = ("registry.k8s.io/app-a:1", "registry.k8s.io/app-b:1", "registry.k8s.io/app-c:1")


def shadow_nodes(count: int) -> list[dict[str, Any]]:
    """`count` nodes: sizes 4-32 CPUs, three zones, an ssd label on every third, a few images
    present, node 1 tainted NoSchedule (dedicated=batch) and node 2 PreferNoSchedule."""
    docs = []
    for i in range(count):
        cpu, memory = SIZES[i % len(SIZES)]
        labels = {ZONE: f"zone-{i % 3}", **({"disk": "ssd"} if i % 3 == 0 else {})}
        taints = []
        if i == 1:
            taints.append({"key": "dedicated", "value": "batch", "effect": "NoSchedule"})
        if i == 2:
            taints.append({"key": "spot", "value": "true", "effect": "PreferNoSchedule"})
        images = [{"names": [IMAGES[i % 3]], "sizeBytes": 300 * 1024 * 1024}] if i % 2 == 0 else []
        docs.append(node_doc(f"node-{i:02d}", cpu=cpu, memory=memory, labels=labels, spec={"taints": taints}, images=images))
    return docs


def shadow_pods(count: int, ns: str, seed: int = 1) -> list[dict[str, Any]]:
    """`count` pods of varied shape: requests from 100m to 1 CPU and 128Mi to 4Gi, an app label
    out of eight, and by turns preferred node affinity (ssd, a zone), a zone topology spread
    (ScheduleAnyway) or hostname spread (DoNotSchedule), preferred anti-affinity to its own app,
    a toleration of the batch taint, a higher priority."""
    rng = random.Random(seed)
    docs = []
    for i in range(count):
        app = f"app-{rng.randrange(8)}"
        cpu = rng.choice(("100m", "200m", "250m", "500m", "750m", "1"))
        memory = rng.choice(("128Mi", "256Mi", "512Mi", "1Gi", "2Gi", "4Gi"))
        spec: dict[str, Any] = {}
        kind = i % 8
        selector = {"matchLabels": {"app": app}}
        if kind == 1:
            term = {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]}
            spec["affinity"] = {
                "nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 60, "preference": term}]}
            }
        elif kind == 2:
            spec["topologySpreadConstraints"] = [
                {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": selector}
            ]
        elif kind == 3:
            term = {"weight": 50, "podAffinityTerm": {"topologyKey": HOST, "labelSelector": selector}}
            spec["affinity"] = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [term]}}
        elif kind == 4:
            spec["tolerations"] = [{"key": "dedicated", "operator": "Equal", "value": "batch", "effect": "NoSchedule"}]
        elif kind == 5:
            spec["topologySpreadConstraints"] = [
                {
                    "maxSkew": 2,
                    "topologyKey": HOST,
                    "whenUnsatisfiable": "DoNotSchedule",
                    "labelSelector": selector,
                    "nodeTaintsPolicy": "Honor",
                }
            ]
        elif kind == 6:
            zone = f"zone-{rng.randrange(3)}"
            term = {"matchExpressions": [{"key": ZONE, "operator": "In", "values": [zone]}]}
            spec["affinity"] = {
                "nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 30, "preference": term}]}
            }
        elif kind == 7:
            term = {"weight": 40, "podAffinityTerm": {"topologyKey": ZONE, "labelSelector": selector}}
            spec["affinity"] = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [term]}}
        image = IMAGES[rng.randrange(3)] if rng.random() < 0.5 else "registry.k8s.io/pause:3.10"
        docs.append(pod_doc(f"p-{i:04d}", ns, cpu, memory, image=image, spec=spec, labels={"app": app}))
    return docs


def decided(api: Api, ns: str) -> int:
    """How many pods of `ns` kube-scheduler has bound or found unschedulable."""
    count = 0
    for pod in api.items(f"/api/v1/namespaces/{ns}/pods"):
        conditions = (pod.get("status") or {}).get("conditions") or []
        refused = any(c.get("type") == "PodScheduled" and c.get("status") == "False" for c in conditions)
        count += bool(pod["spec"].get("nodeName") or refused)
    return count


def run_shadow(
    control_plane: ControlPlane, api: Api, kubelet: Kubelet, nodes: int, pods: int, ns: str = "shadow", seed: int = 1
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Nodes registered, our shadow watching, kube-scheduler started, the pods created at once;
    waits until every pod is settled (or missed). The shadow's report and the pods' events."""
    namespace(api, ns)
    for doc in shadow_nodes(nodes):
        kubelet.add_node(doc)
    cluster = KubernetesCluster.open(connect(control_plane.admin_kubeconfig), Clock(), shadow=True)
    cluster.record_events = False
    scheduler = Scheduler(parse_config(DEFAULT, "shadow"), cluster, cluster.clock, new_registry(), seed=1, keep_records=False)
    scheduler.start()
    recorder = ShadowRecorder(scheduler, "default-scheduler", keep=pods)
    recorder.start(cluster)
    cluster.watch_all()
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            if not scheduler.step():
                stop.wait(0.005)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    kube_scheduler = control_plane.kube_scheduler(control_plane.kube_scheduler_config(percentage_of_nodes_to_score=100))
    docs = shadow_pods(pods, ns, seed)
    try:
        wait_for(lambda: all(i.watches for i in cluster.informers if i.installed), 10, 0.05, what="the informers watching")
        for doc in docs:
            api.create(doc)
        wait_for(lambda: decided(api, ns) >= len(docs), 60 + pods * 0.5, 0.5, what="every pod bound or refused")
        bound = sum(1 for pod in api.items(f"/api/v1/namespaces/{ns}/pods") if pod["spec"].get("nodeName"))
        wait_for(lambda: recorder.settled + recorder.missed >= bound, 60, 0.2, what="every bound pod settled")
    finally:
        kube_scheduler.terminate()
        kube_scheduler.wait(30)
        stop.set()
        thread.join(10)
        scheduler.shutdown()
        cluster.close()
    return recorder.report(), api.items(f"/apis/events.k8s.io/v1/namespaces/{ns}/events")
