"""Koordinator's Reservation (`scheduling.koordinator.sh/v1alpha1`, cluster-scoped) and its reserve pod.

Facts from koordinator-sh/koordinator `apis/scheduling/v1alpha1/reservation_types.go`,
`apis/extension/reservation.go` and `pkg/util/reservation/reservation.go`: a Reservation is
scheduled as a "reserve pod" built from `spec.template` (named after the reservation, in the
template's namespace or `default`, priority MaxInt32 unless the template sets one so that nothing
preempts it); `ttl` defaults to 24h (0 disables expiry) and excludes `expires`; `allocateOnce`
defaults to true; owners are OR-ed, the fields inside one owner AND-ed.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from typing import Any

from scheduler.api.duration import parse_duration
from scheduler.api.fields import boolean, fail, join, mapping, sequence, string, string_map, timestamp
from scheduler.api.meta import ObjectMeta, parse_meta
from scheduler.api.objects import Pod, ResourceList, parse_pod, resource_amounts, to_resource_list
from scheduler.api.selectors import LabelSelector, parse_label_selector, selector_from_map

DOMAIN = "scheduling.koordinator.sh"
ANNOTATION_RESERVE_POD = DOMAIN + "/reserve-pod"
ANNOTATION_RESERVATION_NAME = DOMAIN + "/reservation-name"
ANNOTATION_RESERVATION_ALLOCATED = DOMAIN + "/reservation-allocated"
ANNOTATION_RESERVATION_AFFINITY = DOMAIN + "/reservation-affinity"
LABEL_RESERVATION_IGNORED = DOMAIN + "/reservation-ignored"
LABEL_RESERVATION_ORDER = DOMAIN + "/reservation-order"

PHASE_PENDING = "Pending"
PHASE_AVAILABLE = "Available"
PHASE_SUCCEEDED = "Succeeded"
PHASE_WAITING = "Waiting"
PHASE_FAILED = "Failed"
PHASES = (PHASE_PENDING, PHASE_AVAILABLE, PHASE_SUCCEEDED, PHASE_WAITING, PHASE_FAILED)
ALLOCATE_POLICIES = ("", "Aligned", "Restricted")
DEFAULT_TTL_SECONDS = 24 * 3600.0
MAX_INT32 = 2**31 - 1
_GO_INT = re.compile(r"[+-]?[0-9]+")  # what strconv.ParseInt(s, 10, 64) reads


@dataclass(frozen=True, slots=True)
class ObjectRef:
    """`object` of an owner (a corev1.ObjectReference); empty fields match anything."""

    namespace: str = ""
    name: str = ""
    uid: str = ""
    api_version: str = ""

    def matches(self, pod: Pod) -> bool:
        """`MatchObjectRef` (pkg/util/reservation/reservation.go): uid, name, namespace and
        apiVersion, each only when set; kind, resourceVersion and fieldPath are ignored."""
        return (
            (not self.uid or self.uid == pod.uid)
            and (not self.name or self.name == pod.name)
            and (not self.namespace or self.namespace == pod.namespace)
            and (not self.api_version or self.api_version == pod.raw.get("apiVersion", ""))
        )


@dataclass(frozen=True, slots=True)
class ControllerRef:
    """`controller` of an owner: an OwnerReference plus a namespace; empty fields match anything."""

    api_version: str = ""
    kind: str = ""
    name: str = ""
    uid: str = ""
    controller: bool | None = None
    namespace: str = ""

    def matches(self, pod: Pod) -> bool:
        """`MatchReservationControllerReference`: one of the pod's ownerReferences fits every set field."""
        if self.namespace and self.namespace != pod.namespace:
            return False
        # The parsed references, not `pod.raw` (which unpacks the whole document on every read).
        for ref in pod.meta.owner_references:
            if self.controller is not None and ref.controller_written is not self.controller:
                continue
            if self.uid and ref.uid != self.uid:
                continue
            if self.name and ref.name != self.name:
                continue
            if self.kind and ref.kind != self.kind:
                continue
            if self.api_version and ref.api_version != self.api_version:
                continue
            return True
        return False


@dataclass(frozen=True, slots=True)
class ReservationOwner:
    """One entry of `spec.owners`: every field it sets must match (AND)."""

    object: ObjectRef | None = None
    controller: ControllerRef | None = None
    selector: LabelSelector | None = None

    def matches(self, pod: Pod) -> bool:
        """`ReservationOwnerMatcher.Match`."""
        return (
            (self.object is None or self.object.matches(pod))
            and (self.controller is None or self.controller.matches(pod))
            and (self.selector is None or self.selector.matches(pod.labels))
        )


@dataclass(frozen=True, slots=True)
class Reservation:
    """A Reservation: its template (as the reserve pod), owners, expiry and status."""

    meta: ObjectMeta
    reserve_pod: Pod
    owners: tuple[ReservationOwner, ...]
    ttl_seconds: float | None
    expires: float | None
    allocate_once: bool
    allocate_policy: str
    unschedulable: bool
    phase: str
    node_name: str
    raw: dict[str, Any]

    @property
    def name(self) -> str:
        """metadata.name."""
        return self.meta.name

    @property
    def uid(self) -> str:
        """metadata.uid."""
        return self.meta.uid

    @property
    def requests(self) -> ResourceList:
        """What the reservation holds: its template's requests (`ReservationRequests`)."""
        return dict(self.reserve_pod.requests)

    def expiry(self) -> float | None:
        """When it expires: `expires`, else creation + ttl (None: never)."""
        if self.expires is not None:
            return self.expires
        if self.ttl_seconds is None or self.ttl_seconds <= 0:
            return None
        created = self.meta.creation_timestamp
        return None if created is None else created + self.ttl_seconds

    @property
    def order(self) -> int:
        """The `reservation-order` label as an integer; 0 when absent or not a number
        (`findMostPreferredReservationByOrder` passes over those)."""
        text = self.meta.labels.get(LABEL_RESERVATION_ORDER, "")
        if not _GO_INT.fullmatch(text):
            return 0
        value = int(text)
        return value if -(2**63) <= value < 2**63 else 0

    def matches_owner(self, pod: Pod) -> bool:
        """Whether any owner entry matches the pod (owners are OR-ed)."""
        return any(owner.matches(pod) for owner in self.owners)


def _owner(raw: Any, path: str) -> ReservationOwner:
    data = mapping(raw, path)
    obj = ctrl = None
    selector = None
    if data.get("object") is not None:
        o = mapping(data["object"], join(path, "object"))
        p = join(path, "object")
        obj = ObjectRef(
            string(o.get("namespace"), join(p, "namespace")),
            string(o.get("name"), join(p, "name")),
            string(o.get("uid"), join(p, "uid")),
            string(o.get("apiVersion"), join(p, "apiVersion")),
        )
    if data.get("controller") is not None:
        c = mapping(data["controller"], join(path, "controller"))
        p = join(path, "controller")
        flag = c.get("controller")
        ctrl = ControllerRef(
            string(c.get("apiVersion"), join(p, "apiVersion")),
            string(c.get("kind"), join(p, "kind")),
            string(c.get("name"), join(p, "name")),
            string(c.get("uid"), join(p, "uid")),
            None if flag is None else boolean(flag, join(p, "controller")),
            string(c.get("namespace"), join(p, "namespace")),
        )
    if data.get("labelSelector") is not None:
        selector = parse_label_selector(data["labelSelector"], join(path, "labelSelector"))
    if obj is None and ctrl is None and selector is None:
        fail(path, "an owner needs at least one of object, controller or labelSelector")
    return ReservationOwner(obj, ctrl, selector)


def reserve_pod_document(
    doc: dict[str, Any], name: str, uid: str, labels: dict[str, str], annotations: dict[str, str]
) -> dict[str, Any]:
    """The reserve pod's document built from a Reservation document (`NewReservePod`)."""
    template = doc.get("spec", {}).get("template") or {}
    tmeta = copy.deepcopy(template.get("metadata") or {})
    spec = copy.deepcopy(template.get("spec") or {})
    pod_labels = {**(tmeta.get("labels") or {}), **labels}
    pod_annotations = {
        **(tmeta.get("annotations") or {}),
        **annotations,
        ANNOTATION_RESERVE_POD: "true",
        ANNOTATION_RESERVATION_NAME: name,
    }
    # spec.nodeName of the template pins the node; the real placement comes from status.nodeName.
    spec.pop("nodeName", None)
    status = doc.get("status") or {}
    if status.get("nodeName") and status.get("phase") in (PHASE_AVAILABLE, PHASE_WAITING):
        spec["nodeName"] = status["nodeName"]
    if spec.get("priority") is None and not spec.get("priorityClassName"):
        spec["priority"] = MAX_INT32
    meta = {
        "name": name,
        "namespace": tmeta.get("namespace") or "default",
        "uid": uid,
        "labels": pod_labels,
        "annotations": pod_annotations,
    }
    created = (doc.get("metadata") or {}).get("creationTimestamp")
    if created is not None:
        meta["creationTimestamp"] = created
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def parse_reservation(raw: Any, path: str = "") -> Reservation:
    """Parse a Reservation document and build its reserve pod; errors name the field."""
    doc = mapping(raw, path)
    meta = parse_meta(doc.get("metadata"), join(path, "metadata"), namespaced=False)
    spec = mapping(doc.get("spec"), join(path, "spec"))
    sp = join(path, "spec")
    if spec.get("template") is None:
        fail(join(sp, "template"), "the reservation misses the template spec")
    template = mapping(spec.get("template"), join(sp, "template"))
    mapping(template.get("spec"), join(join(sp, "template"), "spec"))
    owners_raw = sequence(spec.get("owners"), join(sp, "owners"))
    if not owners_raw:
        fail(join(sp, "owners"), "the reservation misses the owner spec")
    owners = tuple(_owner(o, join(join(sp, "owners"), i)) for i, o in enumerate(owners_raw))
    ttl: float | None = None
    if spec.get("ttl") is not None:
        text = string(spec.get("ttl"), join(sp, "ttl"))
        nanos = parse_duration(text)
        if nanos is None or nanos < 0:
            fail(join(sp, "ttl"), f"invalid duration {text!r}; want e.g. 30m, 24h or 0s (no expiry)")
        ttl = nanos / 1e9
    expires = timestamp(spec.get("expires"), join(sp, "expires"))
    if ttl is not None and expires is not None:
        fail(join(sp, "expires"), "expires and ttl are mutually exclusive")
    if ttl is None and expires is None:
        ttl = DEFAULT_TTL_SECONDS
    policy = string(spec.get("allocatePolicy"), join(sp, "allocatePolicy"))
    if policy not in ALLOCATE_POLICIES:
        fail(join(sp, "allocatePolicy"), f"unsupported value {policy!r}; valid: Aligned, Restricted (or empty)")
    status = mapping(doc.get("status"), join(path, "status"))
    st = join(path, "status")
    phase = string(status.get("phase"), join(st, "phase"), PHASE_PENDING) or PHASE_PENDING
    if phase not in PHASES:
        fail(join(st, "phase"), f"unsupported value {phase!r}; valid: {', '.join(PHASES)}")
    node_name = string(status.get("nodeName"), join(st, "nodeName"))
    if phase == PHASE_AVAILABLE and not node_name:
        fail(join(st, "nodeName"), "is required when status.phase is Available")
    pod_doc = reserve_pod_document(doc, meta.name, meta.uid, meta.labels, meta.annotations)
    pod = parse_pod(pod_doc, join(sp, "template"))
    return Reservation(
        meta=meta,
        reserve_pod=pod,
        owners=owners,
        ttl_seconds=ttl,
        expires=expires,
        allocate_once=boolean(spec.get("allocateOnce"), join(sp, "allocateOnce"), True),
        allocate_policy=policy,
        unschedulable=boolean(spec.get("unschedulable"), join(sp, "unschedulable")),
        phase=phase,
        node_name=node_name,
        raw=doc,
    )


def status_allocated(raw: dict[str, Any]) -> ResourceList:
    """status.allocated of a Reservation document as integers (0 when absent)."""
    status = raw.get("status") or {}
    return to_resource_list(resource_amounts(status.get("allocated"), "status.allocated"))


def is_reserve_pod(pod: Pod) -> bool:
    """Whether a pod stands for a Reservation (`IsReservePod`)."""
    return pod.annotations.get(ANNOTATION_RESERVE_POD) == "true"


def is_reservation_ignored(pod: Pod) -> bool:
    """The pod schedules as if no reservation held anything (`IsReservationIgnored`)."""
    return pod.labels.get(LABEL_RESERVATION_IGNORED) == "true"


@dataclass(frozen=True, slots=True)
class ReservationAffinity:
    """`scheduling.koordinator.sh/reservation-affinity`: the pod must use a matching reservation."""

    name: str
    selector: LabelSelector | None

    def matches(self, reservation: Reservation) -> bool:
        """Name (when set) and reservation labels (when a selector is set) must both match."""
        if self.name and self.name != reservation.name:
            return False
        return self.selector is None or self.selector.matches(reservation.meta.labels)


def reservation_affinity(pod: Pod) -> ReservationAffinity | None:
    """The pod's required reservation affinity, None when it has none; ValueError when malformed."""
    text = pod.annotations.get(ANNOTATION_RESERVATION_AFFINITY, "")
    if not text:
        return None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"invalid {ANNOTATION_RESERVATION_AFFINITY} annotation: {exc}") from exc
    if not isinstance(data, dict):
        raise ValueError(f"invalid {ANNOTATION_RESERVATION_AFFINITY} annotation: expected an object")
    labels = string_map(data.get("reservationSelector"), "reservationSelector")
    return ReservationAffinity(str(data.get("name") or ""), selector_from_map(labels) if labels else None)


def allocated_reservation(pod: Pod) -> tuple[str, str] | None:
    """(name, uid) from the pod's reservation-allocated annotation, if it has one."""
    text = pod.annotations.get(ANNOTATION_RESERVATION_ALLOCATED, "")
    if not text:
        return None
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return None
    if not isinstance(data, dict):
        return None
    return str(data.get("name", "")), str(data.get("uid", ""))


__all__ = [
    "ANNOTATION_RESERVATION_AFFINITY",
    "ANNOTATION_RESERVATION_ALLOCATED",
    "LABEL_RESERVATION_IGNORED",
    "LABEL_RESERVATION_ORDER",
    "PHASE_AVAILABLE",
    "PHASE_FAILED",
    "PHASE_PENDING",
    "PHASE_SUCCEEDED",
    "Reservation",
    "ReservationAffinity",
    "ReservationOwner",
    "allocated_reservation",
    "is_reservation_ignored",
    "is_reserve_pod",
    "parse_reservation",
    "reservation_affinity",
]
