"""Victim selection with only the pod-reading Filter plugin re-run during reprieves gives the same
victims, PDB violations and statuses as re-running every Filter plugin (hypothesis)."""

from __future__ import annotations

from typing import Any
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.plugins import defaultpreemption
from tests.preemption.helpers import Env, mk_node, mk_pdb, mk_pod
from tests.support.examples import examples

REQS = st.tuples(st.sampled_from(["100m", "300m", "700m", "1"]), st.sampled_from(["100", "400", "900"]))


@st.composite
def clusters(draw: st.DrawFn) -> tuple[list[Any], list[Any], Any, bool]:
    nodes = [
        mk_node(
            f"n{i}",
            draw(st.sampled_from(["1", "2"])),
            "1000",
            pods=draw(st.integers(2, 5)),
            labels={"zone": draw(st.sampled_from(["a", "b"]))},
        )
        for i in range(draw(st.integers(1, 4)))
    ]
    pods = []
    for j in range(draw(st.integers(0, 10))):
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
    return nodes, pods, preemptor, draw(st.booleans())


@settings(max_examples=examples(120), deadline=None)
@given(case=clusters())
def test_fast_reprieve_equals_full_filter(case: tuple[list[Any], list[Any], Any, bool]) -> None:
    nodes, pods, preemptor, with_pdb = case
    env = Env(nodes, pods, plugins=("NodeResourcesFit", "NodeAffinity", "TaintToleration", "NodeUnschedulable"))
    pdbs = [mk_pdb("pdb", {"app": "x"}, allowed=0)] if with_pdb else []
    state = env.prefilter(preemptor)
    fast_used = []
    real = defaultpreemption._pods_reading_filter

    def spy(*args: Any) -> Any:
        found = real(*args)
        fast_used.append(found is not None)
        return found

    results = []
    for patch in (spy, lambda *args: None):
        with mock.patch.object(defaultpreemption, "_pods_reading_filter", patch):
            got = []
            for info in env.node_infos():
                victims, violations, status = env.plugin.select_victims_on_node(state.clone(), preemptor, info.clone(), pdbs)
                got.append(([v.name for v in victims], violations, status.code, status.reasons))
            results.append(got)
    assert results[0] == results[1]
    assert all(fast_used)
