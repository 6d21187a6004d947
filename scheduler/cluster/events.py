"""Events of the cluster backend contract: the changes a backend delivers to its watchers (as
informers would) and the Kubernetes Events the scheduler records."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class WatchEvent:
    """One change: kind (Pod, Node, ...), type (ADDED, MODIFIED, DELETED), old and new objects."""

    kind: str
    type: str
    old: Any
    new: Any


@dataclass(slots=True)
class RecordedEvent:
    """A Kubernetes Event the scheduler emitted (Scheduled, FailedScheduling, Preempted)."""

    at: float
    type: str
    reason: str
    object: str
    message: str
