"""What-if and advice: the scheduling cycle run for a pod without changing anything, two profiles
compared, why a pending pod does not fit and the smallest change that would let it, and what new
LoadAware thresholds would change before they are applied."""

from __future__ import annotations

import dataclasses
from typing import Any

from schedconsole.engine.bridge.answers import (
    CompareRow,
    CompareSummary,
    Comparison,
    Delta,
    Document,
    Entry,
    PreviewPod,
    ThresholdPreview,
    WhatIfDiff,
)
from schedconsole.engine.bridge.common import BadInput, NotFound, args_json, camel
from schedconsole.engine.bridge.documents import check_config, load_objects, pod_manifest, with_defaults
from schedconsole.engine.bridge.engine import Engine
from schedconsole.engine.bridge.reads import loadaware_percent, metric_freshness, within_thresholds
from scheduler.api.objects import Pod
from scheduler.records import AttemptRecord, ScoresSpec, record_json

PREVIEW_FIELDS = ("usageThresholds", "prodUsageThresholds", "resourceWeights", "dominantResourceWeight")
_preview_versions = iter(range(-1, -(2**62), -1))


def whatif(engine: Engine, document: object, profile: str | None) -> Entry:
    """The full scheduling cycle for one pod on the current snapshot; nothing changes."""
    pod = _whatif_pod(engine, document)
    name = profile or pod.scheduler_name
    if name not in engine.scheduler.profiles:
        raise BadInput("profile", f"unknown profile {name!r}; known: {', '.join(sorted(engine.scheduler.profiles))}")
    record = engine.scheduler.evaluate(pod, name)
    entry = record_json(record, ScoresSpec("all"))
    entry["feasibleNodes"] = record.feasible_nodes
    entry["weights"] = dict(engine.scheduler.profiles[name].weights)
    return entry


def _whatif_pod(engine: Engine, document: object) -> Pod:
    if not isinstance(document, dict):
        raise BadInput("pod", f"expected a Pod object, got {type(document).__name__}")
    if document.get("kind") != "Pod":
        raise BadInput("pod.kind", f"expected kind Pod, got {document.get('kind')!r}")
    doc = with_defaults(document, "Pod")
    objects = load_objects([doc], "pod", engine.known_classes(), strict=True)
    pod = objects.pods[0]
    engine.resolve_priority(pod)
    if pod.node_name:
        raise BadInput("pod.spec.nodeName", f"the pod is already bound to {pod.node_name!r}; what-if takes a pending pod")
    return pod


def compare(engine: Engine, document: object, profiles: list[str]) -> Comparison:
    """What-if under two profiles, with per-node and per-plugin deltas (b - a)."""
    if len(profiles) != 2:
        raise BadInput("profiles", f"expected two profile names, got {len(profiles)}")
    a, b = (whatif(engine, document, p) for p in profiles)
    nodes = sorted(set(a["totals"]) | set(b["totals"]))
    deltas = {}
    for node in nodes:
        pa, pb = a["scores"].get(node, {}), b["scores"].get(node, {})
        deltas[node] = Delta(
            total=b["totals"].get(node, 0) - a["totals"].get(node, 0),
            plugins={p: pb.get(p, 0) - pa.get(p, 0) for p in sorted(set(pa) | set(pb))},
        )
    return Comparison(profiles=profiles, results=[a, b], sameNode=a["node"] == b["node"], deltas=deltas)


def whatif_record(engine: Engine, document: object, profile: str | None, loadaware_args: Any = None) -> tuple[AttemptRecord, Pod]:
    """Evaluate a pod document on the current snapshot (optionally with other LoadAware args)."""
    pod = _whatif_pod(engine, document)
    name = profile or pod.scheduler_name
    if name not in engine.scheduler.profiles:
        raise BadInput("profile", f"unknown profile {name!r}; known: {', '.join(sorted(engine.scheduler.profiles))}")
    if loadaware_args is None:
        return engine.scheduler.evaluate(pod, name), pod
    plugin = engine.scheduler.profiles[name].plugins.get("LoadAwareScheduling")
    with _loadaware_args(plugin, loadaware_args):
        return engine.scheduler.evaluate(pod, name), pod


class _loadaware_args:
    """Run the enclosed cycles with other LoadAware thresholds and weights, then put the running
    ones back. Only fields that do not change the plugin's estimates may differ (PREVIEW_FIELDS)."""

    def __init__(self, plugin: Any, args: Any) -> None:
        self.plugin, self.args = plugin, args

    def __enter__(self) -> None:
        p = self.plugin
        if p is None:
            return
        self.saved = (p.args, p.args_version, p.base_profile, p.score_weights)
        p.args, p.args_version = self.args, next(_preview_versions)
        p._configure(self.args)

    def __exit__(self, *exc: object) -> None:
        p = self.plugin
        if p is not None:
            p.args, p.args_version, p.base_profile, p.score_weights = self.saved


# ----- threshold preview ---------------------------------------------------------------------------------
def threshold_preview(
    engine: Engine, document: Document, profile: str, pods: list[str], count_nodes: bool = True
) -> ThresholdPreview:
    """What new LoadAware args (in `document`, a whole configuration) would change, before applying:
    nodes passing the usage thresholds now and after, and for each of `pods` (keys, newest first)
    the node the cycle picks now and with the new args. Nothing changes."""
    config = check_config(document)
    entry = next((p for p in config.profiles if p.scheduler_name == profile), None)
    if entry is None:
        raise BadInput("profile", f"unknown profile {profile!r}")
    new_args = entry.plugin_config.get("LoadAwareScheduling")
    plugin = engine.scheduler.profiles.get(profile, None)
    running = plugin.plugins.get("LoadAwareScheduling") if plugin is not None else None
    if running is None or new_args is None:
        raise BadInput("profile", f"profile {profile!r} does not run LoadAwareScheduling")
    fixed = {f.name for f in dataclasses.fields(new_args)} - {
        "usage_thresholds",
        "prod_usage_thresholds",
        "resource_weights",
        "dominant_resource_weight",
    }
    for name in sorted(fixed):
        if getattr(new_args, name) != getattr(running.args, name):
            raise BadInput(
                camel(name),
                f"{camel(name)} changes the plugin's estimates; the preview covers {', '.join(PREVIEW_FIELDS)} only (change it under Profiles)",
            )
    nodes: dict[str, int] = {}
    if count_nodes:
        names, percent, reported = loadaware_percent(engine, running)
        _, expired, refused = metric_freshness(engine, running)
        before = within_thresholds(percent, names, running.args.usage_thresholds) & ~refused
        after = within_thresholds(percent, names, new_args.usage_thresholds) & ~refused
        nodes = {
            "total": len(before),
            "reported": int(reported.sum()),
            "expired": int((reported & expired).sum()),
            "passingNow": int(before.sum()),
            "passingAfter": int(after.sum()),
            "newlyPassing": int((after & ~before).sum()),
            "newlyFailing": int((before & ~after).sum()),
        }
    changes = []
    moved = 0
    for key in pods[:100]:
        namespace, _, pod_name = key.partition("/")
        try:
            pod = engine.find_pod(namespace, pod_name)
        except NotFound:
            continue
        if pod.scheduler_name != profile:
            continue
        doc = pod_manifest(pod)
        (doc.get("spec") or {}).pop("nodeName", None)
        doc.pop("status", None)
        now, _ = whatif_record(engine, doc, profile)
        then, _ = whatif_record(engine, doc, profile, new_args)
        moved += now.node != then.node
        changes.append(
            PreviewPod(
                pod=key,
                boundTo=pod.node_name or None,
                now=now.node,
                after=then.node,
                feasibleNow=now.feasible_nodes,
                feasibleAfter=then.feasible_nodes,
            )
        )
    return ThresholdPreview(
        profile=profile,
        before=args_json(running.args),
        after=args_json(new_args),
        nodes=nodes,
        pods=changes,
        podsChanged=moved,
    )


def whatif_diff(engine: Engine, document: object, original: object, profile: str | None) -> WhatIfDiff:
    """What-if for an edited spec next to the pod's current spec: both entries and what changed."""
    edited = whatif(engine, document, profile)
    base = whatif(engine, original, profile) if original is not None else None
    out = WhatIfDiff(result=_trim(edited), base=_trim(base) if base else None)
    if base is not None:
        out["diff"] = {
            "node": [base["node"], edited["node"]],
            "outcome": [base["outcome"], edited["outcome"]],
            "feasibleNodes": [base["feasibleNodes"], edited["feasibleNodes"]],
            "rejectedNodes": [len(base["filter"]), len(edited["filter"])],
        }
    return out


def _trim(entry: Entry) -> Entry:
    """An entry with its 10 best-scored nodes only, and its filter failures counted by plugin."""
    totals = entry["totals"]
    top = sorted(totals, key=lambda n: -totals[n])[:10]
    by_plugin: dict[str, int] = {}
    for failure in entry["filter"].values():
        by_plugin[failure["plugin"]] = by_plugin.get(failure["plugin"], 0) + 1
    return {
        **entry,
        "scores": {n: entry["scores"][n] for n in top},
        "totals": {n: totals[n] for n in top},
        "filter": dict(list(entry["filter"].items())[:50]),
        "rejectedBy": by_plugin,
    }


def compare_summary(engine: Engine, document: object, profiles: list[str], top: int = 10) -> CompareSummary:
    """`Engine.compare` cut to the nodes in either profile's top `top`, with their totals and deltas."""
    full = compare(engine, document, profiles)
    a, b = full["results"]
    keep: list[str] = []
    for entry in (a, b):
        for node in sorted(entry["totals"], key=lambda n: -entry["totals"][n])[:top]:
            if node not in keep:
                keep.append(node)
    rows = [
        CompareRow(
            node=n,
            a=a["totals"].get(n),
            b=b["totals"].get(n),
            delta=full["deltas"][n]["total"],
            plugins={p: d for p, d in full["deltas"][n]["plugins"].items() if d},
        )
        for n in keep
    ]
    return CompareSummary(profiles=profiles, sameNode=full["sameNode"], results=[_trim(a), _trim(b)], rows=rows)
