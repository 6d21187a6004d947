"""Statuses, cycle state and the small values passed between the framework and plugins."""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from scheduler.api.objects import Pod

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0
MAX_TOTAL_SCORE = 2**63 - 1

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


class Code(enum.IntEnum):
    """Status codes, in kube-scheduler's order."""

    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5
    PENDING = 6

    @property
    def label(self) -> str:
        """The upstream spelling: Success, Unschedulable, UnschedulableAndUnresolvable, ..."""
        return _CODE_LABELS[self]


_CODE_LABELS = {
    Code.SUCCESS: "Success",
    Code.ERROR: "Error",
    Code.UNSCHEDULABLE: "Unschedulable",
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable",
    Code.WAIT: "Wait",
    Code.SKIP: "Skip",
    Code.PENDING: "Pending",
}


@dataclass(slots=True)
class Status:
    """The result of running a plugin: a code, reasons, and the plugin that produced it."""

    code: Code = Code.SUCCESS
    reasons: tuple[str, ...] = ()
    plugin: str = ""
    error: BaseException | None = None

    @property
    def success(self) -> bool:
        """Whether the code is Success."""
        return self.code == Code.SUCCESS

    @property
    def rejected(self) -> bool:
        """Unschedulable, UnschedulableAndUnresolvable or Pending."""
        return self.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING)

    @property
    def message(self) -> str:
        """The reasons joined with ', ', or the error text."""
        if self.error is not None and not self.reasons:
            return str(self.error)
        return ", ".join(self.reasons)

    def with_plugin(self, plugin: str) -> Status:
        """The same status attributed to `plugin` (first attribution wins)."""
        if not self.plugin:
            self.plugin = plugin
        return self


SUCCESS = Status()


def success() -> Status:
    """A fresh Success status."""
    return Status()


def unschedulable(*reasons: str) -> Status:
    """An Unschedulable status with reasons."""
    return Status(Code.UNSCHEDULABLE, reasons)


def unresolvable(*reasons: str) -> Status:
    """An UnschedulableAndUnresolvable status with reasons."""
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons)


def skip() -> Status:
    """A Skip status: the plugin has nothing to do for this pod in this cycle."""
    return Status(Code.SKIP)


def error(exc: BaseException | str) -> Status:
    """An Error status."""
    err = exc if isinstance(exc, BaseException) else RuntimeError(exc)
    return Status(Code.ERROR, (str(err),), error=err)


class CycleState:
    """Per-cycle storage plugins share between extension points (`framework.CycleState`)."""

    __slots__ = (
        "_data",
        "_undo",
        "dry_run",
        "keep_raw_scores",
        "plugin_timings",
        "record_plugin_metrics",
        "skip_filter_plugins",
        "skip_score_plugins",
    )

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}
        self.skip_filter_plugins: set[str] = set()
        self.skip_score_plugins: set[str] = set()
        self.record_plugin_metrics = False
        # Seconds per plugin and extension point, when this cycle is timed per plugin (else None).
        self.plugin_timings: dict[str, dict[str, float]] | None = None
        self._undo: list[Callable[[], None]] | None = None
        # A what-if cycle (`Scheduler.evaluate`): plugins must leave no state of their own behind.
        self.dry_run = False
        # Keep each score plugin's scores before NormalizeScore too (`ScoreOutcome.raw`).
        self.keep_raw_scores = False

    def at_cycle_end(self, undo: Callable[[], None]) -> None:
        """Run `undo` when the scheduling cycle ends (after Permit or the failure's handling).

        Koordinator's transformers change the cycle's snapshot (Reservation's BeforePreFilter
        hands the matched reservations back to their owner on their nodes); upstream the
        snapshot is rebuilt every cycle, here it is shared, so such changes are undone."""
        if self._undo is None:
            self._undo = []
        self._undo.append(undo)

    def end_cycle(self) -> None:
        """Run the `at_cycle_end` callbacks, last registered first, once."""
        undo, self._undo = self._undo, None
        for fn in reversed(undo or ()):
            fn()

    def read(self, key: str) -> Any:
        """The value stored under key; KeyError names the key when absent."""
        try:
            return self._data[key]
        except KeyError:
            raise KeyError(f"{key} not found") from None

    def get(self, key: str, default: Any = None) -> Any:
        """The value stored under key or default."""
        return self._data.get(key, default)

    def write(self, key: str, value: Any) -> None:
        """Store a value under key."""
        self._data[key] = value

    def delete(self, key: str) -> None:
        """Remove a key if present."""
        self._data.pop(key, None)

    def clone(self) -> CycleState:
        """A copy whose stored values are cloned when they know how (`StateData.Clone`)."""
        twin = CycleState()
        for key, value in self._data.items():
            cloner = getattr(value, "clone", None)
            twin._data[key] = cloner() if callable(cloner) else value
        twin.skip_filter_plugins = set(self.skip_filter_plugins)
        twin.skip_score_plugins = set(self.skip_score_plugins)
        return twin


@dataclass(frozen=True, slots=True)
class PreFilterResult:
    """Restricts the nodes Filter evaluates; None means all nodes."""

    node_names: frozenset[str] | None = None

    def merge(self, other: PreFilterResult | None) -> PreFilterResult:
        """The intersection of two results (None means everything)."""
        if other is None or other.node_names is None:
            return self
        if self.node_names is None:
            return other
        return PreFilterResult(self.node_names & other.node_names)


@dataclass(slots=True)
class BatchFilterResult:
    """A filter's verdict over many nodes at once.

    `codes[i]` is the status code for `positions[i]` (Code values as int8);
    `reasons(i)` gives the reasons for a failing entry i, computed from data captured when
    the result was made (never from live state). `keys`, when given, promises that entries
    with equal keys have equal reasons, so thousands of failures cost one `reasons` call each
    distinct key. `passed` promises that every code is Success (the caller need not look).
    """

    codes: npt.NDArray[np.int8]
    reasons: Callable[[int], tuple[str, ...]]
    keys: npt.NDArray[np.int64] | None = None
    passed: bool = False

    @classmethod
    def uniform(cls, codes: npt.NDArray[np.int8], reasons: tuple[str, ...]) -> BatchFilterResult:
        """A result whose failures all share the same reasons."""
        return cls(codes, lambda _i: reasons, np.zeros(len(codes), dtype=np.int64))

    @classmethod
    def all_passed(cls, count: int) -> BatchFilterResult:
        """Every one of `count` nodes passes."""
        return cls(np.zeros(count, dtype=np.int8), _no_reasons, np.zeros(count, dtype=np.int64), True)


def _no_reasons(_i: int) -> tuple[str, ...]:
    return ()


class ActionType(enum.IntFlag):
    """What happened to a cluster object (`framework.ActionType`)."""

    ADD = 1
    DELETE = 2
    UPDATE_NODE_ALLOCATABLE = 4
    UPDATE_NODE_LABEL = 8
    UPDATE_NODE_TAINT = 16
    UPDATE_NODE_CONDITION = 32
    UPDATE_NODE_ANNOTATION = 64
    UPDATE_POD_LABEL = 128
    UPDATE_POD_SCALE_DOWN = 256
    UPDATE_POD_TOLERATION = 512
    UPDATE_POD_SCHEDULING_GATES_ELIMINATED = 1024
    UPDATE_POD_GENERATED_RESOURCE_CLAIM = 2048
    UPDATE = 4 | 8 | 16 | 32 | 64 | 128 | 256 | 512 | 1024 | 2048 | 4096
    ALL = ADD | DELETE | UPDATE


class QueueingHint(enum.IntEnum):
    """A plugin's answer to "may this event make the pod I rejected schedulable?" (`fwk.QueueingHint`)."""

    QUEUE_SKIP = 0
    QUEUE = 1


# (the pod waiting in the unschedulable pool, the event's old object, its new object) -> hint.
# An added object has no old one; a deleted object has no new one.
QueueingHintFn = Callable[[Pod, Any, Any], QueueingHint]


@dataclass(frozen=True, slots=True)
class ClusterEvent:
    """A kind of change to the cluster that may make unschedulable pods schedulable.

    As registered by a plugin it may carry `hint`, the plugin's `isSchedulableAfter...`
    function (`ClusterEventWithHint`); without one, every matching event queues the pod.
    The hint takes no part in equality.
    """

    resource: str
    action: ActionType
    label: str = ""
    hint: QueueingHintFn | None = field(default=None, compare=False, hash=False, repr=False)

    def matches(self, other: ClusterEvent) -> bool:
        """Whether a registered event (self) covers an observed event (other)."""
        if self.resource == "*" and self.action == ActionType.ALL:
            return True
        if self.resource != "*" and self.resource != other.resource:
            return False
        return bool(self.action & other.action)


WILDCARD_EVENT = ClusterEvent("*", ActionType.ALL, "WildCardEvent")
UNSCHEDULABLE_TIMEOUT = ClusterEvent("*", ActionType.ALL, "UnschedulableTimeout")
FORCE_ACTIVATE = ClusterEvent("*", ActionType.ALL, "ForceActivate")


@dataclass(slots=True, eq=False)
class QueuedPodInfo:
    """A pod in the scheduling queue with its attempt bookkeeping."""

    pod: Pod
    timestamp: float
    initial_attempt_timestamp: float | None = None
    attempts: int = 0
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    gated_by: str = ""
    gated_message: str = ""
    backoff_until: float = 0.0
    # The NextPod plugin that took this pod out of the queue for this attempt ("" when popped).
    pulled_by: str = ""


NO_NODE_AVAILABLE = "0/{} nodes are available"


def fit_error_message(
    num_all_nodes: int,
    pre_filter_msg: str,
    reasons: Iterable[Iterable[str]],
    post_filter_msg: str,
    reason_counts: Mapping[str, int] | None = None,
) -> str:
    """kube-scheduler's FitError text (`FitError.Error`, pkg/scheduler/framework/types.go): a sorted histogram of reasons, then PostFilter's message.

    The histogram comes from `reason_counts` when given (already counted), else from `reasons`.
    """
    msg = NO_NODE_AVAILABLE.format(num_all_nodes) + ":"
    if pre_filter_msg:
        msg += f" {pre_filter_msg}."
    else:
        counts: dict[str, int] = dict(reason_counts) if reason_counts is not None else {}
        if reason_counts is None:
            for node_reasons in reasons:
                for reason in node_reasons:
                    counts[reason] = counts.get(reason, 0) + 1
        parts = sorted(f"{v} {k}" for k, v in counts.items())
        if parts:
            msg += f" {', '.join(parts)}."
    # PostFilter's message is appended as it is, with no period of its own (`FitError.Error`).
    if post_filter_msg:
        msg += f" {post_filter_msg}"
    return msg
