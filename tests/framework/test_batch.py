"""Opportunistic batching (KEP-5598): the batch's rules, pod signatures, and the loop with the gate on and off.

The table of `test_batch_basic` is upstream's `TestBatchBasic`, kubernetes/kubernetes
`pkg/scheduler/framework/runtime/batch_test.go` at 150ed9fc (the rules v1.35.4 ships): a test
Filter lets a node hold one pod whose name starts with "b" ("blocking" pods) and any number of
the others.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from scheduler.api.objects import Pod
from scheduler.clock import VirtualClock
from scheduler.cluster.simulated import SimulatedCluster
from scheduler.config.features import parse_feature_gates
from scheduler.config.loader import default_config, parse_config
from scheduler.framework import signers
from scheduler.framework.batch import (
    FLUSH_NODE_NOT_FULL,
    FLUSH_POD_INCOMPATIBLE,
    FLUSH_POD_NOT_BATCHABLE,
    FLUSH_POD_SKIPPED,
    MAX_BATCH_AGE,
    OpportunisticBatch,
    SortedNodes,
    batchable_plugins,
    sign_pod,
)
from scheduler.framework.nodeinfo import NodeInfo
from scheduler.framework.types import CycleState, Status, success, unschedulable
from scheduler.plugins.registry import new_registry
from scheduler.scheduler import Scheduler
from tests.support.builders import make_node, make_pod, make_snapshot

START = 1767225600.0


class SigSigner:
    """Signs a pod with its `sig` label ("" refuses, as a plugin that cannot sign)."""

    name = "SigSigner"

    def sign_pod(self, pod: Pod) -> signers.Signed:
        sig = pod.labels.get("sig", "")
        return signers.signed(("sig", sig)) if sig else signers.refused("no signature")


def blocking_filter(state: CycleState, pod: Pod, info: NodeInfo) -> Status:
    """`BatchTestPlugin.Filter`: a blocking pod does not fit a node holding another blocking pod."""
    if pod.name.startswith("b") and any(p.pod.name.startswith("b") for p in info.pods):
        return unschedulable("unsched")
    return success()


@dataclass
class Case:
    first: str
    first_sig: str
    first_scheduled: bool
    first_chosen: str
    first_others: list[str] | None
    second: str
    second_sig: str
    second_chosen: str
    want_hint: str
    skip_pod: bool = False
    want_state: list[str] | None = None


CASES = {
    "a second pod with the same signature gets a hint": Case("b-1", "sig", True, "n3", ["n1"], "b-2", "sig", "n1", "n1"),
    "a second pod with a different signature doesn't get a hint": Case("a-1", "sig", True, "n3", ["n1"], "a-2", "sig2", "n1", ""),
    "a second pod doesn't get a hint if it's not 1-pod-per-node": Case("a-1", "sig", True, "n3", ["n1"], "a-2", "sig", "n1", ""),
    "pod doesn't get hint if previous pod didn't scheduled": Case("b-1", "sig", False, "n3", ["n1"], "b-2", "sig", "n1", ""),
    "empty list": Case("b-1", "sig", True, "n3", [], "b-2", "sig", "n4", ""),
    "nil list": Case("b-1", "sig", True, "n3", None, "b-2", "sig", "n4", ""),
    "pod doesn't get hint because the previous pod is to a different profile": Case(
        "b-1", "sig", True, "n3", ["n1"], "b-2", "sig", "n1", "", skip_pod=True
    ),
    "pod uses batch from preceding pod and leaves remaining batch to next pod": Case(
        "b-1", "sig", True, "n3", ["n1", "n2"], "b-2", "sig", "n1", "n1", want_state=["n2"]
    ),
}


@pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))
def test_batch_basic(case: Case) -> None:
    first = make_pod(case.first, labels={"sig": case.first_sig})
    clock = VirtualClock(START)
    # The node the first pod took holds it when the second pod comes.
    held = make_pod(case.first, labels={"sig": case.first_sig}, node_name=case.first_chosen)
    snap = make_snapshot([make_node(case.first_chosen)], [held])
    batch = OpportunisticBatch("p", [SigSigner()], clock.now, blocking_filter, snap.get)
    state = CycleState()

    hint, signature = batch.get_node_hint(state, first, 1)
    assert hint == ""
    if case.first_scheduled:
        others = SortedNodes.of(case.first_others) if case.first_others is not None else None
        batch.store_schedule_results(signature, hint, case.first_chosen, others, 1)

    cycle = 3 if case.skip_pod else 2
    second = make_pod(case.second, labels={"sig": case.second_sig})
    hint, signature = batch.get_node_hint(state, second, cycle)
    assert hint == case.want_hint
    batch.store_schedule_results(signature, hint, case.second_chosen, None, cycle)

    left = batch.state.nodes.remaining() if batch.state is not None else []
    assert left == (case.want_state or [])
    if case.want_state:
        assert batch.state is not None and batch.state.signature == (
            ("sig", case.second_sig),
            ("v1.Pod.Spec.SchedulerName", "default-scheduler"),
        )


def _batch_after_first(first_sig: str = "sig") -> tuple[OpportunisticBatch, VirtualClock, CycleState]:
    clock = VirtualClock(START)
    held = make_pod("b-1", labels={"sig": first_sig}, node_name="n3")
    snap = make_snapshot([make_node("n3")], [held])
    batch = OpportunisticBatch("p", [SigSigner()], clock.now, blocking_filter, snap.get)
    state = CycleState()
    _, signature = batch.get_node_hint(state, make_pod("b-1", labels={"sig": first_sig}), 1)
    batch.store_schedule_results(signature, "", "n3", SortedNodes.of(["n1", "n2"]), 1)
    return batch, clock, state


def test_a_list_older_than_max_batch_age_is_dropped() -> None:
    batch, clock, state = _batch_after_first()
    clock.advance_to(START + MAX_BATCH_AGE + 0.001)
    hint, _ = batch.get_node_hint(state, make_pod("b-2", labels={"sig": "sig"}), 2)
    assert hint == ""
    assert batch.flushes == {"expired": 1}


@pytest.mark.parametrize(
    ("second", "cycle", "reason"),
    [
        ("a-2", 2, FLUSH_NODE_NOT_FULL),  # fits beside the first pod: the list's order is unknown
        ("b-2", 4, FLUSH_POD_SKIPPED),
    ],
    ids=["node-not-full", "pod-skipped"],
)
def test_flush_reasons(second: str, cycle: int, reason: str) -> None:
    batch, _, state = _batch_after_first()
    hint, _ = batch.get_node_hint(state, make_pod(second, labels={"sig": "sig"}), cycle)
    assert hint == ""
    assert batch.flushes == {reason: 1}
    assert batch.attempts == {"no_hint": 2}


def test_an_unsignable_pod_gets_no_hint_and_drops_nothing_until_stored() -> None:
    batch, _, state = _batch_after_first()
    hint, signature = batch.get_node_hint(state, make_pod("b-2"), 2)
    assert (hint, signature) == ("", None)
    assert batch.flushes == {FLUSH_POD_INCOMPATIBLE: 1}
    batch.store_schedule_results(signature, hint, "n1", SortedNodes.of(["n2"]), 2)
    assert batch.state is None and batch.flushes[FLUSH_POD_NOT_BATCHABLE] == 1


# ----- signatures ---------------------------------------------------------------------------------
DEFAULT = default_config()


def default_signers(**args: Any) -> list[Any] | None:
    sched = _scheduler(DEFAULT if not args else _config(**args), nodes=1)
    return batchable_plugins(sched.profiles["default-scheduler"].points, False)


def _config(pts_list: bool = True, ignore_preferred: bool = False) -> Any:
    plugin_config = []
    if pts_list:
        plugin_config.append({"name": "PodTopologySpread", "args": {"defaultingType": "List"}})
    if ignore_preferred:
        plugin_config.append({"name": "InterPodAffinity", "args": {"ignorePreferredTermsOfExistingPods": True}})
    doc = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": plugin_config}],
    }
    return parse_config(doc, "config.yaml")


def test_the_default_profile_signs_nothing_while_system_default_spread_constraints_apply() -> None:
    # PodTopologySpread.SignPod refuses while default constraints apply, and the system defaults
    # are the default: with the default profile v1.35 batches no pod.
    signers_ = default_signers()
    assert signers_ is not None  # every default plugin implements SignPod
    assert sign_pod(signers_, make_pod("p", cpu="1")) is None


def test_every_default_plugin_signs_and_a_plugin_without_sign_pod_disables_batching() -> None:
    signers_ = default_signers(pts_list=True)
    assert signers_ is not None
    assert {p.name for p in signers_} == {
        "NodeUnschedulable",
        "NodeName",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "PodTopologySpread",
        "InterPodAffinity",
        "NodeResourcesBalancedAllocation",
        "ImageLocality",
    }

    @dataclass
    class Entry:
        name: str
        plugin: Any

    points: dict[str, list[Any]] = {"pre_filter": [], "filter": [Entry("Mine", object())], "pre_score": [], "score": []}
    assert batchable_plugins(points, False) is None
    assert batchable_plugins({"pre_filter": [], "filter": [], "pre_score": [], "score": []}, True) is None


def _sig(pod: Pod, **args: Any) -> Any:
    return sign_pod(default_signers(pts_list=True, **args), pod)


def test_equal_pods_sign_equally_and_names_uids_and_secrets_do_not_matter() -> None:
    secret = {"volumes": [{"name": "s", "secret": {"secretName": "a"}}, {"name": "e", "emptyDir": {}}]}
    other_secret = {"volumes": [{"name": "t", "secret": {"secretName": "b"}}, {"name": "e", "emptyDir": {}}]}
    a = make_pod("a", cpu="1", labels={"app": "x"}, spec=secret)
    b = make_pod("b", namespace="other", cpu="1", labels={"app": "x"}, spec=other_secret)
    assert _sig(a) is not None
    assert _sig(a) == _sig(b)


@pytest.mark.parametrize(
    ("changed", "refused"),
    [
        (make_pod("p", cpu="2", labels={"app": "x"}), False),
        (make_pod("p", cpu="1", labels={"app": "y"}), False),
        (make_pod("p", cpu="1", labels={"app": "x"}, spec={"nodeSelector": {"zone": "a"}}), False),
        (make_pod("p", cpu="1", labels={"app": "x"}, spec={"tolerations": [{"key": "k", "operator": "Exists"}]}), False),
        (make_pod("p", cpu="1", labels={"app": "x"}, spec={"volumes": [{"name": "e", "emptyDir": {}}]}), False),
        (make_pod("p", cpu="1", labels={"app": "x"}, spec={"schedulerName": "other"}), False),
        (
            make_pod(
                "p",
                cpu="1",
                labels={"app": "x"},
                spec={
                    "topologySpreadConstraints": [
                        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {}}
                    ]
                },
            ),
            True,
        ),
        (
            make_pod(
                "p",
                cpu="1",
                labels={"app": "x"},
                spec={
                    "affinity": {
                        "podAntiAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": "zone", "labelSelector": {}}]
                        }
                    }
                },
            ),
            True,
        ),
    ],
    ids=["requests", "labels", "node-selector", "tolerations", "volume", "scheduler-name", "spread", "pod-affinity"],
)
def test_what_changes_a_signature(changed: Pod, refused: bool) -> None:
    base = _sig(make_pod("p", cpu="1", labels={"app": "x"}))
    got = _sig(changed)
    assert got is None if refused else got not in (None, base)


def test_labels_are_left_out_when_only_pods_with_affinity_count() -> None:
    a = make_pod("a", cpu="1", labels={"app": "x"})
    b = make_pod("b", cpu="1", labels={"app": "y"})
    assert _sig(a, ignore_preferred=True) == _sig(b, ignore_preferred=True)


def test_order_of_tolerations_and_node_affinity_values_does_not_matter() -> None:
    def pod(tols: list[dict[str, str]], values: list[str]) -> Pod:
        term = {"matchExpressions": [{"key": "zone", "operator": "In", "values": values}]}
        spec = {
            "tolerations": tols,
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}},
        }
        return make_pod("p", cpu="1", spec=spec)

    t1, t2 = {"key": "a", "operator": "Exists"}, {"key": "b", "operator": "Exists"}
    assert _sig(pod([t1, t2], ["x", "y"])) == _sig(pod([t2, t1], ["y", "x"]))


# ----- the loop -------------------------------------------------------------------------------------
def _scheduler(config: Any, nodes: int, gates: str = "", pods: list[Pod] | None = None, seed: int = 1) -> Scheduler:
    clock = VirtualClock(START)
    cluster = SimulatedCluster(clock=clock)
    for i in range(nodes):
        # Distinct sizes: every pod has one best node, so decisions do not hang on tie-breaking.
        cluster.nodes[f"n{i}"] = make_node(f"n{i}", cpu=f"{1000 + 10 * i}m", memory=f"{2048 + 64 * i}Mi")
    for pod in pods or []:
        cluster.pods[pod.uid] = pod
    sched = Scheduler(config, cluster, clock, new_registry(), seed=seed, feature_gates=parse_feature_gates(gates))
    sched.start()
    return sched


def _run(gates: str, config: Any, count: int = 8) -> tuple[dict[str, str | None], Scheduler]:
    pods = [make_pod(f"p{i:02}", cpu="1", memory="1Gi") for i in range(count)]
    sched = _scheduler(config, nodes=10, gates=gates, pods=pods)
    sched.run()
    return {r.pod: r.node for r in sched.records}, sched


def test_pods_that_fill_a_node_each_take_the_hinted_nodes_and_decide_as_without_batching() -> None:
    on, sched = _run("", _config())
    off, plain = _run("OpportunisticBatching=false", _config())
    assert on == off
    assert len(set(on.values())) == 8
    batch = sched.batches["default-scheduler"]
    # The first pod is scored; each later one takes the next node of its list unscored.
    assert batch.batched_pods == 7
    hinted = [r for r in sched.records if r.node_hint]
    assert len(hinted) == 7 and all(r.node == r.node_hint and r.score_outcome is None for r in hinted)
    labels = {"profile": "default-scheduler", "result": "hint_used"}
    sched.metrics.exposition()
    assert sched.metrics.registry.get_sample_value("scheduler_batch_attempts_total", labels) == 7
    assert plain.batches == {}


def test_with_the_default_profile_no_pod_is_batched() -> None:
    on, sched = _run("", DEFAULT)
    off, _ = _run("OpportunisticBatching=false", DEFAULT)
    assert on == off
    assert sched.batches["default-scheduler"].batched_pods == 0
    assert not any(r.node_hint for r in sched.records)


def test_what_if_evaluations_leave_the_batch_alone() -> None:
    _, sched = _run("", _config(), count=2)
    batch = sched.batches["default-scheduler"]
    before = (batch.state.nodes.remaining() if batch.state else None, batch.last)
    sched.evaluate(make_pod("w", cpu="1", memory="1Gi"))
    assert (batch.state.nodes.remaining() if batch.state else None, batch.last) == before
