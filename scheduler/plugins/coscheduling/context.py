"""The gang scheduling context: one gang group scheduled back to back (`core/gang_context.go`).

koord-scheduler holds at most one GangSchedulingContext. It is set when the first member of a
group passes BeforePreFilter; while it is set, the scheduler's NextPod asks Coscheduling first,
which hands out the group's pending members that were not attempted in this context yet, before
any other pod of the queue. The first member whose cycle fails records the group's failure
message (`summaryAndRecordFailedMessage`); the members pulled after it are turned away with that
message at BeforePreFilter. The context is cleared when the group passes Permit
(`SucceedGangScheduling`), when its gang is gone, or when every pending member was attempted
(NextPod then rejects the group's waiting members).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from scheduler.api.objects import Pod

REASON_GANG_IS_NIL = "gang is nil, may be already deleted"
REASON_ALL_PENDING_PODS_ATTEMPTED = "all pending pods is already been attempted"
ERR_POD_HAS_NOT_BEEN_ATTEMPTED = "gangGroup {} is scheduling and this pod has not been attempted"
ERR_REPRESENTATIVE_EXISTS = "representative pod {} of gangGroupID {} already exists"
ERR_POD_NOT_IN_GANG_CACHE = "pod {} is not exists in gangCache"


@dataclass(slots=True, eq=False)
class GangSchedulingContext:
    """The group being scheduled now, the members attempted in it and its failure, if any."""

    first_pod: Pod
    gang_group: frozenset[str]
    gang_group_id: str
    started: float
    attempted: set[str] = field(default_factory=set)
    failed_message: str = ""

    def __post_init__(self) -> None:
        self.attempted.add(self.first_pod.key)


__all__ = [
    "ERR_POD_HAS_NOT_BEEN_ATTEMPTED",
    "ERR_POD_NOT_IN_GANG_CACHE",
    "ERR_REPRESENTATIVE_EXISTS",
    "REASON_ALL_PENDING_PODS_ATTEMPTED",
    "REASON_GANG_IS_NIL",
    "GangSchedulingContext",
]
