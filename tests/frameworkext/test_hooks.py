"""Phase hooks: chaining in registration order, copies only, and where the runtime runs them.

Semantics from the Enhanced Scheduler Extension proposal ("the modification result of the
previous Hook and the input of the next Hook") and koordinator-sh/koordinator
pkg/scheduler/frameworkext/framework_extender.go (RunPreFilterPlugins,
RunFilterPluginsWithNominatedPods, RunScorePlugins run the hooks, then the plugins).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from scheduler.api.objects import Node, Pod
from scheduler.framework.nodeinfo import NodeInfo
from scheduler.framework.types import BatchFilterResult, Code, CycleState, PreFilterResult, Status
from scheduler.frameworkext.extender import Extender
from scheduler.frameworkext.hooks import HookError, PhaseHooks, hook_phases
from tests.support.builders import make_node, make_pod, make_snapshot
from tests.support.engines import base_registry, config, engine, profile


@dataclass
class Labeller:
    """Adds its name to a `hooks` label, on copies; in every phase."""

    name: str
    seen: list[str] = field(default_factory=list)

    def _mark(self, pod: Pod) -> Pod:
        self.seen.append(pod.labels.get("hooks", ""))
        labels = {**pod.labels, "hooks": pod.labels.get("hooks", "") + self.name}
        return pod.with_changes(
            meta=type(pod.meta)(**{**{f: getattr(pod.meta, f) for f in pod.meta.__slots__}, "labels": labels})
        )

    def pre_filter_hook(self, handle: Any, state: CycleState, pod: Pod) -> tuple[Pod, bool]:
        return self._mark(pod), True

    def filter_hook(self, handle: Any, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[Pod, NodeInfo, bool]:
        return self._mark(pod), node_info, True

    def score_hook(self, handle: Any, state: CycleState, pod: Pod, nodes: list[Node]) -> tuple[Pod, list[Node], bool]:
        return self._mark(pod), nodes[1:], True


class Quiet:
    """Never changes anything."""

    name = "Quiet"

    def pre_filter_hook(self, handle: Any, state: CycleState, pod: Pod) -> tuple[Pod, bool]:
        return pod, False


class InPlace:
    """Mutates its input and says so: refused."""

    name = "InPlace"

    def pre_filter_hook(self, handle: Any, state: CycleState, pod: Pod) -> tuple[Pod, bool]:
        pod.labels["mutated"] = "yes"
        return pod, True

    def filter_hook(self, handle: Any, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[Pod, NodeInfo, bool]:
        return pod, node_info, True

    def score_hook(self, handle: Any, state: CycleState, pod: Pod, nodes: list[Node]) -> tuple[Pod, list[Node], bool]:
        return pod, nodes, True


class Raising:
    """Fails."""

    name = "Raising"

    def pre_filter_hook(self, handle: Any, state: CycleState, pod: Pod) -> tuple[Pod, bool]:
        raise RuntimeError("no way")


def chain(*hooks: object) -> PhaseHooks:
    h = PhaseHooks()
    for hook in hooks:
        h.register(hook)
    return h


def test_hook_phases_come_from_the_methods() -> None:
    assert hook_phases(Labeller("a")) == ["pre_filter", "filter", "score"]
    assert hook_phases(Quiet()) == ["pre_filter"]
    assert hook_phases(object()) == []


def test_registering_twice_keeps_one_entry() -> None:
    a = Labeller("a")
    h = chain(a, a, Labeller("b"))
    assert h.names() == {"pre_filter": ["a", "b"], "filter": ["a", "b"], "score": ["a", "b"]}


CHAIN_CASES = [
    ("pre_filter", lambda h, pod, node_info, nodes: (h.run_pre_filter(None, CycleState(), pod),)),
    ("filter", lambda h, pod, node_info, nodes: h.run_filter(None, CycleState(), pod, node_info)),
    ("score", lambda h, pod, node_info, nodes: h.run_score(None, CycleState(), pod, nodes)),
]


@pytest.mark.parametrize(("phase", "run"), CHAIN_CASES, ids=[c[0] for c in CHAIN_CASES])
def test_hooks_chain_in_registration_order_on_copies(phase: str, run: Any) -> None:
    a, quiet, b = Labeller("a"), Quiet(), Labeller("b")
    h = chain(a, quiet, b)
    pod = make_pod("p", labels={"hooks": ">"})
    snap = make_snapshot([make_node("n0"), make_node("n1")])
    nodes = [i.node for i in snap.node_infos]
    out = run(h, pod, snap.node_infos[0], nodes)
    assert out[0].labels["hooks"] == ">ab"
    # Each hook saw the previous one's result; the input pod is untouched.
    assert (a.seen, b.seen) == ([">"], [">a"])
    assert pod.labels == {"hooks": ">"}
    if phase == "filter":
        assert out[1] is snap.node_infos[0] and out[2] is True
    if phase == "score":
        assert [n.name for n in out[1]] == [] and nodes == [i.node for i in snap.node_infos]


def test_no_hook_changing_anything_returns_the_inputs() -> None:
    pod = make_pod("p")
    assert chain(Quiet()).run_pre_filter(None, CycleState(), pod) is pod


@pytest.mark.parametrize(
    "run",
    [
        lambda h, pod, info: h.run_pre_filter(None, CycleState(), pod),
        lambda h, pod, info: h.run_filter(None, CycleState(), pod, info),
        lambda h, pod, info: h.run_score(None, CycleState(), pod, [info.node]),
    ],
    ids=["pre_filter", "filter", "score"],
)
def test_a_hook_claiming_a_change_on_its_own_inputs_is_refused(run: Any) -> None:
    snap = make_snapshot([make_node("n0")])
    with pytest.raises(HookError, match="hooks must return copies"):
        run(chain(InPlace()), make_pod("p"), snap.node_infos[0])


def test_a_failing_hook_is_named() -> None:
    with pytest.raises(HookError, match="running PreFilterPhaseHook 'Raising': no way"):
        chain(Raising()).run_pre_filter(None, CycleState(), make_pod("p"))


def test_a_filter_hook_may_not_swap_nodes() -> None:
    snap = make_snapshot([make_node("n0"), make_node("n1")])

    class Swap:
        name = "Swap"

        def filter_hook(self, handle: Any, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[Pod, NodeInfo, bool]:
            return pod, snap.node_infos[1].clone(), True

    with pytest.raises(HookError, match="returned NodeInfo of node 'n1' for node 'n0'"):
        chain(Swap()).run_filter(None, CycleState(), make_pod("p"), snap.node_infos[0])


def test_filter_hook_nodes_limits_the_nodes_visited() -> None:
    snap = make_snapshot([make_node(f"n{i}") for i in range(5)])
    visited: list[str] = []

    class Narrow:
        name = "Narrow"

        def filter_hook_nodes(self, handle: Any, state: CycleState, pod: Pod) -> list[str]:
            return ["n3", "n1", "unknown"]

        def filter_hook(self, handle: Any, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[Pod, NodeInfo, bool]:
            visited.append(node_info.name)
            return pod, node_info.clone(), node_info.name == "n3"

    out = chain(Narrow()).hook_filter_nodes(None, CycleState(), make_pod("p"), snap, np.arange(5, dtype=np.int64))  # type: ignore[arg-type]
    assert visited == ["n1", "n3"]
    assert list(out) == [3]


# ----- in the runtime -------------------------------------------------------------------------------
@dataclass
class Recorder:
    """A PreFilter + batch Filter + Score plugin recording the pods each point saw."""

    name: str = "Recorder"
    seen: dict[str, list[str]] = field(default_factory=dict)
    per_node_calls: int = 0

    def _see(self, point: str, pod: Pod) -> None:
        self.seen.setdefault(point, []).append(pod.labels.get("hooks", ""))

    def pre_filter(self, state: CycleState, pod: Pod, nodes: Any) -> tuple[PreFilterResult | None, Status]:
        self._see("PreFilter", pod)
        return None, Status()

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        self.per_node_calls += 1
        self._see("Filter", pod)
        return Status(Code.UNSCHEDULABLE, ("full",)) if node_info.node.labels.get("full") == "true" else Status()

    def filter_batch(self, state: CycleState, pod: Pod, snapshot: Any, positions: Any) -> BatchFilterResult:
        self._see("FilterBatch", pod)
        codes = np.array(
            [int(Code.UNSCHEDULABLE) if snapshot.node_infos[int(p)].node.labels.get("full") == "true" else 0 for p in positions],
            dtype=np.int8,
        )
        return BatchFilterResult(codes, lambda i: ("full",))

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        self._see("Score", pod)
        return int(node_info.node.labels.get("score", "0")), Status()

    def score_extensions(self) -> None:
        return None


def recorder_engine(*hooks: object, full: tuple[str, ...] = ()) -> tuple[Any, Recorder]:
    rec = Recorder()
    registry = base_registry()
    registry["Recorder"] = lambda args, h: rec
    nodes = [make_node(f"n{i}", labels={"score": str(10 * i), **({"full": "true"} if f"n{i}" in full else {})}) for i in range(3)]
    eng = engine(config(profile(multi=("Recorder",))), registry, Extender(hooks=hooks), nodes=nodes, pods=[make_pod("p")])
    # One attempt: a pod failing with an Error would be retried from backoff forever.
    eng.scheduler.run(max_attempts=1)
    return eng, rec


def test_without_hooks_the_batch_path_is_kept() -> None:
    eng, rec = recorder_engine()
    assert rec.per_node_calls == 0
    assert eng.scheduler.records[0].node == "n2"


def test_each_phase_sees_its_own_hooks_result_only() -> None:
    eng, rec = recorder_engine(Labeller("a"), Labeller("b"))
    # PreFilter saw the PreFilter hooks' pod; Filter (per node, as hooked) and Score saw theirs,
    # each starting again from the queued pod, as upstream passes the original pod to each phase.
    assert rec.seen["PreFilter"] == ["ab"]
    assert rec.seen["Filter"] == ["ab", "ab", "ab"]
    assert rec.seen["Score"] == ["ab"]
    # The Score hooks each dropped the first node: n0 and n1 were not scored.
    record = eng.scheduler.records[0]
    assert record.scores() == {"n2": {"Recorder": 20}}
    assert record.node == "n2"


def test_a_filter_hook_changed_node_is_judged_on_the_hooked_node_info() -> None:
    class Unfill:
        name = "Unfill"

        def filter_hook(self, handle: Any, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[Pod, NodeInfo, bool]:
            if node_info.node.labels.get("full") != "true":
                return pod, node_info, False
            twin = node_info.clone()
            twin.node = make_node(node_info.name, labels={"score": node_info.node.labels["score"]})
            return pod, twin, True

    eng, rec = recorder_engine(full=("n0", "n1", "n2"))
    assert eng.scheduler.records[0].outcome == "Unschedulable"
    eng, rec = recorder_engine(Unfill(), full=("n1",))
    record = eng.scheduler.records[0]
    assert record.filter_failures() == {}
    assert rec.per_node_calls == 1  # only the hooked node went the per-node way


def test_a_failing_hook_ends_the_attempt_with_an_error() -> None:
    eng, _ = recorder_engine(Raising())
    record = eng.scheduler.records[0]
    assert record.outcome == "Error"
    assert record.message == "running PreFilterPhaseHook 'Raising': no way"


def test_a_score_hook_returning_an_unknown_node_is_an_error() -> None:
    class Stranger:
        name = "Stranger"

        def score_hook(self, handle: Any, state: CycleState, pod: Pod, nodes: list[Node]) -> tuple[Pod, list[Node], bool]:
            return pod.with_changes(), [make_node("elsewhere")], True

    eng, _ = recorder_engine(Stranger())
    record = eng.scheduler.records[0]
    assert record.outcome == "Error"
    assert "'elsewhere', which is not in the snapshot" in record.message


def test_a_score_hook_replacing_a_node_object_scores_the_replacement() -> None:
    class Relabel:
        name = "Relabel"

        def score_hook(self, handle: Any, state: CycleState, pod: Pod, nodes: list[Node]) -> tuple[Pod, list[Node], bool]:
            return pod, [make_node(n.name, labels={"score": "99"}) if n.name == "n0" else n for n in nodes], True

    eng, _ = recorder_engine(Relabel())
    record = eng.scheduler.records[0]
    assert record.scores()["n0"] == {"Recorder": 99}
    assert record.node == "n0"


def test_run_hooked_filter_applies_filter_hooks_for_single_node_callers() -> None:
    eng, rec = recorder_engine(Labeller("a"))
    fwk = eng.scheduler.profiles["default-scheduler"]
    before = len(rec.seen["Filter"])
    status = fwk.run_hooked_filter(CycleState(), make_pod("q"), eng.scheduler.snapshot.node_infos[0])
    assert status.success
    assert rec.seen["Filter"][before:] == ["a"]
