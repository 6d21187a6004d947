"""Shadow mode: watch a live cluster, decide where our profile would put each new pod, bind nothing,
and compare with where the cluster's own scheduler put it.

A pod is looked at twice, each time a what-if over every node (no sampling: a sample's best is
not the best, and kube-scheduler beside us is configured to score every node too):

- when it is first seen pending ("early");
- when the informer sees it bound ("late"): on the cache as the cluster's scheduler saw it when it
  took the pod. Bound pods are settled in that scheduler's order (priority, then arrival), each
  with itself and the pods taken after it out of the cache for the look, so a burst whose
  bindings race is judged on the state the cluster's scheduler had.

Settled against the late look: `exact` when our best node is the cluster's; `tie` when our scores
put the cluster's node level with our best (kube-scheduler breaks ties at random); `changed` when
the late look disagrees but the early one had the cluster's node among its best (the cluster moved
between the two looks: bindings raced); else `disagreed`, which keeps both score tables (our
choice's row, the cluster's node's row, or why our profile filtered it out). Agreement is exact
plus tie.
"""

from __future__ import annotations

import bisect
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from scheduler.cluster.events import WatchEvent
from scheduler.records import ScoresSpec, record_json


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


OUTCOMES = ("exact", "tie", "changed", "disagreed")
ORDER_GRACE_SECONDS = 2.0


def explain(decision: Decision) -> str:
    """Why our look at `decision` did not pick the cluster's node: filtered out under our
    profile, never evaluated, or scored below our best (by how much, plugin by plugin)."""
    ours, theirs = decision.ours, decision.theirs
    if ours is None:
        return f"our profile finds no node for it ({decision.message}); the cluster's scheduler chose {theirs}"
    if theirs in decision.filtered:
        return f"our profile filters {theirs} out ({decision.filtered[theirs]}); the cluster's scheduler found it feasible"
    if theirs not in decision.totals:
        return f"{theirs} was not among the nodes our look evaluated (not in our cache then)"
    best, their_total = decision.totals[ours], decision.totals[theirs]
    if their_total == best:
        return f"{theirs} scores {best}, level with our best {ours}: a tie"
    ours_row, theirs_row = decision.scores.get(ours, {}), decision.scores.get(theirs, {})
    deltas = [
        f"{plugin} {theirs_row.get(plugin, 0) - ours_row.get(plugin, 0):+d}"
        for plugin in sorted(set(ours_row) | set(theirs_row))
        if theirs_row.get(plugin, 0) != ours_row.get(plugin, 0)
    ]
    return (
        f"{theirs} scores {their_total} under our profile, {best - their_total} below our best {ours} ({best})"
        f"{': ' + ', '.join(deltas) if deltas else ''} ({theirs} against {ours}, weighted)"
    )


def best_nodes(decision: Decision) -> set[str]:
    """The nodes our scores put level with our best (our choice among them)."""
    if not decision.totals:
        return set()
    top = max(decision.totals.values())
    return {node for node, total in decision.totals.items() if total == top}


def refused_message(pod: Any) -> str | None:
    """The message of the pod's PodScheduled=False condition (the cluster's scheduler found no
    node), else None."""
    for condition in pod.conditions or ():
        if condition.get("type") == "PodScheduled" and condition.get("status") == "False":
            return str(condition.get("message") or condition.get("reason") or "")
    return None


@dataclass(slots=True)
class ShadowRecorder:
    """Records our decisions beside the cluster's for every new pod (see the module docstring)."""

    scheduler: Any
    profile: str
    keep: int = 200
    pending: dict[str, Decision] = field(default_factory=dict)
    settled: int = 0
    agreed: int = 0
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(OUTCOMES, 0))
    by_profile: dict[str, list[int]] = field(default_factory=dict)
    disagreements: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=200))
    changed: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=50))
    missed: int = 0
    refused: dict[str, str] = field(default_factory=dict)  # uid -> the cluster's PodScheduled=False message
    _order: list[tuple[int, int, str]] = field(default_factory=list)  # (-priority, arrival, uid)
    _bound: dict[str, Any] = field(default_factory=dict)  # bound, not yet settled
    _seq: int = 0
    _stalled_at: float | None = None

    def __post_init__(self) -> None:
        self.disagreements = deque(self.disagreements, maxlen=self.keep)
        self.changed = deque(self.changed, maxlen=self.keep)

    def start(self, cluster: Any) -> None:
        """Watch the cluster's pods."""
        cluster.watch(self.on_event)

    def on_event(self, event: WatchEvent) -> None:
        """A new pending pod is decided; bindings settle decisions in the cluster scheduler's order."""
        if event.kind != "Pod":
            return
        new, old = event.new, event.old
        if event.type == "ADDED" and new is not None and not new.node_name and not new.terminal:
            self.pending[new.uid] = self.decide(new)
            self._seq += 1
            bisect.insort(self._order, (-new.effective_priority, self._seq, new.uid))
        elif new is not None and new.node_name and (old is None or not old.node_name):
            if new.uid not in self.pending:
                self.missed += 1  # first seen bound: nothing to compare
                return
            self.refused.pop(new.uid, None)
            if not any(entry[2] == new.uid for entry in self._order):
                # Let go from the order earlier (the cluster's scheduler passed it over): it is
                # compared on the cache now, after the pods that scheduler bound before it.
                self.settle(new)
                return
            self._bound[new.uid] = new
            self._settle_ready()
        elif new is not None and not new.node_name and new.uid in self.pending:
            message = refused_message(new)
            if message is not None and new.uid not in self.refused:
                # The cluster's scheduler tried it and found no node: it is out of that
                # scheduler's order until something changes.
                self.refused[new.uid] = message
                self._order = [entry for entry in self._order if entry[2] != new.uid]
                self._settle_ready()
        if event.type == "DELETED" and old is not None:
            self.pending.pop(old.uid, None)
            self._bound.pop(old.uid, None)
            self.refused.pop(old.uid, None)
            self._order = [entry for entry in self._order if entry[2] != old.uid]

    def _settle_ready(self) -> None:
        """Settle bound pods in the order the cluster's scheduler takes them (priority, then
        arrival): each is looked at on the cache as that scheduler saw it, with the pods it took
        later taken out again. A pod at the head that stays unbound while later ones bind (it did
        not fit, or waits in backoff) is let go from the order after `ORDER_GRACE_SECONDS`."""
        while self._order:
            uid = self._order[0][2]
            if uid in self._bound:
                self._order.pop(0)
                later = [self._bound[u] for _, _, u in self._order if u in self._bound]
                self.settle(self._bound.pop(uid), later)
                self._stalled_at = None
                continue
            if not any(u in self._bound for _, _, u in self._order[1:]):
                return
            now = time.monotonic()
            if self._stalled_at is None:
                self._stalled_at = now
                self.scheduler.submit(self._settle_ready, delay=ORDER_GRACE_SECONDS)
                return
            if now - self._stalled_at < ORDER_GRACE_SECONDS:
                return
            # Every unbound pod ahead of the first bound one was passed over: compared when (if
            # ever) it binds, on the cache then.
            while self._order and self._order[0][2] not in self._bound:
                self._order.pop(0)
            self._stalled_at = None

    def decide(self, pod: Any) -> Decision:
        """Where our profile would put the pod now, every node evaluated."""
        record = self.scheduler.evaluate(pod, self.profile, every_node=True)
        entry = record_json(record, ScoresSpec("all"))
        filtered = {
            node: f"{f.get('plugin')}: {', '.join(f.get('reasons') or [])}" for node, f in (entry.get("filter") or {}).items()
        }
        return Decision(
            pod.key,
            pod.uid,
            self.profile,
            record.node,
            record.message,
            entry.get("scores") or {},
            entry.get("totals") or {},
            filtered,
        )

    def _decide_before(self, bound: Any, later: list[Any]) -> Decision:
        """Our decision on the cache as it was when the cluster's scheduler took `bound`: the pod
        itself and those it took later (already bound) out of it for the look, then put back."""
        cache = self.scheduler.cache
        with self.scheduler.lock:
            out = [bound, *later]
            for pod in out:
                cache.remove_pod(pod)
            try:
                return self.decide(bound.with_changes(node_name=""))
            finally:
                for pod in out:
                    cache.add_pod(pod)

    def settle(self, bound: Any, later: list[Any] | None = None) -> None:
        """The cluster's scheduler bound the pod to `bound.node_name` (before it took `later`)."""
        early = self.pending.pop(bound.uid, None)
        if early is None:
            self.missed += 1
            return
        theirs = bound.node_name
        late = self._decide_before(bound, later or [])
        late.theirs = early.theirs = theirs
        if late.ours == theirs:
            outcome = "exact"
        elif theirs in best_nodes(late):
            outcome = "tie"
        elif early.ours == theirs or theirs in best_nodes(early):
            outcome = "changed"
        else:
            outcome = "disagreed"
        self.settled += 1
        self.counts[outcome] += 1
        counts = self.by_profile.setdefault(late.profile, [0, 0])
        counts[0] += 1
        if outcome in ("exact", "tie"):
            self.agreed += 1
            counts[1] += 1
        elif outcome == "changed":
            why = f"on the first look {theirs} was {'our best' if early.ours == theirs else 'level with our best'}; the cluster changed before its scheduler took the pod, and on the cluster as it saw it {explain(late)}"
            self.changed.appendleft({**late.json(), "outcome": outcome, "explanation": why, "early": early.json()})
        else:
            self.disagreements.appendleft(
                {**late.json(), "outcome": outcome, "explanation": explain(late), "early": early.json()}
            )

    def report(self) -> dict[str, Any]:
        """Agreement (exact and ties) per profile, the outcomes counted apart, and the latest
        disagreeing pods with both score rows."""
        return {
            "profile": self.profile,
            "compared": self.settled,
            "agreed": self.agreed,
            "agreementRate": round(self.agreed / self.settled, 4) if self.settled else None,
            "outcomes": dict(self.counts),
            "profiles": {
                name: {"compared": c, "agreed": a, "agreementRate": round(a / c, 4) if c else None}
                for name, (c, a) in self.by_profile.items()
            },
            "waiting": len(self.pending),
            "refused": [
                {"pod": d.pod, "ours": d.ours, "message": d.message, "theirs": self.refused[uid]}
                for uid, d in self.pending.items()
                if uid in self.refused
            ][: self.keep],
            "missed": self.missed,
            "disagreements": list(self.disagreements),
            "changed": list(self.changed),
        }
