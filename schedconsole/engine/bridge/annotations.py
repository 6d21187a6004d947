"""Each attempt's result written on the pod of the simulated cluster, as kube-scheduler-simulator
writes it (kubernetes-sigs/kube-scheduler-simulator `simulator/scheduler/plugin/annotation`): the
selected node, every evaluated node's filter results ("passed", or the first failing plugin's
reasons; plugins after it did not run), the scores after NormalizeScore, the weighted scores and the
nominated node of a preemption, within Kubernetes' 256 KiB limit on a pod's annotations. Not the
simulator's result-history: it repeats every attempt's results on the pod (tens of kilobytes each on
the demo's 48 nodes, written with the pod on every attempt); the console keeps them as the pod's
attempts (`/api/pods/<ns>/<name>/attempts/`). The simulator's score-result holds the
raw scores before NormalizeScore; the attempt record keeps normalized scores only, so both maps
hold normalized scores and finalscore-result multiplies them by the plugin's weight.

Written once per attempt (records updated later, such as a Waiting pod released from Permit, keep
what the attempt wrote) and only on a pod neither bound nor being bound.
"""

from __future__ import annotations

import json
from typing import Any

from scheduler.eventhandlers import RESULT_ANNOTATION_PREFIX as PREFIX
from scheduler.records import AttemptRecord

SELECTED_NODE = PREFIX + "selected-node"
FILTER_RESULT = PREFIX + "filter-result"
SCORE_RESULT = PREFIX + "score-result"
FINAL_SCORE_RESULT = PREFIX + "finalscore-result"
POST_FILTER_RESULT = PREFIX + "postfilter-result"
TOTAL_LIMIT = 256 * 1024  # kube-apiserver's TotalAnnotationSizeLimitB
MAX_NODES = 100  # nodes kept in each per-node map: failing nodes first met, scored nodes by total


def _dump(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def result_annotations(record: AttemptRecord, filter_plugins: list[str], max_nodes: int = MAX_NODES) -> dict[str, str]:
    """The attempt's result as kube-scheduler-simulator's annotations (values are JSON strings),
    assembled from JSON fragments: a node that passed every filter shares one, and the plugins'
    quoted names are made once (json.dumps of the nested dicts took 1 ms an attempt on 48 nodes)."""
    quote = json.dumps
    passed_all = _dump(dict.fromkeys(filter_plugins, "passed"))
    filters: dict[str, str] = {}
    for node, plugin, code, reasons in record.failure_rows():
        if len(filters) >= max_nodes:
            break
        ran = filter_plugins[: filter_plugins.index(plugin)] if plugin in filter_plugins else []
        filters[node] = _dump({**dict.fromkeys(ran, "passed"), plugin: "; ".join(reasons) or code})
    scores: list[str] = []
    final: list[str] = []
    so = record.score_outcome
    if so is not None and so.plugins:
        keys = [quote(p) + ":" for p in so.plugins]
        cols = so.top_columns(max_nodes)
        columns = so.matrix[:, cols].T.tolist()
        for j, column in zip(cols, columns, strict=True):
            node = record.names[int(so.positions[j])]
            filters.setdefault(node, passed_all)
            head = quote(node) + ":{"
            scores.append(head + ",".join(f'{k}"{v}"' for k, v in zip(keys, column, strict=True)) + "}")
            weighted = zip(keys, column, so.weights, strict=True)
            final.append(head + ",".join(f'{k}"{v * w}"' for k, v, w in weighted) + "}")
    if record.node:
        filters.setdefault(record.node, passed_all)
    post: dict[str, dict[str, str]] = {}
    if record.nominated_node:
        post[record.nominated_node] = {"DefaultPreemption": "preemption victim"}
    out = {
        FILTER_RESULT: "{" + ",".join(f"{quote(n)}:{v}" for n, v in filters.items()) + "}",
        SCORE_RESULT: "{" + ",".join(scores) + "}",
        FINAL_SCORE_RESULT: "{" + ",".join(final) + "}",
        POST_FILTER_RESULT: _dump(post),
    }
    if record.node:
        out[SELECTED_NODE] = record.node
    return out


def result_patch(existing: dict[str, str], results: dict[str, str]) -> dict[str, str | None]:
    """The merge patch writing `results` over the previous attempt's (a selected node this attempt
    did not select is removed); empty when the pod's annotations would pass the 256 KiB limit."""
    patch: dict[str, str | None] = dict(results)
    if SELECTED_NODE in existing and SELECTED_NODE not in results:
        patch[SELECTED_NODE] = None
    others = sum(len(k.encode()) + len(v.encode()) for k, v in existing.items() if k not in patch)
    own = sum(len(k.encode()) + len(v.encode()) for k, v in results.items())
    return patch if others + own <= TOTAL_LIMIT else {}
