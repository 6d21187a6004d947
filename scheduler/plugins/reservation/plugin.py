"""Reservation: resources held on a node for the pods that own them (Koordinator).

Upstream: koordinator-sh/koordinator `pkg/scheduler/plugins/reservation` (plugin.go,
transformer.go, scoring.go, service.go) and the proposal `20220609-resource-reservation.md`.

A Reservation is scheduled as its reserve pod (built by `scheduler.api.reservation`, queued by
the cluster like any pod, through the same profiles and plugins); once bound it is Available on
its node and its reserve pod holds the reservation's remaining resources there, so non-owners
simply find them taken. For an owner pod:

- BeforePreFilter (a Koordinator transformer, run before every PreFilter plugin) finds the
  Available reservations it owns (owners OR-ed, each owner's fields AND-ed;
  `reservation-affinity` narrows them; a `reservation-ignored` pod treats every reservation as
  free) and gives them back to the pod for the whole cycle (`restoreMatchedReservation`): on
  their nodes the reserve pods leave the snapshot, so every Filter and Score plugin sees the
  reserved resources as free; they come back when the cycle ends. PreFilter restricts a pod
  with reservation affinity to its reservations' nodes and skips when there are none.
- Filter applies the allocate policy: `Restricted` requires the reserved resources to come
  from the reservation alone.
- Score (scoring.go): the node whose reservations carry the lowest
  `scheduling.koordinator.sh/reservation-order` scores 1000; elsewhere the reservation
  nominated on the node (`NominateReservation`: the lowest order, else the best
  `ScoreReservation`) is scored; NormalizeScore takes the best node to 100. Reserve takes the
  nominated reservation; PreBind annotates the pod with
  `scheduling.koordinator.sh/reservation-allocated` (`{"name", "uid"}`).
- When the owner is bound the reservation's `allocated` and `currentOwners` grow and its reserve
  pod shrinks to what remains; with `allocateOnce` (the default) the reservation Succeeds and
  its reserve pod is removed. A controller expires reservations (`ttl` / `expires`): phase
  Failed, Ready condition reason `Expired`, reserve pod removed; the expiry is a timed event the
  run advances to while pods wait.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from scheduler.api import reservation as rapi
from scheduler.api.fields import format_time
from scheduler.api.objects import CPU, Pod, ResourceList
from scheduler.api.quantity import format_resources
from scheduler.api.reservation import (
    ANNOTATION_RESERVATION_ALLOCATED,
    PHASE_AVAILABLE,
    PHASE_FAILED,
    PHASE_PENDING,
    PHASE_SUCCEEDED,
    allocated_reservation,
    is_reservation_ignored,
    is_reserve_pod,
    parse_reservation,
    reservation_affinity,
    status_allocated,
)
from scheduler.cluster.errors import APIError
from scheduler.config.args import ReservationArgs
from scheduler.framework.nodeinfo import NodeInfo
from scheduler.framework.types import (
    MAX_NODE_SCORE,
    BatchFilterResult,
    Code,
    CycleState,
    PreFilterResult,
    Status,
    skip,
    unresolvable,
    unschedulable,
)
from scheduler.frameworkext.handle import ExtendedHandle
from scheduler.frameworkext.reservations import reservation_plugins, run_nominate_reservation_filter, run_reservation_score
from scheduler.frameworkext.services import Request, RouteGroup

NAME = "Reservation"
STATE_KEY = "PreFilter" + NAME
ERR_REASON_RESERVATION_AFFINITY = "node(s) no reservations match reservation affinity"
ERR_REASON_NO_RESERVATIONS_MEET_REQUIREMENTS = "node(s) no reservation(s) to meet the requirements"
RESERVATION_REASON_PREFIX = "Reservation(s) "
MOST_PREFERRED_SCORE = 1000  # scoring.go mostPreferredScore


@dataclass(slots=True, eq=False)
class ReservationInfo:
    """One reservation's live state: where it is, what it holds, who uses it."""

    reservation: rapi.Reservation
    phase: str
    node: str
    allocatable: ResourceList
    allocated: ResourceList = field(default_factory=dict)
    owners: dict[str, dict[str, str]] = field(default_factory=dict)
    # Owners chosen in a scheduling cycle and not bound yet: pod uid -> requests.
    assumed: dict[str, ResourceList] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The reservation's name."""
        return self.reservation.name

    @property
    def available(self) -> bool:
        """Available on a node, and not used up by allocateOnce."""
        if self.phase != PHASE_AVAILABLE or not self.node:
            return False
        return not (self.reservation.allocate_once and (self.owners or self.assumed))

    def used(self) -> ResourceList:
        """Allocated plus assumed."""
        out = dict(self.allocated)
        for req in self.assumed.values():
            for k, v in req.items():
                out[k] = out.get(k, 0) + v
        return out

    def remaining(self) -> ResourceList:
        """What is still reserved and unused (never negative)."""
        used = self.used()
        return {k: max(v - used.get(k, 0), 0) for k, v in self.allocatable.items()}

    def fits(self, requests: ResourceList) -> list[str]:
        """The reserved resources the pod asks for beyond what remains (`fitsReservation`)."""
        left = self.remaining()
        return [
            f"{RESERVATION_REASON_PREFIX}Insufficient {name}"
            for name in sorted(self.allocatable)
            if requests.get(name, 0) > left.get(name, 0)
        ]

    def score(self, requests: ResourceList) -> int:
        """`ScoreReservation` (scoring.go): per reserved resource, how full the reservation would
        be with the pod, 0..100; a resource the pod would overfill adds 0. The mean, truncated."""
        used = self.used()
        total = count = 0
        for k, cap in self.allocatable.items():
            if cap <= 0:
                continue
            count += 1
            want = used.get(k, 0) + requests.get(k, 0)
            if want <= cap:
                total += MAX_NODE_SCORE * want // cap
        return total // count if count else 0

    def item(self) -> dict[str, Any]:
        """The `nodeReservations` item (Koordinator's ReservationItem)."""
        r = self.reservation
        return {
            "name": r.name,
            "uid": r.uid,
            "kind": "Reservation",
            "available": self.available,
            "allocateOnce": r.allocate_once,
            "allocatable": format_resources(self.allocatable),
            "allocated": format_resources(self.allocated),
            "owners": copy.deepcopy((r.raw.get("spec") or {}).get("owners") or []),
            "allocatePolicy": r.allocate_policy,
            "assignedPods": [dict(v) for _, v in sorted(self.owners.items())],
        }


@dataclass(slots=True)
class _CycleState:
    """What BeforePreFilter found for the pod: its reservations by node, whether it requires one;
    what Score nominated on each node and the node preferred by `reservation-order`."""

    by_node: dict[str, list[ReservationInfo]]
    required: bool
    ignored: bool
    nominated: dict[str, ReservationInfo | None] = field(default_factory=dict)
    preferred_node: str = ""

    def clone(self) -> _CycleState:
        return self


class Reservation:
    """Holds reserved resources for their owners; schedules nothing else onto them."""

    name = NAME

    def __init__(self, args: ReservationArgs, handle: ExtendedHandle) -> None:
        self.args = args
        self.handle: ExtendedHandle = handle
        self.infos: dict[str, ReservationInfo] = {}
        self.assumed_owner: dict[str, str] = {}
        self.owner_index = OwnerIndex()
        # The profile's reservation filter and score plugins, found on first use (the framework is
        # attached to the handle once every plugin is built).
        self._reservation_plugins: tuple[list[Any], list[Any]] | None = None
        # Where each Reservation's document sits in the cluster's list (checked before use).
        self._doc_at: dict[str, int] = {}
        informers = handle.informer_factory()
        for doc in informers.objects("Reservation"):
            self._track(parse_reservation(doc))
        for pod in informers.pods():
            if is_reserve_pod(pod) and pod.node_name:
                self._reserve_pod_bound(pod)
            elif pod.node_name:
                self._owner_bound(pod, write=False)
        self.controller = ExpiryController(self)
        informers.add_event_handler(self._on_event)

    # ----- state ---------------------------------------------------------------------------------
    def _track(self, r: rapi.Reservation) -> ReservationInfo:
        info = self.infos.get(r.uid)
        if info is None:
            allocatable = r.requests
            info = ReservationInfo(r, r.phase, r.node_name, allocatable, status_allocated(r.raw))
            self.infos[r.uid] = info
            self.owner_index.add(r)
        return info

    def _by_uid_or_name(self, name: str, uid: str) -> ReservationInfo | None:
        info = self.infos.get(uid) if uid else None
        if info is None:
            info = next((i for i in self.infos.values() if i.name == name), None)
        return info

    def _on_event(self, event: Any) -> None:
        if event.kind != "Pod":
            return
        old, new = event.old, event.new
        if event.type == "DELETED":
            if not is_reserve_pod(old) and old.node_name:
                self._owner_gone(old)
            return
        if new.node_name and (old is None or not old.node_name):
            if is_reserve_pod(new):
                self._reserve_pod_bound(new)
            else:
                self._owner_bound(new)

    def _reserve_pod_bound(self, pod: Pod) -> None:
        info = self.infos.get(pod.uid)
        if info is None or info.phase not in (PHASE_PENDING, PHASE_AVAILABLE):
            return
        newly = info.phase != PHASE_AVAILABLE or info.node != pod.node_name
        info.phase, info.node = PHASE_AVAILABLE, pod.node_name
        if newly:
            self._write_status(info)

    def _owner_bound(self, pod: Pod, write: bool = True) -> None:
        ref = allocated_reservation(pod)
        if ref is None:
            return
        info = self._by_uid_or_name(*ref)
        if info is None:
            return
        requests = info.assumed.pop(pod.uid, None) or dict(pod.requests)
        self.assumed_owner.pop(pod.uid, None)
        if pod.uid in info.owners:
            return
        for k, v in requests.items():
            if k in info.allocatable:
                info.allocated[k] = info.allocated.get(k, 0) + v
        info.owners[pod.uid] = {"namespace": pod.namespace, "name": pod.name, "uid": pod.uid}
        if not write:
            return
        if info.reservation.allocate_once:
            info.phase = PHASE_SUCCEEDED
            self._remove_reserve_pod(info)
        else:
            self._resize_reserve_pod(info)
        self._write_status(info)

    def _owner_gone(self, pod: Pod) -> None:
        ref = allocated_reservation(pod)
        info = self._by_uid_or_name(*ref) if ref is not None else None
        if info is None or pod.uid not in info.owners:
            return
        del info.owners[pod.uid]
        for k, v in pod.requests.items():
            if k in info.allocated:
                info.allocated[k] = max(info.allocated[k] - v, 0)
        if info.phase == PHASE_AVAILABLE:
            self._resize_reserve_pod(info)
        self._write_status(info)

    def _resize_reserve_pod(self, info: ReservationInfo) -> None:
        """The reserve pod holds only what remains, so node totals count owners once."""
        cluster = self.handle.cluster()
        pod = cluster.get_pod(info.reservation.uid)
        if pod is None:
            return
        left = {k: max(v - info.allocated.get(k, 0), 0) for k, v in info.allocatable.items()}
        cluster.replace_pod(pod.uid, requests=left, nonzero_cpu=left.get(CPU, 0), nonzero_memory=left.get("memory", 0))

    def _remove_reserve_pod(self, info: ReservationInfo) -> None:
        cluster = self.handle.cluster()
        pod = cluster.get_pod(info.reservation.uid)
        if pod is not None:
            cluster.delete_pod(pod)

    def expire(self, info: ReservationInfo) -> None:
        """The reservation's time is up: Failed with Ready=False reason Expired; its pod is removed."""
        if info.phase not in (PHASE_PENDING, PHASE_AVAILABLE):
            return
        info.phase = PHASE_FAILED
        self._remove_reserve_pod(info)
        self._write_status(info, expired=True)

    def _write_status(self, info: ReservationInfo, expired: bool = False) -> None:
        cluster = self.handle.cluster()
        doc = self._document(cluster.extensions.get("Reservation", []), info.name)
        if doc is None:
            return
        now = format_time(self.handle.now())
        status = dict(doc.get("status") or {})
        status["phase"] = info.phase
        if info.node:
            status["nodeName"] = info.node
        status["allocatable"] = format_resources(info.allocatable)
        if info.allocated:
            status["allocated"] = format_resources(info.allocated)
        status["currentOwners"] = [dict(v) for _, v in sorted(info.owners.items())] or None
        if status["currentOwners"] is None:
            del status["currentOwners"]
        conditions = [c for c in status.get("conditions") or [] if c.get("type") not in ("Scheduled", "Ready")]
        if info.node:
            conditions.append({"type": "Scheduled", "status": "True", "reason": "Scheduled", "lastTransitionTime": now})
        if expired:
            conditions.append({"type": "Ready", "status": "False", "reason": "Expired", "lastTransitionTime": now})
        elif info.phase == PHASE_SUCCEEDED:
            conditions.append({"type": "Ready", "status": "False", "reason": "Succeeded", "lastTransitionTime": now})
        elif info.phase == PHASE_AVAILABLE:
            conditions.append({"type": "Ready", "status": "True", "reason": "Available", "lastTransitionTime": now})
        status["conditions"] = conditions
        try:
            cluster.update_object("Reservation", {**doc, "status": status})
        except APIError as exc:
            # Counted and retried after a backoff; never ends the scheduling loop.
            scheduler = self.handle.scheduler
            scheduler.metrics.background_error("controller/Reservation", APIError(f"Reservation {info.name}: {exc}"))
            scheduler.submit(lambda: self._write_status(info, expired), delay=5.0)

    def _document(self, docs: list[dict[str, Any]], name: str) -> dict[str, Any] | None:
        """The Reservation's document in the cluster's list, remembering where it was found."""
        at = self._doc_at.get(name)
        if at is not None and at < len(docs) and (docs[at].get("metadata") or {}).get("name") == name:
            return docs[at]
        for i, d in enumerate(docs):
            if (d.get("metadata") or {}).get("name") == name:
                self._doc_at[name] = i
                return d
        return None

    # ----- matching --------------------------------------------------------------------------------
    def _matched(self, pod: Pod) -> tuple[dict[str, list[ReservationInfo]], bool, Status]:
        try:
            affinity = reservation_affinity(pod)
        except ValueError as exc:
            return {}, False, unresolvable(str(exc))
        ignored = is_reservation_ignored(pod)
        by_node: dict[str, list[ReservationInfo]] = {}
        infos = self.infos.values() if ignored else self.owner_index.candidates(pod, self.infos)
        for info in infos:
            if not info.available:
                continue
            if not ignored and (
                not info.reservation.matches_owner(pod) or (affinity is not None and not affinity.matches(info.reservation))
            ):
                continue
            if info.reservation.unschedulable and not ignored:
                continue
            by_node.setdefault(info.node, []).append(info)
        return by_node, affinity is not None and not ignored, Status()

    # ----- BeforePreFilter / PreFilter / Filter ---------------------------------------------------
    def before_pre_filter(self, state: CycleState, pod: Pod) -> tuple[Pod | None, Status]:
        """`BeforePreFilter` (transformer.go): find the pod's reservations and give them back to it
        for the whole cycle (`restoreMatchedReservation`): on their nodes the reserve pods are
        taken out of the snapshot, so every Filter and Score plugin sees those nodes without
        the reservation's hold. The snapshot is restored when the cycle ends."""
        if is_reserve_pod(pod):
            return None, Status()
        by_node, required, status = self._matched(pod)
        if not status.success:
            return None, status
        if not by_node:
            if required:
                state.write(STATE_KEY, _CycleState({}, True, False))
            return None, Status()
        state.write(STATE_KEY, _CycleState(by_node, required, is_reservation_ignored(pod)))
        snapshot = self.handle.snapshot
        for name, infos in by_node.items():
            node_info = snapshot.get(name)
            if node_info is None:
                continue
            matched = {info.reservation.uid for info in infos}
            for holder in [p.pod for p in node_info.pods if p.pod.uid in matched]:
                if snapshot.remove_pod(holder):
                    state.at_cycle_end(_restorer(snapshot, holder, name))
        return None, Status()

    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        """Restrict a pod with reservation affinity to its reservations' nodes; Skip without any."""
        st = state.get(STATE_KEY)
        if not isinstance(st, _CycleState):
            return None, skip()
        if not st.by_node:
            return None, unresolvable(ERR_REASON_RESERVATION_AFFINITY)
        return (PreFilterResult(frozenset(st.by_node)) if st.required else None), Status()

    def pre_filter_extensions(self) -> None:
        """No AddPod/RemovePod."""
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Restricted reservations must cover the reserved resources the pod asks for."""
        st = state.get(STATE_KEY)
        if not isinstance(st, _CycleState) or st.ignored:
            return Status()
        infos = st.by_node.get(node_info.name, [])
        if not infos:
            return unresolvable(ERR_REASON_RESERVATION_AFFINITY) if st.required else Status()
        reasons: list[str] = []
        for info in infos:
            if info.reservation.allocate_policy != "Restricted":
                return Status()
            lacking = info.fits(pod.requests)
            if not lacking:
                return Status()
            reasons += lacking
        if st.required:
            return unschedulable(*(reasons or [ERR_REASON_NO_RESERVATIONS_MEET_REQUIREMENTS]))
        # Not required: the node alone, without the reserved resources, may still do.
        alone = _fits_node_alone(pod, node_info, infos)
        return Status() if not alone else unschedulable(*(f"Insufficient {r} by node" for r in alone))

    def filter_batch(self, state: CycleState, pod: Pod, snapshot: Any, positions: npt.NDArray[np.int64]) -> BatchFilterResult:
        """Nodes without the pod's reservations pass (or fail when one is required); the nodes
        holding them are judged by `filter` (their snapshot rows are restored for this cycle)."""
        st = state.get(STATE_KEY)
        codes = np.zeros(len(positions), dtype=np.int8)
        if not isinstance(st, _CycleState) or st.ignored:
            return BatchFilterResult.uniform(codes, ())
        rows = _rows(snapshot, st.by_node)
        held = np.isin(positions, np.fromiter(rows.values(), dtype=np.int64, count=len(rows)))
        if st.required:
            codes[~held] = int(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
        keys = np.zeros(len(positions), dtype=np.int64)
        reasons: dict[int, tuple[str, ...]] = {0: (ERR_REASON_RESERVATION_AFFINITY,)}
        for i in np.flatnonzero(held).tolist():
            status = self.filter(state, pod, snapshot.node_infos[int(positions[i])])
            if not status.success:
                codes[i] = int(status.code)
                keys[i] = len(reasons)
                reasons[len(reasons)] = status.reasons
        return BatchFilterResult(codes, lambda i: reasons[int(keys[i])], keys)

    # ----- Score -------------------------------------------------------------------------------------
    def _scores(self, state: CycleState, st: _CycleState, pod: Pod, names: list[str]) -> tuple[list[int], Status]:
        """`PreScore` and `Score` (scoring.go) for these nodes: the node whose reservations carry
        the lowest `reservation-order` scores `mostPreferredScore` (1000); the others score the
        reservation nominated there (`ScoreReservation`), 0 without one."""
        best_order, preferred = 0, ""
        for name in names:
            order = _lowest_order(st.by_node.get(name, ()))
            if order and (not best_order or order < best_order):
                best_order, preferred = order, name
        st.preferred_node = preferred
        out = []
        for name in names:
            infos = st.by_node.get(name)
            if not infos:
                out.append(0)
                continue
            nominated, status = self.nominate(pod, name, infos, st.required, state)
            if not status.success:
                return [], status
            st.nominated[name] = nominated
            if name == preferred:
                out.append(MOST_PREFERRED_SCORE)
            else:
                out.append(nominated.score(pod.requests) if nominated is not None else 0)
        return out, Status()

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        """One node's score (see `_scores`); 0 for a reservation-ignored pod."""
        st = state.get(STATE_KEY)
        if not isinstance(st, _CycleState) or st.ignored or not st.by_node:
            return 0, Status()
        # Per node, the preferred node is chosen among all the nodes with the pod's reservations.
        names = list(st.by_node)
        if node_info.name not in st.by_node:
            return 0, Status()
        scores, status = self._scores(state, st, pod, names)
        return (scores[names.index(node_info.name)] if status.success else 0), status

    def score_batch(self, state: CycleState, pod: Pod, snapshot: Any, positions: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """The same over the scored nodes: zeros except where the pod's reservations are."""
        out = np.zeros(len(positions), dtype=np.int64)
        st = state.get(STATE_KEY)
        if not isinstance(st, _CycleState) or st.ignored or not st.by_node:
            return out
        rows = _rows(snapshot, st.by_node)
        at = np.flatnonzero(np.isin(positions, np.fromiter(rows.values(), dtype=np.int64, count=len(rows))))
        if len(at):
            names = [snapshot.names[int(r)] for r in positions[at].tolist()]
            scores, status = self._scores(state, st, pod, names)
            if not status.success:
                raise RuntimeError(status.message)
            out[at] = scores
        return out

    def score_extensions(self) -> Reservation:
        """NormalizeScore."""
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: npt.NDArray[np.int64]) -> Status:
        """`NormalizeScore`: `DefaultNormalizeScore(MaxNodeScore, false)`, the best node to 100."""
        if is_reserve_pod(pod) or not len(scores):
            return Status()
        top = int(scores.max())
        if top > 0:
            scores[:] = MAX_NODE_SCORE * scores // top
        return Status()

    # ----- Reserve / PreBind ------------------------------------------------------------------------
    def nominate(
        self, pod: Pod, node_name: str, infos: list[ReservationInfo], has_affinity: bool = False, state: CycleState | None = None
    ) -> tuple[ReservationInfo | None, Status]:
        """`NominateReservation` (nominator.go): the reservation the pod takes on the node. With
        reservation affinity and one match, that one; else among those every reservation filter
        plugin of the profile accepts (`RunNominateReservationFilterPlugins`), the lowest
        `reservation-order`, else the highest sum of every reservation score plugin's score
        (`prioritizeReservations`); equal sums go to the earliest created, then the name
        (upstream leaves that to map order)."""
        candidates = [i for i in infos if i.node == node_name and i.available]
        if not candidates:
            return None, Status()
        if len(candidates) == 1 and has_affinity:
            return candidates[0], Status()
        cycle = state if state is not None else CycleState()
        if self._reservation_plugins is None:
            self._reservation_plugins = reservation_plugins(self.handle, self)
        filters, scorers = self._reservation_plugins
        fitting = [i for i in candidates if run_nominate_reservation_filter(filters, cycle, pod, i, node_name).success]
        if len(fitting) <= 1:
            return (fitting[0] if fitting else None), Status()
        ordered = [i for i in fitting if i.reservation.order]
        if ordered:
            return min(ordered, key=lambda i: i.reservation.order), Status()

        def created(info: ReservationInfo) -> tuple[float, str]:
            at = info.reservation.meta.creation_timestamp
            return (at if at is not None else float("inf"), info.name)

        fitting.sort(key=created)
        totals, status = run_reservation_score(scorers, cycle, pod, fitting, node_name)
        if not status.success:
            return None, status
        return fitting[max(range(len(fitting)), key=lambda i: (totals[i], -i))], Status()

    def filter_nominate_reservation(self, state: CycleState, pod: Pod, info: ReservationInfo, node_name: str) -> Status:
        """`FilterNominateReservation`: an allocate-once reservation already taken is out, and a
        Restricted one must hold what the pod asks of its resources."""
        if info.reservation.allocate_once and (info.owners or info.assumed):
            return unschedulable("reservation has allocateOnce enabled and has already been allocated")
        if info.reservation.allocate_policy == "Restricted":
            lacking = info.fits(pod.requests)
            if lacking:
                return unschedulable(*lacking)
        return Status()

    def score_reservation(self, state: CycleState, pod: Pod, info: ReservationInfo, node_name: str) -> tuple[int, Status]:
        """`ScoreReservation` (scoring.go): see `ReservationInfo.score`."""
        return info.score(pod.requests), Status()

    def reservation_score_extensions(self) -> None:
        """No NormalizeReservationScore."""
        return None

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Take the best reservation on the chosen node for this pod (until bound or unreserved)."""
        st = state.get(STATE_KEY)
        if not isinstance(st, _CycleState) or st.ignored:
            return Status()
        info = st.nominated.get(node_name) if node_name in st.nominated else None
        if info is None or not info.available:
            info, status = self.nominate(pod, node_name, st.by_node.get(node_name, []), st.required, state)
            if not status.success:
                return status
        if info is None:
            # plugin.go Reserve: a pod with reservation affinity and no reservation nominated here.
            return unschedulable(ERR_REASON_RESERVATION_AFFINITY) if st.required else Status()
        info.assumed[pod.uid] = dict(pod.requests)
        self.assumed_owner[pod.uid] = info.reservation.uid
        return Status()

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Give the reservation back."""
        uid = self.assumed_owner.pop(pod.uid, None)
        info = self.infos.get(uid) if uid else None
        if info is not None:
            info.assumed.pop(pod.uid, None)

    def pre_bind_preflight(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Skip when the pod allocated no reservation (no annotation to write)."""
        uid = self.assumed_owner.get(pod.uid)
        return Status() if uid and uid in self.infos else Status(Code.SKIP)

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Annotate the owner with the reservation it allocated."""
        uid = self.assumed_owner.get(pod.uid)
        info = self.infos.get(uid) if uid else None
        if info is None:
            return Status()
        value = json.dumps({"name": info.name, "uid": info.reservation.uid}, separators=(",", ":"))
        try:
            self.handle.cluster().patch_annotations(pod, {ANNOTATION_RESERVATION_ALLOCATED: value})
        except Exception as exc:  # the API refused: binding fails and the pod is retried
            return Status(Code.ERROR, (f"patch {ANNOTATION_RESERVATION_ALLOCATED}: {exc}",), error=exc)
        return Status()

    # ----- REST and controllers ---------------------------------------------------------------------
    def register_endpoints(self, group: RouteGroup) -> None:
        """`GET /nodeReservations/:nodeName` and `GET /reservationSelectorIndex` (service.go)."""
        group.get("/nodeReservations/:nodeName", self._node_reservations)
        group.get("/reservationSelectorIndex", self._selector_index)

    def _selector_index(self, request: Request) -> tuple[int, Any]:
        """`DumpReservationSelectorIndex`: this engine keeps no reservationSelector index (upstream's
        is off unless configured), so the snapshot says it is disabled, as upstream's does then."""
        return 200, {"enabled": False, "prefixes": None, "indexedReservations": 0}

    def _node_reservations(self, request: Request) -> tuple[int, Any]:
        node = request.params["nodeName"]
        items = [
            i.item() for i in sorted(self.infos.values(), key=lambda i: i.name) if i.phase == PHASE_AVAILABLE and i.node == node
        ]
        return 200, {"items": items}

    def new_controllers(self) -> list[ExpiryController]:
        """The expiry controller."""
        return [self.controller]


def _restorer(snapshot: Any, holder: Pod, node: str) -> Callable[[], None]:
    """Put a reserve pod taken out for one cycle back on its node."""

    def restore() -> None:
        snapshot.add_pod(holder, node)

    return restore


def _lowest_order(infos: Iterable[ReservationInfo]) -> int:
    """`findMostPreferredReservationByOrder`: the lowest non-zero `reservation-order`, 0 for none."""
    orders = [i.reservation.order for i in infos if i.reservation.order]
    return min(orders) if orders else 0


def _rows(snapshot: Any, by_node: dict[str, list[ReservationInfo]]) -> dict[str, int]:
    """Snapshot rows of the nodes holding the pod's reservations (nodes the snapshot lacks left out)."""
    position = snapshot.position
    return {name: position[name] for name in by_node if name in position}


def _owner_keys(owner: rapi.ReservationOwner) -> list[tuple[str, ...]] | None:
    """Keys one of which every pod the owner matches carries; None when there is no such key."""
    if owner.object is not None and owner.object.uid:
        return [("uid", owner.object.uid)]
    if owner.object is not None and owner.object.name:
        return [("name", owner.object.name)]
    if owner.controller is not None and owner.controller.uid:
        return [("ref-uid", owner.controller.uid)]
    if owner.controller is not None and owner.controller.name:
        return [("ref-name", owner.controller.name)]
    for req in owner.selector.requirements if owner.selector is not None else ():
        if req.operator == "In":
            return [("label", req.key, v) for v in req.values]
        if req.operator == "Exists":
            return [("label-key", req.key)]
    return None


def _pod_keys(pod: Pod) -> list[tuple[str, ...]]:
    """Every key of `_owner_keys` the pod carries."""
    keys: list[tuple[str, ...]] = [("uid", pod.uid), ("name", pod.name)]
    for k, v in pod.labels.items():
        keys.append(("label", k, v))
        keys.append(("label-key", k))
    for ref in pod.meta.owner_references:
        keys.append(("ref-uid", ref.uid))
        keys.append(("ref-name", ref.name))
    return keys


class OwnerIndex:
    """Reservations by a key their owners require of a pod (a uid, a name, a label), so matching
    a pod checks only the reservations that could own it instead of every one."""

    def __init__(self) -> None:
        self.by_key: dict[tuple[str, ...], list[str]] = {}
        self.unkeyed: list[str] = []
        self.position: dict[str, int] = {}

    def add(self, r: rapi.Reservation) -> None:
        """Index a reservation (once) under its owners' keys; one owner without a key makes it unkeyed."""
        if r.uid in self.position:
            return
        self.position[r.uid] = len(self.position)
        keys: set[tuple[str, ...]] = set()
        for owner in r.owners:
            found = _owner_keys(owner)
            if found is None:
                self.unkeyed.append(r.uid)
                return
            keys.update(found)
        for key in keys:
            self.by_key.setdefault(key, []).append(r.uid)

    def candidates(self, pod: Pod, infos: dict[str, ReservationInfo]) -> list[ReservationInfo]:
        """The reservations that may own the pod, in the order they were added."""
        uids = set(self.unkeyed)
        for key in _pod_keys(pod):
            found = self.by_key.get(key)
            if found:
                uids.update(found)
        position = self.position
        return [infos[u] for u in sorted(uids, key=position.__getitem__) if u in infos]


def _fits_node_alone(pod: Pod, node_info: NodeInfo, infos: list[ReservationInfo]) -> list[str]:
    """Resources the node lacks for the pod when the reservations keep what they hold (`fitsNode`)."""
    allocatable, requested = node_info.allocatable, node_info.requested
    held: dict[str, int] = {}
    for info in infos:
        for k, v in info.remaining().items():
            held[k] = held.get(k, 0) + v
    lacking = []
    if pod.requests.get(CPU, 0) > allocatable.milli_cpu - requested.milli_cpu - held.get(CPU, 0):
        lacking.append(CPU)
    if pod.requests.get("memory", 0) > allocatable.memory - requested.memory - held.get("memory", 0):
        lacking.append("memory")
    return lacking


class ExpiryController:
    """Expires reservations at `expires` / creation + `ttl` (Koordinator's reservation controller)."""

    name = "ReservationExpiryController"

    def __init__(self, plugin: Reservation) -> None:
        self.plugin = plugin
        self.running = False

    def start(self) -> None:
        """Schedule each live reservation's expiry as a timed event of the run."""
        self.running = True
        scheduler = getattr(self.plugin.handle, "scheduler", None)
        add = getattr(scheduler, "add_timed_event", None)
        for info in list(self.plugin.infos.values()):
            moment = info.reservation.expiry()
            if moment is None or info.phase not in (PHASE_PENDING, PHASE_AVAILABLE):
                continue
            if moment <= self.plugin.handle.now():
                self.plugin.expire(info)
            elif callable(add):
                add(moment, self._expirer(info))

    def _expirer(self, info: ReservationInfo) -> Any:
        def run() -> None:
            if self.running:
                self.plugin.expire(info)

        return run

    def stop(self) -> None:
        """Stop expiring."""
        self.running = False


def new(args: ReservationArgs | None, handle: Any) -> Reservation:
    """Build the plugin; args default as Koordinator defaults them."""
    return Reservation(args if args is not None else ReservationArgs(), handle)


__all__ = ["NAME", "Reservation", "ReservationInfo", "format_resources", "new"]
