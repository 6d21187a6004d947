"""The embedded default's demo cluster: 48 nodes in 3 zones, two profiles, and a trickle of pods."""

from __future__ import annotations

import itertools
import logging
import random
import threading
from typing import Any

from schedconsole.engine import bridge
from schedconsole.engine import operations as ops
from schedconsole.engine.client import EngineCallError, call

log = logging.getLogger(__name__)
ZONES = ("zone-a", "zone-b", "zone-c")
SHAPES = (("4", "16Gi"), ("8", "32Gi"), ("16", "64Gi"))
IMAGES = (
    ("registry.k8s.io/nginx:1.27", 190_000_000),
    ("docker.io/library/redis:7.4", 140_000_000),
    ("docker.io/library/postgres:17", 450_000_000),
)
BIN_PACKING = "bin-packing"
KOORDINATOR = "koordinator"


def config_document() -> dict[str, Any]:
    """Three profiles: kube-scheduler's defaults, a bin-packing one (MostAllocated), and one with
    Koordinator's LoadAwareScheduling and Coscheduling (their REST routes appear in the console)."""
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {"schedulerName": "default-scheduler"},
            {
                "schedulerName": BIN_PACKING,
                "pluginConfig": [
                    {
                        "name": "NodeResourcesFit",
                        "args": {
                            "scoringStrategy": {
                                "type": "MostAllocated",
                                "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
                            }
                        },
                    }
                ],
            },
            {
                "schedulerName": KOORDINATOR,
                "plugins": {"multiPoint": {"enabled": [{"name": "LoadAwareScheduling"}, {"name": "Coscheduling"}]}},
            },
        ],
    }


def _node(i: int) -> dict[str, Any]:
    zone = ZONES[i % 3]
    cpu, memory = SHAPES[(i // 3) % 3]
    name = f"node-{i:02d}"
    labels = {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone, "kubernetes.io/os": "linux"}
    taints = []
    if i in (45, 46, 47):
        labels["accelerator"] = "gpu"
        taints.append({"key": "dedicated", "value": "gpu", "effect": "NoSchedule"})
    if i in (5, 17, 29):
        taints.append({"key": "maintenance", "value": "soon", "effect": "PreferNoSchedule"})
    images = [{"names": [img], "sizeBytes": size} for j, (img, size) in enumerate(IMAGES) if (i + j) % 4 == 0]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "spec": {"taints": taints} if taints else {},
        "status": {
            "allocatable": {"cpu": cpu, "memory": memory, "pods": "110"},
            "capacity": {"cpu": cpu, "memory": memory, "pods": "110"},
            "images": images,
        },
    }


def _pod(name: str, namespace: str, cpu: str, memory: str, **extra: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [
            {"name": "main", "image": extra.pop("image", IMAGES[0][0]), "resources": {"requests": {"cpu": cpu, "memory": memory}}}
        ]
    }
    labels = extra.pop("labels", {"app": name.rsplit("-", 1)[0]})
    spec.update(extra)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace, "labels": labels}, "spec": spec}


def cluster_documents(seed: int = 7) -> list[dict[str, Any]]:
    """Nodes, priority classes, pods filling about 70% of each node's CPU, and pending pods."""
    rng = random.Random(seed)
    docs: list[dict[str, Any]] = []
    for name, value in (("low", 100), ("standard", 1000), ("critical", 100000)):
        docs.append(
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": name},
                "value": value,
                "globalDefault": name == "standard",
            }
        )
    for ns in ("shop", "batch", "ml"):
        docs.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    nodes = [_node(i) for i in range(48)]
    docs.extend(nodes)
    counter = itertools.count()
    for node in nodes:
        cores = int(node["status"]["allocatable"]["cpu"])
        used = 0
        while used < cores * 700:
            milli = rng.choice((250, 500, 1000))
            pod = _pod(
                f"batch-{next(counter):03d}",
                "batch",
                f"{milli}m",
                f"{milli * 2}Mi",
                priorityClassName="low",
                nodeName=node["metadata"]["name"],
            )
            if node["spec"].get("taints") and any(t["effect"] == "NoSchedule" for t in node["spec"]["taints"]):
                pod["spec"]["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
            docs.append(pod)
            used += milli
    spread = [
        {
            "maxSkew": 1,
            "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "web"}},
        }
    ]
    for i in range(9):
        docs.append(_pod(f"web-{i}", "shop", "500m", "512Mi", labels={"app": "web"}, topologySpreadConstraints=spread))
    for i in range(4):
        docs.append(_pod(f"pack-{i}", "batch", "1", "2Gi", schedulerName=BIN_PACKING, priorityClassName="low"))
    docs.append(
        _pod(
            "trainer-0",
            "ml",
            "2",
            "8Gi",
            nodeSelector={"accelerator": "gpu"},
            tolerations=[{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}],
        )
    )
    docs.append(
        _pod("checkout-db", "shop", "12", "24Gi", priorityClassName="critical", image=IMAGES[2][0], labels={"app": "checkout-db"})
    )
    # NodeMetrics with no status: the simulated koordlet reports usage from the bound pods
    # (a different usage ratio per zone), so LoadAwareScheduling has something to weigh.
    for i, node in enumerate(nodes):
        ratio = ("0.8", "0.4", "0.2")[i % 3]
        docs.append(
            {
                "apiVersion": "slo.koordinator.sh/v1alpha1",
                "kind": "NodeMetric",
                "metadata": {"name": node["metadata"]["name"], "annotations": {"simulation.schedconsole.io/usage-ratio": ratio}},
                "spec": {"metricCollectPolicy": {"reportIntervalSeconds": 60}},
            }
        )
    # Two gangs for the koordinator profile: one that fits whole, one that never can (it waits).
    for gang, size, cpu in (("train-a", 4, "500m"), ("train-huge", 3, "20")):
        for i in range(size):
            annotations = {"gang.scheduling.koordinator.sh/name": gang, "gang.scheduling.koordinator.sh/min-available": str(size)}
            pod = _pod(f"{gang}-{i}", "ml", cpu, "2Gi", schedulerName=KOORDINATOR, labels={"app": gang})
            pod["metadata"]["annotations"] = annotations
            docs.append(pod)
    return [bridge.with_defaults(d, d["kind"]) for d in docs]


def trickle_pod(n: int, rng: random.Random) -> dict[str, Any]:
    """The n-th pod of the demo's steady arrivals: web pods, bin-packed batch jobs, now and then one that must preempt."""
    if n % 40 == 39:
        doc = _pod(f"urgent-{n}", "shop", "6", "8Gi", priorityClassName="critical", labels={"app": "urgent"})
    elif n % 3 == 2:
        doc = _pod(
            f"job-{n}",
            "batch",
            rng.choice(("250m", "500m", "1")),
            "1Gi",
            schedulerName=BIN_PACKING,
            priorityClassName="low",
            labels={"app": "job"},
        )
    else:
        doc = _pod(
            f"web-t{n}",
            "shop",
            rng.choice(("100m", "200m", "400m")),
            "256Mi",
            labels={"app": "web-trickle"},
            image=rng.choice(IMAGES)[0],
        )
    return bridge.with_defaults(doc, "Pod")


class Trickle:
    """Creates demo pods at a steady rate (through the engine, like any client) and deletes the oldest."""

    def __init__(self, per_second: float, keep: int = 200) -> None:
        self.interval = 1.0 / per_second
        self.keep = keep
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="schedconsole-demo-trickle", daemon=True)
        self._created: list[tuple[str, str]] = []

    def start(self) -> None:
        """Start creating pods."""
        self._thread.start()

    def stop(self) -> None:
        """Stop creating pods."""
        self._stop.set()
        self._thread.join(5)

    def _run(self) -> None:
        rng = random.Random()
        n = rng.randrange(1_000_000)
        while not self._stop.wait(self.interval):
            n += 1
            doc = trickle_pod(n, rng)
            try:
                call(ops.Create(documents=[doc], source="demo trickle"))
                self._created.append((doc["metadata"]["namespace"], doc["metadata"]["name"]))
                if len(self._created) > self.keep:
                    namespace, name = self._created.pop(0)
                    call(ops.DeletePod(namespace=namespace, name=name))
            except EngineCallError as exc:
                if exc.status >= 500:
                    log.warning("demo trickle: %s", exc.message)
