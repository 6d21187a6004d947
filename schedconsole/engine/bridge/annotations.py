"""Each attempt's result written on the pod of the simulated cluster, as kube-scheduler-simulator
writes it (kubernetes-sigs/kube-scheduler-simulator `simulator/scheduler/plugin/annotation`): the
selected node, every evaluated node's filter results ("passed", or the first failing plugin's
reasons; plugins after it did not run), the raw scores (score-result), the scores after
NormalizeScore times the plugin's weight (finalscore-result) and the nominated node of a preemption, within Kubernetes' 256 KiB limit on a pod's annotations. Not the
simulator's result-history: it repeats every attempt's results on the pod (tens of kilobytes each on
the demo's 48 nodes, written with the pod on every attempt); the console keeps them as the pod's
attempts (`/api/pods/<ns>/<name>/attempts/`). The raw scores are the cycle's scores before
NormalizeScore, kept by the engine only while the annotations are on (`ScoreOutcome.raw`).

Written once per attempt (records updated later, such as a Waiting pod released from Permit, keep
what the attempt wrote) and only on a pod neither bound nor being bound.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

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


_QUOTED: dict[str, str] = {}
"""Node names as JSON strings: a cluster's names recur in every attempt (cleared past QUOTED_MAX)."""
QUOTED_MAX = 200_000


_TEMPLATES: dict[tuple[str, ...], str] = {}
"""Per score-plugin list: one node's map with a %d per plugin (`{"A":"%d","B":"%d"}`)."""


def _quoted(names: list[str]) -> list[str]:
    """Each name as a JSON string followed by a colon, from the cache."""
    cache = _QUOTED
    if len(cache) > QUOTED_MAX:
        cache.clear()
    out = []
    for name in names:
        q = cache.get(name)
        if q is None:
            q = cache[name] = json.dumps(name) + ":"
        out.append(q)
    return out


def result_annotations(record: AttemptRecord, filter_plugins: list[str], max_nodes: int = MAX_NODES) -> dict[str, str]:
    """The attempt's result as kube-scheduler-simulator's annotations (values are JSON strings),
    assembled from JSON fragments: a node that passed every filter shares one, a failing node's
    entry is made once per plugin and reasons, node names are quoted once per process, and each
    scored node's maps come from one %-format of a per-attempt template over its column of the
    score arrays (json.dumps of the nested dicts took 1 ms an attempt on 48 nodes; the per-value
    f-strings 170 us)."""
    passed_all = _dump(dict.fromkeys(filter_plugins, "passed"))
    failing: list[str] = []
    entries: list[str] = []
    made: dict[tuple[str, str], str] = {}
    for node, plugin, code, reasons in record.failure_rows():
        if len(failing) >= max_nodes:
            break
        reason = "; ".join(reasons) or code
        entry = made.get((plugin, reason))
        if entry is None:
            ran = filter_plugins[: filter_plugins.index(plugin)] if plugin in filter_plugins else []
            entry = made[(plugin, reason)] = _dump({**dict.fromkeys(ran, "passed"), plugin: reason})
        failing.append(node)
        entries.append(entry)
    scores = final = ""
    scored: list[str] = []
    so = record.score_outcome
    if so is not None and so.plugins:
        cols = so.top_columns(max_nodes)
        names = record.names
        scored = [names[p] for p in so.positions[cols].tolist()]
        heads = _quoted(scored)
        template = _TEMPLATES.get(tuple(so.plugins))
        if template is None:
            template = _TEMPLATES[tuple(so.plugins)] = "{" + ",".join(q + '"%d"' for q in _quoted(list(so.plugins))) + "}"
        raw = (so.raw if so.raw is not None else so.matrix)[:, cols]
        weighted = so.matrix[:, cols] * np.asarray(so.weights, dtype=np.int64)[:, None]
        scores = ",".join([h + template % tuple(c) for h, c in zip(heads, raw.T.tolist(), strict=True)])
        final = ",".join([h + template % tuple(c) for h, c in zip(heads, weighted.T.tolist(), strict=True)])
    seen = set(failing)
    for node in scored:
        if node not in seen:
            seen.add(node)
            failing.append(node)
            entries.append(passed_all)
    if record.node and record.node not in seen:
        failing.append(record.node)
        entries.append(passed_all)
    post: dict[str, dict[str, str]] = {}
    if record.nominated_node:
        post[record.nominated_node] = {"DefaultPreemption": "preemption victim"}
    out = {
        FILTER_RESULT: "{" + ",".join([q + e for q, e in zip(_quoted(failing), entries, strict=True)]) + "}",
        SCORE_RESULT: "{" + scores + "}",
        FINAL_SCORE_RESULT: "{" + final + "}",
        POST_FILTER_RESULT: _dump(post),
    }
    if record.node:
        out[SELECTED_NODE] = record.node
    return out


def _size(text: str) -> int:
    """UTF-8 bytes of the text (an ASCII string's length: no copy made to count them)."""
    return len(text) if text.isascii() else len(text.encode())


def result_patch(existing: dict[str, str], results: dict[str, str]) -> dict[str, str | None]:
    """The merge patch writing `results` over the previous attempt's (a selected node this attempt
    did not select is removed); empty when the pod's annotations would pass the 256 KiB limit."""
    patch: dict[str, str | None] = dict(results)
    if SELECTED_NODE in existing and SELECTED_NODE not in results:
        patch[SELECTED_NODE] = None
    others = sum(_size(k) + _size(v) for k, v in existing.items() if k not in patch)
    own = sum(_size(k) + _size(v) for k, v in results.items())
    return patch if others + own <= TOTAL_LIMIT else {}
