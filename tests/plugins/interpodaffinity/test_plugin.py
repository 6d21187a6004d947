"""InterPodAffinity wiring: factory, args, extension points, events, and batch-vs-per-node properties."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from scheduler.api.objects import Pod
from scheduler.config.args import InterPodAffinityArgs
from scheduler.config.errors import ConfigError
from scheduler.framework.nodeinfo import PodInfo
from scheduler.framework.types import ActionType, ClusterEvent, Code, CycleState
from scheduler.plugins.interpodaffinity import NAME, InterPodAffinity, filtering, new, scoring
from tests.plugins.interpodaffinity._helpers import affinity, node, pod, setup, term
from tests.support.builders import make_snapshot
from tests.support.examples import examples
from tests.support.fakes import FakeHandle


def test_factory_defaults() -> None:
    plugin = new(None, FakeHandle(make_snapshot([])))
    assert isinstance(plugin, InterPodAffinity)
    assert plugin.name == NAME == "InterPodAffinity"
    assert plugin.hard_pod_affinity_weight == 1
    assert plugin.ignore_preferred_terms_of_existing_pods is False
    assert plugin.pre_filter_extensions() is plugin
    assert plugin.score_extensions() is plugin


@pytest.mark.parametrize("weight", [-1, 101], ids=["below range", "above range"])
def test_factory_rejects_weight_out_of_range(weight: int) -> None:
    args = InterPodAffinityArgs(hard_pod_affinity_weight=weight)
    with pytest.raises(ConfigError, match=rf"^hardPodAffinityWeight: Invalid value: {weight}: not in valid range \[0, 100\]$"):
        new(args, FakeHandle(make_snapshot([])))


def test_factory_rejects_other_args_types() -> None:
    with pytest.raises(TypeError, match="want args to be of type InterPodAffinityArgs, got dict"):
        new({}, FakeHandle(make_snapshot([])))


def test_events_to_register() -> None:
    plugin = new(None, FakeHandle(make_snapshot([])))
    assert plugin.events_to_register() == [
        ClusterEvent("Pod", ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE),
        ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT),
    ]


def test_pre_filter_skip_only_when_nothing_applies() -> None:
    anti = affinity(anti_required=[term("app", "Exists", topology="zone")])
    nodes = [node("a", {"zone": "z1"})]
    plugin, snap = setup(nodes, [pod({"other": "1"}, node="a", aff=anti)])
    cycle = CycleState()
    # An existing pod has required anti-affinity, but it does not match this pod: Skip.
    assert plugin.pre_filter(cycle, pod({"x": "y"}), snap.node_infos)[1].code == Code.SKIP
    assert cycle.get(filtering.PRE_FILTER_STATE_KEY) is None
    # It matches this one: the state is written and Filter runs.
    assert plugin.pre_filter(cycle, pod({"app": "1"}), snap.node_infos)[1].success
    assert cycle.get(filtering.PRE_FILTER_STATE_KEY) is not None


def test_add_pod_during_preemption_dry_run_uses_cloned_state() -> None:
    nodes = [node("a", {"zone": "z1"}), node("b", {"zone": "z2"})]
    plugin, snap = setup(nodes, [])
    incoming = pod({"app": "web"}, aff=affinity(anti_required=[term("app", "In", ["web"], topology="zone")]))
    cycle = CycleState()
    assert plugin.pre_filter(cycle, incoming, snap.node_infos)[1].success
    twin = cycle.clone()
    node_a = snap.node_infos[0]
    assert plugin.add_pod(twin, incoming, PodInfo.of(pod({"app": "web"}, node="a")), node_a).success
    assert plugin.filter(twin, incoming, node_a).code == Code.UNSCHEDULABLE
    # The original cycle state is untouched by the dry run.
    assert plugin.filter(cycle, incoming, node_a).success


# ----- property: batch forms agree with per-node forms ---------------------------------------

NODE_KEYS = ["zone", "region", "rack"]
# zone is listed twice: most nodes carry it, so terms on it often meet.
TOPOLOGY_KEYS = ["zone", *NODE_KEYS, "kubernetes.io/hostname", "missing"]
POD_KEYS = ["app", "tier"]
POD_VALUES = ["x", "y"]
NAMESPACES = {"default": {}, "ns1": {"team": "t1"}, "ns2": {"team": "t2"}}

_values = st.lists(st.sampled_from(POD_VALUES), min_size=1, max_size=2, unique=True)
_expr = st.one_of(
    st.builds(lambda k, v: {"key": k, "operator": "In", "values": v}, st.sampled_from(POD_KEYS), _values),
    st.builds(lambda k, v: {"key": k, "operator": "NotIn", "values": v}, st.sampled_from(POD_KEYS), _values),
    st.builds(lambda k: {"key": k, "operator": "Exists"}, st.sampled_from(POD_KEYS)),
    st.builds(lambda k: {"key": k, "operator": "DoesNotExist"}, st.sampled_from(POD_KEYS)),
)
_namespaces = st.sampled_from(
    [
        {},
        {"namespaces": ["ns1"]},
        {"namespaces": ["default", "ns2"]},
        {"namespaceSelector": {}},
        {"namespaceSelector": {"matchLabels": {"team": "t1"}}},
        {"namespaceSelector": {"matchExpressions": [{"key": "team", "operator": "DoesNotExist"}]}},
    ]
)
_term = st.builds(
    lambda exprs, topo, ns: {"labelSelector": {"matchExpressions": exprs}, "topologyKey": topo, **ns},
    st.lists(_expr, max_size=2),
    st.sampled_from(TOPOLOGY_KEYS),
    _namespaces,
)
_weighted = st.tuples(st.integers(1, 100), _term)
# Each section is absent more often than not, so every Filter check gets its turn to reject.
_terms = st.sampled_from([0, 0, 1, 2]).flatmap(lambda n: st.lists(_term, min_size=n, max_size=n))
_weighted_terms = st.sampled_from([0, 1, 2]).flatmap(lambda n: st.lists(_weighted, min_size=n, max_size=n))
_affinity = st.one_of(st.none(), st.builds(affinity, _terms, _weighted_terms, _terms, _weighted_terms))
_pod_labels = st.dictionaries(st.sampled_from(POD_KEYS), st.sampled_from(POD_VALUES), max_size=2)
_namespace = st.sampled_from(["default", "ns1", "ns2", "unlisted"])


@st.composite
def clusters(draw: Any) -> tuple[list[Any], list[Pod], Pod, InterPodAffinityArgs]:
    """Random nodes, existing pods, an incoming pod and plugin args."""
    value = st.sampled_from(["a", "b", "c"])
    labels_of = st.one_of(
        st.fixed_dictionaries({"zone": value}, optional={"region": value, "rack": value}),
        st.dictionaries(st.sampled_from(NODE_KEYS), value),
    )
    node_labels = draw(st.lists(labels_of, min_size=1, max_size=6))
    nodes = [node(f"n{i}", labels) for i, labels in enumerate(node_labels)]
    existing = [
        pod(labels, node=f"n{idx % len(nodes)}", namespace=ns, aff=aff)
        for labels, idx, ns, aff in draw(st.lists(st.tuples(_pod_labels, st.integers(0, 5), _namespace, _affinity), max_size=8))
    ]
    # The incoming pod nearly always has some affinity, so PreFilter and PreScore rarely Skip.
    incoming_affinity = st.one_of(st.none(), *[st.builds(affinity, _terms, _weighted_terms, _terms, _weighted_terms)] * 4)
    incoming = pod(draw(_pod_labels), namespace=draw(_namespace), aff=draw(incoming_affinity))
    args = InterPodAffinityArgs(
        hard_pod_affinity_weight=draw(st.integers(0, 100)),
        ignore_preferred_terms_of_existing_pods=draw(st.booleans()),
    )
    return nodes, existing, incoming, args


def _counts(state: filtering.PreFilterState) -> tuple[dict[tuple[str, str], int], ...]:
    return (state.existing_anti_affinity_counts, state.affinity_counts, state.anti_affinity_counts)


@settings(max_examples=examples(400), deadline=None)
@given(cluster=clusters(), data=st.data())
def test_batch_forms_match_per_node_forms(cluster: tuple[list[Any], list[Pod], Pod, InterPodAffinityArgs], data: Any) -> None:
    nodes, existing, incoming, args = cluster
    plugin, snap = setup(nodes, existing, NAMESPACES, args)
    order = data.draw(st.permutations(list(range(snap.num_nodes))))
    positions = np.array(order[: data.draw(st.integers(min(1, len(order)), len(order)))], dtype=np.int64)

    cycle = CycleState()
    _, pre = plugin.pre_filter(cycle, incoming, snap.node_infos)
    if pre.success:
        batch = plugin.filter_batch(cycle, incoming, snap, positions)
        for i, pos in enumerate(positions):
            want = plugin.filter(cycle, incoming, snap.node_infos[pos])
            # Coverage of each verdict shows with --hypothesis-show-statistics.
            event(f"filter verdict {want.code.label} {want.reasons}")
            assert int(batch.codes[i]) == int(want.code)
            if want.code != Code.SUCCESS:
                assert batch.reasons(i) == want.reasons
    else:
        assert pre.code == Code.SKIP

    pre_score = plugin.pre_score(cycle, incoming, snap.node_infos)
    if not pre_score.success:
        assert pre_score.code == Code.SKIP
        return
    per_node = np.array([plugin.score(cycle, incoming, snap.node_infos[p])[0] for p in positions], dtype=np.int64)
    batch_scores = plugin.score_batch(cycle, incoming, snap, positions)
    assert batch_scores.tolist() == per_node.tolist()
    event(f"distinct raw scores {len(set(per_node.tolist()))}")
    plugin.normalize_score(cycle, incoming, per_node)
    plugin.normalize_score(cycle, incoming, batch_scores)
    assert batch_scores.tolist() == per_node.tolist()
    assert all(0 <= s <= 100 for s in per_node.tolist())


@settings(max_examples=examples(100), deadline=None)
@given(cluster=clusters(), which=st.integers(0, 7))
def test_add_remove_pod_matches_recomputed_state(
    cluster: tuple[list[Any], list[Pod], Pod, InterPodAffinityArgs], which: int
) -> None:
    nodes, existing, incoming, _ = cluster
    if not existing:
        return
    moved = existing[which % len(existing)]
    rest = [p for p in existing if p is not moved]
    _, with_all = setup(nodes, existing, NAMESPACES)
    _, without = setup(nodes, rest, NAMESPACES)
    # The same Namespace objects exist either way; only the pod moved.
    without.namespaces = dict(with_all.namespaces)
    full = filtering.compute_pre_filter_state(incoming, with_all, with_all.node_infos)
    partial = filtering.compute_pre_filter_state(incoming, without, without.node_infos)
    target = with_all.get(moved.node_name)
    assert target is not None
    added = partial.clone()
    added.update_with_pod(PodInfo.of(moved), target.node, 1)
    assert _counts(added) == _counts(full)
    removed = full.clone()
    removed.update_with_pod(PodInfo.of(moved), target.node, -1)
    assert _counts(removed) == _counts(partial)


@settings(max_examples=examples(300), deadline=None)
@given(cluster=clusters())
def test_counted_states_equal_a_full_walk(cluster: tuple[list[Any], list[Pod], Pod, InterPodAffinityArgs]) -> None:
    """PreFilter's and PreScore's counts read from the snapshot's selector counters and affinity
    groups equal the counts found by walking every pod on every node."""
    nodes, existing, incoming, args = cluster
    _, snap = setup(nodes, existing, NAMESPACES, args)
    counted = filtering.compute_pre_filter_state(incoming, snap, snap.node_infos)
    info = filtering.incoming_pod_info(incoming, snap.namespaces)
    ns_labels = filtering.namespace_labels(snap, incoming.namespace)
    walked_existing = filtering.existing_anti_affinity_counts(incoming, ns_labels, snap.nodes_with_required_anti_affinity_pods())
    walked_affinity, walked_anti = filtering.incoming_affinity_counts(info, snap.node_infos)
    assert _counts(counted) == (walked_existing, walked_affinity, walked_anti)

    weight, ignore = args.hard_pod_affinity_weight, args.ignore_preferred_terms_of_existing_pods
    fast, fast_status = scoring.compute_pre_score(incoming, snap, snap.node_infos, weight, ignore)
    # A copy of the node list is not the snapshot's own: the walk runs.
    slow, slow_status = scoring.compute_pre_score(incoming, snap, list(snap.node_infos), weight, ignore)
    assert fast_status.code == slow_status.code
    assert (fast.topology_score if fast else None) == (slow.topology_score if slow else None)


@settings(max_examples=examples(200), deadline=None)
@given(cluster=clusters())
def test_tables_from_pending_sums_equal_tables_from_the_counts(
    cluster: tuple[list[Any], list[Pod], Pod, InterPodAffinityArgs],
) -> None:
    """Batch Filter's lookup tables read straight from the per-code sums equal the ones built from
    the materialized dicts, and `has` equals the dicts' emptiness, before and after materializing."""
    nodes, existing, incoming, args = cluster
    _, snap = setup(nodes, existing, NAMESPACES, args)
    lazy = filtering.compute_pre_filter_state(incoming, snap, snap.node_infos)
    eager = lazy.clone()
    has_before = {which: lazy.has(which) for which in ("existing", "affinity", "anti")}
    counts = dict(zip(("existing", "affinity", "anti"), _counts(eager), strict=True))
    for which in ("existing", "affinity", "anti"):
        assert has_before[which] == bool(counts[which]) == eager.has(which)
        if not counts[which]:
            continue
        from_sums = filtering._tables(lazy, which, snap)
        from_dicts = filtering._tables(eager, which, snap)
        assert from_sums.keys() == from_dicts.keys()
        for key in from_sums:
            # Same count at every label code; the spare slot (absent label) reads 0 in both.
            assert from_sums[key].tolist() == from_dicts[key].tolist()
    batch_lazy = filtering.filter_batch(lazy, snap, np.arange(snap.num_nodes, dtype=np.int64))
    batch_eager = filtering.filter_batch(eager, snap, np.arange(snap.num_nodes, dtype=np.int64))
    assert batch_lazy.codes.tolist() == batch_eager.codes.tolist()


@settings(max_examples=examples(200), deadline=None)
@given(cluster=clusters())
def test_scores_from_per_code_arrays_equal_scores_from_the_walk(
    cluster: tuple[list[Any], list[Pod], Pod, InterPodAffinityArgs],
) -> None:
    """Batch Score reading PreScore's per-code arrays gives every node the score the walked
    (key -> value -> weight) map gives it, per node and in batch."""
    nodes, existing, incoming, args = cluster
    _, snap = setup(nodes, existing, NAMESPACES, args)
    weight, ignore = args.hard_pod_affinity_weight, args.ignore_preferred_terms_of_existing_pods
    fast, _ = scoring.compute_pre_score(incoming, snap, snap.node_infos, weight, ignore)
    slow, _ = scoring.compute_pre_score(incoming, snap, list(snap.node_infos), weight, ignore)
    assert (fast is None) == (slow is None)
    if fast is None or slow is None:
        return
    positions = np.arange(snap.num_nodes, dtype=np.int64)
    from_arrays = scoring.score_batch(fast, snap, positions).tolist()
    assert from_arrays == scoring.score_batch(slow, snap, positions).tolist()
    assert from_arrays == [scoring.score_node(slow, info.node) for info in snap.node_infos]
    assert fast.empty == slow.empty
