"""How often an unschedulable pod is attempted while other pods come and go (the demo's rhythm).

Upstream rules (kubernetes/kubernetes v1.35.4): NodeResourcesFit's hint queues a pod it rejected
on any deletion of an assigned pod (`noderesources/fit.go`, `isSchedulableAfterPodEvent`); the
queue moves it to backoffQ while its backoff (1 s doubling to 10 s since the last attempt) runs
(`scheduling_queue.go`, `moveToActiveOrBackoffQueue`); with SchedulerPopFromBackoffQ (beta, on
since v1.33) an empty activeQ pops the backoffQ pod at once (`backoff_queue.go`, `popBackoff`).
So in an otherwise idle scheduler the pod is attempted once per deletion, not once per backoff.
benchmarks/queue_rhythm.py counts the same on the real kube-scheduler (docs/architecture.md).
"""

from __future__ import annotations

import pytest

from scheduler.clock import VirtualClock
from scheduler.cluster.simulated import SimulatedCluster
from scheduler.config.features import parse_feature_gates
from scheduler.config.loader import default_config
from scheduler.plugins.registry import new_registry
from scheduler.scheduler import Scheduler
from tests.support.builders import make_node, make_pod

START = 1767225600.0
SECONDS = 120


def attempts_of_big(gates: str) -> int:
    """Every second a small pod arrives and the one from three seconds before is deleted."""
    clock = VirtualClock(START)
    cluster = SimulatedCluster(clock=clock)
    for i in range(3):
        cluster.nodes[f"n{i}"] = make_node(f"n{i}", cpu="4")
    sched = Scheduler(default_config(), cluster, clock, new_registry(), seed=1, feature_gates=parse_feature_gates(gates))
    sched.start()
    cluster.add_pod(make_pod("big", cpu="8"))
    churn = []
    for i in range(SECONDS):
        if clock.now() < START + i:
            clock.advance_to(START + i)
        churn.append(make_pod(f"churn-{i}", cpu="100m"))
        cluster.add_pod(churn[-1])
        if i >= 3:
            cluster.delete_pod(cluster.pods[churn[i - 3].uid])
        sched.run(until=START + i + 1)
    return sum(1 for r in sched.records if r.pod == "default/big")


@pytest.mark.parametrize(
    ("gates", "want"),
    [
        # The first attempt, then one per deletion (117): the demo's "about once a second".
        ("", 1 + SECONDS - 3),
        # Without popping from backoffQ the backoff paces it: 1, 2, 4 and 8 s, then every 10 s.
        ("SchedulerPopFromBackoffQ=false", 15),
    ],
    ids=["pop-from-backoffq", "backoff-only"],
)
def test_an_unschedulable_pod_is_retried_once_per_assigned_pod_deletion(gates: str, want: int) -> None:
    assert attempts_of_big(gates) == want
