"""Control operations: what the web side may ask of the engine, by name, with JSON in and out.

Each runs on the engine thread between two scheduling cycles (see `host.EngineHost.call`).
"""

from __future__ import annotations

import base64
import gc
from collections.abc import Callable
from typing import Any

from schedconsole.engine import bridge

Op = Callable[[bridge.Engine, dict[str, Any]], Any]
# A creation of at least this many objects (an import) is kept out of the collector's full scans.
LONG_LIVED_BATCH = 1000


def keep_out_of_full_collections() -> None:
    """Collect once, then freeze what is left: the cluster's objects live until deleted (reference
    counting still frees them then; they hold no cycles), and the cyclic collector's full scans
    would otherwise walk all of them again and again while the engine schedules (with 10000
    imported pods, 70 ms a scan, a few scans a run with live clients connected)."""
    gc.collect()
    gc.freeze()


def _nodes(engine: bridge.Engine, payload: dict[str, Any]) -> Any:
    return engine.nodes(payload.get("zone", ""), payload.get("name", ""), payload.get("offset", 0), payload.get("limit"))


def _node(engine: bridge.Engine, payload: dict[str, Any]) -> Any:
    return engine.node_detail(payload["name"])


def _pods(engine: bridge.Engine, payload: dict[str, Any]) -> Any:
    filters = {key: payload.get(key, "") for key in ("namespace", "phase", "node", "profile")}
    return engine.pods(**filters, offset=payload.get("offset", 0), limit=payload.get("limit"))


def _pod(engine: bridge.Engine, payload: dict[str, Any]) -> Any:
    return engine.pod_detail(payload["namespace"], payload["name"])


def _queue(engine: bridge.Engine, payload: dict[str, Any]) -> Any:
    return engine.queue(payload.get("offset", 0), payload.get("limit"))


def _create(engine: bridge.Engine, payload: dict[str, Any]) -> Any:
    """Create objects from documents: all are checked before any is applied."""
    objects = engine.load_new(payload["documents"], payload.get("source", "upload"))
    counts = engine.create_objects(objects)
    if sum(counts.values()) >= LONG_LIVED_BATCH:
        keep_out_of_full_collections()
    return {"created": counts, "warnings": objects.warnings}


def _delete_pod(engine: bridge.Engine, payload: dict[str, Any]) -> Any:
    return engine.delete_pod(payload["namespace"], payload["name"])


def _whatif(engine: bridge.Engine, payload: dict[str, Any]) -> Any:
    return engine.whatif(payload["pod"], payload.get("profile"))


def _compare(engine: bridge.Engine, payload: dict[str, Any]) -> Any:
    return engine.compare(payload["pod"], list(payload.get("profiles") or []))


def _dispatch(engine: bridge.Engine, payload: dict[str, Any]) -> Any:
    body = base64.b64decode(payload.get("body", ""))
    status, content_type, content = engine.dispatch(payload["method"], payload["path"], body, payload.get("query") or {})
    return {"status": status, "contentType": content_type, "body": base64.b64encode(content).decode()}


def _debug_flags(engine: bridge.Engine, payload: dict[str, Any]) -> Any:
    return engine.debug_flags()


def _set_debug_flags(engine: bridge.Engine, payload: dict[str, Any]) -> Any:
    return engine.set_debug_flags(payload.get("debugTopNScores"), payload.get("debugFilterFailure"))


def _metrics(engine: bridge.Engine, payload: dict[str, Any]) -> Any:
    return engine.metrics_text().decode()


def _apply_config(engine: bridge.Engine, payload: dict[str, Any]) -> Any:
    engine.apply_config(payload["document"])
    return {"profiles": engine.profile_names()}


def _plugin_args(engine: bridge.Engine, payload: dict[str, Any]) -> Any:
    return engine.plugin_args()


def _stats(engine: bridge.Engine, payload: dict[str, Any]) -> Any:
    return engine.stats()


def _overview(engine: bridge.Engine, payload: dict[str, Any]) -> Any:
    return bridge.overview(engine)


def _nodes_page(engine: bridge.Engine, payload: dict[str, Any]) -> Any:
    return bridge.nodes_page(engine, payload.get("q", ""), payload.get("sort", "name"), payload.get("offset", 0), payload.get("limit", 50))


def _node_page(engine: bridge.Engine, payload: dict[str, Any]) -> Any:
    return bridge.node_page(engine, payload["name"])


def _pending_page(engine: bridge.Engine, payload: dict[str, Any]) -> Any:
    return bridge.pending_page(engine, payload.get("queue", ""), payload.get("q", ""), payload.get("offset", 0), payload.get("limit", 50))


def _explain(engine: bridge.Engine, payload: dict[str, Any]) -> Any:
    return bridge.explain(engine, payload["namespace"], payload["name"])


def _whatif_diff(engine: bridge.Engine, payload: dict[str, Any]) -> Any:
    return bridge.whatif_diff(engine, payload["pod"], payload.get("original"), payload.get("profile"))


def _compare_summary(engine: bridge.Engine, payload: dict[str, Any]) -> Any:
    return bridge.compare_summary(engine, payload["pod"], list(payload.get("profiles") or []))


def _nominated(engine: bridge.Engine, payload: dict[str, Any]) -> Any:
    return bridge.nominated(engine)


def _preemption_timeline(engine: bridge.Engine, payload: dict[str, Any]) -> Any:
    return bridge.preemption_timeline(engine, payload.get("offset", 0), payload.get("limit", 50))


def _plugin_timing(engine: bridge.Engine, payload: dict[str, Any]) -> Any:
    return engine.plugin_timing(payload.get("every"))


def _gangs(engine: bridge.Engine, payload: dict[str, Any]) -> Any:
    return bridge.gangs(engine)


def _threshold_preview(engine: bridge.Engine, payload: dict[str, Any]) -> Any:
    return bridge.threshold_preview(engine, payload["document"], payload["profile"], list(payload.get("pods") or []), bool(payload.get("nodes", True)))
def _k8s(engine: bridge.Engine, payload: dict[str, Any]) -> Any:
    return engine.k8s(payload)


def _cluster_status(engine: bridge.Engine, payload: dict[str, Any]) -> Any:
    return engine.cluster_status()


def _sync_start(engine: bridge.Engine, payload: dict[str, Any]) -> Any:
    return engine.sync_start(payload.get("kubeconfig", ""), payload.get("context", ""), bool(payload.get("inCluster")), bool(payload.get("keepBindings", True)))


def _sync_stop(engine: bridge.Engine, payload: dict[str, Any]) -> Any:
    return engine.sync_stop()


def _sync_status(engine: bridge.Engine, payload: dict[str, Any]) -> Any:
    return engine.sync_status()


def _ping(engine: bridge.Engine, payload: dict[str, Any]) -> Any:
    return {"pong": True, "now": engine.now()}


OPS: dict[str, Op] = {
    "nodes": _nodes,
    "node": _node,
    "pods": _pods,
    "pod": _pod,
    "queue": _queue,
    "create": _create,
    "delete_pod": _delete_pod,
    "whatif": _whatif,
    "compare": _compare,
    "dispatch": _dispatch,
    "debug_flags": _debug_flags,
    "set_debug_flags": _set_debug_flags,
    "metrics": _metrics,
    "apply_config": _apply_config,
    "plugin_args": _plugin_args,
    "stats": _stats,
    "ping": _ping,
    "overview": _overview,
    "nodes_page": _nodes_page,
    "node_page": _node_page,
    "pending_page": _pending_page,
    "explain": _explain,
    "whatif_diff": _whatif_diff,
    "threshold_preview": _threshold_preview,
    "compare_summary": _compare_summary,
    "gangs": _gangs,
    "nominated": _nominated,
    "preemption_timeline": _preemption_timeline,
    "plugin_timing": _plugin_timing,
    "k8s": _k8s,
    "cluster_status": _cluster_status,
    "sync_start": _sync_start,
    "sync_stop": _sync_stop,
    "sync_status": _sync_status,
}
