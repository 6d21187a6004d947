"""End to end: the default profile decides the same with batch forms as with per-node forms only.

Random clusters (zones, labels, taints, resources, running pods) and random pending pods
(requests, nodeSelector, tolerations, spread constraints, pod (anti-)affinity, host ports)
are scheduled twice — once as built, once with every plugin's batch methods hidden — and
every attempt must agree on outcome, node, filter failures, scores and totals.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler.api.objects import Pod
from scheduler.clock import VirtualClock
from scheduler.cluster.simulated import SimulatedCluster
from scheduler.config.loader import default_config
from scheduler.plugins.registry import new_registry
from scheduler.scheduler import Scheduler
from tests.support.builders import make_node, make_pod
from tests.support.examples import examples

ZONES = ("z1", "z2", "z3")
APPS = ("web", "db", "cache")
BATCH_METHODS = ("filter_batch", "score_batch")


class PerNodeOnly:
    """A plugin with its batch methods hidden, so the runtime takes the per-node path."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.name = inner.name

    def __getattr__(self, attr: str) -> Any:
        if attr in BATCH_METHODS:
            raise AttributeError(attr)
        return getattr(self._inner, attr)


def per_node_registry() -> dict[str, Any]:
    return {
        name: (lambda f: lambda args, handle: PerNodeOnly(f(args, handle)))(factory) for name, factory in new_registry().items()
    }


@st.composite
def pending_pod(draw: st.DrawFn, index: int) -> Pod:
    app = draw(st.sampled_from(APPS))
    spec: dict[str, Any] = {}
    if draw(st.booleans()):
        spec["nodeSelector"] = {"topology.kubernetes.io/zone": draw(st.sampled_from(ZONES))}
    if draw(st.booleans()):
        spec["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
    kind = draw(st.sampled_from(["none", "spread", "anti", "affinity", "preferred"]))
    if kind == "spread":
        spec["topologySpreadConstraints"] = [
            {
                "maxSkew": draw(st.integers(1, 2)),
                "topologyKey": draw(st.sampled_from(["topology.kubernetes.io/zone", "kubernetes.io/hostname"])),
                "whenUnsatisfiable": draw(st.sampled_from(["DoNotSchedule", "ScheduleAnyway"])),
                "labelSelector": {"matchLabels": {"app": app}},
            }
        ]
    elif kind in ("anti", "affinity", "preferred"):
        term = {
            "labelSelector": {"matchLabels": {"app": draw(st.sampled_from(APPS))}},
            "topologyKey": "topology.kubernetes.io/zone",
        }
        key = "podAntiAffinity" if kind == "anti" else "podAffinity"
        if kind == "preferred":
            spec["affinity"] = {
                key: {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 50, "podAffinityTerm": term}]}
            }
        else:
            spec["affinity"] = {key: {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    if draw(st.integers(0, 5)) == 0:
        spec["containers"] = [
            {
                "name": "c",
                "image": "nginx",
                "ports": [{"containerPort": 80, "hostPort": 8080}],
                "resources": {"requests": {"cpu": "200m"}},
            }
        ]
        return make_pod(f"p{index}", labels={"app": app}, spec=spec)
    cpu = draw(st.sampled_from(["100m", "500m", "1", "2", None]))
    return make_pod(
        f"p{index}",
        cpu=cpu,
        memory=draw(st.sampled_from(["128Mi", "1Gi", None])),
        labels={"app": app},
        spec=spec,
        priority=draw(st.integers(0, 2)) * 100,
    )


@st.composite
def clusters(draw: st.DrawFn) -> tuple[list[Any], list[Pod], list[Pod]]:
    nodes = []
    for i in range(draw(st.integers(2, 8))):
        taints = (
            [{"key": "dedicated", "value": "x", "effect": draw(st.sampled_from(["NoSchedule", "PreferNoSchedule"]))}]
            if draw(st.integers(0, 3)) == 0
            else []
        )
        labels = {"topology.kubernetes.io/zone": ZONES[i % 3]} if draw(st.integers(0, 5)) else {}
        images = [(["nginx:latest"], 300 * 1024 * 1024)] if draw(st.booleans()) else []
        nodes.append(
            make_node(
                f"n{i}", cpu=draw(st.sampled_from(["1", "2", "4"])), memory="4Gi", labels=labels, taints=taints, images=images
            )
        )
    running = [
        make_pod(
            f"r{j}", cpu="500m", node_name=f"n{draw(st.integers(0, len(nodes) - 1))}", labels={"app": draw(st.sampled_from(APPS))}
        )
        for j in range(draw(st.integers(0, 6)))
    ]
    pending = [draw(pending_pod(k)) for k in range(draw(st.integers(1, 6)))]
    return nodes, running, pending


def decisions(registry: dict[str, Any], nodes: list[Any], running: list[Pod], pending: list[Pod]) -> list[tuple[Any, ...]]:
    clock = VirtualClock(1767225600.0)
    cluster = SimulatedCluster(clock=clock)
    for node in nodes:
        cluster.nodes[node.name] = node
    for pod in running + pending:
        cluster.pods[pod.uid] = pod
    sched = Scheduler(default_config(), cluster, clock, registry, seed=3)
    sched.start()
    sched.run(max_attempts=40)
    return [
        (r.pod, r.attempt, r.outcome, r.node, r.nominated_node, r.message, r.filter_failures(), r.scores(), r.totals())
        for r in sched.records
    ]


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_batch_and_per_node_paths_decide_the_same(cluster: tuple[list[Any], list[Pod], list[Pod]]) -> None:
    nodes, running, pending = cluster
    assert decisions(new_registry(), nodes, running, pending) == decisions(per_node_registry(), nodes, running, pending)
