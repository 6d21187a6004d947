"""The shapes of what the engine answers the console: one TypedDict per operation's result.

Every answer is plain JSON (it may cross Redis between the engine worker and the web process),
so these hold lists, not tuples, and string keys only. A Kubernetes object or a configuration is a
`Document`; an attempt record (docs/architecture.md, "The attempt record"), as the engine's records write it, is an `Entry`.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

Document = dict[str, Any]
"""A Kubernetes object (or a KubeSchedulerConfiguration) as decoded JSON."""
Entry = dict[str, Any]
"""One attempt record (docs/architecture.md, "The attempt record": `pod`, `profile`, `outcome`, `node`, `filter`,
`scores`, `totals`, ...), as the engine's attempt serializer writes it."""


# ----- nodes --------------------------------------------------------------------------------------
class Taint(TypedDict):
    """A node's taint."""

    key: str
    value: str
    effect: str


class NodeRow(TypedDict):
    """One node: requested and allocatable per resource (cpu in millicores, memory in bytes, pods)."""

    name: str
    labels: dict[str, str]
    taints: list[Taint]
    unschedulable: bool
    allocatable: dict[str, int]
    requested: dict[str, int]


class NodeList(TypedDict):
    """A page of nodes."""

    count: int
    results: list[NodeRow]


class NodeDetail(NodeRow):
    """One node with Koordinator's NodeInfo document."""

    nodeInfo: dict[str, Any]


class NodeUseRow(NodeRow):
    """A node with requested / allocatable for cpu, memory and pods."""

    used: dict[str, float]


class NodesPage(TypedDict):
    """A page of the Nodes page."""

    count: int
    offset: int
    limit: int
    results: list[NodeUseRow]


class LoadRow(TypedDict):
    """LoadAwareScheduling's estimate of one resource on one node."""

    resource: str
    allocatable: int
    estimated: int | None
    percent: int | None
    threshold: int


class NodeLoad(TypedDict):
    """LoadAwareScheduling's view of one node in one profile, with its NodeMetric's age: an
    expired report (older than expirationSeconds) is not used, and the filter may refuse the node."""

    reported: bool
    resources: list[LoadRow]
    updateTime: str | None
    ageSeconds: int | None
    expired: bool
    refused: bool
    expirationSeconds: int


class Cpu(TypedDict):
    """One logical CPU of a NUMA map."""

    cpu: int
    state: str
    node: int
    pods: list[str]


class Core(TypedDict):
    """A core and its CPUs."""

    core: int
    cpus: list[Cpu]


class Socket(TypedDict):
    """A socket and its cores."""

    socket: int
    cores: list[Core]


# ----- pods and queues ----------------------------------------------------------------------------
class PodRow(TypedDict):
    """One row of the pods list."""

    namespace: str
    name: str
    uid: str
    profile: str
    phase: str
    node: str | None
    nominatedNode: str | None
    priority: int
    requests: dict[str, int]  # cpu in millicores, memory and storage in bytes, others in units
    queue: str | None


class PodList(TypedDict):
    """A page of pods."""

    count: int
    results: list[PodRow]


class PodDetail(PodRow):
    """One pod with its current document."""

    manifest: Document


class NodePage(NodeDetail):
    """One node for its page: its pods, the LoadAware estimates, the Koordinator routes about it."""

    used: dict[str, float]
    pods: list[PodRow]
    podCount: int
    loadaware: dict[str, NodeLoad]
    routes: dict[str, Any]
    numaMap: list[Socket]


class QueueRow(TypedDict):
    """A pending pod and why it waits."""

    pod: str
    profile: str
    priority: int
    attempts: int
    reason: str
    plugins: NotRequired[list[str]]
    retryIn: NotRequired[float]


class QueueView(TypedDict):
    """Pending pods by queue (one page of each), and how many each queue holds."""

    active: list[QueueRow]
    backoff: list[QueueRow]
    unschedulable: list[QueueRow]
    gated: list[QueueRow]
    counts: dict[str, int]


class PendingRow(PodRow):
    """A pending pod on the Pending page: its rejecting plugins in the order the profile runs them."""

    key: str
    attempts: int
    plugins: list[str]


class PendingPage(TypedDict):
    """A page of the Pending page."""

    count: int
    offset: int
    limit: int
    results: list[PendingRow]


class NominatedRow(TypedDict):
    """A preemptor nominated to a node and not bound yet."""

    pod: str
    node: str
    priority: int


class Nominated(TypedDict):
    """Preemptors waiting for their victims to go."""

    count: int
    results: list[NominatedRow]


class PreemptionPage(TypedDict):
    """Preemption stories newest first (`preemptions.PreemptionTimeline`)."""

    count: int
    results: list[dict[str, Any]]


# ----- the engine's counters and settings ---------------------------------------------------------
class Stats(TypedDict):
    """Counters for the health and live pages."""

    nodes: int
    pods: int
    attempts: int
    scheduled: int
    pending: dict[str, int]
    profiles: list[str]
    since: str  # when the engine started (UTC): attempts and scheduled count from then


class LoadAwareSummary(TypedDict):
    """LoadAwareScheduling's estimates over every node in one profile."""

    resources: list[str]
    thresholds: dict[str, int]
    percent: dict[str, list[int]]
    reported: int
    passing: int
    expired: int
    oldestReportSeconds: int | None
    expirationSeconds: int


class GangWaiting(TypedDict):
    """A gang with fewer members bound than its minimum."""

    gang: str
    bound: int
    min: int
    waitingForBind: int
    total: int | None


class Overview(TypedDict):
    """What the Overview page shows."""

    nodes: list[str]
    utilization: dict[str, list[float]]
    loadaware: dict[str, LoadAwareSummary]
    queue: dict[str, int]
    pendingByPlugin: dict[str, int]
    nominated: list[NominatedRow]
    nominatedCount: int
    waitingPermit: int
    gangsWaiting: list[GangWaiting]
    stats: Stats


class GangMember(TypedDict):
    """A gang member's state and, while pending, why it waits."""

    pod: str
    state: str
    node: NotRequired[str]
    queue: NotRequired[str | None]
    plugins: NotRequired[list[str]]
    permitDeadlineIn: NotRequired[dict[str, float]]


class GangView(TypedDict):
    """One gang: Coscheduling's summary without its member lists (or a Workload gang's pod group),
    the members, and which blocks it. `source` names the plugin: Coscheduling or GangScheduling."""

    name: str
    source: str
    summary: dict[str, Any]
    members: list[GangMember]
    states: dict[str, int]
    blocking: GangMember | None


class Gangs(TypedDict):
    """Every gang, and whether a profile runs Coscheduling or GangScheduling."""

    gangs: list[GangView]
    available: bool


class DebugFlags(TypedDict):
    """Koordinator's debug flags as the engine holds them."""

    debugTopNScores: int
    debugFilterFailure: bool


class PluginTiming(TypedDict):
    """Each plugin is timed in every Nth attempt (0: never)."""

    every: int


class Pong(TypedDict):
    """The engine answers, and its clock."""

    pong: bool
    now: float


# ----- changes --------------------------------------------------------------------------------------
class Created(TypedDict):
    """Objects created, counted by kind, and the loader's warnings (kinds skipped)."""

    created: dict[str, int]
    warnings: list[str]


class NodeDeleted(TypedDict):
    """A deleted node's last document and the pods that were bound to it (deleted with it)."""

    node: Document
    podsDeleted: list[str]


class ResetDone(TypedDict):
    """A reset of the simulated cluster: objects deleted and created, counted by kind."""

    deleted: dict[str, int]
    created: dict[str, int]


class Applied(TypedDict):
    """The profiles running after a configuration was applied."""

    profiles: list[str]


# ----- routes ---------------------------------------------------------------------------------------
class RouteAnswer(TypedDict):
    """A Koordinator route's answer; `body` is base64 (the answer may cross Redis as JSON)."""

    status: int
    contentType: str
    body: str


class K8sAnswer(TypedDict):
    """A `/k8s` request's answer: the HTTP code, the body (an object, a list or a Status) and the
    warnings kube-apiserver would send as `Warning` headers (unknown fields under `fieldValidation=Warn`)."""

    code: int
    body: dict[str, Any]
    warnings: list[str]


class K8sRoute(TypedDict):
    """What a `/k8s` path names."""

    group: str
    version: str
    resource: str
    namespace: str
    name: str
    subresource: str


class K8sResource(TypedDict):
    """A resource `/k8s` serves, for discovery."""

    name: str
    kind: str
    group: str
    version: str
    namespaced: bool
    shortNames: list[str]
    verbs: list[str]
    subresources: list[str]


class ClusterStatus(TypedDict):
    """The mode, the API server, leadership, the informers, the Lease, and the shadow comparison and
    the sync when there are."""

    mode: str
    server: str | None
    leading: bool
    informers: NotRequired[list[dict[str, Any]]]
    lease: NotRequired[dict[str, Any]]
    # Errors of work beside the cycles (controllers' writes, informers' handlers, Events), logged,
    # counted and retried: source, count, the latest message.
    errors: NotRequired[list[dict[str, Any]]]
    shadow: dict[str, Any] | None
    sync: dict[str, Any] | None


SyncStatus = dict[str, Any]
"""A live cluster's sync into the simulated one (`scheduler.kube.mirror.LiveMirror.status`)."""


# ----- what-if and advice ---------------------------------------------------------------------------
class Delta(TypedDict):
    """Profile b's total and per-plugin scores minus profile a's, on one node."""

    total: int
    plugins: dict[str, int]


class Comparison(TypedDict):
    """One pod under two profiles, with per-node deltas."""

    profiles: list[str]
    results: list[Entry]
    sameNode: bool
    deltas: dict[str, Delta]


class CompareRow(TypedDict):
    """A node either profile ranks in its top N."""

    node: str
    a: int | None
    b: int | None
    delta: int
    plugins: dict[str, int]


class CompareSummary(TypedDict):
    """A comparison cut to the nodes either profile ranks in its top N."""

    profiles: list[str]
    sameNode: bool
    results: list[Entry]
    rows: list[CompareRow]


class WhatIfDiff(TypedDict):
    """What-if for an edited spec beside the pod's current one."""

    result: Entry
    base: Entry | None
    diff: NotRequired[dict[str, list[Any]]]


class Advice(TypedDict):
    """One change that would let the pod past a plugin, and what the cycle run on it showed."""

    text: str
    enough: bool | None  # True: checked, it would be placed; False: checked, still rejected; None: not checked
    then: list[Advice]  # when not enough: the advice for each blocker that remains
    pod: NotRequired[str]  # a pod the advice is about (a gang member), for a link


class AdviceGroup(TypedDict):
    """The nodes one plugin rejected, its reasons counted, and what would let the pod fit."""

    plugin: str
    nodes: int
    reasons: dict[str, int]
    advice: list[Advice]


class Evaluation(TypedDict):
    """The scheduling cycle run now for a pending pod."""

    feasibleNodes: int
    numAllNodes: int
    topRows: list[dict[str, Any]]
    timings: dict[str, float]


class Explanation(TypedDict):
    """Why a pod does not fit, and the smallest changes that would let it."""

    pod: str
    profile: str
    outcome: str
    node: str | None
    message: str
    groups: list[AdviceGroup]
    evaluation: Evaluation | None
    queue: str | None
    boundTo: str | None
    manifest: Document
    otherScheduler: str | None  # the pod's schedulerName when no profile of ours runs it
    filterPlugins: list[str]  # the Filter plugins of the pod's profile now, in order ([] if none of ours)


class PreviewPod(TypedDict):
    """Where the cycle places a pod now and with the previewed args."""

    pod: str
    boundTo: str | None
    now: str | None
    after: str | None
    feasibleNow: int
    feasibleAfter: int


class ThresholdPreview(TypedDict):
    """What new LoadAware args would change: nodes passing now and after, and pods that move."""

    profile: str
    before: Any
    after: Any
    nodes: dict[str, int]
    pods: list[PreviewPod]
    podsChanged: int


class ReplayPartAnswer(TypedDict):
    """One replay part's outcome (`scheduler.replay.RunOutcome` as JSON), how long it took, where it ran."""

    outcome: dict[str, Any]
    seconds: float
    pid: int
    worker: NotRequired[str]
