"""Replaying a trace in a scratch engine: its own simulated cluster, clock and scheduler, built for
the run and dropped after it; nothing it does reaches any other cluster.

The virtual clock starts at the window's start. Before each event (an arrival, a deletion, a node
change) the scheduler runs until no pod can make progress before that moment (backoffs and
Permit waits expire on the virtual clock, as in `simulate`); then the clock moves to the event and
it is applied. The cluster is sampled at evenly spaced moments for fragmentation, balance and use.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from scheduler.api.objects import Pod
from scheduler.clock import VirtualClock
from scheduler.cluster.events import WatchEvent
from scheduler.cluster.simulated import SimulatedCluster
from scheduler.plugins.registry import new_registry
from scheduler.records import AttemptRecord
from scheduler.replay.outcome import RunOutcome, Sample
from scheduler.replay.trace import ADD, DELETE, Trace, TraceEvent
from scheduler.scheduler import Scheduler

GPU = "nvidia.com/gpu"
ZONE_LABEL = "topology.kubernetes.io/zone"
TYPE_LABELS = ("node.kubernetes.io/instance-type", "node.koordinator.sh/gpu-model")
ATTEMPTS_PER_POD = 100


class ReplayCancelled(RuntimeError):
    """The caller asked the replay to stop."""


class _Tracker:
    """Follows the scratch cluster and the scheduler's records: arrivals, bindings, deletions,
    attempts and preemptions."""

    def __init__(self, outcome: RunOutcome, clock: VirtualClock) -> None:
        self.outcome = outcome
        self.clock = clock
        self.arrived_at: dict[str, float] = {}
        self.counted: set[str] = set()
        self.victims: set[str] = set()

    def arrive(self, pod: Pod, counted: bool) -> None:
        """A pod enters the queue now; `counted`: its wait counts (not a segment's re-pack)."""
        self.arrived_at[pod.uid] = self.clock.now()
        self.outcome.placements.setdefault(pod.key, "")
        if counted:
            self.counted.add(pod.uid)

    def on_event(self, event: WatchEvent) -> None:
        """Bindings and deletions as the cluster reports them."""
        if event.kind != "Pod":
            return
        old, new = event.old, event.new
        if new is not None and old is not None and not old.node_name and new.node_name:
            if new.key in self.outcome.placements and not self.outcome.placements[new.key]:
                self.outcome.placements[new.key] = new.node_name
                self.outcome.placed += 1
                if new.uid in self.counted:
                    self.outcome.pending_seconds.append(round(self.clock.now() - self.arrived_at[new.uid], 6))
        elif new is None and old is not None and not old.node_name and old.uid in self.arrived_at:
            self.outcome.deleted_pending += 1

    def on_record(self, record: AttemptRecord) -> None:
        """One attempt: counted, kept as the pod's last decision, preemptions noted."""
        out = self.outcome
        out.attempts += 1
        if record.nominated_node and record.victims:
            out.preemptions += 1
            fresh = [v for v in record.victims if v not in self.victims]
            self.victims.update(fresh)
            out.victims += len(fresh)
        top = [[node, total] for node, total in record.totals(top=3).items()] if record.score_outcome is not None else []
        out.decisions[record.pod] = [record.outcome, record.node or "", record.feasible_nodes, top, record.message]


class _Sampler:
    """Fragmentation, use and balance of the scratch cluster at a moment."""

    def __init__(self, sched: Scheduler, cluster: SimulatedCluster) -> None:
        self.sched, self.cluster = sched, cluster
        self.node_changes = 0
        self._groups_for: tuple[tuple[str, ...], int] | None = None
        self._groups: dict[str, list[tuple[str, npt.NDArray[np.bool_]]]] = {}

    def _group_masks(self) -> dict[str, list[tuple[str, npt.NDArray[np.bool_]]]]:
        names = self.sched.snapshot.names
        key = (tuple(names), self.node_changes)
        if key == self._groups_for:
            return self._groups
        zones: list[str] = []
        types: list[str] = []
        for name in names:
            node = self.cluster.nodes.get(name)
            labels = node.labels if node is not None else {}
            zones.append(labels.get(ZONE_LABEL, "none"))
            kind = next((labels[k] for k in TYPE_LABELS if k in labels), "")
            if not kind:
                kind = "gpu" if node is not None and node.allocatable.get(GPU, 0) > 0 else "cpu-only"
            types.append(kind)
        self._groups = {}
        for axis, values in (("zone", zones), ("nodeType", types)):
            arr = np.array(values, dtype=object)
            self._groups[axis] = [(v, arr == v) for v in sorted(set(values))]
        self._groups_for = key
        return self._groups

    def take(self, outcome: RunOutcome) -> None:
        """One sample appended to the outcome (and the balance sums)."""
        snap = self.sched.snapshot
        if snap.num_nodes == 0:
            return
        alloc, req = snap.allocatable, snap.requested
        cols = [snap.column(r) for r in ("cpu", "memory", GPU)]
        cpu = cols[0]
        assert cpu is not None
        free = alloc - req
        room = (snap.pod_count < snap.allowed_pods) & ~snap.unschedulable
        pending = [p for p in self.cluster.pods.values() if not p.node_name and not p.terminal]
        typical = pending or [p for p in self.cluster.pods.values() if not p.terminal]
        free_cpu = np.maximum(free[:, cpu], 0)
        frag = _fragmented_share(free_cpu, free, cols, room, typical)
        gpu_share = gpu_frag = None
        gpu = cols[2]
        if gpu is not None and int(alloc[:, gpu].sum()) > 0:
            gpu_share = round(float(req[:, gpu].sum()) / float(alloc[:, gpu].sum()), 6)
            gpu_pods = [p for p in pending if p.requests.get(GPU, 0) > 0] or [p for p in typical if p.requests.get(GPU, 0) > 0]
            gpu_frag = _fragmented_share(np.maximum(free[:, gpu], 0), free, cols, room, gpu_pods)
        total_cpu = float(alloc[:, cpu].sum())
        outcome.samples.append(
            Sample(
                at=self.sched.clock.now(),
                cpu=round(float(req[:, cpu].sum()) / total_cpu, 6) if total_cpu else 0.0,
                gpu=gpu_share,
                pending=len(pending),
                nodes_used=int((snap.pod_count > 0).sum()),
                fragmentation=frag if frag is not None else 0.0,
                gpu_fragmentation=gpu_frag,
            )
        )
        for axis, groups in self._group_masks().items():
            sums = outcome.balance.setdefault(axis, {})
            for group, mask in groups:
                a = float(alloc[mask, cpu].sum())
                entry = sums.setdefault(group, [0.0, 0.0])
                entry[0] += round(float(req[mask, cpu].sum()) / a, 6) if a else 0.0
                entry[1] += 1


def _fragmented_share(
    free_amount: npt.NDArray[np.int64],
    free: npt.NDArray[np.int64],
    cols: list[int | None],
    room: npt.NDArray[np.bool_],
    pods: list[Pod],
) -> float | None:
    """Share of `free_amount` on nodes where the median pod of `pods` (median cpu, memory and
    GPUs, each taken alone) does not fit; None without pods or free capacity."""
    total = int(free_amount.sum())
    if not pods or total == 0:
        return None
    fits = room.copy()
    for resource, col in zip(("cpu", "memory", GPU), cols, strict=True):
        if col is None:
            continue
        need = statistics.median_low([p.requests.get(resource, 0) for p in pods])
        if need > 0:
            fits &= free[:, col] >= need
    return round(int(free_amount[~fits].sum()) / total, 6)


def _timeline(trace: Trace, samples: int) -> list[tuple[float, int, TraceEvent | None]]:
    """The events and the sample moments in time order (an event before a sample at the same moment)."""
    items: list[tuple[float, int, TraceEvent | None]] = [(ev.at, i, ev) for i, ev in enumerate(trace.events)]
    width = (trace.end - trace.start) / samples if samples > 0 else 0.0
    last = len(items)
    items.extend((trace.start + (i + 1) * width, last + i, None) for i in range(max(0, samples - 1)))
    items.sort(key=lambda t: (t[0], t[2] is None, t[1]))
    return items


def replay(
    trace: Trace,
    config: Any,
    seed: int = 1,
    samples: int = 48,
    progress: Callable[[int, int], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> RunOutcome:
    """Replay `trace` under `config` (a SchedulerConfiguration) in a scratch engine; `samples`
    evenly spaced samples (the last at the window's end). `progress(done, total)` is called every
    few hundred events; `cancelled()` returning True stops the run (ReplayCancelled)."""
    clock = VirtualClock(trace.start)
    cluster = SimulatedCluster.from_objects(trace.objects, clock)
    cluster.record_events = False
    outcome = RunOutcome(trace.source, trace.start, trace.end)
    tracker = _Tracker(outcome, clock)
    sched = Scheduler(config, cluster, clock, new_registry(), seed=seed, keep_records=False)
    sched.listeners.append(tracker.on_record)
    carried = set(trace.carried)
    for pod in cluster.pods.values():
        if pod.key in carried:
            tracker.arrive(pod, counted=not trace.repacked)
    cluster.watch(tracker.on_event)
    sched.start()
    sampler = _Sampler(sched, cluster)
    keys: dict[str, str] = {p.key: p.uid for p in cluster.pods.values()}
    timeline = _timeline(trace, samples)
    for done, (moment, _, event) in enumerate(timeline):
        _run_until(sched, moment)
        clock.advance_to(moment)
        if event is None:
            sampler.take(outcome)
        else:
            _apply(event, cluster, tracker, keys)
            sampler.node_changes += event.kind == "Node"
        if done % 200 == 0:
            if cancelled is not None and cancelled():
                raise ReplayCancelled("cancelled")
            if progress is not None:
                progress(done, len(timeline))
    end = _run_until(sched, trace.end)
    clock.advance_to(trace.end)
    sampler.take(outcome)
    outcome.stop = end
    outcome.unschedulable = sum(sched.queue.pending().values()) + len(sched.waiting)
    outcome.arrived = len(outcome.placements)
    sched.shutdown()
    if progress is not None:
        progress(len(timeline), len(timeline))
    return outcome


def _run_until(sched: Scheduler, moment: float) -> str:
    pending = sum(sched.queue.pending().values()) + len(sched.waiting)
    end = sched.run(max_attempts=sched.attempt_count + ATTEMPTS_PER_POD * (pending + 1) + 1000, until=moment)
    return end.reason


def _apply(event: TraceEvent, cluster: SimulatedCluster, tracker: _Tracker, keys: dict[str, str]) -> None:
    if event.kind == "Node":
        if event.action == DELETE:
            for pod in [p for p in cluster.pods.values() if p.node_name == event.name]:
                cluster.delete_pod(pod)  # pod GC deletes the pods of a deleted node
            cluster.delete_node(event.name)
        elif event.node is not None:
            cluster.add_node(event.node)
        return
    if event.action == ADD and event.pod is not None:
        pod = event.pod
        if pod.uid in cluster.pods:
            return  # recorded twice (a resync): the first one stands
        keys[pod.key] = pod.uid
        if not pod.node_name:
            tracker.arrive(pod, counted=True)
        cluster.add_pod(pod)
    elif event.action == DELETE:
        uid = keys.pop(event.name, None)
        current = cluster.pods.get(uid) if uid is not None else None
        if current is not None:
            cluster.delete_pod(current)
