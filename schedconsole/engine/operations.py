"""The operations the web side may ask of the engine: one frozen dataclass each, typed with its result.

A view builds an operation (`operations.GetNodesPage(q="zone=a")`) and hands it to
`client.call`, which returns the operation's result type (`GetNodesPage` → `answers.NodesPage`);
mypy checks both ends. The operation runs on the engine thread between two scheduling cycles
(`host.EngineHost.submit`), where `run` calls the bridge.

At the Celery boundary an operation is plain JSON: its name and its fields (`to_wire`), turned
back into the dataclass by `from_wire` in the engine's process. Those two functions are the only
place where operations are converted; bytes fields cross as base64.
"""

from __future__ import annotations

import base64
import dataclasses
import gc
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar

from schedconsole.engine.bridge import advice, answers, edits, reads, replay, why
from schedconsole.engine.bridge.common import BadInput
from schedconsole.engine.bridge.engine import Engine

ResultT = TypeVar("ResultT", covariant=True)
# A creation of at least this many objects (an import) is kept out of the collector's full scans.
LONG_LIVED_BATCH = 1000


@dataclass(frozen=True, slots=True)
class Operation(Generic[ResultT]):
    """One request to the engine; `run` answers it on the engine thread with JSON values only."""

    wire_name: ClassVar[str]

    def run(self, engine: Engine) -> ResultT:
        """Answer on the engine thread (between two scheduling cycles)."""
        raise NotImplementedError


# ----- reads -------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class ListNodes(Operation[answers.NodeList]):
    """A page of nodes in `zone` whose name holds `name` (`limit` None: all of them)."""

    wire_name: ClassVar[str] = "nodes"
    zone: str = ""
    name: str = ""
    offset: int = 0
    limit: int | None = None

    def run(self, engine: Engine) -> answers.NodeList:
        """See `reads.nodes`."""
        return reads.nodes(engine, self.zone, self.name, self.offset, self.limit)


@dataclass(frozen=True, slots=True)
class GetNode(Operation[answers.NodeDetail]):
    """One node with its NodeInfo."""

    wire_name: ClassVar[str] = "node"
    name: str

    def run(self, engine: Engine) -> answers.NodeDetail:
        """See `reads.node_detail`."""
        return reads.node_detail(engine, self.name)


@dataclass(frozen=True, slots=True)
class ListPods(Operation[answers.PodList]):
    """A page of live pods, filtered by namespace, phase, node and profile (exact matches)."""

    wire_name: ClassVar[str] = "pods"
    namespace: str = ""
    phase: str = ""
    node: str = ""
    profile: str = ""
    offset: int = 0
    limit: int | None = None

    def run(self, engine: Engine) -> answers.PodList:
        """See `reads.pods`."""
        return reads.pods(engine, self.namespace, self.phase, self.node, self.profile, self.offset, self.limit)


@dataclass(frozen=True, slots=True)
class GetPod(Operation[answers.PodDetail]):
    """One pod with its current document."""

    wire_name: ClassVar[str] = "pod"
    namespace: str
    name: str

    def run(self, engine: Engine) -> answers.PodDetail:
        """See `reads.pod_detail`."""
        return reads.pod_detail(engine, self.namespace, self.name)


@dataclass(frozen=True, slots=True)
class GetQueue(Operation[answers.QueueView]):
    """Pending pods by queue, with why each waits."""

    wire_name: ClassVar[str] = "queue"
    offset: int = 0
    limit: int | None = None

    def run(self, engine: Engine) -> answers.QueueView:
        """See `reads.queue`."""
        return reads.queue(engine, self.offset, self.limit)


@dataclass(frozen=True, slots=True)
class GetStats(Operation[answers.Stats]):
    """Counters for the health and live pages."""

    wire_name: ClassVar[str] = "stats"

    def run(self, engine: Engine) -> answers.Stats:
        """See `reads.stats`."""
        return reads.stats(engine)


@dataclass(frozen=True, slots=True)
class GetPluginArgs(Operation[dict[str, dict[str, Any]]]):
    """Live plugin args per profile."""

    wire_name: ClassVar[str] = "plugin_args"

    def run(self, engine: Engine) -> dict[str, dict[str, Any]]:
        """See `reads.plugin_args`."""
        return reads.plugin_args(engine)


@dataclass(frozen=True, slots=True)
class GetOverview(Operation[answers.Overview]):
    """What the Overview page shows."""

    wire_name: ClassVar[str] = "overview"

    def run(self, engine: Engine) -> answers.Overview:
        """See `reads.overview`."""
        return reads.overview(engine)


@dataclass(frozen=True, slots=True)
class GetNodesPage(Operation[answers.NodesPage]):
    """A page of the Nodes page: `q` a name substring or `key=value` terms, `sort` a NODE_SORTS key."""

    wire_name: ClassVar[str] = "nodes_page"
    q: str = ""
    sort: str = "name"
    offset: int = 0
    limit: int = 50

    def run(self, engine: Engine) -> answers.NodesPage:
        """See `reads.nodes_page`."""
        return reads.nodes_page(engine, self.q, self.sort, self.offset, self.limit)


@dataclass(frozen=True, slots=True)
class GetNodePage(Operation[answers.NodePage]):
    """One node for its page."""

    wire_name: ClassVar[str] = "node_page"
    name: str

    def run(self, engine: Engine) -> answers.NodePage:
        """See `reads.node_page`."""
        return reads.node_page(engine, self.name)


@dataclass(frozen=True, slots=True)
class GetPendingPage(Operation[answers.PendingPage]):
    """A page of pending pods, of one queue or all, whose key holds `q`."""

    wire_name: ClassVar[str] = "pending_page"
    queue: str = ""
    q: str = ""
    offset: int = 0
    limit: int = 50

    def run(self, engine: Engine) -> answers.PendingPage:
        """See `reads.pending_page`."""
        return reads.pending_page(engine, self.queue, self.q, self.offset, self.limit)


@dataclass(frozen=True, slots=True)
class GetGangs(Operation[answers.Gangs]):
    """Every gang with its members by state."""

    wire_name: ClassVar[str] = "gangs"

    def run(self, engine: Engine) -> answers.Gangs:
        """See `reads.gangs`."""
        return reads.gangs(engine)


@dataclass(frozen=True, slots=True)
class GetNominated(Operation[answers.Nominated]):
    """Preemptors nominated to a node and not bound yet."""

    wire_name: ClassVar[str] = "nominated"

    def run(self, engine: Engine) -> answers.Nominated:
        """See `reads.nominated`."""
        return reads.nominated(engine)


@dataclass(frozen=True, slots=True)
class GetPreemptionTimeline(Operation[answers.PreemptionPage]):
    """Preemptions newest first, one page."""

    wire_name: ClassVar[str] = "preemption_timeline"
    offset: int = 0
    limit: int = 50

    def run(self, engine: Engine) -> answers.PreemptionPage:
        """See `reads.preemption_timeline`."""
        return reads.preemption_timeline(engine, self.offset, self.limit)


# ----- what-if and advice ------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class WhatIf(Operation[answers.Entry]):
    """The full scheduling cycle for a pod document (as the client sent it), changing nothing."""

    wire_name: ClassVar[str] = "whatif"
    pod: object
    profile: str | None = None

    def run(self, engine: Engine) -> answers.Entry:
        """See `advice.whatif`."""
        return advice.whatif(engine, self.pod, self.profile)


@dataclass(frozen=True, slots=True)
class Compare(Operation[answers.Comparison]):
    """A pod document under two profiles."""

    wire_name: ClassVar[str] = "compare"
    pod: object
    profiles: list[str] = field(default_factory=list)

    def run(self, engine: Engine) -> answers.Comparison:
        """See `advice.compare`."""
        return advice.compare(engine, self.pod, self.profiles)


@dataclass(frozen=True, slots=True)
class WhatIfDiff(Operation[answers.WhatIfDiff]):
    """What-if for an edited spec beside the original."""

    wire_name: ClassVar[str] = "whatif_diff"
    pod: object
    original: object = None
    profile: str | None = None

    def run(self, engine: Engine) -> answers.WhatIfDiff:
        """See `advice.whatif_diff`."""
        return advice.whatif_diff(engine, self.pod, self.original, self.profile)


@dataclass(frozen=True, slots=True)
class CompareSummary(Operation[answers.CompareSummary]):
    """A comparison cut to the nodes either profile ranks in its top 10."""

    wire_name: ClassVar[str] = "compare_summary"
    pod: object
    profiles: list[str] = field(default_factory=list)

    def run(self, engine: Engine) -> answers.CompareSummary:
        """See `advice.compare_summary`."""
        return advice.compare_summary(engine, self.pod, self.profiles)


@dataclass(frozen=True, slots=True)
class Explain(Operation[answers.Explanation]):
    """Why a pod does not fit, and what would let it."""

    wire_name: ClassVar[str] = "explain"
    namespace: str
    name: str

    def run(self, engine: Engine) -> answers.Explanation:
        """See `why.explain`."""
        return why.explain(engine, self.namespace, self.name)


@dataclass(frozen=True, slots=True)
class PreviewThresholds(Operation[answers.ThresholdPreview]):
    """What the LoadAware args of `document` (a whole configuration) would change for `profile`."""

    wire_name: ClassVar[str] = "threshold_preview"
    document: answers.Document
    profile: str
    pods: list[str] = field(default_factory=list)
    nodes: bool = True

    def run(self, engine: Engine) -> answers.ThresholdPreview:
        """See `advice.threshold_preview`."""
        return advice.threshold_preview(engine, self.document, self.profile, self.pods, self.nodes)


# ----- changes -----------------------------------------------------------------------------------------
def keep_out_of_full_collections() -> None:
    """Collect once, then freeze what is left: the cluster's objects live until deleted (reference
    counting still frees them then; they hold no cycles), and the cyclic collector's full scans
    would otherwise walk all of them again and again while the engine schedules (with 10000
    imported pods, 70 ms a scan, a few scans a run with live clients connected)."""
    gc.collect()
    gc.freeze()


@dataclass(frozen=True, slots=True)
class Create(Operation[answers.Created]):
    """Create objects from documents (simulated mode): all are checked before any is applied."""

    wire_name: ClassVar[str] = "create"
    documents: list[Any]
    source: str = "upload"

    def run(self, engine: Engine) -> answers.Created:
        """Load, check, then add them; a large batch is kept out of the collector's full scans."""
        objects = engine.load_new(self.documents, self.source)
        counts = engine.create_objects(objects, self.documents)
        if sum(counts.values()) >= LONG_LIVED_BATCH:
            keep_out_of_full_collections()
        return answers.Created(created=counts, warnings=objects.warnings)


@dataclass(frozen=True, slots=True)
class DeletePod(Operation[answers.Document]):
    """Delete a pod (simulated mode); the answer is its last document."""

    wire_name: ClassVar[str] = "delete_pod"
    namespace: str
    name: str

    def run(self, engine: Engine) -> answers.Document:
        """See `Engine.delete_pod`."""
        return engine.delete_pod(self.namespace, self.name)


@dataclass(frozen=True, slots=True)
class ReplacePod(Operation[answers.Document]):
    """Replace a pod with an edited document (deleted, then created; simulated mode); the new document."""

    wire_name: ClassVar[str] = "replace_pod"
    namespace: str
    name: str
    document: Any

    def run(self, engine: Engine) -> answers.Document:
        """See `edits.replace_pod`."""
        return edits.replace_pod(engine, self.namespace, self.name, self.document)


@dataclass(frozen=True, slots=True)
class ReplaceNode(Operation[answers.Document]):
    """Replace a node's document in place (simulated mode); the new document."""

    wire_name: ClassVar[str] = "replace_node"
    name: str
    document: Any

    def run(self, engine: Engine) -> answers.Document:
        """See `edits.replace_node`."""
        return edits.replace_node(engine, self.name, self.document)


@dataclass(frozen=True, slots=True)
class DeleteNode(Operation[answers.NodeDeleted]):
    """Delete a node and the pods bound to it (simulated mode)."""

    wire_name: ClassVar[str] = "delete_node"
    name: str

    def run(self, engine: Engine) -> answers.NodeDeleted:
        """See `edits.delete_node`."""
        return edits.delete_node(engine, self.name)


@dataclass(frozen=True, slots=True)
class ResetCluster(Operation[answers.ResetDone]):
    """Delete every object of the simulated cluster and create its starting documents."""

    wire_name: ClassVar[str] = "reset_cluster"
    documents: list[Any]

    def run(self, engine: Engine) -> answers.ResetDone:
        """See `edits.reset`."""
        return edits.reset(engine, self.documents)


@dataclass(frozen=True, slots=True)
class ApplyConfig(Operation[answers.Applied]):
    """Swap in the profiles of a configuration document, whole or not at all."""

    wire_name: ClassVar[str] = "apply_config"
    document: answers.Document

    def run(self, engine: Engine) -> answers.Applied:
        """See `Engine.apply_config`."""
        engine.apply_config(self.document)
        return answers.Applied(profiles=engine.profile_names())


@dataclass(frozen=True, slots=True)
class GetDebugFlags(Operation[answers.DebugFlags]):
    """debugTopNScores and debugFilterFailure."""

    wire_name: ClassVar[str] = "debug_flags"

    def run(self, engine: Engine) -> answers.DebugFlags:
        """See `Engine.debug_flags`."""
        return engine.debug_flags()


@dataclass(frozen=True, slots=True)
class SetDebugFlags(Operation[answers.DebugFlags]):
    """Set either debug flag (None: unchanged)."""

    wire_name: ClassVar[str] = "set_debug_flags"
    top_n: int | None = None
    filter_failure: bool | None = None

    def run(self, engine: Engine) -> answers.DebugFlags:
        """See `Engine.set_debug_flags`."""
        return engine.set_debug_flags(self.top_n, self.filter_failure)


@dataclass(frozen=True, slots=True)
class PluginTiming(Operation[answers.PluginTiming]):
    """Time each plugin in every Nth attempt (`every` as the client sent it, checked by the engine;
    None: only read the setting)."""

    wire_name: ClassVar[str] = "plugin_timing"
    every: object = None

    def run(self, engine: Engine) -> answers.PluginTiming:
        """See `Engine.plugin_timing`."""
        return engine.plugin_timing(self.every)


# ----- routes and the engine's state -------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Dispatch(Operation[answers.RouteAnswer]):
    """One Koordinator route (`/apis/v1/...`, `/debug/flags/...`)."""

    wire_name: ClassVar[str] = "dispatch"
    method: str
    path: str
    body: bytes = b""
    query: dict[str, str] = field(default_factory=dict)

    def run(self, engine: Engine) -> answers.RouteAnswer:
        """See `Engine.dispatch`; the answer's body as base64."""
        status, content_type, content = engine.dispatch(self.method, self.path, self.body, self.query)
        return answers.RouteAnswer(status=status, contentType=content_type, body=base64.b64encode(content).decode())


def route_body(answer: answers.RouteAnswer) -> bytes:
    """A Koordinator route's answer body as the engine wrote it."""
    return base64.b64decode(answer["body"])


@dataclass(frozen=True, slots=True)
class K8sRequest(Operation[answers.K8sAnswer]):
    """One Kubernetes API request on the simulated cluster (see `APIServer.handle`)."""

    wire_name: ClassVar[str] = "k8s"
    verb: str
    group: str
    version: str
    resource: str
    namespace: str = ""
    name: str = ""
    subresource: str = ""
    query: dict[str, str] = field(default_factory=dict)
    body: object = None
    content_type: str = ""

    def run(self, engine: Engine) -> answers.K8sAnswer:
        """See `Engine.k8s`."""
        request = {
            "verb": self.verb,
            "group": self.group,
            "version": self.version,
            "resource": self.resource,
            "namespace": self.namespace,
            "name": self.name,
            "subresource": self.subresource,
            "query": self.query,
            "body": self.body,
            "contentType": self.content_type,
        }
        return engine.k8s(request)


@dataclass(frozen=True, slots=True)
class GetMetrics(Operation[str]):
    """The engine's Prometheus registry in the text format."""

    wire_name: ClassVar[str] = "metrics"

    def run(self, engine: Engine) -> str:
        """See `Engine.metrics_text`."""
        return engine.metrics_text().decode()


@dataclass(frozen=True, slots=True)
class Ping(Operation[answers.Pong]):
    """Whether the engine answers, and its clock."""

    wire_name: ClassVar[str] = "ping"

    def run(self, engine: Engine) -> answers.Pong:
        """The engine thread answered."""
        return answers.Pong(pong=True, now=engine.now())


@dataclass(frozen=True, slots=True)
class GetClusterStatus(Operation[answers.ClusterStatus]):
    """The mode, the API server, leadership, informers, the shadow comparison and the sync."""

    wire_name: ClassVar[str] = "cluster_status"

    def run(self, engine: Engine) -> answers.ClusterStatus:
        """See `Engine.cluster_status`."""
        return engine.cluster_status()


@dataclass(frozen=True, slots=True)
class StartSync(Operation[answers.SyncStatus]):
    """Start mirroring a live cluster into the simulated one."""

    wire_name: ClassVar[str] = "sync_start"
    kubeconfig: str = ""
    context: str = ""
    in_cluster: bool = False
    keep_bindings: bool = True

    def run(self, engine: Engine) -> answers.SyncStatus:
        """See `Engine.sync_start`."""
        return engine.sync_start(self.kubeconfig, self.context, self.in_cluster, self.keep_bindings)


@dataclass(frozen=True, slots=True)
class StopSync(Operation[answers.SyncStatus]):
    """Stop the sync (what it mirrored stays)."""

    wire_name: ClassVar[str] = "sync_stop"

    def run(self, engine: Engine) -> answers.SyncStatus:
        """See `Engine.sync_stop`."""
        return engine.sync_stop()


@dataclass(frozen=True, slots=True)
class GetSyncStatus(Operation[answers.SyncStatus | None]):
    """The sync's state, or None if none was started."""

    wire_name: ClassVar[str] = "sync_status"

    def run(self, engine: Engine) -> answers.SyncStatus | None:
        """See `Engine.sync_status`."""
        return engine.sync_status()


# ----- work outside the engine thread -------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class ReplayPartRun:
    """One part of a replay (docs/replay.md): a candidate's segment of a window, replayed in a scratch
    engine by the task worker that runs it (embedded: a process of the local pool), never on the
    engine thread and never on the live cluster; `spec` is plain JSON (`scheduler.replay.spec`).
    Not an `Operation`: the control task refuses it."""

    spec: dict[str, Any]

    def execute(self, cancelled: Callable[[], bool] | None = None) -> answers.ReplayPartAnswer:
        """Replay it in this process; `cancelled()` is asked every few hundred events."""
        answer = replay.run_part(self.spec, cancelled)
        return answers.ReplayPartAnswer(outcome=answer["outcome"], seconds=float(answer["seconds"]), pid=int(answer["pid"]))


# ----- the wire ----------------------------------------------------------------------------------------
OPERATIONS: dict[str, type[Operation[Any]]] = {
    op.wire_name: op
    for op in (
        ListNodes,
        GetNode,
        ListPods,
        GetPod,
        GetQueue,
        GetStats,
        GetPluginArgs,
        GetOverview,
        GetNodesPage,
        GetNodePage,
        GetPendingPage,
        GetGangs,
        GetNominated,
        GetPreemptionTimeline,
        WhatIf,
        Compare,
        WhatIfDiff,
        CompareSummary,
        Explain,
        PreviewThresholds,
        Create,
        DeletePod,
        ReplacePod,
        ReplaceNode,
        DeleteNode,
        ResetCluster,
        ApplyConfig,
        GetDebugFlags,
        SetDebugFlags,
        PluginTiming,
        Dispatch,
        K8sRequest,
        GetMetrics,
        Ping,
        GetClusterStatus,
        StartSync,
        StopSync,
        GetSyncStatus,
    )
}
"""Every operation by its name on the wire."""


def _is_bytes(f: dataclasses.Field[Any]) -> bool:
    return f.type in (bytes, "bytes")


def to_wire(op: Operation[Any]) -> tuple[str, dict[str, Any]]:
    """The operation as a Celery task's arguments: its name and its fields as JSON values."""
    fields = {}
    for f in dataclasses.fields(op):
        value = getattr(op, f.name)
        fields[f.name] = base64.b64encode(value).decode() if _is_bytes(f) else value
    return op.wire_name, fields


def from_wire(name: str, fields: Mapping[str, Any] | None = None) -> Operation[Any]:
    """The operation `to_wire` wrote; BadInput for a name or field this engine does not know."""
    op = OPERATIONS.get(name)
    if op is None:
        raise BadInput("operation", f"unknown engine operation {name!r}; known: {', '.join(sorted(OPERATIONS))}")
    declared = {f.name: f for f in dataclasses.fields(op)}
    values = dict(fields or {})
    unknown = sorted(set(values) - set(declared))
    if unknown:
        raise BadInput(unknown[0], f"the engine operation {name!r} has no field {unknown[0]!r}")
    for key, value in values.items():
        if _is_bytes(declared[key]):
            values[key] = base64.b64decode(value)
    try:
        return op(**values)
    except TypeError as exc:  # a required field is missing
        raise BadInput("operation", f"the engine operation {name!r}: {exc}") from exc
