"""Koordinator's NUMA topology manager: merge the hint providers' NUMA hints under a node's policy.

Facts from koordinator-sh/koordinator `pkg/scheduler/frameworkext/topologymanager/` (manager.go
`Admit`, policy.go `mergeFilteredHints` / `mergePermutation` / `filterProvidersHints`,
policy_best_effort.go, policy_restricted.go, policy_single_numa_node.go, store.go) and
`pkg/util/bitmask`. A NUMA affinity is a bit mask (an int: bit i is NUMA node i). A hint provider
(NodeNUMAResource) offers, per resource, the masks it could allocate from; the policy merges one
hint per resource into the best affinity and admits the pod or says why not; the providers then
allocate on that affinity. The affinity is kept per node in the cycle state for Reserve and Score.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, Protocol

from scheduler.api.objects import Node, Pod
from scheduler.framework.types import CycleState, Status, unschedulable

POLICY_NONE = ""
POLICY_BEST_EFFORT = "BestEffort"
POLICY_RESTRICTED = "Restricted"
POLICY_SINGLE_NUMA_NODE = "SingleNUMANode"
EXCLUSIVE_REQUIRED = "Required"
EXCLUSIVE_PREFERRED = "Preferred"
STATUS_IDLE = "idle"
STATUS_SHARED = "shared"
STATUS_SINGLE = "single"
ERR_UNSATISFIED_NUMA_RESOURCE = "Unsatisfied NUMA {}"
ERR_NUMA_HINT_CANNOT_ALIGNED = "Unaligned NUMA Hint cause {}"
STORE_KEY = "koordinator.sh/topology-affinity-store"


@dataclass(frozen=True, slots=True)
class NUMATopologyHint:
    """`NUMATopologyHint`: an affinity mask (None: any NUMA node), whether it is preferred, whether
    it cannot hold the request (Unsatisfied), and its weight among equally wide masks."""

    mask: int | None = None
    preferred: bool = False
    unsatisfied: bool = False
    score: int = 0


def mask_of(nodes: Sequence[int]) -> int:
    """`bitmask.NewBitMask`."""
    out = 0
    for n in nodes:
        out |= 1 << n
    return out


def bits(mask: int) -> list[int]:
    """`GetBits`: the NUMA nodes of a mask, ascending."""
    return [i for i in range(mask.bit_length()) if mask >> i & 1]


def count(mask: int) -> int:
    """`Count`."""
    return mask.bit_count()


def narrower(a: int, b: int) -> bool:
    """`IsNarrowerThan`: fewer bits, or as many and the lower value."""
    if count(a) == count(b):
        return a < b
    return count(a) < count(b)


def mask_text(mask: int | None) -> str:
    """`bitMask.String()` as `%v` prints it: binary, zero-padded to an even width ("01", "11",
    "0101"); `<nil>` for no mask."""
    if mask is None:
        return "<nil>"
    for shift in range(62, 0, -2):
        if mask > 1 << shift:
            return format(mask, f"0{shift + 2}b")
    return format(mask, "02b")


def iterate_masks(nodes: Sequence[int]) -> Iterator[int]:
    """`bitmask.IterateBitMasks`: every non-empty subset, by size, then in list order."""
    for size in range(1, len(nodes) + 1):
        for combo in combinations(nodes, size):
            yield mask_of(combo)


class HintProvider(Protocol):
    """`NUMATopologyHintProvider`."""

    def get_pod_topology_hints(
        self, state: CycleState, pod: Pod, node: Node
    ) -> tuple[dict[str, list[NUMATopologyHint]] | None, Status]: ...

    def allocate_by_affinity(self, state: CycleState, affinity: NUMATopologyHint, pod: Pod, node: Node) -> Status: ...


@dataclass(slots=True)
class Store:
    """`topologymanager.Store`: the affinity chosen per node in this cycle."""

    affinity: dict[str, NUMATopologyHint] = field(default_factory=dict)

    def clone(self) -> Store:
        """Shared, as upstream's `Clone` returns itself."""
        return self


def init_store(state: CycleState) -> None:
    """`InitStore`."""
    state.write(STORE_KEY, Store())


def get_store(state: CycleState) -> Store:
    """`GetStore` (an empty one when PreFilter wrote none)."""
    store = state.get(STORE_KEY)
    return store if isinstance(store, Store) else Store()


def _check_exclusive(hint: NUMATopologyHint, exclusive: str, statuses: Sequence[str]) -> bool:
    """`checkExclusivePolicy`: with Required, a multi-NUMA affinity may not use a NUMA node held by
    single-NUMA pods, and a single-NUMA affinity may not use one shared by multi-NUMA pods."""
    if hint.mask is None:
        return False
    if exclusive == EXCLUSIVE_REQUIRED:
        nodes = bits(hint.mask)

        def status(i: int) -> str:
            return statuses[i] if i < len(statuses) else STATUS_IDLE

        if len(nodes) > 1:
            return not any(status(i) == STATUS_SINGLE for i in nodes)
        return status(nodes[0]) != STATUS_SHARED
    return True


def _merge_permutation(default: int, permutation: Sequence[NUMATopologyHint]) -> NUMATopologyHint:
    """`mergePermutation`: AND the masks; preferred when every hint is preferred and all masks are
    equal; unsatisfied when the AND is narrower than the widest mask or a hint was."""
    preferred, satisfied = True, True
    masks: list[int] = []
    widest = 0
    for hint in permutation:
        if hint.mask is not None:
            masks.append(hint.mask)
            if hint.mask != masks[0]:
                preferred = False
            widest = max(widest, count(hint.mask))
        if not hint.preferred:
            preferred = False
        if hint.unsatisfied:
            satisfied = False
    merged = default
    for m in masks:
        merged &= m
    satisfied = (not masks or widest == count(merged)) and satisfied
    return NUMATopologyHint(merged, preferred, not satisfied)


def _filter_providers_hints(
    providers_hints: Sequence[dict[str, list[NUMATopologyHint]] | None],
) -> tuple[list[list[NUMATopologyHint]], list[str], list[str]]:
    """`filterProvidersHints`: one hint list per resource (any-NUMA when a provider has no
    preference), the reasons for resources without any hint, and each resource's summary."""
    out: list[list[NUMATopologyHint]] = []
    reasons: list[str] = []
    summary: list[str] = []
    for hints in providers_hints:
        if not hints:
            out.append([NUMATopologyHint(preferred=True)])
            continue
        for resource, resource_hints in hints.items():
            if resource_hints is None:
                out.append([NUMATopologyHint(preferred=True)])
                continue
            if not resource_hints:
                out.append([NUMATopologyHint(unsatisfied=True)])
                reasons.append(ERR_UNSATISFIED_NUMA_RESOURCE.format(resource))
                continue
            summary.append(_summary(resource, resource_hints))
            out.append(resource_hints)
    return out, reasons, sorted(summary)


def _summary(resource: str, hints: Sequence[NUMATopologyHint]) -> str:
    """`getSummaryForResource`."""
    preferred = [mask_text(h.mask) for h in hints if not h.unsatisfied and h.preferred]
    possible = [mask_text(h.mask) for h in hints if not h.unsatisfied]
    return f"{resource} prefer [{' '.join(preferred)}] among [{' '.join(possible)}]"


def _permutations(lists: Sequence[Sequence[NUMATopologyHint]]) -> Iterator[list[NUMATopologyHint]]:
    """`iterateAllProviderTopologyHints`: every choice of one hint per list, the first list outermost."""
    if not lists:
        yield []
        return
    for hint in lists[0]:
        for rest in _permutations(lists[1:]):
            yield [hint, *rest]


def merge_filtered_hints(
    numa_nodes: Sequence[int], filtered: Sequence[Sequence[NUMATopologyHint]], exclusive: str, statuses: Sequence[str]
) -> NUMATopologyHint:
    """`mergeFilteredHints`: the best merged hint: preferred over not, then narrower, then (as wide)
    the higher score; the first found wins ties. The default is every NUMA node, not preferred."""
    default = mask_of(numa_nodes)
    best = NUMATopologyHint(default)
    for permutation in _permutations(filtered):
        merged = _merge_permutation(default, permutation)
        mask = merged.mask or 0
        if count(mask) == 0:
            continue
        preferred = merged.preferred and _check_exclusive(merged, exclusive, statuses)
        score = sum(h.score for h in permutation if h.mask is not None and h.mask == mask)
        merged = NUMATopologyHint(mask, preferred, merged.unsatisfied, score)
        best_mask = best.mask or 0
        if merged.preferred and not best.preferred:
            best = merged
            continue
        if not merged.preferred and best.preferred:
            continue
        if not narrower(mask, best_mask):
            if count(mask) == count(best_mask) and merged.score > best.score:
                best = merged
            continue
        best = merged
    return best


def merge(
    policy: str,
    numa_nodes: Sequence[int],
    providers_hints: Sequence[dict[str, list[NUMATopologyHint]] | None],
    exclusive: str,
    statuses: Sequence[str],
) -> tuple[NUMATopologyHint, bool, list[str]]:
    """`Policy.Merge` of the node's policy: (best hint, admit, reasons)."""
    filtered, reasons, summary = _filter_providers_hints(providers_hints)
    if policy == POLICY_BEST_EFFORT:
        best = merge_filtered_hints(numa_nodes, filtered, exclusive, statuses)
        if best.unsatisfied:
            best = NUMATopologyHint(mask_of(numa_nodes))
        return best, True, []
    if policy == POLICY_RESTRICTED:
        if reasons:
            return NUMATopologyHint(mask_of(numa_nodes)), False, reasons
        best = merge_filtered_hints(numa_nodes, filtered, exclusive, statuses)
        if not best.preferred:
            return best, False, [ERR_NUMA_HINT_CANNOT_ALIGNED.format(" & ".join(summary))]
        return best, True, []
    if policy == POLICY_SINGLE_NUMA_NODE:
        if reasons:
            return NUMATopologyHint(), False, reasons
        single = [[h for h in hints if h.preferred and (h.mask is None or count(h.mask) == 1)] for hints in filtered]
        best = merge_filtered_hints(numa_nodes, single, exclusive, statuses)
        if best.mask == mask_of(numa_nodes):
            best = NUMATopologyHint(preferred=best.preferred)
        if not best.preferred:
            return best, False, [ERR_NUMA_HINT_CANNOT_ALIGNED.format(",".join(summary))]
        return best, True, []
    return NUMATopologyHint(), True, []


def admit(
    providers: Sequence[HintProvider],
    state: CycleState,
    pod: Pod,
    node: Node,
    numa_nodes: Sequence[int],
    policy: str,
    exclusive: str,
    statuses: Sequence[str],
    reuse: bool = True,
) -> Status:
    """`topologyManager.Admit`: merge the providers' hints (unless this node's affinity is already in
    the store and `reuse`), refuse with the policy's reasons, else let every provider allocate on the
    affinity and keep it for the node."""
    store = get_store(state)
    known = store.affinity.get(node.name)
    if known is not None and reuse:
        return _allocate(providers, state, known, pod, node)
    hints: list[dict[str, list[NUMATopologyHint]] | None] = []
    reasons: list[str] = []
    for provider in providers:
        found, status = provider.get_pod_topology_hints(state, pod, node)
        if not status.success:
            reasons.append(status.message)
            continue
        hints.append(found)
    if reasons:
        best, admitted = NUMATopologyHint(), False
    else:
        best, admitted, reasons = merge(policy, numa_nodes, hints, exclusive, statuses)
    if not admitted and reasons:
        return unschedulable(*reasons)
    status = _allocate(providers, state, best, pod, node)
    if not status.success:
        return status
    store.affinity[node.name] = best
    return status


def _allocate(providers: Sequence[HintProvider], state: CycleState, affinity: NUMATopologyHint, pod: Pod, node: Node) -> Status:
    for provider in providers:
        status = provider.allocate_by_affinity(state, affinity, pod, node)
        if not status.success:
            return status
    return Status()


def hint_providers(handle: Any, fallback: HintProvider) -> list[HintProvider]:
    """The profile's plugins that provide NUMA hints (`GetNUMATopologyHintProvider`), in the order
    they were built; `fallback` alone when the handle has no framework (unit tests)."""
    framework = getattr(handle, "framework", None)
    plugins: dict[str, Any] = getattr(framework, "plugins", None) or {}
    found = [
        p
        for p in plugins.values()
        if callable(getattr(p, "get_pod_topology_hints", None)) and callable(getattr(p, "allocate_by_affinity", None))
    ]
    return found or [fallback]


__all__ = [
    "EXCLUSIVE_PREFERRED",
    "EXCLUSIVE_REQUIRED",
    "POLICY_BEST_EFFORT",
    "POLICY_NONE",
    "POLICY_RESTRICTED",
    "POLICY_SINGLE_NUMA_NODE",
    "STATUS_IDLE",
    "STATUS_SHARED",
    "STATUS_SINGLE",
    "HintProvider",
    "NUMATopologyHint",
    "Store",
    "admit",
    "bits",
    "count",
    "get_store",
    "hint_providers",
    "init_store",
    "iterate_masks",
    "mask_of",
    "mask_text",
    "merge",
    "merge_filtered_hints",
    "narrower",
]
