"""Each attempt's result is written on its pod in the simulated cluster, with kube-scheduler-simulator's
annotation keys and value shapes, kept across a restart, and the write is not a change that makes a
pending pod's next attempt look different."""

from __future__ import annotations

import json

from schedconsole.cluster.models import ClusterObject
from schedconsole.engine.bridge.annotations import result_patch
from scheduler.api.meta import ObjectMeta
from scheduler.api.objects import parse_pod
from scheduler.cluster.events import WatchEvent
from scheduler.eventhandlers import results_only
from tests.console.conftest import pod, settle
from tests.support.builders import pod_doc
from tests.support.waits import wait_for

KEY = "kube-scheduler-simulator.sigs.k8s.io/"


def _annotations(api, name: str) -> dict[str, str]:
    return api.get(f"/api/pods/default/{name}/").json()["manifest"]["metadata"].get("annotations", {})


def test_a_placed_pod_carries_why_it_went_where(engine, api) -> None:
    api.post("/api/pods/", pod("placed", cpu="500m"), format="json")
    node = wait_for(lambda: api.get("/api/pods/default/placed/").json()["node"])
    settle(engine)
    notes = _annotations(api, "placed")
    assert notes[KEY + "selected-node"] == node
    filters = json.loads(notes[KEY + "filter-result"])
    assert set(filters) == {"node-a", "node-b", "node-c"}  # every node passed every filter
    assert filters[node]["NodeResourcesFit"] == "passed" and set(filters[node].values()) == {"passed"}
    scores, final = json.loads(notes[KEY + "score-result"]), json.loads(notes[KEY + "finalscore-result"])
    assert set(scores) == set(final) == {"node-a", "node-b", "node-c"}
    # As kube-scheduler-simulator's resultstore: score-result holds each Score plugin's raw score,
    # finalscore-result the score after NormalizeScore times the plugin's weight. TaintToleration
    # counts a node's intolerable PreferNoSchedule taints (none here: raw 0), normalized reversed
    # to 100, weight 3; NodeResourcesFit does not normalize (weight 1: both maps agree).
    assert {scores[n]["TaintToleration"] for n in scores} == {"0"}
    assert {final[n]["TaintToleration"] for n in final} == {"300"}
    assert all(final[n]["NodeResourcesFit"] == scores[n]["NodeResourcesFit"] for n in scores)
    stored = ClusterObject.objects.get(kind="Pod", name="placed", deleted=False)
    assert stored.node_name == node  # the annotation write did not undo the binding's row
    assert stored.document["metadata"]["annotations"][KEY + "selected-node"] == node


def test_a_pod_that_fits_nowhere_says_which_filter_stopped_it_on_each_node(engine, api) -> None:
    api.post("/api/pods/", pod("huge", cpu="64"), format="json")
    wait_for(lambda: KEY + "filter-result" in _annotations(api, "huge"))
    settle(engine)
    notes = _annotations(api, "huge")
    assert KEY + "selected-node" not in notes
    filters = json.loads(notes[KEY + "filter-result"])
    assert filters["node-a"]["NodeResourcesFit"] == "Insufficient cpu"
    assert filters["node-a"]["NodeUnschedulable"] == "passed"  # plugins before the failing one passed
    assert "PodTopologySpread" not in filters["node-a"]  # plugins after it did not run
    assert json.loads(notes[KEY + "score-result"]) == {}
    # The write did not count as a change that retries the pod at once: one attempt, not a loop.
    settle(engine)
    assert api.get("/api/pods/default/huge/attempts/").json()["count"] == 1


def test_writing_results_is_not_a_change_a_retry_depends_on() -> None:
    base = _pod_object({"team": "a"})
    results = base.with_changes(meta=_meta(base, {"team": "a", KEY + "selected-node": "n1"}))
    assert results_only(WatchEvent("Pod", "MODIFIED", base, results))
    other = base.with_changes(meta=_meta(base, {"team": "b"}))
    assert not results_only(WatchEvent("Pod", "MODIFIED", base, other))  # plugins may read other annotations
    moved = results.with_changes(node_name="n1")
    assert not results_only(WatchEvent("Pod", "MODIFIED", base, moved))


def test_a_result_too_big_for_the_pod_is_not_written_and_a_stale_selected_node_goes() -> None:
    existing = {"team": "a", KEY + "selected-node": "n1"}
    results = {KEY + "filter-result": "{}"}
    assert result_patch(existing, results) == {**results, KEY + "selected-node": None}
    assert result_patch({"big": "x" * 262_144}, results) == {}  # beyond kube-apiserver's 256 KiB


def _pod_object(annotations: dict[str, str]):
    return parse_pod(pod_doc("p", "default", "100m", "64Mi", annotations=annotations))


def _meta(pod, annotations: dict[str, str]) -> ObjectMeta:
    fields = {f: getattr(pod.meta, f) for f in pod.meta.__slots__}
    return ObjectMeta(**{**fields, "annotations": annotations})


def _reference(record, filter_plugins: list[str], max_nodes: int) -> dict[str, str]:
    """The annotations built the plain way: nested dicts, then json.dumps (the format as first
    written, before it was assembled from fragments)."""
    dump = lambda value: json.dumps(value, separators=(",", ":"))  # noqa: E731
    filters: dict[str, dict[str, str]] = {}
    for node, plugin, code, reasons in record.failure_rows():
        if len(filters) >= max_nodes:
            break
        ran = filter_plugins[: filter_plugins.index(plugin)] if plugin in filter_plugins else []
        filters[node] = {**dict.fromkeys(ran, "passed"), plugin: "; ".join(reasons) or code}
    scores = record.scores(max_nodes)
    so = record.score_outcome
    raw: dict[str, dict[str, int]] = {}
    if so is not None and so.plugins:
        before = so.raw if so.raw is not None else so.matrix
        for j in so.top_columns(max_nodes):
            raw[record.names[int(so.positions[j])]] = {p: int(before[r, j]) for r, p in enumerate(so.plugins)}
    weight = dict(zip(so.plugins, so.weights, strict=True)) if so is not None and so.plugins else {}
    for node in scores:
        filters.setdefault(node, dict.fromkeys(filter_plugins, "passed"))
    if record.node:
        filters.setdefault(record.node, dict.fromkeys(filter_plugins, "passed"))
    out = {
        KEY + "filter-result": dump(filters),
        KEY + "score-result": dump({n: {p: str(v) for p, v in per.items()} for n, per in raw.items()}),
        KEY + "finalscore-result": dump({n: {p: str(v * weight[p]) for p, v in per.items()} for n, per in scores.items()}),
        KEY + "postfilter-result": dump(
            {record.nominated_node: {"DefaultPreemption": "preemption victim"}} if record.nominated_node else {}
        ),
    }
    if record.node:
        out[KEY + "selected-node"] = record.node
    return out


def test_the_fragments_make_the_same_text_as_the_plain_build() -> None:
    # Assembled from fragments (quoted names cached, a %-template per scored node) to cut the
    # build from 170 to 60 us an attempt on 48 nodes: the text must stay byte for byte the same.
    from schedconsole.engine import bridge, demo
    from schedconsole.engine.bridge.annotations import result_annotations

    records = []
    hooks = bridge.Hooks(on_record=lambda record, update: records.append(record))
    docs = [bridge.with_defaults(d, d["kind"]) for d in demo.cluster_documents()]
    engine = bridge.Engine.build(demo.config_document(), bridge.load_objects(docs, "seed"), hooks, seed=1)
    engine.annotate_results = False
    for _ in range(3000):
        if not engine.step():
            break
    extra = [
        pod("huge", cpu="64"),  # fails NodeResourcesFit everywhere
        pod("gpu", tolerations=[{"key": "dedicated", "operator": "Exists"}], nodeSelector={"accelerator": "gpu"}),
        pod("nowhere", nodeSelector={"no": "such"}),  # a PreFilter-free node affinity miss on every node
    ]
    engine.create_objects(engine.load_new(extra, "test"), extra)
    for _ in range(100):
        if not engine.step():
            break
    assert {r.outcome for r in records} >= {"Scheduled", "Unschedulable"} and any(r.nominated_node for r in records)
    # Raw scores differ from normalized ones where a plugin normalizes (TaintToleration on the
    # PreferNoSchedule-tainted nodes, NodeAffinity, PodTopologySpread, ...).
    assert any(
        r.score_outcome is not None and r.score_outcome.raw is not None and (r.score_outcome.raw != r.score_outcome.matrix).any()
        for r in records
    )
    for record in records:
        fwk = engine.scheduler.profiles[record.profile]
        plugins = fwk.plugin_names("filter")
        for max_nodes in (100, 5):
            assert result_annotations(record, plugins, max_nodes) == _reference(record, plugins, max_nodes), record.pod
    # Off, the engine keeps no raw scores (the copy costs a little every attempt).
    engine.set_annotate_results(False)
    engine.create_objects(engine.load_new([pod("after")], "test"), [pod("after")])
    while engine.step():
        pass
    assert records[-1].pod == "default/after" and records[-1].score_outcome.raw is None
