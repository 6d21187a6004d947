"""Shared pieces of PodTopologySpread: parsed constraints, node inclusion, pod counting, domains.

Upstream: `pkg/scheduler/framework/plugins/podtopologyspread/common.go` and
`pkg/scheduler/framework/plugins/helper/spread.go` (`DefaultSelector`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from scheduler.api.affinity import TopologySpreadConstraint
from scheduler.api.objects import Node, Pod
from scheduler.api.selectors import LabelSelector, Requirement, tolerates_all
from scheduler.api.workloads import CONTROLLER_API_VERSIONS
from scheduler.cluster.contract import PluginCluster
from scheduler.framework.nodeinfo import NodeInfo, PodInfo

if TYPE_CHECKING:
    from scheduler.framework.snapshot import Snapshot

HOSTNAME_LABEL = "kubernetes.io/hostname"
ZONE_LABEL = "topology.kubernetes.io/zone"
DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"
SYSTEM_DEFAULTING = "System"
LIST_DEFAULTING = "List"
MAX_INT32 = 2**31 - 1

ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"

# The taint effects the TaintToleration filter enforces (`helper.DoNotScheduleTaintsFilterFunc`).
_DO_NOT_SCHEDULE_EFFECTS = ("NoSchedule", "NoExecute")

SYSTEM_DEFAULT_CONSTRAINTS: tuple[TopologySpreadConstraint, ...] = (
    TopologySpreadConstraint(
        max_skew=3,
        topology_key=HOSTNAME_LABEL,
        when_unsatisfiable=SCHEDULE_ANYWAY,
        selector=None,
        min_domains=None,
        node_affinity_policy=HONOR,
        node_taints_policy=IGNORE,
        match_label_keys=(),
    ),
    TopologySpreadConstraint(
        max_skew=5,
        topology_key=ZONE_LABEL,
        when_unsatisfiable=SCHEDULE_ANYWAY,
        selector=None,
        min_domains=None,
        node_affinity_policy=HONOR,
        node_taints_policy=IGNORE,
        match_label_keys=(),
    ),
)
"""`systemDefaultConstraints`: hostname maxSkew 3 and zone maxSkew 5, both ScheduleAnyway."""


@dataclass(frozen=True, slots=True)
class Constraint:
    """A spread constraint with its selector resolved (`topologySpreadConstraint`).

    `selector` None stands for `labels.Nothing()` (a nil labelSelector): it matches no pod.
    """

    max_skew: int
    topology_key: str
    selector: LabelSelector | None
    min_domains: int
    node_affinity_policy: str
    node_taints_policy: str

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether the selector selects a pod with these labels."""
        return self.selector is not None and self.selector.matches(labels)


def merge_match_label_keys(
    selector: LabelSelector | None, keys: Iterable[str], pod_labels: Mapping[str, str]
) -> LabelSelector | None:
    """AND `key in (pod's value)` for each matchLabelKey the pod carries (`mergeLabelSetWithSelector`).

    A nil selector stays "nothing", as upstream keeps `labels.Nothing()` unchanged.
    """
    extra = {key: pod_labels[key] for key in keys if key in pod_labels}
    if not extra or selector is None:
        return selector
    merged = tuple(Requirement(k, "In", (v,)) for k, v in sorted(extra.items()))
    return LabelSelector(merged + selector.requirements)


def filter_constraints(
    constraints: Iterable[TopologySpreadConstraint], pod_labels: Mapping[str, str], action: str
) -> list[Constraint]:
    """The constraints whose whenUnsatisfiable is `action`, parsed (`filterTopologySpreadConstraints`)."""
    out = []
    for c in constraints:
        if c.when_unsatisfiable != action:
            continue
        selector = c.selector
        if c.match_label_keys:
            selector = merge_match_label_keys(selector, c.match_label_keys, pod_labels)
        out.append(
            Constraint(
                max_skew=c.max_skew,
                topology_key=c.topology_key,
                selector=selector,
                min_domains=c.min_domains if c.min_domains is not None else 1,
                node_affinity_policy=c.node_affinity_policy or HONOR,
                node_taints_policy=c.node_taints_policy or IGNORE,
            )
        )
    return out


NodeMatcher = Callable[[Node], bool]


def required_node_affinity(pod: Pod) -> NodeMatcher | None:
    """The pod's nodeSelector and required node affinity as one matcher; None matches every node.

    (`nodeaffinity.GetRequiredNodeAffinity`.)
    """
    node_selector = pod.node_selector
    required = pod.affinity.node_required if pod.affinity is not None else None
    if not node_selector and required is None:
        return None

    def match(node: Node) -> bool:
        labels = node.labels
        for key, value in node_selector.items():
            if labels.get(key) != value:
                return False
        return required is None or required.matches(labels, node.name)

    return match


def match_node_inclusion_policies(constraint: Constraint, pod: Pod, node: Node, require: NodeMatcher | None) -> bool:
    """Whether the node counts for this constraint under nodeAffinityPolicy / nodeTaintsPolicy."""
    if constraint.node_affinity_policy == HONOR and require is not None and not require(node):
        return False
    return not (
        constraint.node_taints_policy == HONOR
        and node.taints
        and tolerates_all(pod.tolerations, node.taints, _DO_NOT_SCHEDULE_EFFECTS) is not None
    )


def node_has_all_keys(labels: Mapping[str, str], constraints: Iterable[Constraint]) -> bool:
    """Whether the node carries every constraint's topology key (`nodeLabelsMatchSpreadConstraints`)."""
    return all(c.topology_key in labels for c in constraints)


def count_pods_match(pods: Iterable[PodInfo], selector: LabelSelector | None, namespace: str) -> int:
    """Pods of `namespace`, not terminating, that the selector selects (`countPodsMatchSelector`).

    A nil selector counts nothing; an empty selector (`{}`) counts every pod of the namespace, as
    upstream does since kubernetes/kubernetes#141340.
    """
    if selector is None:
        return 0
    count = 0
    for info in pods:
        pod = info.pod
        if pod.meta.deletion_timestamp is not None or pod.meta.namespace != namespace:
            continue
        if selector.matches(pod.meta.labels):
            count += 1
    return count


# ----- whole-snapshot masks and counts (PreFilter / PreScore) -----------------------------------

BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]


def node_rows(nodes: Sequence[NodeInfo], snapshot: Snapshot) -> IntArray:
    """The snapshot rows of these NodeInfos (which must belong to the snapshot)."""
    if nodes is snapshot.node_infos:
        return np.arange(len(nodes), dtype=np.int64)
    return np.fromiter((info.position for info in nodes), dtype=np.int64, count=len(nodes))


class InclusionMasks:
    """Per snapshot row, whether a node passes the pod's required node affinity / tolerates its taints."""

    __slots__ = ("_affinity", "_pod", "_snapshot", "_tolerated")

    def __init__(self, pod: Pod, snapshot: Snapshot) -> None:
        self._pod = pod
        self._snapshot = snapshot
        self._affinity: BoolArray | None = None
        self._tolerated: BoolArray | None = None

    def affinity(self) -> BoolArray:
        """Rows matching the pod's nodeSelector and required node affinity (cached per node generation)."""
        if self._affinity is None:
            pod, snapshot = self._pod, self._snapshot
            require = required_node_affinity(pod)
            if require is None:
                self._affinity = np.ones(snapshot.num_nodes, dtype=np.bool_)
            else:
                required = pod.affinity.node_required if pod.affinity is not None else None
                key = ("PodTopologySpread/affinity", frozenset(pod.node_selector.items()), required)

                def build() -> BoolArray:
                    return np.fromiter(
                        (require(info.node) for info in snapshot.node_infos), dtype=np.bool_, count=snapshot.num_nodes
                    )

                cached = snapshot.cached(key, build)
                assert isinstance(cached, np.ndarray)
                self._affinity = cached
        return self._affinity

    def tolerated(self) -> BoolArray:
        """Rows whose NoSchedule/NoExecute taints the pod all tolerates."""
        if self._tolerated is None:
            ids, groups = self._snapshot.taint_groups()
            tolerations = self._pod.tolerations
            ok = np.fromiter(
                (not taints or tolerates_all(tolerations, taints, _DO_NOT_SCHEDULE_EFFECTS) is None for taints in groups),
                dtype=np.bool_,
                count=len(groups),
            )
            self._tolerated = ok[ids] if len(groups) else np.ones(self._snapshot.num_nodes, dtype=np.bool_)
        return self._tolerated

    def mask(self, constraint: Constraint) -> BoolArray:
        """Rows that count for this constraint under its node inclusion policies."""
        out = np.ones(self._snapshot.num_nodes, dtype=np.bool_)
        if constraint.node_affinity_policy == HONOR:
            out &= self.affinity()
        if constraint.node_taints_policy == HONOR:
            out &= self.tolerated()
        return out


def match_counts(
    infos: Sequence[NodeInfo], indices: IntArray, selectors: Sequence[LabelSelector | None], namespace: str
) -> list[IntArray]:
    """Per selector, the matching pods (`count_pods_match`) on `infos[j]` for j in indices, 0 elsewhere.

    Each pod is read once and tested against each distinct selector.
    """
    distinct = list(dict.fromkeys(selectors))
    tallies = [np.zeros(len(infos), dtype=np.int64) for _ in distinct]
    live = [(k, selector) for k, selector in enumerate(distinct) if selector is not None]
    if live:
        for j in indices.tolist():
            pods = infos[j].pods
            if not pods:
                continue
            found = [0] * len(live)
            for info in pods:
                meta = info.pod.meta
                if meta.deletion_timestamp is not None or meta.namespace != namespace:
                    continue
                for m, (_, selector) in enumerate(live):
                    if selector.matches(meta.labels):
                        found[m] += 1
            for m, (k, _) in enumerate(live):
                tallies[k][j] = found[m]
    slot = {selector: k for k, selector in enumerate(distinct)}
    return [tallies[slot[selector]] for selector in selectors]


def _own_nodes(nodes: Sequence[NodeInfo], snapshot: Snapshot) -> bool:
    """Whether every NodeInfo is the snapshot's own one at its row (so its counters describe it)."""
    if nodes is snapshot.node_infos:
        return True
    infos = snapshot.node_infos
    return all(0 <= info.position < len(infos) and infos[info.position] is info for info in nodes)


def selected_counts(
    snapshot: Snapshot,
    nodes: Sequence[NodeInfo],
    rows: IntArray,
    indices: IntArray,
    selectors: Sequence[LabelSelector | None],
    namespace: str,
) -> list[IntArray]:
    """`match_counts`, read from the snapshot's selector counters instead of walking pods.

    `rows[j]` is the snapshot row of `nodes[j]`. Nodes that are not the snapshot's own
    NodeInfos (clones, foreign lists) fall back to the per-node walk.
    """
    if not _own_nodes(nodes, snapshot):
        return match_counts(nodes, indices, selectors, namespace)
    picked = rows[indices]
    out = []
    for selector in selectors:
        tally = np.zeros(len(nodes), dtype=np.int64)
        if selector is not None:
            tally[indices] = snapshot.selector_counts(namespace, selector)[picked]
        out.append(tally)
    return out


def add_counts(domains: Domains, slots: IntArray, counts: IntArray) -> None:
    """Mark these slots as domains and add the counts to them."""
    if slots.size == 0:
        return
    domains.present[slots] = True
    domains.counts += np.bincount(slots, weights=counts, minlength=len(domains.counts)).astype(np.int64)


# ----- default constraints' selector ---------------------------------------------------------

_CONTROLLER_LISTERS = {
    "ReplicationController": "list_replication_controllers",
    "ReplicaSet": "list_replica_sets",
    "StatefulSet": "list_stateful_sets",
}


def _object_name(obj: Any) -> str | None:
    name = getattr(obj, "name", None)
    if isinstance(name, str):
        return name
    meta = getattr(obj, "meta", None)
    name = getattr(meta, "name", None)
    return name if isinstance(name, str) else None


def _list(cluster: PluginCluster, method: str, namespace: str) -> list[Any]:
    lister = getattr(cluster, method, None)
    if not callable(lister):
        return []
    return list(lister(namespace) or ())


def default_selector(pod: Pod, cluster: PluginCluster | None) -> LabelSelector:
    """The selector default constraints use (`helper.DefaultSelector`).

    It ANDs the selectors of the Services in the pod's namespace that select the pod and, when
    the pod's controller (the owner reference with `controller: true`) is a v1
    ReplicationController or an apps/v1 ReplicaSet or StatefulSet, that controller's selector
    (found by name in the pod's namespace). Without a cluster backend, or one lacking the
    listers, the selector is empty and default constraints do not apply.
    """
    if cluster is None:
        return LabelSelector(())
    requirements: list[Requirement] = []
    for service in _list(cluster, "list_services", pod.namespace):
        selector = getattr(service, "selector", None)
        # A Service with a nil selector selects nothing, not everything.
        if isinstance(selector, LabelSelector) and selector.matches(pod.labels):
            requirements.extend(selector.requirements)
    owner = pod.meta.controller_ref()
    if owner is not None and CONTROLLER_API_VERSIONS.get(owner.kind) == owner.api_version:
        for obj in _list(cluster, _CONTROLLER_LISTERS[owner.kind], pod.namespace):
            selector = getattr(obj, "selector", None)
            if _object_name(obj) == owner.name and isinstance(selector, LabelSelector):
                requirements.extend(selector.requirements)
                break
    return LabelSelector(tuple(dict.fromkeys(requirements)))


# ----- scoring arithmetic ------------------------------------------------------------------


def topology_normalizing_weight(size: int) -> float:
    """`log(size + 2)`: the weight of one pod in a topology with `size` domains."""
    return math.log(float(size + 2))


def score_for_count(count: int, max_skew: int, weight: float) -> float:
    """`count * weight + (maxSkew - 1)`: the raw score one constraint gives a domain."""
    return float(count) * weight + float(max_skew - 1)


def round_half_away(value: float) -> int:
    """Go's `math.Round` exactly (half away from zero, no `x + 0.5` rounding error)."""
    whole = math.trunc(value)
    if abs(value - whole) >= 0.5:
        whole += 1 if value > 0 else -1
    return int(whole)


def round_half_away_array(values: npt.NDArray[np.float64]) -> npt.NDArray[np.int64]:
    """`round_half_away` over an array (the difference `x - trunc(x)` is exact in floating point)."""
    whole = np.trunc(values)
    bump = np.where(np.abs(values - whole) >= 0.5, np.sign(values), 0.0)
    return (whole + bump).astype(np.int64)


# ----- per-constraint domain tables ----------------------------------------------------------


class Domains:
    """Matching-pod counts per topology value of one constraint, laid out by the snapshot's label codes.

    Slot `i < len(values)` is the value the snapshot's `label_codes(key)` codes as `i`, so a batch
    can index counts by node code directly; values the snapshot never saw get extra slots.
    `present[i]` says the value is a domain (upstream: it is a key of the per-value map).
    """

    __slots__ = ("counts", "extra", "present", "values")

    def __init__(self, values: dict[str, int]) -> None:
        self.values = values  # the snapshot's dict: read only, never mutated here
        self.extra: dict[str, int] = {}
        self.counts = np.zeros(len(values), dtype=np.int64)
        self.present = np.zeros(len(values), dtype=np.bool_)

    def lookup(self, value: str) -> int | None:
        """The slot of a topology value, or None when it has none."""
        slot = self.values.get(value)
        return slot if slot is not None else self.extra.get(value)

    def slot(self, value: str) -> int:
        """The slot of a topology value, adding one when the value is new."""
        found = self.lookup(value)
        if found is not None:
            return found
        slot = len(self.counts)
        self.extra[value] = slot
        self.counts = np.append(self.counts, np.int64(0))
        self.present = np.append(self.present, False)
        return slot

    def count_of(self, value: str) -> int:
        """The count of a topology value (0 when it is not a domain)."""
        slot = self.lookup(value)
        return 0 if slot is None else int(self.counts[slot])

    def slots_for(self, codes: npt.NDArray[np.int32], values: dict[str, int]) -> npt.NDArray[np.int64]:
        """Slots for nodes given their label codes in `values` (-1 where the node has no slot)."""
        if values is self.values:
            return codes.astype(np.int64)
        # The snapshot re-coded its labels since this table was built: translate value by value.
        translate = np.full(len(values) + 1, -1, dtype=np.int64)
        for value, code in values.items():
            slot = self.lookup(value)
            if slot is not None:
                translate[code] = slot
        return translate[codes]

    def counts_at(self, slots: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """Counts at these slots, 0 where the slot is -1."""
        padded = np.append(self.counts, np.int64(0))
        return padded[slots]

    def clone(self) -> Domains:
        """A copy whose counts can change independently."""
        twin = Domains.__new__(Domains)
        twin.values = self.values
        twin.extra = dict(self.extra)
        twin.counts = self.counts.copy()
        twin.present = self.present.copy()
        return twin
