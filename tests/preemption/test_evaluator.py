"""The evaluator's pure helpers: candidate ordering rule by rule, PDB accounting, the number of
candidates, error aggregation and the FitError text; plus a property test of victim selection.

Facts from kubernetes/kubernetes `pkg/scheduler/framework/preemption/preemption.go`
(pickOneNodeForPreemption), `plugins/defaultpreemption/default_preemption.go`
(calculateNumCandidates, filterPodsWithPDBViolation) and `pkg/scheduler/util/utils.go`
(MoreImportantPod, GetEarliestPodStartTime).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.framework.nodeinfo import PodInfo
from scheduler.framework.types import Code, Status
from scheduler.plugins.defaultpreemption import calculate_num_candidates, filter_pods_with_pdb_violation
from scheduler.preemption.evaluator import (
    Victims,
    aggregate_errors,
    dry_run_fit_error,
    earliest_start_time_of_highest_priority,
    more_important_pod,
    pick_one_node_for_preemption,
)
from tests.preemption.helpers import Env, mk_node, mk_pdb, mk_pod
from tests.support.examples import examples

NOW = 1767225600.0


def v(*pods: tuple[int, float | None], violations: int = 0) -> Victims:
    """Victims from (priority, start seconds) pairs, most important first as the dry run orders them."""
    out = []
    for i, (prio, start) in enumerate(pods):
        pod = mk_pod(f"v{i}-{prio}-{start}", priority=prio)
        pod.start_time = start
        out.append(pod)
    return Victims(out, violations)


# Each case isolates one rule: earlier rules tie, the named rule decides.
PICK_CASES: list[tuple[str, dict[str, Victims], str]] = [
    ("fewest PDB violations", {"a": v((0, 1.0), violations=2), "b": v((100, 1.0), violations=1)}, "b"),
    ("lowest highest-victim priority", {"a": v((100, 1.0)), "b": v((50, 1.0), (50, 1.0), (50, 1.0))}, "b"),
    ("smallest priority sum", {"a": v((100, 1.0), (50, 1.0)), "b": v((100, 1.0), (10, 1.0))}, "b"),
    (
        "sum is of priorities shifted by MaxInt32+1 (negative priorities)",
        {"a": v((-100, 1.0), (-100, 1.0), (-100, 1.0)), "b": v((-100, 1.0), (-100, 1.0))},
        "b",
    ),
    ("fewest victims", {"a": v((0, 1.0), (0, 1.0)), "b": v((0, 1.0), (0, 1.0))}, "a"),
    (
        "fewest victims when sums tie only by count",
        {"a": v((100, 1.0), (-100, 1.0), (-100, 1.0)), "b": v((100, 1.0), (-100, 1.0), (-100, 1.0))},
        "a",
    ),
    ("latest start of the highest-priority victims", {"a": v((10, 5.0), (0, 9.0)), "b": v((10, 7.0), (0, 1.0))}, "b"),
    ("victims that have not started count as now (latest)", {"a": v((10, 5.0)), "b": v((10, None))}, "b"),
    ("first remaining on a complete tie", {"b": v((10, 5.0)), "a": v((10, 5.0))}, "b"),
]


@pytest.mark.parametrize("name,victims,want", PICK_CASES, ids=[c[0] for c in PICK_CASES])
def test_pick_one_node_for_preemption(name: str, victims: dict[str, Victims], want: str) -> None:
    assert pick_one_node_for_preemption(victims, None, NOW) == want


def test_pick_one_node_uses_custom_score_funcs_in_order() -> None:
    victims = {"a": v((0, 1.0)), "b": v((0, 1.0)), "c": v((0, 1.0))}
    funcs = [lambda n: 0 if n == "a" else 1, lambda n: 2 if n == "c" else 1]
    assert pick_one_node_for_preemption(victims, funcs, NOW) == "c"
    assert pick_one_node_for_preemption({}, None, NOW) == ""


def test_earliest_start_time_of_highest_priority() -> None:
    assert earliest_start_time_of_highest_priority(v((5, 9.0), (10, 7.0), (10, 3.0), (1, 1.0)), NOW) == 3.0
    assert earliest_start_time_of_highest_priority(Victims([]), NOW) is None


MORE_IMPORTANT_CASES = [
    ("higher priority wins", (10, 5.0), (5, 1.0), True),
    ("lower priority loses", (5, 1.0), (10, 5.0), False),
    ("equal priority: earlier start wins", (5, 1.0), (5, 2.0), True),
    ("equal priority and start: not more important", (5, 1.0), (5, 1.0), False),
    ("not started counts as now", (5, None), (5, 2.0), False),
]


@pytest.mark.parametrize("name,a,b,want", MORE_IMPORTANT_CASES, ids=[c[0] for c in MORE_IMPORTANT_CASES])
def test_more_important_pod(name: str, a: tuple[int, float | None], b: tuple[int, float | None], want: bool) -> None:
    pa, pb = v(a).pods[0], v(b).pods[0]
    assert more_important_pod(pa, pb, NOW) is want


NUM_CANDIDATES_CASES = [
    ("no nodes", 0, 10, 100, 0),
    ("fewer nodes than the absolute minimum: all of them", 10, 10, 100, 10),
    ("percentage below the minimum: the minimum", 500, 10, 100, 100),
    ("percentage above the minimum", 5000, 10, 100, 500),
    ("percentage truncates", 1005, 10, 1, 100),
    ("absolute zero uses the percentage", 9, 40, 0, 3),
    ("never more than the nodes", 5, 100, 1, 5),
]


@pytest.mark.parametrize("name,nodes,pct,absolute,want", NUM_CANDIDATES_CASES, ids=[c[0] for c in NUM_CANDIDATES_CASES])
def test_calculate_num_candidates(name: str, nodes: int, pct: int, absolute: int, want: int) -> None:
    assert calculate_num_candidates(nodes, pct, absolute) == want


FOO = {"app": "foo"}
PDB_CASES: list[tuple[str, list[Any], list[Any], list[str], list[str]]] = [
    ("no PDBs", [mk_pod("a", labels=FOO)], [], [], ["a"]),
    ("budget spent pod by pod", [mk_pod(n, labels=FOO) for n in "abc"], [mk_pdb("p", FOO, allowed=1)], ["b", "c"], ["a"]),
    ("pods without labels match no PDB", [mk_pod("a")], [mk_pdb("p", FOO, allowed=0)], [], ["a"]),
    ("other namespace", [mk_pod("a", labels=FOO, namespace="other")], [mk_pdb("p", FOO, allowed=0)], [], ["a"]),
    ("empty selector matches nothing", [mk_pod("a", labels=FOO)], [mk_pdb("p", {}, allowed=0)], [], ["a"]),
    ("selector does not match", [mk_pod("a", labels={"app": "bar"})], [mk_pdb("p", FOO, allowed=0)], [], ["a"]),
    (
        "disrupted pods spend nothing",
        [mk_pod(n, labels=FOO) for n in "abc"],
        [mk_pdb("p", FOO, allowed=1, disrupted=("a",))],
        ["c"],
        ["a", "b"],
    ),
    (
        "any violated PDB makes the pod violating",
        [mk_pod("a", labels={"app": "foo", "tier": "x"})],
        [mk_pdb("p1", FOO, allowed=5), mk_pdb("p2", {"tier": "x"}, allowed=0)],
        ["a"],
        [],
    ),
]


@pytest.mark.parametrize("name,pods,pdbs,violating,non_violating", PDB_CASES, ids=[c[0] for c in PDB_CASES])
def test_filter_pods_with_pdb_violation(
    name: str, pods: list[Any], pdbs: list[Any], violating: list[str], non_violating: list[str]
) -> None:
    bad, good = filter_pods_with_pdb_violation([PodInfo.of(p) for p in pods], pdbs)
    assert [i.pod.name for i in bad] == violating
    assert [i.pod.name for i in good] == non_violating


def test_aggregate_errors_as_utilerrors() -> None:
    assert aggregate_errors([]) == ""
    assert aggregate_errors(["a"]) == "a"
    assert aggregate_errors(["a", "b", "a"]) == "[a, b]"
    assert aggregate_errors(["a", "a"]) == "a"


def test_dry_run_fit_error_counts_absent_nodes_as_not_helpful() -> None:
    statuses = {
        "n1": Status(Code.UNSCHEDULABLE, ("Insufficient cpu",)),
        "n2": Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("No preemption victims found for incoming pod",)),
        "n3": Status(Code.UNSCHEDULABLE),
    }
    assert dry_run_fit_error(5, statuses) == (
        "0/5 nodes are available: 1 Insufficient cpu, 1 No preemption victims found for incoming pod, "
        "2 Preemption is not helpful for scheduling."
    )
    assert dry_run_fit_error(0, {}) == "0/0 nodes are available:"


REASONS = ("Insufficient cpu", "Insufficient memory", "No preemption victims found for incoming pod")


@settings(max_examples=examples(100), deadline=None)
@given(
    picks=st.lists(st.integers(0, 5), max_size=40),
    shared=st.lists(st.lists(st.sampled_from(REASONS), max_size=2), min_size=1, max_size=3),
    extra=st.integers(0, 5),
)
def test_dry_run_fit_error_counts_shared_statuses_like_a_walk(picks: list[int], shared: list[list[str]], extra: int) -> None:
    # Nodes share Status objects (the dry run gives every node without victims the same one),
    # in runs or scattered: counting runs of one object must equal counting every node's reasons.
    pool = [Status(Code.UNSCHEDULABLE, tuple(r)) for r in shared]
    statuses = {f"n{i}": pool[p] if p < len(pool) else Status(Code.UNSCHEDULABLE, (REASONS[i % 3],)) for i, p in enumerate(picks)}
    counts: dict[str, int] = {}
    for status in statuses.values():
        for reason in status.reasons:
            counts[reason] = counts.get(reason, 0) + 1
    total = len(statuses) + extra
    if extra:
        counts["Preemption is not helpful for scheduling"] = extra
    parts = sorted(f"{c} {r}" for r, c in counts.items())
    want = f"0/{total} nodes are available:" + (f" {', '.join(parts)}." if parts else "")
    assert dry_run_fit_error(total, statuses) == want


# ----- property: the victims are lower priority, evicting them makes room, and none was needless --------------
pod_spec = st.tuples(st.integers(0, 3), st.sampled_from([-5, 0, 5, 10, 50]), st.integers(1, 6), st.integers(0, 5))


@settings(max_examples=examples(60), deadline=None)
@given(
    nodes=st.integers(1, 4),
    pods=st.lists(pod_spec, max_size=12),
    pre=st.tuples(st.sampled_from([0, 10, 100]), st.integers(1, 10)),
)
def test_selected_victims_are_minimal_and_sufficient(
    nodes: int, pods: list[tuple[int, int, int, int]], pre: tuple[int, int]
) -> None:
    node_list = [mk_node(f"n{i}", "1000m", "10000", pods=8) for i in range(nodes)]
    bound = [
        mk_pod(f"p{j}", node=f"n{node % nodes}", priority=prio, req=(f"{cpu * 100}m", "10"), start=start)
        for j, (node, prio, cpu, start) in enumerate(pods)
    ]
    preemptor = mk_pod("preemptor", priority=pre[0], req=(f"{pre[1] * 100}m", "10"))
    env = Env(node_list, [preemptor, *bound])
    fwk = env.fwk
    state = env.prefilter(preemptor)
    # Only nodes the pod does not fit are dry-run (upstream: those whose status is Unschedulable).
    infos = [i for i in env.node_infos() if fwk.run_filter_plugins(state, preemptor, i).code == Code.UNSCHEDULABLE]
    candidates, statuses, err = env.plugin.evaluator.dry_run_preemption(state, preemptor, infos, [], 0, len(infos))
    assert not err
    for c in candidates:
        assert c.victims.pods
        assert all(p.effective_priority < preemptor.effective_priority for p in c.victims.pods)
        prios = [p.effective_priority for p in c.victims.pods]
        assert prios == sorted(prios, reverse=True), "most important victim first"
        info = env.sched.snapshot.get(c.name).clone()
        for victim in c.victims.pods:
            info.remove_pod(victim)
        assert fwk.run_filter_plugins(state, preemptor, info).success
        for victim in c.victims.pods:
            twin = info.clone()
            twin.add_pod(PodInfo.of(victim))
            assert not fwk.run_filter_plugins(state, preemptor, twin).success, f"{victim.name} was evicted needlessly"
    for name, status in statuses.items():
        assert not status.success, name
