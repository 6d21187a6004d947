"""The Workload API (`scheduling.k8s.io/v1alpha1`, gate GenericWorkload, alpha in v1.35) and pods'
`spec.workloadRef`.

Facts from kubernetes/kubernetes `staging/src/k8s.io/api/scheduling/v1alpha1/types.go` and
`core/v1/types.go` (`WorkloadReference`) at v1.35.4: a Workload lists up to 8 pod groups, each
with a `basic` or a `gang` policy (`minCount`); a pod names its Workload, its pod group and,
optionally, a replica key (each replica of a pod group is its own gang).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scheduler.api.fields import fail, integer, join, mapping, sequence, string
from scheduler.api.meta import ObjectMeta, parse_meta

API_VERSION = "scheduling.k8s.io/v1alpha1"
KIND = "Workload"
MAX_POD_GROUPS = 8
"""`WorkloadMaxPodGroups`."""


@dataclass(frozen=True, slots=True)
class PodGroupPolicy:
    """One pod group of a Workload: `gang` with its minCount, or `basic` (min_count None)."""

    name: str
    min_count: int | None


@dataclass(frozen=True, slots=True)
class Workload:
    """A scheduling.k8s.io/v1alpha1 Workload."""

    meta: ObjectMeta
    pod_groups: tuple[PodGroupPolicy, ...]

    @property
    def namespace(self) -> str:
        """metadata.namespace."""
        return self.meta.namespace

    @property
    def name(self) -> str:
        """metadata.name."""
        return self.meta.name

    def policy(self, pod_group: str) -> PodGroupPolicy | None:
        """The named pod group (`podGroupPolicy`), None when the Workload has none of that name."""
        return next((g for g in self.pod_groups if g.name == pod_group), None)


def parse_workload(raw: Any, path: str = "") -> Workload:
    """A Workload document; refuses what the API server's validation refuses for the fields read here."""
    doc = mapping(raw, path)
    meta = parse_meta(doc.get("metadata"), join(path, "metadata"), True)
    spec_path = join(path, "spec")
    spec = mapping(doc.get("spec"), spec_path)
    groups_path = join(spec_path, "podGroups")
    items = sequence(spec.get("podGroups"), groups_path)
    if not items:
        fail(groups_path, "Required value")
    if len(items) > MAX_POD_GROUPS:
        fail(groups_path, f"Too many: {len(items)}: must have at most {MAX_POD_GROUPS} items")
    groups: list[PodGroupPolicy] = []
    for i, item in enumerate(items):
        where = join(groups_path, i)
        data = mapping(item, where)
        name = string(data.get("name"), join(where, "name"))
        if not name:
            fail(join(where, "name"), "Required value")
        if any(g.name == name for g in groups):
            fail(join(where, "name"), f'Duplicate value: "{name}"')
        policy_path = join(where, "policy")
        policy = mapping(data.get("policy"), policy_path)
        gang, basic = policy.get("gang"), policy.get("basic")
        if (gang is None) == (basic is None):
            fail(policy_path, "must specify exactly one of: `basic`, `gang`")
        min_count = None
        if gang is not None:
            gang_path = join(policy_path, "gang")
            min_count = integer(mapping(gang, gang_path).get("minCount"), join(gang_path, "minCount"))
            if min_count is None or min_count <= 0:
                fail(join(gang_path, "minCount"), f"Invalid value: {min_count}: must be greater than zero")
        groups.append(PodGroupPolicy(name, min_count))
    return Workload(meta, tuple(groups))
