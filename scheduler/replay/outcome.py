"""What a replay did: counts, the time pods waited, fragmentation and balance samples, where every
pod went; the summary shown side by side, the digest, and the pods two runs placed differently.

A `RunOutcome` is plain data (it crosses a task queue as JSON: `to_json` / `from_json`). Outcomes
of consecutive segments of one window merge into one (`merge`); the summary and the digest are
computed from the merged outcome only, so a window replayed whole in one process and the same
segments replayed on several workers give the same digest.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

PENDING_EDGES = (0.0, 1.0, 10.0, 60.0, 300.0, 1800.0, 3600.0, 6 * 3600.0, 24 * 3600.0)
"""Histogram edges (seconds) of the time pods waited from arrival to binding."""


@dataclass(slots=True)
class Sample:
    """The cluster at one moment of the replay."""

    at: float
    cpu: float
    """Requested over allocatable CPU, all nodes."""
    gpu: float | None
    pending: int
    nodes_used: int
    fragmentation: float
    """Share of free CPU on nodes where the median pending pod does not fit."""
    gpu_fragmentation: float | None
    """Share of free GPUs on nodes where the median pending GPU pod does not fit."""


@dataclass(slots=True)
class RunOutcome:
    """One replay (or one segment of one) under one configuration."""

    source: str
    start: float
    end: float
    arrived: int = 0
    placed: int = 0
    unschedulable: int = 0
    """Pods still pending when the window ended."""
    deleted_pending: int = 0
    """Pods deleted by the trace before any node took them."""
    attempts: int = 0
    preemptions: int = 0
    victims: int = 0
    stop: str = ""
    pending_seconds: list[float] = field(default_factory=list)
    samples: list[Sample] = field(default_factory=list)
    balance: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    """{"zone" | "nodeType": {group: [sum of CPU shares over samples, samples]}}."""
    placements: dict[str, str] = field(default_factory=dict)
    """Every pod that arrived: the node it was first bound to ("" when none)."""
    decisions: dict[str, list[Any]] = field(default_factory=dict)
    """Each pod's last attempt: [outcome, node, feasible nodes, [[node, total] x3], message]."""

    def to_json(self) -> dict[str, Any]:
        """Plain JSON values."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunOutcome:
        """The outcome `to_json` wrote."""
        fields = dict(data)
        fields["samples"] = [Sample(**s) for s in fields.get("samples", [])]
        return cls(**fields)


def merge(parts: Sequence[RunOutcome]) -> RunOutcome:
    """Consecutive segments of one window as one outcome (in segment order)."""
    if not parts:
        raise ValueError("merge: no outcomes")
    first, last = parts[0], parts[-1]
    out = RunOutcome(first.source, first.start, last.end, stop=last.stop)
    for part in parts:
        out.arrived += part.arrived
        out.placed += part.placed
        out.deleted_pending += part.deleted_pending
        out.attempts += part.attempts
        out.preemptions += part.preemptions
        out.victims += part.victims
        out.pending_seconds.extend(part.pending_seconds)
        out.samples.extend(part.samples)
        for axis, groups in part.balance.items():
            mine = out.balance.setdefault(axis, {})
            for group, (total, count) in groups.items():
                sums = mine.setdefault(group, [0.0, 0.0])
                sums[0] += total
                sums[1] += count
        out.placements.update(part.placements)
        out.decisions.update(part.decisions)
    # A pod carried from one segment into the next was counted as arriving in both.
    out.arrived = len(out.placements)
    out.placed = sum(1 for node in out.placements.values() if node)
    out.unschedulable = last.unschedulable
    return out


def _percentile(sorted_values: Sequence[float], q: float) -> float:
    if not sorted_values:
        return 0.0
    rank = max(0, math.ceil(q * len(sorted_values)) - 1)
    return sorted_values[rank]


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def summary(outcome: RunOutcome) -> dict[str, Any]:
    """The figures shown side by side (fractions 0..1, seconds of virtual time)."""
    waits = sorted(outcome.pending_seconds)
    counts = [0] * len(PENDING_EDGES)
    for wait in waits:
        slot = sum(1 for edge in PENDING_EDGES[1:] if wait >= edge)
        counts[slot] += 1
    samples = outcome.samples
    gpu_frag = [s.gpu_fragmentation for s in samples if s.gpu_fragmentation is not None]
    return {
        "pods": outcome.arrived,
        "placed": outcome.placed,
        "unschedulable": outcome.unschedulable,
        "deletedPending": outcome.deleted_pending,
        "attempts": outcome.attempts,
        "preemptions": outcome.preemptions,
        "victims": outcome.victims,
        "pendingSeconds": {
            "p50": _percentile(waits, 0.5),
            "p90": _percentile(waits, 0.9),
            "p99": _percentile(waits, 0.99),
            "max": waits[-1] if waits else 0.0,
            "mean": round(_mean(waits), 6),
        },
        "pendingHistogram": {"edges": list(PENDING_EDGES), "counts": counts},
        "nodesUsed": {
            "peak": max((s.nodes_used for s in samples), default=0),
            "end": samples[-1].nodes_used if samples else 0,
        },
        "fragmentation": {
            "mean": round(_mean([s.fragmentation for s in samples]), 6),
            "end": round(samples[-1].fragmentation, 6) if samples else 0.0,
        },
        "gpuFragmentation": ({"mean": round(_mean(gpu_frag), 6), "end": round(gpu_frag[-1], 6)} if gpu_frag else None),
        "balance": {
            axis: {group: round(total / count, 6) if count else 0.0 for group, (total, count) in sorted(groups.items())}
            for axis, groups in sorted(outcome.balance.items())
        },
        "stop": outcome.stop,
    }


def digest(outcome: RunOutcome) -> str:
    """A fingerprint of what the replay decided: the summary, every pod's node and every wait (to
    the millisecond). Equal for the same replay wherever it runs."""
    body = {
        "summary": summary(outcome),
        "placements": sorted(outcome.placements.items()),
        "waits": [round(w, 3) for w in outcome.pending_seconds],
        "samples": [
            [round(s.at, 3), round(s.cpu, 6), s.pending, s.nodes_used, round(s.fragmentation, 6)] for s in outcome.samples
        ],
    }
    text = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def placement_diff(a: RunOutcome, b: RunOutcome, limit: int | None = None) -> tuple[int, list[dict[str, Any]]]:
    """Pods the two runs placed on different nodes (or placed in one run only): how many, and the
    first `limit` of them by pod name, each with both runs' last decisions."""
    pods = sorted(set(a.placements) | set(b.placements))
    differ = [p for p in pods if a.placements.get(p, "") != b.placements.get(p, "")]
    rows = []
    for pod in differ[:limit] if limit is not None else differ:
        rows.append(
            {
                "pod": pod,
                "a": a.placements.get(pod) or None,
                "b": b.placements.get(pod) or None,
                "aDecision": _decision(a.decisions.get(pod)),
                "bDecision": _decision(b.decisions.get(pod)),
            }
        )
    return len(differ), rows


def _decision(row: list[Any] | None) -> dict[str, Any] | None:
    if row is None:
        return None
    outcome, node, feasible, top, message = row
    return {"outcome": outcome, "node": node or None, "feasibleNodes": feasible, "top": top, "message": message}
