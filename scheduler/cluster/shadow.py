"""Shadow mode: watch a live cluster, decide where our profile would put each new pod, bind nothing,
and compare with where the cluster's own scheduler put it.

Each pod first seen pending is evaluated at once (a what-if: PreFilter, Filter, Score on the
current cache, nothing assumed) under the active profile; when the informer then sees it bound,
the decision is settled: agreement when both chose the same node. A disagreement keeps both
sides' score rows under our profile: our choice's and the cluster's choice's (or why our profile
filtered that node out).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from scheduler.cli import ScoresSpec, record_json
from scheduler.cluster.simulated import WatchEvent


@dataclass(slots=True)
class Decision:
    """Our choice for one pod, and the cluster's once known."""

    pod: str
    uid: str
    profile: str
    ours: str | None
    message: str
    scores: dict[str, dict[str, int]]
    totals: dict[str, int]
    filtered: dict[str, Any]
    theirs: str | None = None

    def row(self, node: str | None) -> dict[str, Any]:
        """A node's score row under our profile (or why it was filtered out)."""
        if node is None:
            return {}
        if node in self.totals:
            return {"node": node, "total": self.totals[node], "plugins": self.scores.get(node, {})}
        return {"node": node, "filtered": self.filtered.get(node) or "not evaluated"}

    def json(self) -> dict[str, Any]:
        """The report entry of a settled decision."""
        top = sorted(self.totals, key=lambda n: -self.totals[n])[:5]
        return {
            "pod": self.pod,
            "profile": self.profile,
            "ours": self.ours,
            "theirs": self.theirs,
            "agree": self.ours == self.theirs,
            "message": self.message,
            "ourRow": self.row(self.ours),
            "theirRow": self.row(self.theirs),
            "top": [self.row(n) for n in top],
        }


@dataclass(slots=True)
class ShadowRecorder:
    """Records our decisions beside the cluster's for every new pod (see the module docstring)."""

    scheduler: Any
    profile: str
    keep: int = 200
    pending: dict[str, Decision] = field(default_factory=dict)
    settled: int = 0
    agreed: int = 0
    by_profile: dict[str, list[int]] = field(default_factory=dict)
    disagreements: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=200))
    missed: int = 0

    def start(self, cluster: Any) -> None:
        """Watch the cluster's pods."""
        cluster.watch(self.on_event)

    def on_event(self, event: WatchEvent) -> None:
        """A new pending pod is decided; a pod's binding settles its decision."""
        if event.kind != "Pod":
            return
        new, old = event.new, event.old
        if event.type == "ADDED" and new is not None and not new.node_name and not new.terminal:
            self.decide(new)
        elif new is not None and new.node_name and (old is None or not old.node_name):
            self.settle(new.uid, new.node_name)
        elif event.type == "DELETED" and old is not None:
            self.pending.pop(old.uid, None)

    def decide(self, pod: Any) -> Decision:
        """Where our profile would put the pod now."""
        record = self.scheduler.evaluate(pod, self.profile)
        entry = record_json(record, ScoresSpec("all"))
        filtered = {
            node: f"{f.get('plugin')}: {', '.join(f.get('reasons') or [])}" for node, f in (entry.get("filter") or {}).items()
        }
        decision = Decision(
            pod.key,
            pod.uid,
            self.profile,
            record.node,
            record.message,
            entry.get("scores") or {},
            entry.get("totals") or {},
            filtered,
        )
        self.pending[pod.uid] = decision
        return decision

    def settle(self, uid: str, node: str) -> None:
        """The cluster's scheduler bound the pod to `node`."""
        decision = self.pending.pop(uid, None)
        if decision is None:
            self.missed += 1  # first seen bound: nothing to compare
            return
        decision.theirs = node
        self.settled += 1
        counts = self.by_profile.setdefault(decision.profile, [0, 0])
        counts[0] += 1
        if decision.ours == node:
            self.agreed += 1
            counts[1] += 1
        else:
            self.disagreements.appendleft(decision.json())

    def report(self) -> dict[str, Any]:
        """Agreement rate per profile and the latest disagreeing pods with both score rows."""
        return {
            "profile": self.profile,
            "compared": self.settled,
            "agreed": self.agreed,
            "agreementRate": round(self.agreed / self.settled, 4) if self.settled else None,
            "profiles": {
                name: {"compared": c, "agreed": a, "agreementRate": round(a / c, 4) if c else None}
                for name, (c, a) in self.by_profile.items()
            },
            "waiting": len(self.pending),
            "missed": self.missed,
            "disagreements": list(self.disagreements),
        }
