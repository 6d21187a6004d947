"""Why a pending pod does not fit, and the smallest change that would let it.

Every change is checked by running the scheduling cycle again on the changed spec (nothing
changes in the cluster). When the check shows the change would not be enough, the advice says
so, and each blocker that remains gets its own advice (LoadAware thresholds, gang members,
taints, node affinity), checked in turn where a change can be checked.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from collections import Counter
from typing import Any

import numpy as np

from schedconsole.engine.bridge.advice import whatif_record
from schedconsole.engine.bridge.answers import Advice, AdviceGroup, Document, Evaluation, Explanation
from schedconsole.engine.bridge.documents import pod_manifest
from schedconsole.engine.bridge.engine import Engine
from schedconsole.engine.bridge.reads import first_failing
from scheduler.api.objects import Pod
from scheduler.api.quantity import milli_value, value
from scheduler.plugins.loadaware.cache import estimate_pod, to_vec
from scheduler.plugins.loadaware.plugin import usage_percent
from scheduler.plugins.tainttoleration import untolerated_taint

Failures = dict[str, dict[str, Any]]
_GANG_MEMBER = re.compile(r'member Pod "([^"]+)" is unschedulable')


def explain(engine: Engine, namespace: str, name: str) -> Explanation:
    """Why a pod does not fit, from the real scheduling cycle run now with no side effects: the
    rejecting plugins in plain words, each with what would let the pod past it, checked by running
    the cycle again on the changed spec where the change is the pod's own."""
    pod = engine.find_pod(namespace, name)
    document = pod_manifest(pod)
    (document.get("spec") or {}).pop("nodeName", None)
    document.pop("status", None)
    ours = pod.scheduler_name in engine.scheduler.profiles
    filter_plugins = engine.scheduler.profiles[pod.scheduler_name].plugin_names("filter") if ours else []
    if pod.node_name or not ours:
        # Run again now, a bound pod would meet its own requests on its node: its decision record
        # (the history) says why it went there instead. A pod naming no profile of ours is another
        # scheduler's (as kube-scheduler ignores it): show it and say whose it is.
        return Explanation(
            pod=pod.key,
            profile=pod.scheduler_name,
            outcome="Bound" if pod.node_name else "OtherScheduler",
            node=pod.node_name or None,
            message="",
            groups=[],
            evaluation=None,
            queue=None,
            boundTo=pod.node_name or None,
            manifest=document,
            otherScheduler=None if ours else pod.scheduler_name,
            filterPlugins=filter_plugins,
        )
    record, probe = whatif_record(engine, document, None)
    failures = record.filter_failures()
    groups: dict[str, AdviceGroup] = {}
    for _node, failure in failures.items():
        group = groups.setdefault(failure["plugin"], AdviceGroup(plugin=failure["plugin"], nodes=0, reasons={}, advice=[]))
        group["nodes"] += 1
        for reason in failure["reasons"] or [failure["code"]]:
            group["reasons"][reason] = group["reasons"].get(reason, 0) + 1
    for plugin, group in groups.items():
        group["advice"] = plugin_advice(engine, probe, document, plugin, failures, depth=0)
    ordered = first_failing(engine.scheduler, record.profile, groups)
    evaluation = Evaluation(
        feasibleNodes=record.feasible_nodes,
        numAllNodes=record.num_all_nodes,
        topRows=record.top_rows(10),
        timings={k: round(v * 1000, 3) for k, v in record.timings.items()},
    )
    return Explanation(
        pod=pod.key,
        profile=record.profile,
        outcome=record.outcome,
        node=record.node,
        message=record.message,
        groups=[groups[p] for p in ordered],
        evaluation=evaluation,
        queue=engine.scheduler.queue.where(pod.uid),
        boundTo=pod.node_name or None,
        manifest=document,
        otherScheduler=None,
        filterPlugins=filter_plugins,
    )


def plugin_advice(
    engine: Engine, pod: Pod, document: Document, plugin: str, failures: Failures, depth: int, loadaware_args: Any = None
) -> list[Advice]:
    """What would let the pod past `plugin` on the nodes it rejected. `depth` 0 is the pod's own
    blockers; at depth 1 (a blocker left after another change) checks name what still rejects but
    give no further advice."""
    mine = {n: f for n, f in failures.items() if f["plugin"] == plugin}
    if plugin == "NodeResourcesFit":
        return _fit_advice(engine, pod, document, mine, depth, loadaware_args)
    if plugin == "LoadAwareScheduling":
        return _loadaware_advice(engine, pod, document, mine, depth)
    if plugin == "TaintToleration":
        return _taint_advice(engine, pod, mine)
    if plugin == "NodeAffinity":
        return _affinity_advice(pod, mine)
    if plugin == "Coscheduling":
        return _gang_advice(mine)
    if depth:
        reasons = Counter(r for f in mine.values() for r in f["reasons"] or [f["code"]])
        text = f"{_nodes(len(mine))} rejected by {plugin}: " + "; ".join(f"{r} ({k})" for r, k in reasons.most_common(3))
        return [Advice(text=text, enough=None, then=[])]
    return []


def _amount(resource: str, amount: int) -> str:
    """A request amount as a person writes it: cpu in millicores, memory in Mi/Gi."""
    if resource == "cpu":
        return f"{amount // 1000}" if amount % 1000 == 0 else f"{amount}m"
    if resource in ("memory", "ephemeral-storage"):
        for unit, size in (("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
            if amount >= size and amount % size == 0:
                return f"{amount // size}{unit}"
        mi = -(-amount // (1 << 20))
        return f"{mi}Mi"
    return str(amount)


def _nodes(count: int) -> str:
    """`1 node`, `3 nodes`."""
    return f"{count} node" if count == 1 else f"{count} nodes"


def _with_request(document: Document, resource: str, cut: int) -> Document | None:
    """A copy of a pod document asking for `cut` less of `resource` (taken from its containers,
    largest request first); None when it asks for too little to take that much."""
    doc = copy.deepcopy(document)
    read = milli_value if resource == "cpu" else value
    containers = (doc.get("spec") or {}).get("containers") or []
    left = cut
    for c in sorted(containers, key=lambda c: -read(((c.get("resources") or {}).get("requests") or {}).get(resource, "0"))):
        requests = (c.setdefault("resources", {})).setdefault("requests", {})
        have = read(requests.get(resource, "0"))
        take = min(have, left)
        if take:
            requests[resource] = _amount(resource, have - take)
            limits = c["resources"].get("limits") or {}
            limits.pop(resource, None)
            left -= take
        if left == 0:
            return doc
    return None


def _checked(
    engine: Engine, pod: Pod, document: Document, text: str, opened: set[str], depth: int, loadaware_args: Any = None
) -> Advice:
    """`text` (a change and the nodes it opens) with what running the cycle on the change showed:
    enough (where the pod would go), or not, with what still rejects it on the opened nodes and,
    at depth 0, each of those blockers' own advice."""
    record, probe = whatif_record(engine, document, pod.scheduler_name, loadaware_args)
    if record.node:
        return Advice(text=f"{text} (checked: the cycle would place it on {record.node})", enough=True, then=[])
    failures = record.filter_failures()
    remaining = {n: f for n, f in failures.items() if n in opened} or failures
    counts = Counter(f["plugin"] for f in remaining.values())
    ordered = first_failing(engine.scheduler, pod.scheduler_name, counts)
    still = "; ".join(f"{p} on {_nodes(counts[p])}" for p in ordered) or "the scheduler"
    then: list[Advice] = []
    if depth == 0:
        for plugin in ordered:
            then += plugin_advice(engine, probe, document, plugin, remaining, 1, loadaware_args)
    return Advice(
        text=f"{text}, but that alone would not be enough: checked, the cycle still rejects it ({still})", enough=False, then=then
    )


def _fit_advice(
    engine: Engine, pod: Pod, document: Document, failures: Failures, depth: int, loadaware_args: Any
) -> list[Advice]:
    """For each resource that alone kept nodes out: what the pod would have to ask for, and how many nodes that opens."""
    snap = engine.scheduler.snapshot
    wanted = snap.pod_vector(pod)
    out = []
    for res in ("cpu", "memory", "ephemeral-storage"):
        reason = f"Insufficient {res}"
        only = [n for n, f in failures.items() if f["reasons"] == [reason]]
        col = snap.column(res)
        if not only or col is None:
            continue
        positions = np.array([snap.position[n] for n in only], dtype=np.int64)
        free = snap.allocatable[positions, col] - snap.requested[positions, col]
        asked = int(wanted[col])
        short = asked - int(free.max())
        target = asked - short
        if short <= 0 or target <= 0:
            continue
        opened = {n for n, f in zip(only, free.tolist(), strict=True) if f >= target}
        unit = "CPU" if res == "cpu" else res
        text = (
            f"asks for {_amount(res, asked)} {unit}, {_amount(res, short)} more than the most any node has free: "
            f"if it asked for {_amount(res, target)} {unit} instead, {_nodes(len(opened))} would have room for it"
        )
        changed = _with_request(document, res, short)
        if changed is None:
            out.append(Advice(text=text, enough=None, then=[]))
        else:
            out.append(_checked(engine, pod, changed, text, opened, depth, loadaware_args))
    return out


def _loadaware_advice(engine: Engine, pod: Pod, document: Document, failures: Failures, depth: int) -> list[Advice]:
    """For each resource whose usage threshold alone kept nodes out: the threshold that would let some pass."""
    plugin = engine.scheduler.profiles[pod.scheduler_name].plugins.get("LoadAwareScheduling")
    if plugin is None:
        return []
    incoming = to_vec(plugin.names, estimate_pod(pod, plugin.args))
    out = []
    for i, res in enumerate(plugin.names):
        reason = f"node(s) {res} usage exceed threshold"
        nodes = [n for n, f in failures.items() if f["reasons"] == [reason]]
        needed: dict[str, int] = {}
        for n in nodes:
            existing = plugin.cache.existing_one(n, False, None)
            alloc = plugin._allocatable(engine.cluster.nodes[n])
            if existing is not None and alloc[i]:
                needed[n] = usage_percent(int(existing[i]) + int(incoming[i]), int(alloc[i]))
        if not needed:
            continue
        now = int(plugin.args.usage_thresholds.get(res, 0))
        target = min(100, -(-min(needed.values()) // 5) * 5)
        opened = {n for n, v in needed.items() if v <= target}
        text = (
            f"{_nodes(len(failures))} rejected by LoadAwareScheduling: {len(opened)} would pass "
            f"if the profile's {res} usage threshold were {target}% instead of {now}%"
        )
        args = dataclasses.replace(plugin.args, usage_thresholds={**plugin.args.usage_thresholds, res: target})
        out.append(_checked(engine, pod, document, text, opened, depth, args))
    return out


def _taint_advice(engine: Engine, pod: Pod, failures: Failures) -> list[Advice]:
    """The taints it does not tolerate, most common first: a toleration would open those nodes."""
    taints: Counter[str] = Counter()
    for n in failures:
        node = engine.cluster.nodes.get(n)
        taint = untolerated_taint(node.taints, pod.tolerations) if node is not None else None
        if taint is not None:
            taints[f"{taint.key}{'=' + taint.value if taint.value else ''}:{taint.effect}"] += 1
    return [
        Advice(
            text=f"{_nodes(k)} carry the taint {t}, which it does not tolerate: a toleration for it would let it use them "
            "(if it belongs there; taints keep pods off on purpose)",
            enough=None,
            then=[],
        )
        for t, k in taints.most_common(3)
    ]


def _affinity_advice(pod: Pod, failures: Failures) -> list[Advice]:
    """Which of its node selector and required node affinity the rejected nodes do not match."""
    parts = []
    if pod.node_selector:
        parts.append("nodeSelector " + ", ".join(f"{k}={v}" for k, v in sorted(pod.node_selector.items())))
    if pod.affinity is not None and getattr(pod.affinity, "node_affinity", None) is not None:
        parts.append("required node affinity")
    asked = " and ".join(parts) or "node selector"
    text = f"{_nodes(len(failures))} do not match its {asked}: label nodes to match, or relax the {asked}"
    return [Advice(text=text, enough=None, then=[])]


def _gang_advice(failures: Failures) -> list[Advice]:
    """A gang waits for its members: name the member that blocks it, or the members it lacks."""
    reasons = {r for f in failures.values() for r in f["reasons"]}
    members = sorted({m.group(1) for r in reasons for m in [_GANG_MEMBER.search(r)] if m})
    if members:
        return [
            Advice(
                text=f"its gang is held back by member {m}, which cannot be placed: that pod needs its own fix (see why it waits)",
                enough=None,
                then=[],
                pod=m,
            )
            for m in members
        ]
    if any("not collect enough" in r or "has not init" in r for r in reasons):
        text = "its gang has fewer members than its minimum (minMember): create the missing members, or lower the minimum"
        return [Advice(text=text, enough=None, then=[])]
    return []
