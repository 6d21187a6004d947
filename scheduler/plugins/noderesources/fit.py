"""NodeResourcesFit: does the node have room for the pod's requests, and how full would it be.

Ports `pkg/scheduler/framework/plugins/noderesources/fit.go`. Filter rejects a node whose free
allocatable is smaller than the pod's request ("Insufficient cpu", "Too many pods", ...), with
UnschedulableAndUnresolvable when the request exceeds the node's whole allocatable (preemption
cannot help there). Score uses one of the strategies in `resource_allocation`.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from scheduler.api.names import is_extended_resource_name
from scheduler.api.objects import CPU, EPHEMERAL_STORAGE, MEMORY, PODS, Node, Pod
from scheduler.config.args import NodeResourcesFitArgs, UtilizationShapePoint
from scheduler.framework import signers
from scheduler.framework.interface import Handle, PreFilterExtensions, ScoreExtensions
from scheduler.framework.nodeinfo import NodeInfo, PodAmounts, PodInfo, Resource, is_scalar_resource
from scheduler.framework.snapshot import Snapshot
from scheduler.framework.types import (
    ActionType,
    BatchFilterResult,
    ClusterEvent,
    Code,
    CycleState,
    IntArray,
    PreFilterResult,
    QueueingHint,
    Status,
    error,
    success,
    unresolvable,
    unschedulable,
)
from scheduler.plugins.noderesources.resource_allocation import (
    DEFAULT_RESOURCES,
    LEAST_ALLOCATED,
    ResourceAllocationScorer,
    ResourceWeight,
    build_strategy,
    resource_weights,
)

NAME = "NodeResourcesFit"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME
TOO_MANY_PODS = "Too many pods"
_BITS = np.int64(1) << np.arange(63, dtype=np.int64)
"""Bit k for reason row k of a batch Filter verdict."""


@dataclass(frozen=True, slots=True)
class PodResourceRequest:
    """The pod's requests as Filter compares them (`preFilterState`, a `framework.Resource`)."""

    milli_cpu: int = 0
    memory: int = 0
    ephemeral_storage: int = 0
    scalar_resources: tuple[tuple[str, int], ...] = ()

    @property
    def empty(self) -> bool:
        """Whether the pod asks for nothing at all, so only the pod count can fail."""
        return not (self.milli_cpu or self.memory or self.ephemeral_storage or self.scalar_resources)


def compute_pod_resource_request(pod: Pod) -> PodResourceRequest:
    """`computePodResourceRequest`: the effective requests (init containers, overhead included)."""
    requests = pod.requests
    return PodResourceRequest(
        milli_cpu=requests.get(CPU, 0),
        memory=requests.get(MEMORY, 0),
        ephemeral_storage=requests.get(EPHEMERAL_STORAGE, 0),
        scalar_resources=tuple((name, qty) for name, qty in requests.items() if is_scalar_resource(name)),
    )


@dataclass(frozen=True, slots=True)
class InsufficientResource:
    """One resource the node lacks for the pod (`InsufficientResource`)."""

    resource_name: str
    reason: str
    requested: int
    used: int
    capacity: int
    unresolvable: bool = False


def is_ignored(resource: str, ignored_resources: Collection[str], ignored_groups: Collection[str]) -> bool:
    """Whether an extended resource is ignored by name or by its domain prefix."""
    if not is_extended_resource_name(resource):
        return False
    prefix = resource.split("/")[0] if ignored_groups else ""
    return resource in ignored_resources or prefix in ignored_groups


def fits_request(
    request: PodResourceRequest,
    node_info: NodeInfo,
    ignored_resources: Collection[str] = (),
    ignored_groups: Collection[str] = (),
) -> list[InsufficientResource]:
    """`fitsRequest`: every resource the node is short of, in upstream's order."""
    out: list[InsufficientResource] = []
    allocatable = node_info.allocatable
    pod_count = len(node_info.pods)
    if pod_count + 1 > allocatable.allowed_pod_number:
        out.append(InsufficientResource(PODS, TOO_MANY_PODS, 1, pod_count, allocatable.allowed_pod_number))
    if request.empty:
        return out
    requested = node_info.requested
    fixed = (
        (CPU, request.milli_cpu, requested.milli_cpu, allocatable.milli_cpu),
        (MEMORY, request.memory, requested.memory, allocatable.memory),
        (EPHEMERAL_STORAGE, request.ephemeral_storage, requested.ephemeral_storage, allocatable.ephemeral_storage),
    )
    for name, want, used, capacity in fixed:
        if want > 0 and want > capacity - used:
            out.append(InsufficientResource(name, f"Insufficient {name}", want, used, capacity, want > capacity))
    for name, want in request.scalar_resources:
        if want == 0 or is_ignored(name, ignored_resources, ignored_groups):
            continue
        used = requested.scalar_resources.get(name, 0)
        capacity = allocatable.scalar_resources.get(name, 0)
        if want > capacity - used:
            out.append(InsufficientResource(name, f"Insufficient {name}", want, used, capacity, want > capacity))
    return out


_INSUFFICIENT_CPU = f"Insufficient {CPU}"
_INSUFFICIENT_MEMORY = f"Insufficient {MEMORY}"
_INSUFFICIENT_EPHEMERAL_STORAGE = f"Insufficient {EPHEMERAL_STORAGE}"


def _fits_fixed(request: PodResourceRequest, allocatable: Resource, requested: Resource) -> Status:
    """Filter's verdict on cpu, memory and ephemeral storage alone (the pod count already fits)."""
    reasons: list[str] = []
    beyond = False
    want = request.milli_cpu
    if want > 0 and want > allocatable.milli_cpu - requested.milli_cpu:
        reasons.append(_INSUFFICIENT_CPU)
        beyond = want > allocatable.milli_cpu
    want = request.memory
    if want > 0 and want > allocatable.memory - requested.memory:
        reasons.append(_INSUFFICIENT_MEMORY)
        beyond = beyond or want > allocatable.memory
    want = request.ephemeral_storage
    if want > 0 and want > allocatable.ephemeral_storage - requested.ephemeral_storage:
        reasons.append(_INSUFFICIENT_EPHEMERAL_STORAGE)
        beyond = beyond or want > allocatable.ephemeral_storage
    if not reasons:
        return success()
    return unresolvable(*reasons) if beyond else unschedulable(*reasons)


def fits(pod: Pod, node_info: NodeInfo) -> list[InsufficientResource]:
    """`Fits`: the pod against the node with nothing ignored (the kubelet's admission check)."""
    return fits_request(compute_pod_resource_request(pod), node_info)


class Room:
    """One node's free room for the cycle's pod as pods are taken off and put back: whether Filter
    would pass (`fitsRequest` finds no shortage). Built by `RoomTable`."""

    __slots__ = ("_amounts", "_wants", "free", "slack")

    def __init__(
        self, free: list[int], slack: int, wants: tuple[int, ...], amounts: Callable[[PodAmounts], tuple[int, ...]]
    ) -> None:
        self.free = free
        self.slack = slack
        self._wants = wants
        self._amounts = amounts

    def remove(self, d: PodAmounts) -> None:
        """Take a pod's requests off (as `NodeInfo.remove_pod` accounts them)."""
        self.slack += 1
        self.free = list(map(operator.add, self.free, self._amounts(d)))

    def add(self, d: PodAmounts) -> None:
        """Put a pod's requests on (as `NodeInfo.add_pod` accounts them)."""
        self.slack -= 1
        self.free = list(map(operator.sub, self.free, self._amounts(d)))

    def fits(self) -> bool:
        """Whether Filter would pass: room for one more pod and for every wanted amount."""
        return self.slack >= 1 and all(map(operator.le, self._wants, self.free))

    def take_off(self, infos: Sequence[PodInfo]) -> None:
        """`remove` each pod."""
        for info in infos:
            self.remove(info.derived())

    def reprieve(self, infos: Sequence[PodInfo]) -> list[PodInfo]:
        """Put the pods back in order, each only if Filter still passes with it (`add`, `fits`,
        else `remove`); returns the ones that could not come back."""
        free, slack, wants, amounts = self.free, self.slack, self._wants, self._amounts
        sub, le = operator.sub, operator.le
        left_out: list[PodInfo] = []
        for info in infos:
            trial = list(map(sub, free, amounts(info.derived())))
            if slack >= 2 and all(map(le, wants, trial)):
                free, slack = trial, slack - 1
            else:
                left_out.append(info)
        self.free, self.slack = free, slack
        return left_out


def _amounts_getter(names: Sequence[str]) -> Callable[[PodAmounts], tuple[int, ...]]:
    """A pod's amounts of these resources, in order (as `NodeInfo` accounts them)."""
    fixed = {CPU: "milli_cpu", MEMORY: "memory", EPHEMERAL_STORAGE: "ephemeral_storage"}
    if len(names) > 1 and all(name in fixed for name in names):
        getter: Callable[[PodAmounts], tuple[int, ...]] = operator.attrgetter(*(fixed[name] for name in names))
        return getter

    def amounts(d: PodAmounts) -> tuple[int, ...]:
        scalars = dict(d.scalars)
        return tuple(getattr(d, fixed[name]) if name in fixed else scalars.get(name, 0) for name in names)

    return amounts


class RoomTable:
    """Free room for one pod's request on many snapshot rows, read from the arrays at once.

    Only the resources Filter checks for this request take part: cpu, memory and ephemeral
    storage when wanted (> 0), scalar resources wanted and not ignored; free = allocatable -
    requested (0 - 0 for a resource no node has), and the pod slots left. Preemption's dry run
    uses it instead of copying a NodeInfo when NodeResourcesFit is the only Filter plugin that
    reads pods.
    """

    def __init__(
        self,
        request: PodResourceRequest,
        snapshot: Snapshot,
        rows: IntArray,
        ignored_resources: Collection[str],
        ignored_groups: Collection[str],
    ) -> None:
        wanted: list[tuple[str, int]] = []
        if not request.empty:
            fixed = ((CPU, request.milli_cpu), (MEMORY, request.memory), (EPHEMERAL_STORAGE, request.ephemeral_storage))
            wanted = [(name, want) for name, want in fixed if want > 0]
            wanted += [
                (name, want)
                for name, want in request.scalar_resources
                if want != 0 and not is_ignored(name, ignored_resources, ignored_groups)
            ]
        free = np.zeros((len(rows), len(wanted)), dtype=np.int64)
        for k, (name, _want) in enumerate(wanted):
            col = snapshot.column(name)
            if col is not None:
                free[:, k] = snapshot.allocatable[rows, col] - snapshot.requested[rows, col]
        # Rows are turned into Python ints only when asked for (a dry run reads a tenth of them).
        self._free = free
        self._allowed = snapshot.allowed_pods[rows]
        self._wants = tuple(want for _name, want in wanted)
        self._amounts = _amounts_getter([name for name, _want in wanted])

    def room(self, index: int, pods: int) -> Room:
        """The room on the `index`-th row given, holding `pods` pods."""
        return Room(self._free[index].tolist(), int(self._allowed[index]) - pods, self._wants, self._amounts)


def _missing_state(key: str) -> str:
    return f'error reading "{key}" from cycleState: not found'


class NodeResourcesFit:
    """Filters nodes without room for the pod's requests and scores by the configured strategy."""

    name = NAME

    def sign_pod(self, pod: Pod) -> signers.Signed:
        """The pod's requests with overhead and pod-level resources."""
        return signers.signed((signers.RESOURCES, signers.resources(pod)))

    def __init__(
        self,
        handle: Handle | None,
        ignored_resources: Collection[str] = (),
        ignored_resource_groups: Collection[str] = (),
        strategy: str = LEAST_ALLOCATED,
        resources: tuple[ResourceWeight, ...] = DEFAULT_RESOURCES,
        shape: Sequence[UtilizationShapePoint] | None = None,
    ) -> None:
        self.handle = handle
        self.ignored_resources = frozenset(ignored_resources)
        self.ignored_resource_groups = frozenset(ignored_resource_groups)
        self._ignored_names: dict[str, bool] = {}
        self._wanted_cache: tuple[PodResourceRequest, tuple[str, ...], npt.NDArray[np.int64]] | None = None
        # pod_level=False: kube-scheduler (v1.35 to v1.37, master as of kubernetes#141387) scores
        # with the containers' requests only; its filter does use spec.resources.
        self.scorer = ResourceAllocationScorer(
            strategy, resources, build_strategy(strategy, resources, shape), use_requested=False, pod_level=False
        )

    # ----- PreFilter / Filter ---------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        """Compute the pod's request once for the cycle; never skips, never rejects."""
        state.write(PRE_FILTER_STATE_KEY, compute_pod_resource_request(pod))
        return None, success()

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        """No AddPod/RemovePod: the request does not depend on other pods."""
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Unschedulable with every shortage as a reason; unresolvable if one exceeds allocatable."""
        request = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(request, PodResourceRequest):
            return error(_missing_state(PRE_FILTER_STATE_KEY))
        allocatable = node_info.allocatable
        if not request.scalar_resources and len(node_info.pods) < allocatable.allowed_pod_number:
            # The common case (room for one more pod, no scalar resources): `fits_request`'s
            # checks inlined, with the same reasons in the same order.
            return _fits_fixed(request, allocatable, node_info.requested)
        short = fits_request(request, node_info, self.ignored_resources, self.ignored_resource_groups)
        if not short:
            return success()
        reasons = tuple(r.reason for r in short)
        if any(r.unresolvable for r in short):
            return unresolvable(*reasons)
        return unschedulable(*reasons)

    def _wanted(self, request: PodResourceRequest) -> tuple[tuple[str, ...], npt.NDArray[np.int64]]:
        """The resources Filter compares for this request, in upstream's order, with the amounts."""
        cached = self._wanted_cache
        if cached is not None and cached[0] is request:
            return cached[1], cached[2]
        wanted: list[tuple[str, int]] = []
        if not request.empty:
            fixed = [(CPU, request.milli_cpu), (MEMORY, request.memory), (EPHEMERAL_STORAGE, request.ephemeral_storage)]
            wanted = [(name, want) for name, want in fixed if want > 0]
            wanted += [(name, qty) for name, qty in request.scalar_resources if qty > 0 and not self._is_ignored(name)]
        names = tuple(name for name, _ in wanted)
        amounts = np.array([want for _, want in wanted], dtype=np.int64).reshape(-1, 1)
        # One entry: every chunk of a cycle (and each dry-run node) asks for the same request
        # object; holding it keeps its identity from being reused by another.
        self._wanted_cache = (request, names, amounts)
        return names, amounts

    def _is_ignored(self, name: str) -> bool:
        """`is_ignored` under this plugin's args, remembered per resource name."""
        known = self._ignored_names.get(name)
        if known is None:
            known = self._ignored_names[name] = is_ignored(name, self.ignored_resources, self.ignored_resource_groups)
        return known

    def filter_batch(self, state: CycleState, pod: Pod, snapshot: Snapshot, positions: IntArray) -> BatchFilterResult:
        """`filter` for many nodes over the snapshot's arrays."""
        request = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(request, PodResourceRequest):
            message = _missing_state(PRE_FILTER_STATE_KEY)
            codes = np.full(len(positions), Code.ERROR, dtype=np.int8)
            return BatchFilterResult(codes, lambda i: (message,))
        wanted, amounts = self._wanted(request)
        count = len(positions)
        # One row per reason: the pod count first, then each wanted resource in order.
        short = np.empty((len(wanted) + 1, count), dtype=np.bool_)
        np.greater_equal(snapshot.pod_count.take(positions), snapshot.allowed_pods.take(positions), out=short[0])
        cols = [snapshot.column(name) for name in wanted]
        present = [k for k, col in enumerate(cols) if col is not None]
        alloc: npt.NDArray[np.int64] | None = None
        if present:
            # Rows taken once (np.take copies rows faster than fancy indexing), then the wanted
            # columns as one matrix: a comparison per chunk, not per resource.
            taken = [col for col in cols if col is not None]
            alloc_rows = snapshot.allocatable.take(positions, axis=0)
            free = (alloc_rows - snapshot.requested.take(positions, axis=0))[:, taken].T
            alloc = alloc_rows[:, taken].T
            if len(present) == len(wanted):
                np.greater(amounts, free, out=short[1:])
            else:
                short[[k + 1 for k in present]] = amounts[present] > free
        if len(present) < len(wanted):
            # No node has the resource: nothing is allocatable, nothing is used.
            short[[k + 1 for k, col in enumerate(cols) if col is None]] = True
        if not short.any():
            # The usual case in a cluster with room: no reasons to keep.
            return BatchFilterResult.all_passed(count)
        # A shortage beyond the node's whole allocatable cannot be cured by preemption.
        if len(present) < len(wanted):
            hopeless = np.ones(count, dtype=np.bool_)
        elif alloc is None:
            # Only the pod count is compared: more room comes from removing pods.
            hopeless = np.zeros(count, dtype=np.bool_)
        else:
            beyond = np.greater(amounts, alloc)
            beyond &= short[1:]
            hopeless = np.any(beyond, axis=0)
        # Which reasons apply, as bits (row k is bit k): equal bits mean equal reasons.
        keys = _BITS[: len(short)] @ short
        codes = np.zeros(count, dtype=np.int8)
        codes[keys != 0] = Code.UNSCHEDULABLE
        codes[hopeless] = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        names = (TOO_MANY_PODS, *(f"Insufficient {name}" for name in wanted))

        def reasons_of(i: int) -> tuple[str, ...]:
            return tuple(names[k] for k in np.flatnonzero(short[:, i]))

        return BatchFilterResult(codes, reasons_of, keys)

    def room_table(self, state: CycleState, snapshot: Snapshot, rows: IntArray) -> RoomTable | None:
        """The cycle's pod's room on these rows (None without PreFilter's state: Filter would fail)."""
        request = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(request, PodResourceRequest):
            return None
        return RoomTable(request, snapshot, rows, self.ignored_resources, self.ignored_resource_groups)

    # ----- PreScore / Score -----------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status:
        """Compute the pod's scored requests once; upstream's Fit PreScore never skips."""
        state.write(PRE_SCORE_STATE_KEY, self.scorer.pod_requests(pod))
        return success()

    def _pod_requests(self, state: CycleState, pod: Pod) -> tuple[int, ...]:
        cached = state.get(PRE_SCORE_STATE_KEY)
        # Score without PreScore is allowed upstream: the requests are recomputed.
        return cached if isinstance(cached, tuple) else self.scorer.pod_requests(pod)

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        """The configured strategy's score for one node."""
        return self.scorer.score(node_info, self._pod_requests(state, pod))

    def score_batch(self, state: CycleState, pod: Pod, snapshot: Snapshot, positions: IntArray) -> IntArray:
        """`score` for many nodes."""
        return self.scorer.score_batch(snapshot, positions, self._pod_requests(state, pod))

    def score_extensions(self) -> ScoreExtensions | None:
        """Scores are already 0..100."""
        return None

    # ----- queueing ---------------------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEvent]:
        """Pod deletions or scale-downs free room; new nodes or more allocatable add room.

        With queueing hints there is no pre-check hiding a Node/Add (kubernetes#109437), so
        node taint and label updates are not registered, as upstream.
        """
        return [
            ClusterEvent("Pod", ActionType.DELETE | ActionType.UPDATE_POD_SCALE_DOWN, hint=is_schedulable_after_pod_event),
            ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE, hint=is_schedulable_after_node_change),
        ]


# ----- queueing hints -------------------------------------------------------------------------------
def is_schedulable_after_pod_event(pod: Pod, old: Pod | None, new: Pod | None) -> QueueingHint:
    """`isSchedulableAfterPodEvent`: a deleted pod that was assigned or nominated frees room; a
    scale-down helps when it is the pod itself or an assigned pod shrinking a resource the pod asks for."""
    if new is None:
        assert old is not None
        if not old.node_name and not old.nominated_node_name:
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE
    if new.uid == pod.uid:
        return QueueingHint.QUEUE
    if not new.node_name or old is None:
        return QueueingHint.QUEUE_SKIP
    before, after = old.requests, new.requests
    for name, want in pod.requests.items():
        if (
            want
            and (name in (CPU, MEMORY, EPHEMERAL_STORAGE) or is_scalar_resource(name))
            and before.get(name, 0) > after.get(name, 0)
        ):
            return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def fits_empty_node(request: PodResourceRequest, allocatable: Mapping[str, int]) -> bool:
    """`isFit`: the pod against the node's whole allocatable, as if no pod ran there."""
    if allocatable.get(PODS, 0) < 1:
        return False
    if request.empty:
        return True
    for name, want in ((CPU, request.milli_cpu), (MEMORY, request.memory), (EPHEMERAL_STORAGE, request.ephemeral_storage)):
        if want > 0 and want > allocatable.get(name, 0):
            return False
    return all(want == 0 or want <= allocatable.get(name, 0) for name, want in request.scalar_resources)


def is_schedulable_after_node_change(pod: Pod, old: Node | None, new: Node | None) -> QueueingHint:
    """`isSchedulableAfterNodeChange`: Queue when the node could hold the pod were it empty and it
    was added, or an update raised the allowed pod count or a resource the pod requests."""
    assert new is not None
    request = compute_pod_resource_request(pod)
    if not fits_empty_node(request, new.allocatable):
        return QueueingHint.QUEUE_SKIP
    if old is None:
        return QueueingHint.QUEUE
    before, after = old.allocatable, new.allocatable
    if after.get(PODS, 0) > before.get(PODS, 0):
        return QueueingHint.QUEUE
    if request.empty:
        return QueueingHint.QUEUE_SKIP
    for name, want in ((CPU, request.milli_cpu), (MEMORY, request.memory), (EPHEMERAL_STORAGE, request.ephemeral_storage)):
        if want > 0 and after.get(name, 0) > before.get(name, 0):
            return QueueingHint.QUEUE
    for name, want in request.scalar_resources:
        if want and after.get(name, 0) > before.get(name, 0):
            return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def new(args: object | None, handle: Handle | None) -> NodeResourcesFit:
    """Build the plugin from NodeResourcesFitArgs (None means upstream's defaults)."""
    if args is None:
        args = NodeResourcesFitArgs()
    if not isinstance(args, NodeResourcesFitArgs):
        raise TypeError(f"want args to be of type NodeResourcesFitArgs, got {type(args).__name__}")
    strategy = args.scoring_strategy
    ratio = strategy.requested_to_capacity_ratio
    return NodeResourcesFit(
        handle,
        ignored_resources=args.ignored_resources,
        ignored_resource_groups=args.ignored_resource_groups,
        strategy=strategy.type,
        # An empty list stays empty: upstream's Score then fails with "resources not found".
        resources=resource_weights(strategy.resources),
        shape=None if ratio is None else ratio.shape,
    )
