"""Gangs and gang groups as Koordinator's gang cache keeps them (`core/gang.go`, `gang_cache.go`).

A gang is known from a PodGroup (`GangFromPodGroupCrd`) or from its pods' annotations
(`GangFromPodAnnotation`, initialised by the first member that carries a valid min-available).
Children are keyed `namespace/name`; a child is pending until it is assumed (waiting at
Permit) and bound afterwards. Gangs listed in one `groups` annotation share a GangGroupInfo:
the once-satisfied flag (set when the group is allowed at Permit or a member binds, never
cleared) and the group's representative pod (`ganggroup.go`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from scheduler.api.duration import parse_duration
from scheduler.api.fields import format_time
from scheduler.api.objects import Pod
from scheduler.api.podgroup import (
    ANNOTATION_GANG_GROUPS,
    ANNOTATION_GANG_MIN_NUM,
    ANNOTATION_GANG_MODE,
    ANNOTATION_GANG_TOTAL_NUM,
    ANNOTATION_GANG_WAIT_TIME,
    GANG_MODE_NON_STRICT,
    GANG_MODE_STRICT,
    MATCH_ONCE_SATISFIED,
    MATCH_ONLY_WAITING,
    MATCH_POLICIES,
    MATCH_WAITING_AND_RUNNING,
    POD_GROUP_LABEL,
    PodGroup,
    gang_id,
    gang_name,
    match_policy_of,
)

GANG_FROM_POD_GROUP = "GangFromPodGroupCrd"
GANG_FROM_ANNOTATION = "GangFromPodAnnotation"
GO_ZERO_TIME = "0001-01-01T00:00:00Z"
# `NewGangGroupInfo("", nil)`, what a gang carries before its group is known.
_NEW_GROUP_INFO: dict[str, Any] = {
    "Initialized": False,
    "GangGroupId": "",
    "GangGroup": None,
    "OnceResourceSatisfied": False,
    "WaitingGangIDs": {},
    "RepresentativePodKey": "",
    "BindingMemberPods": None,
}


def gang_group_id(group: list[str]) -> str:
    """The sorted members joined with ',' (`GetGangGroupId`)."""
    return ",".join(sorted(group))


def go_list(items: list[str]) -> str:
    """A string slice as Go's `%v` prints it: `[a b]`."""
    return "[" + " ".join(items) + "]"


def _parse_int(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


def _group_slice(text: str) -> list[str]:
    if not text:
        return []
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return []
    return [str(v) for v in value] if isinstance(value, list) else []


@dataclass(slots=True, eq=False)
class GangGroupInfo:
    """State shared by the gangs of one group (`ganggroup.go` GangGroupInfo).

    `representative` is the key of the one member PreEnqueue lets into the active queue
    (`RecordIfNoRepresentatives`); the others are gated until that member starts the group's
    scheduling context, which then pulls them through NextPod. It is cleared when the
    representative enters scheduling (`ClearCurrentRepresentative`), is bound or deleted, or
    fails the basic gang check (`DeleteIfRepresentative`).
    """

    group_id: str
    group: list[str] = field(default_factory=list)
    once_satisfied: bool = False
    representative: str = ""
    # Gangs of the group with members waiting at Permit (`WaitingGangIDs`): all of them when one
    # waits (AddWaitingGang), one removed when its last waiting member leaves, all at a rejection.
    waiting_gangs: set[str] = field(default_factory=set)
    # The uids of the members that waited when the group was allowed (`BindingMemberPods`): what
    # PreBind writes as the member count; cleared once no gang of the group waits any more.
    binding_members: set[str] = field(default_factory=set)

    def remove_waiting_gang(self, gang: str) -> None:
        """`RemoveWaitingGang`."""
        self.waiting_gangs.discard(gang)
        if not self.waiting_gangs:
            self.binding_members = set()

    def clear_waiting_gangs(self) -> None:
        """`ClearWaitingGang`."""
        self.waiting_gangs = set()
        self.binding_members = set()

    def json(self) -> dict[str, Any]:
        """The GangGroupInfo as koord-scheduler's GangSummary embeds it (Go field names, sets as maps)."""
        return {
            "Initialized": True,
            "GangGroupId": self.group_id,
            "GangGroup": list(self.group),
            "OnceResourceSatisfied": self.once_satisfied,
            "WaitingGangIDs": {g: {} for g in sorted(self.waiting_gangs)},
            "RepresentativePodKey": self.representative,
            "BindingMemberPods": {u: {} for u in sorted(self.binding_members)} or None,
        }

    def record_if_no_representative(self, key: str) -> str:
        """`RecordIfNoRepresentatives`: the representative, which is `key` if there was none."""
        if not self.representative:
            self.representative = key
        return self.representative

    def delete_if_representative(self, key: str) -> None:
        """`DeleteIfRepresentative`."""
        if self.representative == key:
            self.representative = ""


@dataclass(slots=True, eq=False)
class Gang:
    """One gang: its settings, children by state, and where it came from."""

    name: str
    wait_time: float = 0.0
    create_time: float | None = None
    mode: str = GANG_MODE_STRICT
    min_required: int = 0
    total_children: int = 0
    group: list[str] = field(default_factory=list)
    match_policy: str = MATCH_ONCE_SATISFIED
    gang_from: str = GANG_FROM_ANNOTATION
    has_init: bool = False
    group_info: GangGroupInfo | None = None
    children: dict[str, Pod] = field(default_factory=dict)
    pending: dict[str, Pod] = field(default_factory=dict)
    waiting: dict[str, Pod] = field(default_factory=dict)
    bound: dict[str, Pod] = field(default_factory=dict)
    assumed_at: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.group:
            self.group = [self.name]

    @property
    def group_id(self) -> str:
        """The gang group's id."""
        return gang_group_id(self.group)

    @property
    def once_satisfied(self) -> bool:
        """Whether the group was once satisfied (irreversible)."""
        return self.group_info is not None and self.group_info.once_satisfied

    def _common(self, annotations: dict[str, str], default_policy: str) -> None:
        total = _parse_int(annotations.get(ANNOTATION_GANG_TOTAL_NUM, "") or "0")
        self.total_children = self.min_required if not total or total < self.min_required else total
        mode = annotations.get(ANNOTATION_GANG_MODE, "") or GANG_MODE_STRICT
        self.mode = mode if mode in (GANG_MODE_STRICT, GANG_MODE_NON_STRICT) else GANG_MODE_STRICT
        policy = match_policy_of(annotations) or default_policy
        self.match_policy = policy if policy in MATCH_POLICIES else default_policy
        group = _group_slice(annotations.get(ANNOTATION_GANG_GROUPS, ""))
        self.group = sorted(group) if group else [self.name]

    def init_from_pod(self, pod: Pod, default_timeout: float, default_policy: str) -> bool:
        """`tryInitByPodConfig`: once, from the first member with a valid min-available."""
        if self.has_init:
            return False
        text = pod.labels.get("pod-group.scheduling.sigs.k8s.io/min-available") or pod.annotations.get(ANNOTATION_GANG_MIN_NUM)
        if text is None:
            return False
        minimum = _parse_int(text)
        if minimum is None:
            return False
        self.min_required = minimum
        self._common(pod.annotations, default_policy)
        self.create_time = pod.meta.creation_timestamp
        wait_text = pod.annotations.get(ANNOTATION_GANG_WAIT_TIME, "")
        nanos = parse_duration(wait_text) if wait_text else 0
        self.wait_time = default_timeout if not nanos or nanos < 0 else nanos / 1e9
        self.gang_from = GANG_FROM_ANNOTATION
        self.has_init = True
        return True

    def init_from_pod_group(self, pg: PodGroup, default_timeout: float, default_policy: str) -> None:
        """`tryInitByPodGroup`: a PodGroup always (re)defines its gang."""
        self.min_required = pg.min_member
        self._common(pg.meta.annotations, default_policy)
        self.create_time = pg.meta.creation_timestamp
        timeout = pg.schedule_timeout_seconds
        self.wait_time = float(timeout) if timeout is not None and timeout > 0 else default_timeout
        self.gang_from = GANG_FROM_POD_GROUP
        self.has_init = True

    # ----- children ------------------------------------------------------------------------------
    def set_child(self, pod: Pod) -> None:
        """A member seen (added or updated); unbound and not waiting means pending."""
        key = pod.key
        self.children[key] = pod
        if not pod.node_name and key not in self.waiting:
            self.pending[key] = pod

    def delete_child(self, pod: Pod) -> bool:
        """A member is gone; True when an annotation gang has no children left."""
        key = pod.key
        for bucket in (self.children, self.pending, self.waiting, self.bound):
            bucket.pop(key, None)
        self.assumed_at.pop(key, None)
        if self.group_info is not None:
            self.group_info.delete_if_representative(key)
            if not self.waiting:
                self.group_info.remove_waiting_gang(self.name)
        return self.gang_from == GANG_FROM_ANNOTATION and not self.children

    def add_assumed(self, pod: Pod, now: float) -> None:
        """The member passed Permit's count (waiting for the group)."""
        self.waiting[pod.key] = pod
        self.assumed_at[pod.key] = now
        self.pending.pop(pod.key, None)

    def del_assumed(self, pod: Pod) -> None:
        """The member left Permit without binding: pending again."""
        key = pod.key
        if self.waiting.pop(key, None) is not None:
            child = self.children.get(key)
            if child is not None:
                self.pending[key] = child
            if not self.waiting and self.group_info is not None:
                self.group_info.remove_waiting_gang(self.name)
        self.assumed_at.pop(key, None)

    def add_bound(self, pod: Pod) -> None:
        """The member is bound: the group is satisfied once and for all."""
        key = pod.key
        self.waiting.pop(key, None)
        self.pending.pop(key, None)
        self.assumed_at.pop(key, None)
        self.bound[key] = pod
        if self.group_info is not None:
            if not self.waiting:
                self.group_info.remove_waiting_gang(self.name)
            self.group_info.delete_if_representative(key)
            self.group_info.once_satisfied = True

    def valid_for_permit(self) -> bool:
        """`isGangValidForPermit`: enough members assumed, by the match policy."""
        if not self.has_init:
            return False
        if self.match_policy == MATCH_ONLY_WAITING:
            return len(self.waiting) >= self.min_required
        if self.match_policy == MATCH_WAITING_AND_RUNNING:
            return len(self.waiting) + len(self.bound) >= self.min_required
        return len(self.waiting) >= self.min_required or self.once_satisfied

    # ----- the REST shape --------------------------------------------------------------------
    def summary(self) -> dict[str, Any]:
        """The GangSummary JSON (`gang_summary.go`): waitTime in nanoseconds, pod sets as maps."""
        return {
            "name": self.name,
            "waitTime": round(self.wait_time * 1e9),
            "createTime": format_time(self.create_time) if self.create_time is not None else GO_ZERO_TIME,
            "mode": self.mode,
            "gangMatchPolicy": self.match_policy,
            "minRequiredNumber": self.min_required,
            "totalChildrenNum": self.total_children,
            "gangGroup": list(self.group),
            "children": {k: {} for k in sorted(self.children)},
            "pendingChildren": {k: {} for k in sorted(self.pending)},
            "waitingForBindChildren": {k: {} for k in sorted(self.waiting)},
            "boundChildren": {k: {} for k in sorted(self.bound)},
            "onceResourceSatisfied": self.once_satisfied,
            "gangGroupInfo": self.group_info.json() if self.group_info is not None else _NEW_GROUP_INFO,
            "gangFrom": self.gang_from,
            "hasGangInit": self.has_init,
        }


class GangCache:
    """Every gang and gang group, fed by pod and PodGroup events (`GangCache`)."""

    def __init__(self, default_timeout: float, default_policy: str, now: Callable[[], float] | None = None) -> None:
        self.default_timeout = default_timeout
        self.default_policy = default_policy
        self.now = now
        self.gangs: dict[str, Gang] = {}
        self.groups: dict[str, GangGroupInfo] = {}
        self.pod_groups: dict[str, PodGroup] = {}

    def get(self, gid: str) -> Gang | None:
        """A gang by `namespace/name`."""
        return self.gangs.get(gid)

    def of_pod(self, pod: Pod) -> Gang | None:
        """The gang of a pod, None when it has none or the gang is unknown."""
        name = gang_name(pod)
        return self.gangs.get(gang_id(pod.namespace, name)) if name else None

    def _group_info(self, gang: Gang) -> None:
        gid = gang.group_id
        info = self.groups.get(gid)
        if info is None:
            info = self.groups[gid] = GangGroupInfo(gid, list(gang.group))
        if gang.group_info is None or gang.group_info.group_id != gid:
            gang.group_info = info

    def _gang(self, gid: str) -> Gang:
        gang = self.gangs.get(gid)
        if gang is None:
            # NewGang: createTime is when the gang object is made, until a pod or PodGroup sets it.
            gang = self.gangs[gid] = Gang(gid, create_time=self.now() if self.now is not None else None)
        return gang

    def on_pod_group(self, pg: PodGroup) -> Gang:
        """A PodGroup added or updated."""
        self.pod_groups[pg.key] = pg
        gang = self._gang(pg.key)
        gang.init_from_pod_group(pg, self.default_timeout, self.default_policy)
        self._group_info(gang)
        return gang

    def on_pod(self, pod: Pod) -> Gang | None:
        """A pod added or updated; returns its gang."""
        name = gang_name(pod)
        if not name:
            return None
        gang = self._gang(gang_id(pod.namespace, name))
        if not pod.labels.get(POD_GROUP_LABEL):
            gang.init_from_pod(pod, self.default_timeout, self.default_policy)
        self._group_info(gang)
        gang.set_child(pod)
        if pod.node_name:
            gang.add_bound(pod)
        return gang

    def on_pod_delete(self, pod: Pod) -> None:
        """A pod deleted."""
        gang = self.of_pod(pod)
        if gang is None:
            return
        if gang.delete_child(pod):
            del self.gangs[gang.name]
            if not any(g in self.gangs for g in gang.group):
                self.groups.pop(gang.group_id, None)

    def group_gangs(self, gang: Gang) -> list[Gang | None]:
        """The gangs of a gang's group (None for members not known yet)."""
        return [self.gangs.get(g) for g in gang.group]


__all__ = ["GANG_FROM_ANNOTATION", "GANG_FROM_POD_GROUP", "Gang", "GangCache", "GangGroupInfo", "gang_group_id", "go_list"]
