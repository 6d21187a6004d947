"""DefaultPreemption's arithmetic stand-in for `select_victims_on_node` (integer totals instead of
copies of the node and the cycle state) gives the same victims, PDB violations and statuses
wherever it answers, and the dry run finds the same candidates with it as without (hypothesis)."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.framework.nodeinfo import PodInfo
from tests.preemption.helpers import Env, mk_node, mk_pdb, mk_pod
from tests.support.examples import examples

REQS = st.tuples(st.sampled_from(["100m", "300m", "700m", "1"]), st.sampled_from(["100", "400", "900"]))
FILTERS = ("NodeResourcesFit", "NodeAffinity", "TaintToleration", "NodeUnschedulable")


@st.composite
def clusters(draw: st.DrawFn) -> tuple[list[Any], list[Any], Any, bool, list[Any]]:
    nodes = [
        mk_node(
            f"n{i}",
            draw(st.sampled_from(["1", "2"])),
            "1000",
            pods=draw(st.integers(2, 5)),
            labels={"zone": draw(st.sampled_from(["a", "b"]))},
        )
        for i in range(draw(st.integers(1, 5)))
    ]
    pods = []
    for j in range(draw(st.integers(0, 12))):
        pods.append(
            mk_pod(
                f"v{j}",
                node=f"n{draw(st.integers(0, len(nodes) - 1))}",
                priority=draw(st.integers(-2, 3)),
                req=draw(REQS),
                labels={"app": draw(st.sampled_from(["x", "y"]))},
                start=draw(st.integers(1, 5)),
            )
        )
    selector = {"nodeSelector": {"zone": "a"}} if draw(st.booleans()) else {}
    preemptor = mk_pod("p", priority=draw(st.integers(0, 4)), req=draw(REQS), spec=selector)
    nominated = [mk_pod(f"nom{k}", priority=draw(st.integers(0, 4)), req=draw(REQS)) for k in range(draw(st.integers(0, 2)))]
    return nodes, pods, preemptor, draw(st.booleans()), nominated


@settings(max_examples=examples(150), deadline=None)
@given(case=clusters(), data=st.data())
def test_stand_in_equals_select_victims_on_node(
    case: tuple[list[Any], list[Any], Any, bool, list[Any]], data: st.DataObject
) -> None:
    nodes, pods, preemptor, with_pdb, nominated = case
    env = Env(nodes, pods, plugins=FILTERS)
    for other in nominated:
        env.sched.queue.add_nominated(other, data.draw(st.sampled_from([n.name for n in nodes])))
    pdbs = [mk_pdb("pdb", {"app": "x"}, allowed=data.draw(st.integers(0, 1)))] if with_pdb else []
    state = env.prefilter(preemptor)
    potential = env.node_infos()
    stand_in = env.plugin.victims_by_arithmetic(state, preemptor, potential, np.asarray([i.position for i in potential]), pdbs)
    assert stand_in is not None
    for i, info in enumerate(potential):
        got = stand_in(i)
        if got is None:
            continue
        victims, violations, status = got
        want_victims, want_violations, want_status = env.plugin.select_victims_on_node(
            state.clone(), preemptor, info.clone(), pdbs
        )
        assert [v.uid for v in victims] == [v.uid for v in want_victims]
        assert (violations, status.code, status.reasons) == (want_violations, want_status.code, want_status.reasons)
        # The stand-in copies nothing and changes nothing.
        assert [p.pod.uid for p in info.pods] == [p.pod.uid for p in env.sched.snapshot.get(info.name).pods]


def test_stand_in_answers_the_usual_node() -> None:
    """A node full of lower-priority pods, nothing nominated: answered without a copy."""
    env = Env(
        [mk_node("n0", "2", "1000", pods=5)],
        [mk_pod(f"v{j}", node="n0", priority=0, req=("700m", "100")) for j in range(2)],
        plugins=FILTERS,
    )
    preemptor = mk_pod("p", priority=5, req=("1", "100"))
    state = env.prefilter(preemptor)
    stand_in = env.plugin.victims_by_arithmetic(state, preemptor, env.node_infos(), np.asarray([0]), [])
    assert stand_in is not None
    victims, violations, status = stand_in(0)
    assert status.success and violations == 0 and len(victims) == 1


def test_no_stand_in_when_a_filter_reads_pods() -> None:
    env = Env([mk_node("n0", "2", "1000", pods=5)], [], plugins=(*FILTERS, "NodePorts", "InterPodAffinity"))
    preemptor = mk_pod(
        "p", priority=5, req=("1", "100"), spec={"containers": [{"name": "c", "ports": [{"containerPort": 80, "hostPort": 80}]}]}
    )
    state = env.prefilter(preemptor)
    assert env.plugin.victims_by_arithmetic(state, preemptor, env.node_infos(), np.asarray([0]), []) is None


def test_podinfo_amounts_are_what_the_stand_in_counts() -> None:
    pod = mk_pod("v", node="n0", priority=0, req=("700m", "100"))
    amounts = PodInfo.of(pod).derived()
    assert (amounts.milli_cpu, amounts.memory) == (700, 100)
