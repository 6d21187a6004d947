"""Gangs: the PodGroup CRD (`scheduling.sigs.k8s.io/v1alpha1`) and Koordinator's gang annotations.

Facts from koordinator-sh/koordinator `apis/extension/coscheduling.go` and kubernetes-sigs/
scheduler-plugins `apis/scheduling/v1alpha1` (PodGroup `spec.minMember`,
`spec.scheduleTimeoutSeconds`, pods joined by the label `pod-group.scheduling.sigs.k8s.io`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scheduler.api.fields import fail, integer, join, mapping, string
from scheduler.api.meta import ObjectMeta, parse_meta
from scheduler.api.objects import Pod

GANG_PREFIX = "gang.scheduling.koordinator.sh"
ANNOTATION_GANG_NAME = GANG_PREFIX + "/name"
ANNOTATION_GANG_MIN_NUM = GANG_PREFIX + "/min-available"
ANNOTATION_GANG_WAIT_TIME = GANG_PREFIX + "/waiting-time"
ANNOTATION_GANG_TOTAL_NUM = GANG_PREFIX + "/total-number"
ANNOTATION_GANG_MODE = GANG_PREFIX + "/mode"
ANNOTATION_GANG_GROUPS = GANG_PREFIX + "/groups"
ANNOTATION_GANG_MATCH_POLICY = GANG_PREFIX + "/match-policy"
ANNOTATION_ALIAS_GANG_MATCH_POLICY = "pod-group.scheduling.sigs.k8s.io/match-policy"
POD_GROUP_LABEL = "pod-group.scheduling.sigs.k8s.io"
LIGHTWEIGHT_POD_GROUP_LABEL = "pod-group.scheduling.sigs.k8s.io/name"

GANG_MODE_STRICT = "Strict"
GANG_MODE_NON_STRICT = "NonStrict"
MATCH_ONLY_WAITING = "only-waiting"
MATCH_WAITING_AND_RUNNING = "waiting-and-running"
MATCH_ONCE_SATISFIED = "once-satisfied"
MATCH_POLICIES = (MATCH_ONLY_WAITING, MATCH_WAITING_AND_RUNNING, MATCH_ONCE_SATISFIED)

POD_GROUP_PHASES = ("", "Pending", "PreScheduling", "Scheduling", "Scheduled", "Running", "Finished", "Failed")


def gang_name(pod: Pod) -> str:
    """The gang a pod belongs to: PodGroup label first, then the lightweight label, then the annotation."""
    return (
        pod.labels.get(POD_GROUP_LABEL)
        or pod.labels.get(LIGHTWEIGHT_POD_GROUP_LABEL)
        or pod.annotations.get(ANNOTATION_GANG_NAME, "")
    )


def gang_id(namespace: str, name: str) -> str:
    """`namespace/name`, the key Koordinator uses for a gang (`util.GetId`)."""
    return f"{namespace}/{name}"


def match_policy_of(annotations: dict[str, str]) -> str:
    """The match-policy annotation, or its pod-group alias (`GetGangMatchPolicy`)."""
    return annotations.get(ANNOTATION_GANG_MATCH_POLICY) or annotations.get(ANNOTATION_ALIAS_GANG_MATCH_POLICY, "")


@dataclass(frozen=True, slots=True)
class PodGroup:
    """A scheduling.sigs.k8s.io/v1alpha1 PodGroup: the gang's size and timeout, and its status."""

    meta: ObjectMeta
    min_member: int
    schedule_timeout_seconds: int | None
    status: dict[str, Any]
    raw: dict[str, Any]

    @property
    def name(self) -> str:
        """metadata.name."""
        return self.meta.name

    @property
    def key(self) -> str:
        """`namespace/name`."""
        return gang_id(self.meta.namespace, self.meta.name)


def parse_pod_group(raw: Any, path: str = "") -> PodGroup:
    """Parse a PodGroup document; minMember must not be negative, phases must be known."""
    doc = mapping(raw, path)
    meta = parse_meta(doc.get("metadata"), join(path, "metadata"), namespaced=True)
    spec = mapping(doc.get("spec"), join(path, "spec"))
    sp = join(path, "spec")
    min_member = integer(spec.get("minMember"), join(sp, "minMember"), 0) or 0
    if min_member < 0:
        fail(join(sp, "minMember"), f"must be greater than or equal to 0, got {min_member}")
    timeout = integer(spec.get("scheduleTimeoutSeconds"), join(sp, "scheduleTimeoutSeconds"))
    if timeout is not None and timeout < 0:
        fail(join(sp, "scheduleTimeoutSeconds"), f"must be greater than or equal to 0, got {timeout}")
    status = mapping(doc.get("status"), join(path, "status"))
    phase = string(status.get("phase"), join(join(path, "status"), "phase"))
    if phase not in POD_GROUP_PHASES:
        fail(
            join(join(path, "status"), "phase"),
            f"unsupported value {phase!r}; valid: {', '.join(p for p in POD_GROUP_PHASES if p)}",
        )
    return PodGroup(meta, min_member, timeout, dict(status), doc)


__all__ = [
    "ANNOTATION_GANG_GROUPS",
    "ANNOTATION_GANG_MATCH_POLICY",
    "ANNOTATION_GANG_MIN_NUM",
    "ANNOTATION_GANG_MODE",
    "ANNOTATION_GANG_NAME",
    "ANNOTATION_GANG_TOTAL_NUM",
    "ANNOTATION_GANG_WAIT_TIME",
    "GANG_MODE_NON_STRICT",
    "GANG_MODE_STRICT",
    "MATCH_ONCE_SATISFIED",
    "MATCH_ONLY_WAITING",
    "MATCH_POLICIES",
    "MATCH_WAITING_AND_RUNNING",
    "POD_GROUP_LABEL",
    "PodGroup",
    "gang_id",
    "gang_name",
    "match_policy_of",
    "parse_pod_group",
]
