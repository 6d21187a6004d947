"""NodeAffinity: PreFilter, Filter, PreScore/Score/NormalizeScore, addedAffinity, batch agreement."""

from __future__ import annotations

import re
from typing import Any, NamedTuple

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.api.affinity import PreferredSchedulingTerm
from scheduler.api.selectors import parse_node_selector, parse_node_selector_term
from scheduler.config.args import NodeAffinityArgs
from scheduler.framework.types import (
    ActionType,
    ClusterEvent,
    Code,
    CycleState,
    PreFilterResult,
)
from scheduler.plugins import nodeaffinity
from scheduler.plugins.nodeaffinity import (
    REASON_CONFLICT,
    REASON_ENFORCED,
    REASON_POD,
    NodeAffinity,
    parse_int64,
    term_parse_error,
)
from tests.support.batch import assert_batch_filter_agrees, assert_batch_score_agrees
from tests.support.builders import make_node, make_pod, make_snapshot
from tests.support.examples import examples
from tests.support.fakes import FakeHandle


def expr(key: str, op: str, *values: str) -> dict[str, Any]:
    out: dict[str, Any] = {"key": key, "operator": op}
    if values:
        out["values"] = list(values)
    return out


def name_is(*values: str, op: str = "In") -> dict[str, Any]:
    return expr("metadata.name", op, *values)


def term(exprs: list[dict[str, Any]] | None = None, fields: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if exprs is not None:
        out["matchExpressions"] = exprs
    if fields is not None:
        out["matchFields"] = fields
    return out


def required(*terms: dict[str, Any]) -> dict[str, Any]:
    return {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}}


def preferred(*weighted: tuple[int, dict[str, Any]]) -> dict[str, Any]:
    prefs = [{"weight": w, "preference": t} for w, t in weighted]
    return {"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": prefs}}}


def added_args(
    required_terms: list[dict[str, Any]] | None = None, preferred_terms: tuple[tuple[int, dict[str, Any]], ...] = ()
) -> NodeAffinityArgs:
    req = parse_node_selector({"nodeSelectorTerms": required_terms}, "") if required_terms is not None else None
    prefs = tuple(PreferredSchedulingTerm(w, parse_node_selector_term(t, "")) for w, t in preferred_terms)
    return NodeAffinityArgs(None, req, prefs)


def plugin_for(nodes: list[Any], args: NodeAffinityArgs | None = None) -> tuple[NodeAffinity, Any]:
    snap = make_snapshot(nodes)
    return nodeaffinity.new(args, FakeHandle(snap)), snap


ALL: set[str] | None = None  # want_names: PreFilterResult None (all nodes)


class FilterCase(NamedTuple):
    """One PreFilter + Filter case on a single node."""

    id: str
    spec: dict[str, Any]
    labels: dict[str, str] | None = None
    node_name: str = "n"
    added: list[dict[str, Any]] | None = None  # addedAffinity required terms
    run_pre_filter: bool = True
    want_pre: str | None = None  # None: Success; "skip"; otherwise the Unresolvable reason
    want_names: set[str] | None = ALL
    want_filter: str | None = None  # None: Success; otherwise the Unresolvable reason


# kubernetes/kubernetes pkg/scheduler/framework/plugins/nodeaffinity/node_affinity_test.go TestNodeAffinity
FILTER_CASES = [
    FilterCase("missing labels", {"nodeSelector": {"foo": "bar"}}, want_filter=REASON_POD),
    FilterCase("same labels", {"nodeSelector": {"foo": "bar"}}, labels={"foo": "bar"}),
    FilterCase("node labels are superset", {"nodeSelector": {"foo": "bar"}}, labels={"foo": "bar", "baz": "blah"}),
    FilterCase(
        "node labels are subset", {"nodeSelector": {"foo": "bar", "baz": "blah"}}, labels={"foo": "bar"}, want_filter=REASON_POD
    ),
    FilterCase("In matches", required(term([expr("foo", "In", "bar", "value2")])), labels={"foo": "bar"}),
    FilterCase("Gt matches", required(term([expr("kernel-version", "Gt", "0204")])), labels={"kernel-version": "0206"}),
    FilterCase("NotIn matches", required(term([expr("mem-type", "NotIn", "DDR", "DDR2")])), labels={"mem-type": "DDR3"}),
    FilterCase("Exists matches", required(term([expr("GPU", "Exists")])), labels={"GPU": "NVIDIA-GRID-K1"}),
    FilterCase(
        "In does not match",
        required(term([expr("foo", "In", "value1", "value2")])),
        labels={"foo": "bar"},
        want_filter=REASON_POD,
    ),
    FilterCase("empty matchExpressions match nothing", required(term([])), labels={"foo": "bar"}, want_filter=REASON_POD),
    FilterCase("no affinity skips", {}, labels={"foo": "bar"}, want_pre="skip"),
    FilterCase("affinity without required skips", {"affinity": {"nodeAffinity": {}}}, labels={"foo": "bar"}, want_pre="skip"),
    FilterCase(
        "matchExpressions ANDed match",
        required(term([expr("GPU", "Exists"), expr("GPU", "NotIn", "AMD", "INTER")])),
        labels={"GPU": "NVIDIA-GRID-K1"},
    ),
    FilterCase(
        "matchExpressions ANDed do not match",
        required(term([expr("GPU", "Exists"), expr("GPU", "In", "AMD", "INTER")])),
        labels={"GPU": "NVIDIA-GRID-K1"},
        want_filter=REASON_POD,
    ),
    FilterCase(
        "terms ORed",
        required(term([expr("foo", "In", "bar", "value2")]), term([expr("diffkey", "In", "wrong", "value2")])),
        labels={"foo": "bar"},
    ),
    FilterCase(
        "affinity and nodeSelector both satisfied",
        {"nodeSelector": {"foo": "bar"}, **required(term([expr("foo", "Exists")]))},
        labels={"foo": "bar"},
    ),
    FilterCase(
        "affinity matches but nodeSelector does not",
        {"nodeSelector": {"foo": "bar"}, **required(term([expr("foo", "Exists")]))},
        labels={"foo": "barrrrrr"},
        want_filter=REASON_POD,
    ),
    FilterCase(
        "invalid value in a term never matches",
        required(term([expr("foo", "NotIn", "invalid value: ___@#$%^")])),
        labels={"foo": "bar"},
        want_filter=REASON_POD,
    ),
    FilterCase("matchFields In matches", required(term(fields=[name_is("node1")])), node_name="node1", want_names={"node1"}),
    FilterCase(
        "matchFields In does not match",
        required(term(fields=[name_is("node1")])),
        node_name="node2",
        want_names={"node1"},
        want_filter=REASON_POD,
    ),
    FilterCase(
        "two terms: fields miss, expressions match",
        required(term(fields=[name_is("node1"), name_is("node2")]), term([expr("foo", "In", "bar")])),
        labels={"foo": "bar"},
        node_name="node2",
    ),
    FilterCase(
        "one term: fields miss, expressions match",
        required(term([expr("foo", "In", "bar")], [name_is("node1")])),
        labels={"foo": "bar"},
        node_name="node2",
        want_names={"node1"},
        want_filter=REASON_POD,
    ),
    FilterCase(
        "one term: fields and expressions match",
        required(term([expr("foo", "In", "bar")], [name_is("node1")])),
        labels={"foo": "bar"},
        node_name="node1",
        want_names={"node1"},
    ),
    FilterCase(
        "two terms: neither matches",
        required(term(fields=[name_is("node1")]), term([expr("foo", "In", "not-match-to-bar")])),
        labels={"foo": "bar"},
        node_name="node2",
        want_filter=REASON_POD,
    ),
    FilterCase(
        "two terms of node name affinity",
        required(term(fields=[name_is("node1")]), term(fields=[name_is("node2")])),
        node_name="node2",
        want_names={"node1", "node2"},
    ),
    FilterCase(
        "two conflicting field requirements",
        required(term(fields=[name_is("node1"), name_is("node2")])),
        labels={"foo": "bar"},
        node_name="node2",
        want_pre=REASON_CONFLICT,
        want_filter=REASON_POD,
    ),
    FilterCase(
        "matches added affinity and pod affinity",
        required(term([expr("zone", "In", "foo")])),
        labels={"zone": "foo"},
        node_name="node2",
        added=[term(fields=[name_is("node2")])],
    ),
    FilterCase(
        "matches added affinity but not pod affinity",
        required(term([expr("zone", "In", "bar")])),
        labels={"zone": "foo"},
        node_name="node2",
        added=[term(fields=[name_is("node2")])],
        want_filter=REASON_POD,
    ),
    FilterCase(
        "does not match added affinity",
        {},
        labels={"zone": "foo"},
        node_name="node2",
        added=[term([expr("zone", "In", "bar")])],
        want_filter=REASON_ENFORCED,
    ),
    FilterCase(
        "nodeSelector without PreFilter",
        {"nodeSelector": {"foo": "bar"}},
        labels={"foo": "bar", "baz": "blah"},
        run_pre_filter=False,
    ),
    FilterCase(
        "affinity without PreFilter",
        required(term([expr("GPU", "Exists"), expr("GPU", "NotIn", "AMD", "INTER")])),
        labels={"GPU": "NVIDIA-GRID-K1"},
        run_pre_filter=False,
    ),
    # Not in the upstream table: Go's strconv.ParseInt rules for Gt/Lt.
    FilterCase("Lt compares as integers", required(term([expr("v", "Lt", "10")])), labels={"v": "9"}),
    FilterCase(
        "Gt never matches a non-integer label",
        required(term([expr("v", "Gt", "1")])),
        labels={"v": "1_0"},
        want_filter=REASON_POD,
    ),
    FilterCase("Gt never matches a missing label", required(term([expr("v", "Gt", "1")])), want_filter=REASON_POD),
    FilterCase("DoesNotExist", required(term([expr("v", "DoesNotExist")])), labels={"w": "1"}),
    FilterCase(
        "matchFields NotIn", required(term(fields=[name_is("node1", op="NotIn")])), node_name="node1", want_filter=REASON_POD
    ),
    FilterCase("empty required terms match nothing", required(), want_filter=REASON_POD),
]


@pytest.mark.parametrize("case", FILTER_CASES, ids=[c.id for c in FILTER_CASES])
def test_filter(case: FilterCase) -> None:
    args = added_args(case.added) if case.added is not None else None
    plugin, snap = plugin_for([make_node(case.node_name, labels=case.labels)], args)
    pod = make_pod("p", spec=case.spec)
    state = CycleState()
    if case.run_pre_filter:
        result, status = plugin.pre_filter(state, pod, snap.node_infos)
        if case.want_pre is None:
            assert status.code == Code.SUCCESS
        elif case.want_pre == "skip":
            assert status.code == Code.SKIP
        else:
            assert (status.code, status.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (case.want_pre,))
        assert result == (None if case.want_names is None else PreFilterResult(frozenset(case.want_names)))
    status = plugin.filter(state, pod, snap.node_infos[0])
    if case.want_filter is None:
        assert status.code == Code.SUCCESS
    else:
        assert (status.code, status.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (case.want_filter,))
    assert_batch_filter_agrees(plugin, state, pod, snap, np.zeros(1, dtype=np.int64))


LABEL1 = {"foo": "bar"}
LABEL2 = {"key": "value"}
LABEL3 = {"az": "az1"}
LABEL4 = {"abc": "az11", "def": "az22"}
LABEL5 = {"foo": "bar", "key": "value", "az": "az1"}
AFFINITY1 = preferred((2, term([expr("foo", "In", "bar")])))
AFFINITY2 = preferred(
    (2, term([expr("foo", "In", "bar")])),
    (4, term([expr("key", "In", "value")])),
    (5, term([expr("foo", "In", "bar"), expr("key", "In", "value"), expr("az", "In", "az1")])),
)

# kubernetes/kubernetes pkg/scheduler/framework/plugins/nodeaffinity/node_affinity_test.go TestNodeAffinityPriority
# (id, pod spec, nodes (name, labels), added preferred terms, normalized scores)
SCORE_CASES: list[tuple[str, dict[str, Any], list[tuple[str, dict[str, str]]], list[tuple[int, dict[str, Any]]], list[int]]] = [
    ("no affinity: all zero", {}, [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL3)], [], [0, 0, 0]),
    ("no node matches", AFFINITY1, [("node1", LABEL4), ("node2", LABEL2), ("node3", LABEL3)], [], [0, 0, 0]),
    ("only node1 matches", AFFINITY1, [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL3)], [], [100, 0, 0]),
    # 2/11 and 4/11 of 100 truncate to 18 and 36.
    ("different priorities, truncated", AFFINITY2, [("node1", LABEL1), ("node5", LABEL5), ("node2", LABEL2)], [], [18, 100, 36]),
    ("added affinity", {}, [("node1", LABEL1), ("node2", LABEL2)], [(2, term([expr("foo", "In", "bar")]))], [100, 0]),
    (
        "added affinity and pod affinity",
        AFFINITY1,
        [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL5)],
        [(3, term([expr("key", "In", "value")]))],
        [40, 60, 100],
    ),
]


@pytest.mark.parametrize(("spec", "nodes", "added", "want"), [c[1:] for c in SCORE_CASES], ids=[c[0] for c in SCORE_CASES])
@pytest.mark.parametrize("run_pre_score", [True, False], ids=["prescore", "no-prescore"])
def test_score(
    spec: dict[str, Any],
    nodes: list[tuple[str, dict[str, str]]],
    added: list[tuple[int, dict[str, Any]]],
    want: list[int],
    run_pre_score: bool,
) -> None:
    plugin, snap = plugin_for([make_node(n, labels=lab) for n, lab in nodes], added_args(None, tuple(added)) if added else None)
    pod = make_pod("p", spec=spec)
    state = CycleState()
    if run_pre_score:
        status = plugin.pre_score(state, pod, snap.node_infos)
        assert status.code == (Code.SKIP if not spec and not added else Code.SUCCESS)
    raw = []
    for info in snap.node_infos:
        value, status = plugin.score(state, pod, info)
        assert status.success
        raw.append(value)
    scores = np.asarray(raw, dtype=np.int64)
    assert plugin.normalize_score(state, pod, scores).success
    assert scores.tolist() == want
    assert_batch_score_agrees(plugin, state, pod, snap, np.arange(len(nodes), dtype=np.int64))


def test_pre_score_errors_on_a_broken_preferred_term() -> None:
    # node_affinity_test.go "PreScore returns error when an incoming Pod has a broken affinity"
    plugin, snap = plugin_for([make_node("node1", labels=LABEL1)])
    pod = make_pod("p", spec=preferred((2, term([expr("invalid key", "In", "bar")]))))
    status = plugin.pre_score(CycleState(), pod, snap.node_infos)
    assert status.code == Code.ERROR
    assert status.message == (
        '[0].matchExpressions[0].key: Invalid value: "invalid key": name part must consist of alphanumeric characters, '
        "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
        "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
    )


def test_matchfields_need_exactly_one_value() -> None:
    # component-helpers nodeaffinity: a field requirement with several values does not parse.
    plugin, snap = plugin_for([make_node("node1")])
    pod = make_pod("p", spec=required(term(fields=[name_is("node1", "node2")])))
    state = CycleState()
    result, status = plugin.pre_filter(state, pod, snap.node_infos)
    assert status.success and result == PreFilterResult(frozenset({"node1", "node2"}))
    assert plugin.filter(state, pod, snap.node_infos[0]).reasons == (REASON_POD,)


def test_broken_added_affinity_is_refused() -> None:
    with pytest.raises(ValueError, match=r"parsing addedAffinity\.requiredDuringSchedulingIgnoredDuringExecution"):
        plugin_for([], added_args([term([expr("k", "In", "bad value!")])]))


def test_wrong_args_type_is_refused() -> None:
    with pytest.raises(TypeError, match="args are not of type NodeAffinityArgs, got dict"):
        nodeaffinity.new({}, FakeHandle(make_snapshot([])))


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("12", 12),
        ("-3", -3),
        ("+4", 4),
        ("0204", 204),
        ("1_0", None),
        (" 1", None),
        ("", None),
        ("9223372036854775807", 2**63 - 1),
        ("9223372036854775808", None),
    ],
    ids=["plain", "negative", "plus", "leading-zero", "underscore", "space", "empty", "max", "overflow"],
)
def test_parse_int64(text: str, want: int | None) -> None:
    assert parse_int64(text) == want


def test_events_to_register() -> None:
    assert NodeAffinity().events_to_register() == [ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_LABEL)]


# ----- property: batch == per node ---------------------------------------------------------
KEYS = ["a", "b", "c"]
VALUES = ["1", "2", "10", "x", "1_0"]
OPS = ["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]


@st.composite
def requirement_st(draw: st.DrawFn) -> dict[str, Any]:
    op = draw(st.sampled_from(OPS))
    key = draw(st.sampled_from(KEYS))
    if op in ("In", "NotIn"):
        # "bad value!" is not a valid label value: the term never parses.
        return expr(key, op, *draw(st.lists(st.sampled_from([*VALUES, "bad value!"]), min_size=1, max_size=3)))
    if op in ("Gt", "Lt"):
        return expr(key, op, draw(st.sampled_from(["0", "1", "5", "-1", "010"])))
    return expr(key, op)


@st.composite
def term_st(draw: st.DrawFn, node_names: list[str]) -> dict[str, Any]:
    exprs = draw(st.lists(requirement_st(), max_size=3))
    fields = draw(
        st.lists(
            st.builds(
                lambda v, op: name_is(*v, op=op),
                st.lists(st.sampled_from([*node_names, "ghost"]), min_size=1, max_size=2),
                st.sampled_from(["In", "NotIn"]),
            ),
            max_size=2,
        )
    )
    return term(exprs or None, fields or None)


def parses(raw_term: dict[str, Any]) -> bool:
    return term_parse_error(parse_node_selector_term(raw_term, "")) is None


@settings(max_examples=examples(400), deadline=None)
@given(data=st.data())
def test_batch_agrees_with_per_node(data: st.DataObject) -> None:
    n = data.draw(st.integers(1, 7), label="nodes")
    names = [f"n{i}" for i in range(n)]
    labels = [data.draw(st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=3)) for _ in names]
    nodes = [make_node(name, labels=lab) for name, lab in zip(names, labels, strict=True)]
    spec: dict[str, Any] = {}
    if data.draw(st.booleans(), label="selector"):
        spec["nodeSelector"] = data.draw(st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=2))
    node_aff: dict[str, Any] = {}
    if data.draw(st.booleans(), label="required"):
        terms = data.draw(st.lists(term_st(names), max_size=3))
        node_aff["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": terms}
    prefs = data.draw(st.lists(st.tuples(st.integers(1, 100), term_st(names)), max_size=3), label="preferred")
    if prefs:
        node_aff["preferredDuringSchedulingIgnoredDuringExecution"] = [{"weight": w, "preference": t} for w, t in prefs]
    if node_aff:
        spec["affinity"] = {"nodeAffinity": node_aff}
    args = None
    if data.draw(st.booleans(), label="added"):
        # addedAffinity must parse (validation refuses it otherwise), so keep only terms that do.
        added_req = [t for t in data.draw(st.lists(term_st(names), max_size=2)) if parses(t)]
        added_pref = [p for p in data.draw(st.lists(st.tuples(st.integers(1, 100), term_st(names)), max_size=2)) if parses(p[1])]
        args = added_args(added_req if data.draw(st.booleans()) else None, tuple(added_pref))
    plugin, snap = plugin_for(nodes, args)
    pod = make_pod("p", spec=spec)
    positions = np.asarray(data.draw(st.permutations(range(n)), label="order")[: data.draw(st.integers(0, n))], dtype=np.int64)
    for run_pre_filter in (True, False):
        state = CycleState()
        if run_pre_filter:
            plugin.pre_filter(state, pod, snap.node_infos)
        assert_batch_filter_agrees(plugin, state, pod, snap, positions)
    state = CycleState()
    pre_score = plugin.pre_score(state, pod, snap.node_infos)
    if pre_score.code == Code.ERROR:
        with pytest.raises(ValueError, match=re.escape(pre_score.message)):
            plugin.score_batch(state, pod, snap, positions)
        return
    assert_batch_score_agrees(plugin, state, pod, snap, positions)
