"""The PodTopologySpread plugin: spreads pods over topology domains (hard and soft constraints).

Upstream: `pkg/scheduler/framework/plugins/podtopologyspread/plugin.go`. Feature gates are
taken as on by default in the current release (NodeInclusionPolicy, MatchLabelKeys, MinDomains,
SchedulerQueueingHints).

Default constraints (from args, or the system defaults when `defaultingType` is `System`) apply
to pods without constraints of their own and need a selector built from the Services,
ReplicationControllers, ReplicaSets and StatefulSets selecting the pod. Those come from the
optional `handle.cluster()` listers `list_services(ns)`, `list_replication_controllers(ns)`,
`list_replica_sets(ns)` and `list_stateful_sets(ns)` (objects with `.selector`, and `.name` for
the controllers, matched by the pod's owner reference). With no cluster backend, or one lacking
those listers, the selector is empty and default constraints do not apply.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from scheduler.api.affinity import TopologySpreadConstraint
from scheduler.api.objects import Pod
from scheduler.cluster.contract import PluginCluster
from scheduler.config.args import PodTopologySpreadArgs
from scheduler.framework import signers
from scheduler.framework.interface import Handle
from scheduler.framework.nodeinfo import NodeInfo, PodInfo
from scheduler.framework.types import (
    ActionType,
    BatchFilterResult,
    ClusterEvent,
    Code,
    CycleState,
    PreFilterResult,
    Status,
    error,
    skip,
    success,
)
from scheduler.plugins.podtopologyspread.common import (
    DO_NOT_SCHEDULE,
    SCHEDULE_ANYWAY,
    SYSTEM_DEFAULT_CONSTRAINTS,
    SYSTEM_DEFAULTING,
    Constraint,
    default_selector,
    filter_constraints,
)
from scheduler.plugins.podtopologyspread.filtering import (
    PRE_FILTER_STATE_KEY,
    PreFilterState,
    compute_pre_filter_state,
    filter_node,
    filter_positions,
    update_with_pod,
)
from scheduler.plugins.podtopologyspread.scoring import (
    PRE_SCORE_STATE_KEY,
    PreScoreState,
    compute_pre_score_state,
    normalize,
    score_node,
    score_positions,
)

if TYPE_CHECKING:
    from scheduler.framework.snapshot import Snapshot

NAME = "PodTopologySpread"


def _read_state(state: CycleState, key: str, kind: type[Any]) -> Any:
    """The state stored under key, or raise with upstream's wording."""
    value = state.get(key)
    if value is None:
        raise LookupError(f'reading "{key}" from cycleState: not found')
    if not isinstance(value, kind):
        raise TypeError(f"{value!r} convert to podtopologyspread.{kind.__name__} error")
    return value


class PodTopologySpread:
    """Filters and scores nodes by how evenly matching pods spread over topology domains."""

    name = NAME

    def sign_pod(self, pod: Pod) -> signers.Signed:
        """Refuses pods with spread constraints, and every pod while default constraints apply
        (the system defaults included): their scores depend on which pods a node already has."""
        if pod.spread_constraints:
            return signers.refused("pods with topology constraints are not signable")
        if self.default_constraints:
            return signers.refused("pods with default topology constraints are not signable")
        return signers.signed()

    def __init__(self, handle: Handle, default_constraints: tuple[TopologySpreadConstraint, ...], system_defaulted: bool) -> None:
        self.handle = handle
        self.default_constraints = default_constraints
        self.system_defaulted = system_defaulted

    # ----- constraints ------------------------------------------------------------------------
    def _cluster(self) -> PluginCluster | None:
        getter = getattr(self.handle, "cluster", None)  # a test's handle may have none
        cluster: PluginCluster | None = getter() if callable(getter) else None
        return cluster

    def build_default_constraints(self, pod: Pod, action: str) -> list[Constraint]:
        """Default constraints for `action` with the pod's controllers' selector (`buildDefaultConstraints`)."""
        constraints = filter_constraints(self.default_constraints, pod.labels, action)
        if not constraints:
            return []
        selector = default_selector(pod, self._cluster())
        if selector.empty:
            return []
        return [
            Constraint(c.max_skew, c.topology_key, selector, c.min_domains, c.node_affinity_policy, c.node_taints_policy)
            for c in constraints
        ]

    def get_constraints(self, pod: Pod, action: str) -> list[Constraint]:
        """The pod's own constraints for `action`, or the default ones when it has none."""
        if pod.spread_constraints:
            return filter_constraints(pod.spread_constraints, pod.labels, action)
        return self.build_default_constraints(pod, action)

    # ----- PreFilter / Filter -----------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        """Count matching pods per domain of each DoNotSchedule constraint; Skip when there are none."""
        constraints = self.get_constraints(pod, DO_NOT_SCHEDULE)
        if not constraints:
            return None, skip()
        state.write(PRE_FILTER_STATE_KEY, compute_pre_filter_state(constraints, pod, nodes, self.handle.snapshot))
        return None, success()

    def pre_filter_extensions(self) -> PodTopologySpread:
        """AddPod/RemovePod keep the counts right during preemption's dry runs."""
        return self

    def add_pod(self, state: CycleState, pod: Pod, to_add: PodInfo, node_info: NodeInfo) -> Status:
        """Count `to_add` as if it ran on node_info."""
        return self._update(state, pod, to_add, node_info, 1)

    def remove_pod(self, state: CycleState, pod: Pod, to_remove: PodInfo, node_info: NodeInfo) -> Status:
        """Stop counting `to_remove` on node_info."""
        return self._update(state, pod, to_remove, node_info, -1)

    def _update(self, state: CycleState, pod: Pod, changed: PodInfo, node_info: NodeInfo, delta: int) -> Status:
        try:
            s: PreFilterState = _read_state(state, PRE_FILTER_STATE_KEY, PreFilterState)
        except (LookupError, TypeError) as exc:
            return error(exc)
        update_with_pod(s, changed.pod, pod, node_info.node, delta)
        return success()

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Reject a node missing a topology key, or one where placing the pod exceeds maxSkew."""
        try:
            s: PreFilterState = _read_state(state, PRE_FILTER_STATE_KEY, PreFilterState)
        except (LookupError, TypeError) as exc:
            return error(exc)
        if not s.constraints:
            return success()
        return filter_node(s, pod, node_info.node)

    def filter_batch(
        self, state: CycleState, pod: Pod, snapshot: Snapshot, positions: npt.NDArray[np.int64]
    ) -> BatchFilterResult:
        """`filter` over many snapshot rows at once."""
        try:
            s: PreFilterState = _read_state(state, PRE_FILTER_STATE_KEY, PreFilterState)
        except (LookupError, TypeError) as exc:
            message = str(exc)
            return BatchFilterResult(np.full(len(positions), int(Code.ERROR), dtype=np.int8), lambda _i: (message,))
        if not s.constraints:
            return BatchFilterResult.all_passed(len(positions))
        return filter_positions(s, pod, snapshot, positions)

    # ----- PreScore / Score / NormalizeScore -----------------------------------------------------
    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status:
        """Gather ScheduleAnyway constraints' domains and counts; Skip when there are none.

        NormalizeScore expects the scores in the order of `nodes`.
        """
        snapshot = self.handle.snapshot
        all_nodes = snapshot.node_infos
        if not all_nodes:
            return skip()
        constraints = self.get_constraints(pod, SCHEDULE_ANYWAY)
        if not constraints:
            return skip()
        # Only non-system-default rules need every topology key: nodes lacking a zone label
        # still get hostname spreading under the system defaults.
        require_all = bool(pod.spread_constraints) or not self.system_defaulted
        s = compute_pre_score_state(constraints, pod, nodes, all_nodes, snapshot, require_all)
        state.write(PRE_SCORE_STATE_KEY, s)
        return success()

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        """The node's weighted count of matching pods (lower is better until normalized)."""
        try:
            s: PreScoreState = _read_state(state, PRE_SCORE_STATE_KEY, PreScoreState)
        except (LookupError, TypeError) as exc:
            return 0, error(exc)
        return score_node(s, pod, node_info), success()

    def score_batch(
        self, state: CycleState, pod: Pod, snapshot: Snapshot, positions: npt.NDArray[np.int64]
    ) -> npt.NDArray[np.int64]:
        """`score` over many snapshot rows at once."""
        s: PreScoreState = _read_state(state, PRE_SCORE_STATE_KEY, PreScoreState)
        return score_positions(s, snapshot, positions)

    def score_extensions(self) -> PodTopologySpread:
        """NormalizeScore is implemented here."""
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: npt.NDArray[np.int64]) -> Status:
        """Map raw scores to 0..100, fewest matching pods best; ignored nodes get 0."""
        try:
            s: PreScoreState = _read_state(state, PRE_SCORE_STATE_KEY, PreScoreState)
        except (LookupError, TypeError) as exc:
            return error(exc)
        if len(scores) != len(s.ignored_in_order):
            return error(
                f"{NAME}: NormalizeScore got {len(scores)} scores for the {len(s.ignored_in_order)} nodes given to PreScore"
            )
        normalize(s, scores)
        return success()

    # ----- queueing -------------------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEvent]:
        """Assigned pods coming, going or relabelled, the pod's tolerations, and node topology changes."""
        return [
            ClusterEvent(
                "Pod", ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.UPDATE_POD_TOLERATION | ActionType.DELETE
            ),
            ClusterEvent(
                "Node", ActionType.ADD | ActionType.DELETE | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT
            ),
        ]


def new(args: object | None, handle: Handle) -> PodTopologySpread:
    """Build the plugin from PodTopologySpreadArgs (None means the defaults: System defaulting)."""
    if args is None:
        args = PodTopologySpreadArgs()
    if not isinstance(args, PodTopologySpreadArgs):
        raise TypeError(f"want args to be of type PodTopologySpreadArgs, got {type(args).__name__}")
    if args.defaulting_type == SYSTEM_DEFAULTING:
        return PodTopologySpread(handle, SYSTEM_DEFAULT_CONSTRAINTS, system_defaulted=True)
    return PodTopologySpread(handle, tuple(args.default_constraints), system_defaulted=False)
