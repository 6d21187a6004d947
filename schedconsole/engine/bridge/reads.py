"""What the console reads from the engine: lists of nodes, pods and queues, the dashboard's pages,
gangs and preemptions. Each runs on the engine thread and is paged here, so no answer carries the
whole cluster (5000 nodes, 10000 pending pods)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

import numpy as np

from schedconsole.engine.bridge.answers import (
    Core,
    Cpu,
    GangMember,
    Gangs,
    GangView,
    GangWaiting,
    LoadAwareSummary,
    LoadRow,
    NodeDetail,
    NodeList,
    NodeLoad,
    NodePage,
    NodeRow,
    NodesPage,
    NodeUseRow,
    Nominated,
    NominatedRow,
    Overview,
    PendingPage,
    PendingRow,
    PodDetail,
    PodList,
    PreemptionPage,
    QueueRow,
    QueueView,
    Socket,
    Stats,
    Taint,
)
from schedconsole.engine.bridge.common import ZONE_LABEL, BadInput, NotFound, args_json, page_bounds, window
from schedconsole.engine.bridge.documents import check_config, pod_manifest, pod_summary
from schedconsole.engine.bridge.engine import Engine
from scheduler.api.fields import format_time
from scheduler.api.koordinator import parse_cpuset
from scheduler.api.objects import Pod
from scheduler.frameworkext.services import node_info_json
from scheduler.plugins.gangscheduling import NAME as GANG_SCHEDULING
from scheduler.plugins.loadaware.plugin import percent_of, usage_percent
from scheduler.scheduler import Scheduler

NODE_SORTS = ("name", "cpu", "memory", "pods")


def nodes(engine: Engine, zone: str = "", name: str = "", offset: int = 0, limit: int | None = None) -> NodeList:
    """A page of nodes (in the snapshot's order) with requested and allocatable per resource:
    those in `zone` (`topology.kubernetes.io/zone`) whose name holds `name`. Only the page's
    rows are built, so a page costs the same at 5000 nodes as at 50."""
    snap = engine.scheduler.snapshot
    n = snap.num_nodes
    keep = np.ones(n, dtype=bool)
    if zone:
        codes, values = snap.label_codes(ZONE_LABEL)
        code = values.get(zone)
        keep &= (codes[:n] == code) if code is not None else False
    if name:
        keep &= np.fromiter((name in node for node in snap.names[:n]), dtype=bool, count=n)
    positions = np.flatnonzero(keep).tolist()
    offset, limit = window(offset, limit, len(positions))
    return {"count": len(positions), "results": [_node_summary(engine, pos) for pos in positions[offset : offset + limit]]}


def _node_summary(engine: Engine, pos: int) -> NodeRow:
    snap = engine.scheduler.snapshot
    alloc, req = snap.allocatable[pos], snap.requested[pos]
    name = snap.names[pos]
    node = engine.cluster.nodes.get(name)
    row_alloc = {res: int(alloc[i]) for i, res in enumerate(snap.resource_names) if alloc[i] or res in ("cpu", "memory")}
    row_req = {res: int(req[i]) for i, res in enumerate(snap.resource_names) if res in row_alloc}
    row_alloc["pods"], row_req["pods"] = int(snap.allowed_pods[pos]), int(snap.pod_count[pos])
    return {
        "name": name,
        "labels": dict(node.labels) if node else {},
        "taints": [Taint(key=t.key, value=t.value, effect=t.effect) for t in (node.taints if node else ())],
        "unschedulable": bool(node.unschedulable) if node else False,
        "allocatable": row_alloc,
        "requested": row_req,
    }


def node_detail(engine: Engine, name: str) -> NodeDetail:
    """One node: the summary plus Koordinator's NodeInfo document."""
    info = engine.scheduler.snapshot.get(name)
    if info is None:
        raise NotFound(f"cannot find node {name}")
    return NodeDetail(**_node_summary(engine, engine.scheduler.snapshot.position[name]), nodeInfo=node_info_json(info, {}))


def pods(
    engine: Engine,
    namespace: str = "",
    phase: str = "",
    node: str = "",
    profile: str = "",
    offset: int = 0,
    limit: int | None = None,
) -> PodList:
    """A page of live pods (in creation order) with the queue each waits in when pending,
    filtered by namespace, phase, node and profile (each an exact match when given)."""
    chosen = [
        p
        for p in engine.cluster.pods.values()
        if (not namespace or p.namespace == namespace)
        and (not phase or (p.phase or "Pending") == phase)
        and (not node or (p.node_name or "") == node)
        and (not profile or p.scheduler_name == profile)
    ]
    offset, limit = window(offset, limit, len(chosen))
    where = engine.scheduler.queue.where
    return {"count": len(chosen), "results": [pod_summary(p, where(p.uid)) for p in chosen[offset : offset + limit]]}


def pod_detail(engine: Engine, namespace: str, name: str) -> PodDetail:
    """One pod: summary and current document."""
    pod = engine.find_pod(namespace, name)
    return PodDetail(**pod_summary(pod, engine.scheduler.queue.where(pod.uid)), manifest=pod_manifest(pod))


def queue(engine: Engine, offset: int = 0, limit: int | None = None) -> QueueView:
    """Pending pods by queue, with why each waits: in each queue the pods `offset` to
    `offset + limit` (creation order), and under `counts` how many each queue holds."""
    sched = engine.scheduler
    q = sched.queue
    members: dict[str, list[Pod]] = {"active": [], "backoff": [], "unschedulable": [], "gated": []}
    for pod in engine.cluster.pods.values():
        bucket = members.get(q.where(pod.uid) or "")
        if bucket is not None:
            bucket.append(pod)
    counts = {name: len(pods) for name, pods in members.items()}
    offset, limit = window(offset, limit, max(counts.values()))
    now = engine.now()
    rows = {
        where: [_queue_row(engine, pod, where, now) for pod in pods[offset : offset + limit]] for where, pods in members.items()
    }
    return QueueView(
        active=rows["active"], backoff=rows["backoff"], unschedulable=rows["unschedulable"], gated=rows["gated"], counts=counts
    )


def _queue_row(engine: Engine, pod: Pod, where: str, now: float) -> QueueRow:
    info = engine.scheduler.queue.info(pod.uid)
    row = QueueRow(
        pod=pod.key, profile=pod.scheduler_name, priority=pod.effective_priority, attempts=info.attempts if info else 0, reason=""
    )
    if where == "gated" and info is not None:
        row["reason"] = f"gated by {info.gated_by}: {info.gated_message}".rstrip(": ")
    elif where == "unschedulable" and info is not None:
        plugins = sorted(info.unschedulable_plugins | info.pending_plugins)
        row["reason"] = f"rejected by {', '.join(plugins) or 'the scheduler'}; waits for a cluster event that may help"
        row["plugins"] = plugins
    elif where == "backoff" and info is not None:
        row["reason"] = f"backing off after {info.attempts} failed attempt(s)"
        row["retryIn"] = round(max(0.0, info.backoff_until - now), 3)
    else:
        row["reason"] = "waiting for its turn in activeQ"
    return row


def plugin_args(engine: Engine) -> dict[str, dict[str, Any]]:
    """Live plugin args per profile, as the running configuration document sets them."""
    config = check_config(engine.config_document)
    out: dict[str, dict[str, Any]] = {}
    for profile in config.profiles:
        out[profile.scheduler_name] = {name: args_json(args) for name, args in profile.plugin_config.items()}
    return out


def stats(engine: Engine) -> Stats:
    """Counters for the health and live pages."""
    sched = engine.scheduler
    return {
        "nodes": sched.snapshot.num_nodes,
        "pods": len(engine.cluster.pods),
        "attempts": sched.attempt_count,
        "scheduled": sched.scheduled_count,
        "pending": sched.queue.pending(),
        "profiles": list(sched.profiles),
        "since": datetime.fromtimestamp(engine.started, tz=UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
    }


def _utilization(engine: Engine) -> dict[str, np.ndarray]:
    """requested / allocatable per node for cpu, memory and pods (0 where nothing is allocatable)."""
    snap = engine.scheduler.snapshot
    n = snap.num_nodes
    out: dict[str, np.ndarray] = {}
    for res in ("cpu", "memory"):
        col = snap.column(res)
        if col is None:
            out[res] = np.zeros(n)
            continue
        alloc, req = snap.allocatable[:n, col], snap.requested[:n, col]
        out[res] = np.divide(req, alloc, out=np.zeros(n), where=alloc > 0)
    out["pods"] = np.divide(snap.pod_count[:n], snap.allowed_pods[:n], out=np.zeros(n), where=snap.allowed_pods[:n] > 0)
    return out


def nodes_page(engine: Engine, query: str = "", sort: str = "name", offset: int = 0, limit: int = 50) -> NodesPage:
    """One page of nodes: `query` is a name substring or `key=value` label terms (all must hold);
    `sort` one of NODE_SORTS, `-` first for descending (by utilization for resources)."""
    snap = engine.scheduler.snapshot
    names = snap.names[: snap.num_nodes]
    keep = np.ones(len(names), dtype=bool)
    for term in query.split():
        if "=" in term:
            key, _, value = term.partition("=")
            codes, values = snap.label_codes(key)
            code = values.get(value)
            keep &= (codes[: len(names)] == code) if code is not None else False
        else:
            keep &= np.fromiter((term in name for name in names), dtype=bool, count=len(names))
    positions = np.flatnonzero(keep)
    descending, key = sort.startswith("-"), sort.lstrip("-")
    if key not in NODE_SORTS:
        raise BadInput("sort", f"unknown sort {sort!r}; valid: {', '.join(NODE_SORTS)} (prefix - for descending)")
    if key == "name":
        order = sorted(positions.tolist(), key=names.__getitem__, reverse=descending)
    else:
        used = _utilization(engine)[key][positions]
        idx = np.argsort(-used if descending else used, kind="stable")
        order = positions[idx].tolist()
    offset, limit = page_bounds(offset, limit)
    rows = [_node_summary_with_use(engine, pos) for pos in order[offset : offset + limit]]
    return {"count": len(order), "offset": offset, "limit": limit, "results": rows}


def _node_summary_with_use(engine: Engine, pos: int) -> NodeUseRow:
    row = _node_summary(engine, pos)
    return NodeUseRow(**row, used=_used(row))


def _used(row: NodeRow) -> dict[str, float]:
    """requested / allocatable for cpu, memory and pods (0 where nothing is allocatable)."""
    return {
        res: round(row["requested"][res] / row["allocatable"][res], 4) if row["allocatable"].get(res) else 0.0
        for res in ("cpu", "memory", "pods")
    }


def pending_page(engine: Engine, queue: str = "", query: str = "", offset: int = 0, limit: int = 50) -> PendingPage:
    """One page of pending pods (optionally of one queue, or whose key holds `query`), with why each waits."""
    sched = engine.scheduler
    q = sched.queue
    keys = []
    for pod in engine.cluster.pods.values():
        where = q.where(pod.uid)
        if where not in ("active", "backoff", "unschedulable", "gated") or (queue and where != queue):
            continue
        if query and query not in pod.key:
            continue
        keys.append(pod)
    offset, limit = page_bounds(offset, limit)
    rows = []
    for pod in keys[offset : offset + limit]:
        info = q.info(pod.uid)
        plugins = first_failing(sched, pod.scheduler_name, info.unschedulable_plugins | info.pending_plugins) if info else []
        row = PendingRow(
            **pod_summary(pod, q.where(pod.uid)), key=pod.key, attempts=info.attempts if info else 0, plugins=plugins
        )
        rows.append(row)
    return {"count": len(keys), "offset": offset, "limit": limit, "results": rows}


def first_failing(sched: Scheduler, profile: str, plugins: Iterable[str]) -> list[str]:
    """The rejecting plugins in the order the profile runs its filters (PreFilter ones first)."""
    wanted = set(plugins)
    if not wanted:
        return []
    fwk = sched.profiles.get(profile)
    if fwk is None:
        return sorted(wanted)
    rank = _filter_rank(fwk)
    return sorted(wanted, key=lambda p: (rank.get(p, len(rank)), p))


def _filter_rank(fwk: Any) -> dict[str, int]:
    """Plugin -> its position among the profile's PreFilter, Filter and Permit plugins (kept per framework)."""
    hit = _RANKS.get(id(fwk))
    if hit is not None and hit[0] is fwk:
        return hit[1]
    order = [e.name for point in ("pre_filter", "filter", "permit") for e in fwk.points.get(point, [])]
    rank = {name: i for i, name in enumerate(dict.fromkeys(order))}
    if len(_RANKS) > 32:
        _RANKS.clear()
    _RANKS[id(fwk)] = (fwk, rank)
    return rank


_RANKS: dict[int, tuple[Any, dict[str, int]]] = {}


def _loadaware_plugins(engine: Engine) -> dict[str, Any]:
    """The running LoadAwareScheduling plugin of each profile that enables it."""
    out = {}
    for name, fwk in engine.scheduler.profiles.items():
        plugin = fwk.plugins.get("LoadAwareScheduling")
        if plugin is not None:
            out[name] = plugin
    return out


def loadaware_percent(engine: Engine, plugin: Any) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Per node: the estimated usage percent per resource the plugin filters on (-1 where the node has
    no reported NodeMetric: the filter lets it pass), and whether it has one. Read from the plugin's
    arrays at once (the same values `existing_one` and `usage_percent` give node by node)."""
    snap = engine.scheduler.snapshot
    names = list(plugin.names)
    n = snap.num_nodes
    rows = plugin._row_index(snap)[:n]
    cache = plugin.cache
    known = rows > 0
    reported = known & cache.has_metric[rows] & cache.has_node_metric[rows]
    existing = cache.existing(rows, False, None)
    alloc = plugin._node_tables(snap)[2][:n]
    safe = np.where(alloc > 0, alloc, 1)
    percent = np.where((alloc > 0) & reported[:, None], percent_of(existing, safe), -1)
    return names, percent.astype(np.int64), reported


def metric_freshness(engine: Engine, plugin: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per node: the age in seconds of its NodeMetric report (NaN without one), whether the report
    is expired (older than `nodeMetricExpirationSeconds`, or without an updateTime), and whether
    the filter refuses the node for it ("node(s) nodeMetric expired")."""
    snap = engine.scheduler.snapshot
    rows = plugin._row_index(snap)[: snap.num_nodes]
    cache = plugin.cache
    known = rows > 0
    metric = known & cache.has_metric[rows]
    report = cache.report_time[rows]
    with np.errstate(invalid="ignore"):
        age = np.where(metric & np.isfinite(report), plugin.handle.now() - report, np.nan)
    expired = metric & plugin._expired_rows(rows)
    refused = expired & plugin._row_flags()[1][rows]
    return age, expired, refused


def within_thresholds(percent: np.ndarray, names: list[str], thresholds: Mapping[str, int]) -> np.ndarray:
    """Nodes whose estimated usage stays within every non-zero threshold."""
    ok = np.ones(len(percent), dtype=bool)
    for i, res in enumerate(names):
        limit = int(thresholds.get(res, 0) or 0)
        if limit > 0:
            ok &= percent[:, i] <= limit
    return ok


def overview(engine: Engine) -> Overview:
    """What the Overview page shows: utilization per node and resource, LoadAware estimates against
    thresholds, pending pods by queue and by first rejecting plugin, preemptions and gangs."""
    sched = engine.scheduler
    snap = sched.snapshot
    use = _utilization(engine)
    by_plugin: dict[str, int] = {}
    nominated: list[NominatedRow] = []
    for pod in engine.cluster.pods.values():
        where = sched.queue.where(pod.uid)
        if where == "unschedulable" or where == "backoff":
            info = sched.queue.info(pod.uid)
            ranked = first_failing(sched, pod.scheduler_name, info.unschedulable_plugins | info.pending_plugins) if info else []
            key = ranked[0] if ranked else "(none recorded)"
            by_plugin[key] = by_plugin.get(key, 0) + 1
        if pod.nominated_node_name and not pod.node_name:
            nominated.append(NominatedRow(pod=pod.key, node=pod.nominated_node_name, priority=pod.effective_priority))
    loadaware: dict[str, LoadAwareSummary] = {}
    for profile, plugin in _loadaware_plugins(engine).items():
        names, percent, reported = loadaware_percent(engine, plugin)
        age, expired, refused = metric_freshness(engine, plugin)
        thresholds = dict(plugin.args.usage_thresholds)
        ages = age[reported & ~np.isnan(age)]
        loadaware[profile] = LoadAwareSummary(
            resources=names,
            thresholds=thresholds,
            percent={res: percent[:, i].tolist() for i, res in enumerate(names)},
            reported=int(reported.sum()),
            passing=int((within_thresholds(percent, names, thresholds) & ~refused).sum()),
            expired=int((reported & expired).sum()),
            oldestReportSeconds=int(ages.max()) if len(ages) else None,
            expirationSeconds=int(plugin.args.node_metric_expiration_seconds),
        )
    waiting_gangs: list[GangWaiting] = []
    for fwk in sched.profiles.values():
        if "Coscheduling" not in fwk.plugins:
            continue
        status, _, body = engine.dispatch("GET", "/apis/v1/plugins/Coscheduling/gangs", b"", {})
        if status == 200:
            for name, gang in json.loads(body).items():
                bound = len(gang.get("boundChildren") or {})
                if bound < int(gang.get("minRequiredNumber") or 0):
                    waiting_gangs.append(
                        GangWaiting(
                            gang=name,
                            bound=bound,
                            min=gang["minRequiredNumber"],
                            waitingForBind=len(gang.get("waitingForBindChildren") or {}),
                            total=gang.get("totalChildrenNum"),
                        )
                    )
        break
    return Overview(
        nodes=snap.names[: snap.num_nodes],
        utilization={res: np.round(values, 4).tolist() for res, values in use.items()},
        loadaware=loadaware,
        queue=sched.queue.pending(),
        pendingByPlugin=dict(sorted(by_plugin.items(), key=lambda kv: -kv[1])),
        nominated=nominated[:50],
        nominatedCount=len(nominated),
        waitingPermit=len(sched.waiting),
        gangsWaiting=waiting_gangs[:50],
        stats=stats(engine),
    )


def preemption_timeline(engine: Engine, offset: int = 0, limit: int = 50) -> PreemptionPage:
    """Preemptions newest first as the engine saw them happen (`preemptions.PreemptionTimeline`)."""
    return engine.preemptions.page(offset, limit)


def nominated(engine: Engine, limit: int = 50) -> Nominated:
    """Preemptors waiting for their victims to go: pods nominated to a node and not bound yet."""
    rows = [
        NominatedRow(pod=p.key, node=p.nominated_node_name, priority=p.effective_priority)
        for p in engine.cluster.pods.values()
        if p.nominated_node_name and not p.node_name
    ]
    return {"count": len(rows), "results": rows[:limit]}


def node_page(engine: Engine, name: str) -> NodePage:
    """One node for its page: the summary, NodeInfo, its pods, the LoadAware estimate per profile,
    and the Koordinator routes' answers about it (NUMA, reservations) where a profile runs them."""
    detail = node_detail(engine, name)
    info = engine.scheduler.snapshot.get(name)
    assert info is not None  # node_detail found it
    routes = _node_routes(engine, name)
    return NodePage(
        **detail,
        used=_used(detail),
        pods=[pod_summary(p.pod) for p in info.pods][:500],
        podCount=len(info.pods),
        loadaware={profile: _node_load(plugin, name, info.node) for profile, plugin in _loadaware_plugins(engine).items()},
        routes=routes,
        numaMap=numa_map(
            routes.get("cpuTopology"), routes.get("numa"), (routes.get("numaNode") or {}).get("allocatedPods") or []
        ),
    )


def _node_load(plugin: Any, name: str, node: Any) -> NodeLoad:
    """LoadAwareScheduling's estimate per resource on one node, against its thresholds."""
    existing = plugin.cache.existing_one(name, False, None)
    alloc = plugin._allocatable(node)
    load = plugin.cache.nodes.get(name)
    metric = load.metric if load is not None else None
    rows = []
    for i, res in enumerate(plugin.names):
        est = int(existing[i]) if existing is not None else None
        rows.append(
            LoadRow(
                resource=res,
                allocatable=int(alloc[i]),
                estimated=est,
                percent=usage_percent(est, int(alloc[i])) if est is not None and alloc[i] else None,
                threshold=int(plugin.args.usage_thresholds.get(res, 0) or 0),
            )
        )
    update = metric.update_time if metric is not None else None
    expired = metric is not None and plugin._expired(name)
    return NodeLoad(
        reported=bool(metric is not None and metric.has_node_metric),
        resources=rows,
        updateTime=format_time(update) if update is not None else None,
        ageSeconds=int(plugin.handle.now() - update) if update is not None else None,
        expired=expired,
        refused=bool(
            expired and plugin.args.filter_expired_node_metrics and not plugin.args.enable_schedule_when_node_metrics_expired
        ),
        expirationSeconds=int(plugin.args.node_metric_expiration_seconds),
    )


def _node_routes(engine: Engine, name: str) -> dict[str, Any]:
    """The Koordinator routes' answers about one node, for the routes some profile serves."""
    routes = {}
    services = json_route(engine, "/apis/v1/__services__")
    for label, route in (
        ("numa", f"/apis/v1/plugins/NodeNUMAResource/availableCPUs/{name}"),
        ("cpuTopology", f"/apis/v1/plugins/NodeNUMAResource/cpuTopologyOptions/{name}"),
        ("numaNode", f"/apis/v1/plugins/NodeNUMAResource/nodes/{name}"),
        ("reservations", f"/apis/v1/plugins/Reservation/nodeReservations/{name}"),
    ):
        template = route.rsplit("/", 1)[0] + "/:nodeName"
        if template in (services or {}).get("GET", []):
            routes[label] = json_route(engine, route)
    return routes


def numa_map(options: Any, available: Any, allocated_pods: list[dict[str, Any]]) -> list[Socket]:
    """Per socket, per core, each CPU's state (`available`, `allocated`, `reserved`) and, for an
    allocated one, the pods holding it, from NodeNUMAResource's `cpuTopologyOptions`,
    `availableCPUs` and `nodes` answers; empty when the node reports no CPU topology."""
    topology = (options or {}).get("cpuTopology") or {}
    details = topology.get("cpuDetails") or {}
    if not details or not available:
        return []
    free = parse_cpuset(available.get("availableCPUs") or "")
    reserved = parse_cpuset((options or {}).get("reservedCPUs") or "")
    holders: dict[int, list[str]] = {}
    for pod in allocated_pods:
        for cpu in parse_cpuset(str(pod.get("cpuset") or "")):
            holders.setdefault(cpu, []).append(f"{pod.get('namespace')}/{pod.get('name')}")
    sockets: dict[int, dict[int, list[Cpu]]] = {}
    for info in details.values():
        cpu = int(info["cpuID"])
        state = "reserved" if cpu in reserved else "available" if cpu in free else "allocated"
        sockets.setdefault(int(info.get("socketID", 0)), {}).setdefault(int(info.get("coreID", 0)), []).append(
            Cpu(cpu=cpu, state=state, node=int(info.get("nodeID", 0)), pods=holders.get(cpu, []))
        )
    return [
        Socket(
            socket=sid, cores=[Core(core=cid, cpus=sorted(cpus, key=lambda c: c["cpu"])) for cid, cpus in sorted(cores.items())]
        )
        for sid, cores in sorted(sockets.items())
    ]


def json_route(engine: Engine, path: str) -> Any:
    """A Koordinator GET route's JSON answer (None when it refuses)."""
    status, _, body = engine.dispatch("GET", path, b"", {})
    return json.loads(body) if status == 200 else None


def gangs(engine: Engine) -> Gangs:
    """Every gang (Coscheduling's GangSummary) with its members by state, the pending members with
    why they wait, and the Permit timers of members waiting for the rest of the gang."""
    summaries = (
        json_route(engine, "/apis/v1/plugins/Coscheduling/gangs")
        if _route_exists(engine, "/apis/v1/plugins/Coscheduling/gangs")
        else None
    )
    out = []
    for name, summary in sorted((summaries or {}).items()):
        members = _gang_members(engine, summary)
        states: dict[str, int] = {}
        for m in members:
            states[m["state"]] = states.get(m["state"], 0) + 1
        out.append(
            GangView(
                name=name,
                source="Coscheduling",
                summary={
                    k: v
                    for k, v in summary.items()
                    if k not in ("children", "pendingChildren", "waitingForBindChildren", "boundChildren")
                },
                members=members,
                states=states,
                blocking=next((m for m in members if m["state"] == "pending"), None),
            )
        )
    workload_gangs = _workload_gangs(engine)
    if workload_gangs is not None:
        out.extend(workload_gangs)
    return Gangs(gangs=out, available=summaries is not None or workload_gangs is not None)


def _workload_gangs(engine: Engine) -> list[GangView] | None:
    """The gangs of Workloads (kube-scheduler's GangScheduling), None when no profile runs it: each
    gang pod group (per replica key) with its members as `_gang_members` sorts them."""
    sched = engine.scheduler
    plugin = next((f.plugins[GANG_SCHEDULING] for f in sched.profiles.values() if GANG_SCHEDULING in f.plugins), None)
    if plugin is None:
        return None
    out = []
    for (namespace, workload_name, group, replica), info in sorted(plugin.manager.gangs.items()):
        workload = plugin.workload(namespace, workload_name)
        policy = workload.policy(group) if workload is not None else None
        if policy is not None and policy.min_count is None:
            continue  # a basic pod group is not a gang
        keys = {p.key: uid for uid, p in info.pods.items()}
        summary = {
            "children": dict.fromkeys(keys, True),
            "boundChildren": {k: True for k, uid in keys.items() if uid in info.assigned},
            # Assumed (past Reserve): at Permit (the timers below say so) or binding.
            "waitingForBindChildren": {k: True for k, uid in keys.items() if uid in info.assumed},
        }
        members = _gang_members(engine, summary)
        states: dict[str, int] = {}
        for m in members:
            states[m["state"]] = states.get(m["state"], 0) + 1
        name = f"{namespace}/{workload_name}/{group}" + (f"/{replica}" if replica else "")
        out.append(
            GangView(
                name=name,
                source=GANG_SCHEDULING,
                summary={
                    "workload": f"{namespace}/{workload_name}",
                    "podGroup": group,
                    "replicaKey": replica,
                    "minCount": policy.min_count if policy is not None else None,
                    "total": len(keys),
                    "workloadMissing": workload is None,
                },
                members=members,
                states=states,
                blocking=next((m for m in members if m["state"] == "pending"), None),
            )
        )
    return out


def _gang_members(engine: Engine, summary: dict[str, Any]) -> list[GangMember]:
    """A gang's members by state: bound, waiting for bind, waiting at Permit (with their timers), or
    pending (with the queue each waits in and the plugins that rejected it)."""
    sched = engine.scheduler
    by_key = {p.key: p for p in engine.cluster.pods.values()}
    waiting = {w.pod.key: w for w in sched.waiting.values() if not w.done}
    now = engine.now()
    members = []
    for key in sorted(summary.get("children") or {}):
        pod = by_key.get(key)
        row = GangMember(
            pod=key,
            state="bound"
            if key in (summary.get("boundChildren") or {})
            else "waitingForBind"
            if key in (summary.get("waitingForBindChildren") or {})
            else "pending",
        )
        if pod is not None and pod.node_name:
            row["node"] = pod.node_name
        if pod is not None and row["state"] == "pending":
            info = sched.queue.info(pod.uid)
            row["queue"] = sched.queue.where(pod.uid)
            row["plugins"] = (
                first_failing(sched, pod.scheduler_name, info.unschedulable_plugins | info.pending_plugins) if info else []
            )
        held = waiting.get(key)
        if held is not None:
            row["state"] = "waitingAtPermit"
            row["node"] = held.node
            row["permitDeadlineIn"] = {p: round(max(0.0, at - now), 1) for p, at in held.pending.items()}
        members.append(row)
    return members


def _route_exists(engine: Engine, path: str) -> bool:
    return path in (json_route(engine, "/apis/v1/__services__") or {}).get("GET", [])
