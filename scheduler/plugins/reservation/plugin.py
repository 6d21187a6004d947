"""Reservation: resources held on a node for the pods that own them (Koordinator).

Upstream: koordinator-sh/koordinator `pkg/scheduler/plugins/reservation` (plugin.go,
transformer.go, scoring.go, service.go) and the proposal `20220609-resource-reservation.md`.

A Reservation is scheduled as its reserve pod (built by `scheduler.api.reservation`, queued by
the cluster like any pod, through the same profiles and plugins); once bound it is Available on
its node and its reserve pod holds the reservation's remaining resources there, so non-owners
simply find them taken. For an owner pod:

- PreFilter finds the Available reservations it owns (owners OR-ed, each owner's fields AND-ed;
  `reservation-affinity` narrows them and restricts the pod to their nodes; a
  `reservation-ignored` pod treats every reservation as free) and skips Filter when there are
  none.
- A FilterPhaseHook hands the Filter plugins, on those nodes only, a NodeInfo with the matched
  reserve pods taken out: the reserved resources are returned to the node, as the proposal's
  restore step does. Filter then applies the allocate policy: `Restricted` requires the
  reserved resources to come from the reservation alone.
- Score prefers the node whose reservation the pod fills best; Reserve picks the reservation
  on the chosen node that fits best, then the earliest created; PreBind annotates the pod with
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
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from scheduler.api import reservation as rapi
from scheduler.api.fields import format_time
from scheduler.api.objects import CPU, Pod, ResourceList
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
from scheduler.frameworkext.services import Request, RouteGroup

NAME = "Reservation"
STATE_KEY = "PreFilter" + NAME
ERR_REASON_RESERVATION_AFFINITY = "node(s) no reservations match reservation affinity"
ERR_REASON_NO_RESERVATIONS_MEET_REQUIREMENTS = "node(s) no reservation(s) to meet the requirements"
RESERVATION_REASON_PREFIX = "Reservation(s) "


def format_resources(amounts: ResourceList) -> dict[str, str]:
    """Integer amounts as Kubernetes quantities (cpu in millicores when fractional)."""
    out = {}
    for name, value in sorted(amounts.items()):
        if name == CPU:
            out[name] = str(value // 1000) if value % 1000 == 0 else f"{value}m"
        else:
            out[name] = str(value)
    return out


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
        """How full the reservation would be with the pod, 0..100 (most allocated is best)."""
        used = self.used()
        parts = [
            min((used.get(k, 0) + requests.get(k, 0)) * MAX_NODE_SCORE // cap, MAX_NODE_SCORE)
            for k, cap in self.allocatable.items()
            if cap > 0
        ]
        return sum(parts) // len(parts) if parts else 0

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
    """What PreFilter found for the pod: its reservations by node, whether it requires one."""

    by_node: dict[str, list[ReservationInfo]]
    required: bool
    ignored: bool

    def clone(self) -> _CycleState:
        return self


class Reservation:
    """Holds reserved resources for their owners; schedules nothing else onto them."""

    name = NAME

    def __init__(self, args: ReservationArgs, handle: Any) -> None:
        self.args = args
        self.handle = handle
        self.infos: dict[str, ReservationInfo] = {}
        self.assumed_owner: dict[str, str] = {}
        self.owner_index = OwnerIndex()
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
        cluster.update_object("Reservation", {**doc, "status": status})

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

    # ----- PreFilter / Filter ----------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        """Find the pod's reservations; Skip when it has none and requires none."""
        if is_reserve_pod(pod):
            return None, skip()
        by_node, required, status = self._matched(pod)
        if not status.success:
            return None, status
        if not by_node:
            if required:
                return None, unresolvable(ERR_REASON_RESERVATION_AFFINITY)
            return None, skip()
        state.write(STATE_KEY, _CycleState(by_node, required, is_reservation_ignored(pod)))
        return (PreFilterResult(frozenset(by_node)) if required else None), Status()

    def pre_filter_extensions(self) -> None:
        """No AddPod/RemovePod."""
        return None

    def filter_hook_nodes(self, handle: Any, state: CycleState, pod: Pod) -> Iterable[str]:
        """Only the nodes holding the pod's reservations are hooked."""
        st = state.get(STATE_KEY)
        return list(st.by_node) if isinstance(st, _CycleState) else ()

    def filter_hook(self, handle: Any, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[Pod, NodeInfo, bool]:
        """Return the matched reservations' remaining resources to this node's NodeInfo."""
        st = state.get(STATE_KEY)
        if not isinstance(st, _CycleState):
            return pod, node_info, False
        matched = {info.reservation.uid for info in st.by_node.get(node_info.name, ())}
        holders = [p.pod for p in node_info.pods if p.pod.uid in matched]
        if not holders:
            return pod, node_info, False
        twin = node_info.clone()
        for holder in holders:
            twin.remove_pod(holder)
        return pod, twin, True

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
        """Nodes without the pod's reservations pass (hooked nodes are judged per node)."""
        st = state.get(STATE_KEY)
        codes = np.zeros(len(positions), dtype=np.int8)
        if isinstance(st, _CycleState) and st.required and not st.ignored:
            rows = _rows(snapshot, st.by_node)
            codes[~np.isin(positions, np.fromiter(rows.values(), dtype=np.int64, count=len(rows)))] = 3
        return BatchFilterResult.uniform(codes, (ERR_REASON_RESERVATION_AFFINITY,))

    # ----- Score -------------------------------------------------------------------------------------
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        """The best fill of a matched reservation on the node; 0 without one."""
        st = state.get(STATE_KEY)
        if not isinstance(st, _CycleState) or st.ignored:
            return 0, Status()
        infos = st.by_node.get(node_info.name, [])
        return max((i.score(pod.requests) for i in infos if not i.fits(pod.requests)), default=0), Status()

    def score_batch(self, state: CycleState, pod: Pod, snapshot: Any, positions: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """The same over many nodes: zeros except where the pod's reservations are."""
        out = np.zeros(len(positions), dtype=np.int64)
        st = state.get(STATE_KEY)
        if not isinstance(st, _CycleState) or st.ignored:
            return out
        # Only the rows holding the pod's reservations can score above 0.
        best = {
            row: max((r.score(pod.requests) for r in st.by_node[name] if not r.fits(pod.requests)), default=0)
            for name, row in _rows(snapshot, st.by_node).items()
        }
        if best:
            at = np.flatnonzero(np.isin(positions, np.fromiter(best, dtype=np.int64, count=len(best))))
            out[at] = [best[int(r)] for r in positions[at].tolist()]
        return out

    def score_extensions(self) -> None:
        """Scores are 0..100 already."""
        return None

    # ----- Reserve / PreBind ------------------------------------------------------------------------
    def nominate(self, pod: Pod, node_name: str, infos: list[ReservationInfo]) -> ReservationInfo | None:
        """The reservation the pod takes on the node: fitting first, fullest after, then earliest created."""

        def key(info: ReservationInfo) -> tuple[int, int, float, str]:
            created = info.reservation.meta.creation_timestamp
            return (
                0 if not info.fits(pod.requests) else 1,
                -info.score(pod.requests),
                created if created is not None else float("inf"),
                info.name,
            )

        candidates = [i for i in infos if i.node == node_name and i.available]
        if not candidates:
            return None
        best = min(candidates, key=key)
        if best.fits(pod.requests) and best.reservation.allocate_policy == "Restricted":
            return None
        return best

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Take the best reservation on the chosen node for this pod (until bound or unreserved)."""
        st = state.get(STATE_KEY)
        if not isinstance(st, _CycleState) or st.ignored:
            return Status()
        info = self.nominate(pod, node_name, st.by_node.get(node_name, []))
        if info is None:
            return unschedulable(ERR_REASON_NO_RESERVATIONS_MEET_REQUIREMENTS) if st.required else Status()
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
        """`GET /nodeReservations/:nodeName`."""
        group.get("/nodeReservations/:nodeName", self._node_reservations)

    def _node_reservations(self, request: Request) -> tuple[int, Any]:
        node = request.params["nodeName"]
        items = [
            i.item() for i in sorted(self.infos.values(), key=lambda i: i.name) if i.phase == PHASE_AVAILABLE and i.node == node
        ]
        return 200, {"items": items}

    def new_controllers(self) -> list[ExpiryController]:
        """The expiry controller."""
        return [self.controller]


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
