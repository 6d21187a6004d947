"""The framework runtime: building profiles and running extension points (runtime/framework_test.go)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.config.types import PluginRef, Plugins, PluginSet, Profile
from scheduler.framework.feasible import key_groups
from scheduler.framework.runtime import Framework, FrameworkError
from scheduler.framework.types import Code, CycleState, PreFilterResult, Status
from tests.support.builders import make_node, make_pod, make_snapshot
from tests.support.examples import examples
from tests.support.fakes import BatchFailFilter, FailFilter, FakeHandle, PreFilterOnly, TableScore, profile, registry


def build(prof: Profile, *plugins: object, nodes: int = 4) -> Framework:
    snap = make_snapshot([make_node(f"n{i}") for i in range(nodes)])
    return Framework.build(prof, registry(*plugins), FakeHandle(snap))  # type: ignore[arg-type]


def test_multi_point_expansion_order() -> None:
    # Explicitly configured plugins that are also in multiPoint come first, then multiPoint's, then the rest.
    a, b, c = FailFilter("A"), FailFilter("B"), FailFilter("C")
    fwk = build(profile(filters=["C", "B"], multi=[("A", 0), ("B", 0)]), a, b, c)
    assert fwk.plugin_names("filter") == ["B", "A", "C"]


def test_star_disables_multi_point_expansion() -> None:
    s1, s2 = TableScore("S1", {}), TableScore("S2", {})
    fwk = build(profile(scores=[("S2", 5)], multi=[("S1", 3), ("S2", 1)], score_disabled=("*",)), s1, s2)
    assert fwk.plugin_names("score") == ["S2"]
    assert fwk.weights == {"S2": 5}


def test_score_weight_from_score_point_wins_and_zero_means_one() -> None:
    s1, s2 = TableScore("S1", {}), TableScore("S2", {})
    fwk = build(profile(scores=[("S1", 7)], multi=[("S1", 3), ("S2", 0)]), s1, s2)
    assert fwk.weights == {"S1": 7, "S2": 1}


@pytest.mark.parametrize(
    ("prof", "message"),
    [
        (
            Profile("p", None, Plugins(bind=PluginSet((PluginRef("Binder"),))), {}),
            "only one queue sort plugin required for profile with scheduler name 'p', but got 0",
        ),
        (
            Profile("p", None, Plugins(queue_sort=PluginSet((PluginRef("Sort"),))), {}),
            "at least one bind plugin is needed for profile with scheduler name 'p'",
        ),
        (profile(filters=["Nope"]), 'FilterPlugin "Nope" does not exist'),
        (profile(filters=["S"]), "plugin 'S' does not extend FilterPlugin"),
        (profile(filters=["A", "A"]), "plugin 'A' already registered as 'FilterPlugin'"),
        (profile(scores=[("S", 2**62)]), "total score of Score plugins could overflow"),
    ],
    ids=["no-queue-sort", "no-bind", "unknown", "wrong-point", "duplicate", "overflow"],
)
def test_build_refuses(prof: Profile, message: str) -> None:
    with pytest.raises(FrameworkError) as info:
        build(prof, FailFilter("A"), TableScore("S", {}))
    assert message in str(info.value)


@pytest.mark.parametrize("batch", [False, True], ids=["per-node", "batch"])
def test_first_failing_plugin_is_reported(batch: bool) -> None:
    kind = BatchFailFilter if batch else FailFilter
    a = kind("A", {"n1": (Code.UNSCHEDULABLE, "a says no")})
    b = kind("B", {"n1": (Code.UNSCHEDULABLE, "b says no"), "n2": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "b never")})
    fwk = build(profile(filters=["A", "B"]), a, b)
    out = fwk.find_feasible(CycleState(), make_pod("p"), np.arange(4, dtype=np.int64), 4)
    assert [int(p) for p in out.feasible] == [0, 3]
    statuses = out.statuses(fwk.handle.snapshot)
    assert {n: (s.plugin, s.code, s.reasons) for n, s in statuses.items()} == {
        "n1": ("A", Code.UNSCHEDULABLE, ("a says no",)),
        "n2": ("B", Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("b never",)),
    }


def test_mixed_batch_and_per_node_walk_matches_sequential_order() -> None:
    # A per-node plugin before a batch one must be reported when both fail the same node,
    # and walking stops once enough feasible nodes are found.
    first = FailFilter("First", {"n2": (Code.UNSCHEDULABLE, "first")})
    second = BatchFailFilter("Second", {"n2": (Code.UNSCHEDULABLE, "second"), "n0": (Code.UNSCHEDULABLE, "second")})
    fwk = build(profile(filters=["First", "Second"]), first, second, nodes=6)
    out = fwk.find_feasible(CycleState(), make_pod("p"), np.arange(6, dtype=np.int64), 2)
    assert [int(p) for p in out.feasible] == [1, 3]
    assert out.processed == 4
    assert {n: s.plugin for n, s in out.statuses(fwk.handle.snapshot).items()} == {"n0": "Second", "n2": "First"}
    # First runs before Second on every visited node, and on none after the second feasible one.
    assert first.calls == ["n0", "n1", "n2", "n3"]


def test_pre_filter_skip_skips_the_filter() -> None:
    skipper = PreFilterOnly("Skipper", status=Status(Code.SKIP))
    fwk = build(profile(pre_filters=["Skipper"], filters=["Skipper"]), skipper)
    state = CycleState()
    _, status, _ = fwk.run_pre_filter(state, make_pod("p"))
    assert status.success
    out = fwk.find_feasible(state, make_pod("p"), np.arange(4, dtype=np.int64), 4)
    assert len(out.feasible) == 4


def test_pre_filter_results_intersect_and_empty_is_unresolvable() -> None:
    one = PreFilterOnly("One", PreFilterResult(frozenset({"n1", "n2"})))
    two = PreFilterOnly("Two", PreFilterResult(frozenset({"n3"})))
    fwk = build(profile(pre_filters=["One", "Two"]), one, two)
    _, status, rejectors = fwk.run_pre_filter(CycleState(), make_pod("p"))
    assert status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.reasons == ("node(s) didn't satisfy plugin(s) [One Two] simultaneously",)
    assert rejectors == {"One", "Two"}


def test_normalize_weights_and_range_check() -> None:
    def halve(scores: np.ndarray) -> None:
        scores[:] = scores // 2

    good = TableScore("Good", {"n0": 100, "n1": 50}, halve)
    fwk = build(profile(scores=[("Good", 3)]), good)
    out = fwk.run_score(CycleState(), make_pod("p"), np.arange(2, dtype=np.int64))
    assert out.matrix.tolist() == [[50, 25]]
    assert out.totals.tolist() == [150, 75]

    bad = TableScore("Bad", {"n0": 101})
    fwk = build(profile(scores=[("Bad", 1)]), bad)
    out = fwk.run_score(CycleState(), make_pod("p"), np.arange(2, dtype=np.int64))
    assert out.error is not None
    assert out.error.message == 'plugin "Bad" returns an invalid score 101, it should in the range of [0, 100] after normalizing'


@pytest.mark.parametrize("walk_ratio", [1.0, 0.2, 2.5, 40.0], ids=lambda r: f"ratio-{r}")
@pytest.mark.parametrize("per_node_second", [False, True], ids=["all-batch", "mixed"])
@pytest.mark.parametrize("to_find", [1, 300, 2999, 5000], ids=lambda k: f"find-{k}")
def test_chunked_filter_equals_a_sequential_walk(per_node_second: bool, to_find: int, walk_ratio: float) -> None:
    # Large clusters are filtered in chunks; the result must equal upstream's sequential walk.
    import random

    rng = random.Random(to_find)
    n = 3000
    first = {f"n{i}": (Code.UNSCHEDULABLE, "first") for i in range(n) if rng.random() < 0.3}
    second = {f"n{i}": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "second") for i in range(n) if rng.random() < 0.3}
    a = BatchFailFilter("A", first)
    b = (FailFilter if per_node_second else BatchFailFilter)("B", second)
    fwk = build(profile(filters=["A", "B"]), a, b, nodes=n)
    # The first chunk's size follows the last cycle's walk; it must change no verdict.
    fwk.walk_ratio = walk_ratio
    order = np.asarray(rng.sample(range(n), n), dtype=np.int64)
    out = fwk.find_feasible(CycleState(), make_pod("p"), order, to_find)
    want_feasible: list[int] = []
    want_failed: dict[str, str] = {}
    visited = n
    for i, pos in enumerate(order):
        name = f"n{int(pos)}"
        if name in first:
            want_failed[name] = "A"
        elif name in second:
            want_failed[name] = "B"
        else:
            want_feasible.append(int(pos))
        if len(want_feasible) == to_find:
            visited = i + 1
            break
    assert [int(p) for p in out.feasible] == want_feasible
    assert out.processed == visited
    assert {k: v.plugin for k, v in out.statuses(fwk.handle.snapshot).items()} == want_failed
    assert all(s.reasons == (("first",) if s.plugin == "A" else ("second",)) for s in out.statuses(fwk.handle.snapshot).values())
    by_plugin = list(want_failed.values())
    assert out.reason_counts() == {r: c for r, c in (("first", by_plugin.count("A")), ("second", by_plugin.count("B"))) if c}


@settings(max_examples=examples(200), deadline=None)
@given(keys=st.lists(st.one_of(st.integers(0, 40), st.integers(0, 2**40)), max_size=60))
def test_key_groups_count_every_key_once(keys: list[int]) -> None:
    # Failures are grouped by reason key; small keys take a bincount, others a sort.
    arr = np.asarray(keys, dtype=np.int64)
    entries = np.arange(100, 100 + len(keys), dtype=np.int64)
    groups = key_groups(arr, entries)
    want = {k: keys.count(k) for k in set(keys)}
    assert sorted(keys[e - 100] for e, _ in groups) == sorted(want)
    assert {keys[e - 100]: c for e, c in groups} == want


@pytest.mark.parametrize("to_find", [1, 7, 300, 2999], ids=lambda k: f"find-{k}")
def test_nominated_rows_judged_in_order_equal_a_sequential_walk(to_find: int) -> None:
    # Rows with nominated pods are judged by the override alone, in order, and only while the
    # rows before them have not already given enough feasible nodes.
    import random

    rng = random.Random(to_find)
    n = 3000
    failing = {f"n{i}": (Code.UNSCHEDULABLE, "batch") for i in range(n) if rng.random() < 0.3}
    fwk = build(profile(filters=["A"]), BatchFailFilter("A", failing), nodes=n)
    order = np.asarray(rng.sample(range(n), n), dtype=np.int64)
    overridden = {int(p) for p in rng.sample(range(n), 40)}
    verdicts = {p: rng.random() < 0.5 for p in overridden}
    judged: list[int] = []

    def override(pos: int) -> Status:
        judged.append(pos)
        return Status() if verdicts[pos] else Status(Code.UNSCHEDULABLE, ("nominated",), "A")

    out = fwk.find_feasible(CycleState(), make_pod("p"), order, to_find, override, frozenset(overridden))
    want_feasible: list[int] = []
    want_judged: list[int] = []
    want_failed: dict[str, str] = {}
    visited = n
    for i, pos in enumerate(order.tolist()):
        if pos in overridden:
            want_judged.append(pos)
            ok = verdicts[pos]
            reason = "nominated"
        else:
            ok = f"n{pos}" not in failing
            reason = "batch"
        if ok:
            want_feasible.append(pos)
        else:
            want_failed[f"n{pos}"] = reason
        if len(want_feasible) == to_find:
            visited = i + 1
            break
    assert [int(p) for p in out.feasible] == want_feasible
    assert out.processed == visited
    assert judged == want_judged
    assert {k: v.reasons[0] for k, v in out.statuses(fwk.handle.snapshot).items()} == want_failed


class _PreBinder:
    """A PreBind plugin; with `preflight`, also PreBindPreFlight answering that code."""

    def __init__(self, name: str) -> None:
        self.name = name

    def pre_bind(self, state: CycleState, pod: object, node: str) -> Status:
        return Status()


class _PreFlighted(_PreBinder):
    def __init__(self, name: str, code: Code) -> None:
        super().__init__(name)
        self.code = code

    def pre_bind_preflight(self, state: CycleState, pod: object, node: str) -> Status:
        return Status(self.code, ("nope",) if self.code == Code.ERROR else ())


@pytest.mark.parametrize(
    ("plugins", "want"),
    [
        ([], (Code.SKIP, "")),
        ([_PreFlighted("A", Code.SKIP), _PreFlighted("B", Code.SKIP)], (Code.SKIP, "")),
        ([_PreFlighted("A", Code.SKIP), _PreFlighted("B", Code.SUCCESS)], (Code.SUCCESS, "")),
        ([_PreFlighted("A", Code.SKIP), _PreBinder("B")], (Code.SUCCESS, "")),  # no hook: it has work
        ([_PreFlighted("A", Code.ERROR), _PreFlighted("B", Code.SKIP)], (Code.ERROR, "A")),
    ],
    ids=["none", "all-skip", "one-has-work", "no-hook", "error"],
)
def test_pre_bind_preflights(plugins: list[_PreBinder], want: tuple[Code, str]) -> None:
    fwk = build(profile(multi=[(p.name, 0) for p in plugins]), *plugins)
    status = fwk.run_pre_bind_preflights(CycleState(), make_pod("p"), "n0")
    assert (status.code, status.plugin) == want
