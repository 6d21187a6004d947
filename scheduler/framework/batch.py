"""Opportunistic batching (KEP-5598, feature gate `OpportunisticBatching`, beta and on in v1.35).

Upstream: kubernetes/kubernetes `pkg/scheduler/framework/runtime/batch.go` (OpportunisticBatch),
`framework.go` (`computeBatchablePlugins`, `SignPod`) and `schedule_one.go` (`schedulePod`,
`findNodesThatFitPod`, `evaluateNominatedNode`), as vendored at v1.35.4.

A pod whose signature equals the previous pod's reuses that pod's scored node list: the next
node of the list is its hint, filtered alone, and taken without scoring when it passes. The list
is kept only while pods come one per cycle, each one filling the node it got (the next pod no
longer fits the node the last one took, so the rest of the list keeps its order).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from scheduler.framework.nodeinfo import NodeInfo
from scheduler.framework.signers import SCHEDULER_NAME, Signature
from scheduler.framework.types import CycleState, Status

MAX_BATCH_AGE = 0.5
"""Seconds a stored list stays usable (`maxBatchAge`), read on the engine's clock."""

SIGNED_POINTS = ("pre_filter", "filter", "pre_score", "score")
MAY_REFUSE = frozenset({"PodTopologySpread", "InterPodAffinity"})
"""Default plugins whose SignPod can refuse a pod."""
"""The extension points whose plugins must all sign for a profile to batch."""

# Why a stored list was dropped (`metrics.BatchFlush*`, the `reason` label of
# scheduler_batch_cache_flushed_total).
FLUSH_POD_SKIPPED = "pod_skipped"
FLUSH_POD_FAILED = "pod_failed"
FLUSH_POD_INCOMPATIBLE = "pod_incompatible"
FLUSH_EXPIRED = "expired"
FLUSH_NODE_MISSING = "node_missing"
FLUSH_NODE_NOT_FULL = "node_not_full"
FLUSH_POD_NOT_BATCHABLE = "pod_not_batchable"
FLUSH_EMPTY_LIST = "empty_list"

# The outcome of a hint (`metrics.BatchAttempt*`, the `result` label of scheduler_batch_attempts_total).
ATTEMPT_HINT_USED = "hint_used"
ATTEMPT_HINT_NOT_USED = "hint_not_used"
ATTEMPT_NO_HINT = "no_hint"


def batchable_plugins(points: dict[str, list[Any]], has_extenders: bool) -> list[Any] | None:
    """`computeBatchablePlugins`: the plugins that sign pods, or None when the profile cannot batch
    (an extender is configured, or a PreFilter, Filter, PreScore or Score plugin has no `sign_pod`)."""
    if has_extenders:
        return None
    seen: dict[str, Any] = {}
    for point in SIGNED_POINTS:
        for entry in points[point]:
            if entry.name in seen:
                continue
            if not callable(getattr(entry.plugin, "sign_pod", None)):
                return None
            seen[entry.name] = entry.plugin
    # Plugins that may refuse sign first: the signature is None at the first refusal whatever the
    # order, and with the system default spread constraints PodTopologySpread refuses every pod.
    return sorted(seen.values(), key=lambda p: p.name not in MAY_REFUSE)


def sign_pod(signers: list[Any] | None, pod: Any) -> Signature | None:
    """`SignPod`: the pod's signature, or None when the profile cannot batch or a plugin refuses
    (any status but Success). Later fragments with an existing key are left out."""
    if signers is None:
        return None
    fragments: dict[str, Any] = {SCHEDULER_NAME: pod.scheduler_name}
    for plugin in signers:
        signed, status = plugin.sign_pod(pod)
        if not status.success:
            return None
        for key, value in signed:
            fragments.setdefault(key, value)
    return tuple(sorted(fragments.items(), key=lambda kv: kv[0]))


@dataclass(slots=True)
class SortedNodes:
    """The scored nodes a cycle did not take, best first (`SortedScoredNodes`): snapshot rows and
    the snapshot's name list of that moment (nodes are appended to it, and a removal makes a new
    list, so the rows keep their names). Built from a cycle's scores, the order is sorted only
    when first read: most lists are dropped unread."""

    rows: npt.NDArray[np.int64] | None
    names: list[str]
    next: int = 0
    scores: Any = None
    chosen: int = -1

    @classmethod
    def of(cls, names: list[str]) -> SortedNodes:
        """A list of node names, already in order."""
        return cls(np.arange(len(names), dtype=np.int64), list(names))

    @property
    def positions(self) -> npt.NDArray[np.int64]:
        """The rows, best first; equal totals keep the order they were filtered in (upstream
        pops a heap whose ties carry no randomizer without extenders)."""
        if self.rows is None:
            order = np.argsort(-self.scores.totals, kind="stable")
            rows = self.scores.positions[order]
            self.rows = rows[rows != self.chosen]
            self.scores = None
        return self.rows

    def pop(self) -> str:
        """The best node left."""
        name = self.names[int(self.positions[self.next])]
        self.next += 1
        return name

    def remaining(self) -> list[str]:
        """The names not popped yet, in order."""
        return [self.names[int(p)] for p in self.positions[self.next :]]

    def __len__(self) -> int:
        total = len(self.scores.positions) - 1 if self.rows is None else len(self.rows)
        return total - self.next


@dataclass(slots=True)
class _BatchState:
    signature: Signature
    nodes: SortedNodes
    created: float


@dataclass(slots=True)
class _LastCycle:
    cycle: int = -1
    chosen: str = ""
    succeeded: bool = False


@dataclass(slots=True)
class OpportunisticBatch:
    """One profile's batch: the stored list and what the last cycle chose."""

    profile: str
    signers: list[Any] | None
    now: Callable[[], float]
    # Filter of one node with the cycle's state (the framework's RunFilterPlugins).
    run_filter: Callable[[CycleState, Any, NodeInfo], Status]
    node_info: Callable[[str], NodeInfo | None]
    state: _BatchState | None = None
    last: _LastCycle = field(default_factory=_LastCycle)
    batched_pods: int = 0
    attempts: dict[str, int] = field(default_factory=dict)
    flushes: dict[str, int] = field(default_factory=dict)
    # Read into scheduler_batch_attempts_total and scheduler_batch_cache_flushed_total when metrics
    # are exported (`Metrics.watch_batch`): a Prometheus increment per pod would cost more than the
    # batch saves on most pods.

    def get_node_hint(self, state: CycleState, pod: Any, cycle: int) -> tuple[str, Signature | None]:
        """`GetNodeHint`: the node to try first ("" for none) and the pod's signature."""
        if self.signers is None:
            # A profile that cannot batch signs no pod and so never stores a list: no hint.
            self.attempts[ATTEMPT_NO_HINT] = self.attempts.get(ATTEMPT_NO_HINT, 0) + 1
            return "", None
        signature = sign_pod(self.signers, pod)
        if not self._compatible(state, pod, signature, cycle):
            self._attempt(ATTEMPT_NO_HINT)
            return "", signature
        assert self.state is not None
        return self.state.nodes.pop(), signature

    def store_schedule_results(
        self, signature: Signature | None, hinted: str, chosen: str, other: SortedNodes | None, cycle: int
    ) -> None:
        """`StoreScheduleResults`: after a cycle chose a node, keep its other nodes for the next pod,
        unless the hint was taken (the stored list, one node shorter, stays)."""
        last = self.last
        last.cycle, last.chosen, last.succeeded = cycle, chosen, True
        if hinted == chosen:
            self._attempt(ATTEMPT_HINT_USED)
            self.batched_pods += 1
            return
        if hinted:
            self._attempt(ATTEMPT_HINT_NOT_USED)
        if signature is not None and other is not None and len(other) > 0:
            self.state = _BatchState(signature, other, self.now())
            return
        self._flushed(FLUSH_EMPTY_LIST if other is None or len(other) == 0 else FLUSH_POD_NOT_BATCHABLE)
        self.state = None

    def _compatible(self, state: CycleState, pod: Any, signature: Signature | None, cycle: int) -> bool:
        """`batchStateCompatible`: whether the stored list serves this pod; drops it when not."""
        current = self.state
        if current is None or len(current.nodes) == 0:
            return False
        if cycle != self.last.cycle + 1:
            # A pod in between (another profile's, or one that failed) may have changed the nodes.
            return self._flush(FLUSH_POD_SKIPPED)
        if not self.last.succeeded:
            return self._flush(FLUSH_POD_FAILED)
        if signature is None or signature != current.signature:
            return self._flush(FLUSH_POD_INCOMPATIBLE)
        if self.now() > current.created + MAX_BATCH_AGE:
            return self._flush(FLUSH_EXPIRED)
        last = self.node_info(self.last.chosen)
        if last is None:
            return self._flush(FLUSH_NODE_MISSING)
        # Only when this pod no longer fits the node the last one took is the rest of the list
        # still in order: were it to fit, that node's new score could put it anywhere.
        if not self.run_filter(state, pod, last).rejected:
            return self._flush(FLUSH_NODE_NOT_FULL)
        return True

    def _flush(self, reason: str) -> bool:
        # Counted, not cleared, as upstream: the next stored result replaces the list, and until
        # then the cycle count no longer matches.
        self._flushed(reason)
        return False

    def _attempt(self, result: str) -> None:
        self.attempts[result] = self.attempts.get(result, 0) + 1

    def _flushed(self, reason: str) -> None:
        self.flushes[reason] = self.flushes.get(reason, 0) + 1


def other_nodes(scores: Any, chosen: int, names: list[str]) -> SortedNodes:
    """The scored rows but the chosen one (sorted when first read)."""
    return SortedNodes(None, names, scores=scores, chosen=chosen)


def opportunistic_batches(
    profiles: Mapping[str, Any], config: Any, feature_gates: Any, now: Callable[[], float], snapshot: Any, metrics: Any = None
) -> dict[str, OpportunisticBatch]:
    """One OpportunisticBatch per profile while the gate is on (the default, as in v1.35); none when off."""
    if feature_gates is not None and not feature_gates.enabled("OpportunisticBatching"):
        return {}
    extenders = bool(getattr(config, "extenders", ()))
    batches = {
        name: OpportunisticBatch(
            profile=name,
            signers=batchable_plugins(fwk.points, extenders),
            now=now,
            run_filter=fwk.run_filter_plugins,
            node_info=snapshot.get,
        )
        for name, fwk in profiles.items()
    }
    if metrics is not None:
        for batch in batches.values():
            metrics.watch_batch(batch)
    return batches
