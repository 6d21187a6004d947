"""The CPU accumulator, cases from koordinator-sh/koordinator
`pkg/scheduler/plugins/nodenumaresource/cpu_accumulator_test.go`."""

from __future__ import annotations

import pytest

from scheduler.api.koordinator import parse_cpuset
from scheduler.plugins.nodenumaresource.accumulator import (
    FULL_PCPUS,
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    SPREAD_BY_PCPUS,
    CPUAllocationError,
    _Accumulator,
    take_cpus,
    take_preferred_cpus,
)
from scheduler.plugins.nodenumaresource.topology import (
    EXCLUSIVE_NONE,
    EXCLUSIVE_NUMA,
    EXCLUSIVE_PCPU,
    AllocatedCPU,
    CPUTopology,
    NodeAllocation,
    PodAllocation,
)
from tests.plugins.nodenumaresource.helpers import build_topology


def _take(
    topo: CPUTopology,
    allocated: str,
    needed: int,
    policy: str,
    strategy: str,
    exclusive: str = EXCLUSIVE_NONE,
    allocated_policy: str = "",
) -> frozenset[int]:
    taken = parse_cpuset(allocated)
    details = {c: AllocatedCPU(topo.details[c], 0, allocated_policy) for c in taken}
    return take_cpus(topo, 1, topo.cpus() - taken, details, needed, policy, exclusive, strategy)


FULL_MOST = [
    ("allocate on non-NUMA node", (1, 1, 4, 2), "", 2, "0-1"),
    ("with allocated cpus", (1, 1, 4, 2), "0-1", 2, "2-3"),
    ("allocate whole socket", (2, 1, 4, 2), "", 8, "0-7"),
    ("allocate across socket", (2, 1, 4, 2), "", 12, "0-11"),
    ("allocate whole socket with partially-allocated socket", (2, 1, 4, 2), "0-1", 8, "8-15"),
    ("allocate in the smallest idle socket", (2, 2, 4, 2), "0-5,16-23", 6, "24-29"),
    ("allocate the most of CPUs on the same socket", (2, 2, 4, 2), "0-5,16-23", 12, "6-15,24-25"),
    ("allocate from first socket", (2, 2, 4, 2), "0-3,8-11", 4, "4-7"),
    ("allocate with less spread cpus", (2, 2, 2, 2), "0,2,4,8,12", 4, "10,11,14,15"),
    ("allocate with the most spread cpus", (2, 2, 2, 2), "0,2,4,8,10,12", 6, "5,6,7,13,14,15"),
    (
        "allocate with the most spread cpus on the smallest idle cpus socket",
        (2, 2, 2, 2),
        "0,2,4,8,9,10,12",
        6,
        "6,7,11,13,14,15",
    ),
]
FULL_LEAST = [
    ("allocate on non-NUMA node", (1, 1, 4, 2), "", 2, "0-1"),
    ("with allocated cpus", (1, 1, 4, 2), "0-1", 2, "2-3"),
    ("allocate whole socket", (2, 1, 4, 2), "", 8, "0-7"),
    ("allocate across socket", (2, 1, 4, 2), "", 12, "0-11"),
    ("allocate whole socket with partially-allocated socket", (2, 1, 4, 2), "0-1", 8, "8-15"),
    ("allocate in the most idle socket", (2, 2, 4, 2), "0-5,16-23", 6, "8-13"),
    ("allocate the most of CPUs on the same socket", (2, 2, 4, 2), "0-5,16-23", 12, "6-15,24-25"),
    ("allocate from second socket", (2, 2, 4, 2), "0-3,8-11", 4, "16-19"),
    ("allocate with less spread cpus", (2, 2, 2, 2), "0,2,4,8,12", 4, "10,11,14,15"),
    ("allocate with the less spread cpus 2", (2, 2, 2, 2), "0,2,4,8,10,12", 6, "1,3,6,7,14,15"),
    ("allocate with the most spread cpus on the most idle cpus socket 3", (2, 2, 4, 2), "0,2,4,8,9,10,12", 6, "16-21"),
]
SPREAD_MOST = [
    ("allocate on non-NUMA node", (1, 1, 4, 2), "", 4, "0,2,4,6"),
    ("allocate satisfied the partially-allocated socket", (2, 1, 4, 2), "0,2", 4, "1,3,4,6"),
    ("allocate cpus on full-free socket", (2, 1, 4, 2), "0-3", 4, "8,10,12,14"),
    ("allocate most of CPUs in the same socket and overlapped-cores", (2, 1, 4, 2), "0,2", 6, "1,3-7"),
]
SPREAD_LEAST = [
    ("allocate on non-NUMA node", (1, 1, 4, 2), "", 4, "0,2,4,6"),
    ("allocate satisfied the partially-allocated socket", (2, 1, 4, 2), "0,2", 4, "8,10,12,14"),
    ("allocate cpus on full-free socket", (2, 1, 4, 2), "0-3", 4, "8,10,12,14"),
    ("allocate most of CPUs in the same socket and overlapped-cores", (2, 1, 4, 2), "0,2", 6, "8-12,14"),
]
TABLE = (
    [(f"FullPCPUs/MostAllocated: {n}", shape, a, k, w, FULL_PCPUS, MOST_ALLOCATED) for n, shape, a, k, w in FULL_MOST]
    + [(f"FullPCPUs/LeastAllocated: {n}", shape, a, k, w, FULL_PCPUS, LEAST_ALLOCATED) for n, shape, a, k, w in FULL_LEAST]
    + [
        (f"SpreadByPCPUs/MostAllocated: {n}", shape, a, k, w, SPREAD_BY_PCPUS, MOST_ALLOCATED)
        for n, shape, a, k, w in SPREAD_MOST
    ]
    + [
        (f"SpreadByPCPUs/LeastAllocated: {n}", shape, a, k, w, SPREAD_BY_PCPUS, LEAST_ALLOCATED)
        for n, shape, a, k, w in SPREAD_LEAST
    ]
)


@pytest.mark.parametrize(
    ("shape", "allocated", "needed", "want", "policy", "strategy"), [c[1:] for c in TABLE], ids=[c[0] for c in TABLE]
)
def test_take_cpus(shape: tuple[int, int, int, int], allocated: str, needed: int, want: str, policy: str, strategy: str) -> None:
    assert _take(build_topology(*shape), allocated, needed, policy, strategy) == parse_cpuset(want)


EXCLUSIVE = [
    ("allocate cpus on full-free socket with PCPULevel", (2, 1, 4, 2), "", "", "", 4, "8,10,12,14", "0,2"),
    ("allocate overlapped cpus with PCPULevel", (2, 1, 4, 2), "", "", "", 10, "0-4,6,8,10,12,14", ""),
    ("allocate cpus on large-size partially-allocated socket with PCPULevel", (2, 1, 8, 2), "", "", "", 4, "4,6,8,10", "0,2"),
    ("allocate cpus with none exclusive policy", (2, 1, 8, 2), "", EXCLUSIVE_NONE, "", 4, "1,3,4,6", "0,2"),
    (
        "allocate cpus on full-free socket with NUMANodeLevel",
        (2, 1, 4, 2),
        EXCLUSIVE_NUMA,
        EXCLUSIVE_NUMA,
        "",
        4,
        "8,10,12,14",
        "0,2",
    ),
    (
        "allocate cpus on partially-allocated socket without NUMANodeLevel",
        (2, 1, 4, 2),
        EXCLUSIVE_NUMA,
        EXCLUSIVE_NONE,
        "",
        4,
        "1,3,4,6",
        "0,2",
    ),
    (
        "allocate cpus on full-free socket with NUMANodeLevel with PCPUs",
        (2, 1, 4, 2),
        EXCLUSIVE_NUMA,
        EXCLUSIVE_NUMA,
        FULL_PCPUS,
        4,
        "8-11",
        "0,2",
    ),
    (
        "allocate cpus on partially-allocated socket without NUMANodeLevel with PCPUs",
        (2, 1, 4, 2),
        EXCLUSIVE_NUMA,
        EXCLUSIVE_NONE,
        FULL_PCPUS,
        4,
        "4-7",
        "0,2",
    ),
]


@pytest.mark.parametrize(
    ("shape", "allocated_policy", "exclusive", "bind", "needed", "want", "allocated"),
    [c[1:] for c in EXCLUSIVE],
    ids=[c[0] for c in EXCLUSIVE],
)
def test_take_cpus_with_exclusive_policy(
    shape: tuple[int, int, int, int], allocated_policy: str, exclusive: str, bind: str, needed: int, want: str, allocated: str
) -> None:
    # Empty policies mean the upstream test's defaults: held CPUs PCPULevel, the pod PCPULevel, SpreadByPCPUs.
    got = _take(
        build_topology(*shape),
        allocated,
        needed,
        bind or SPREAD_BY_PCPUS,
        MOST_ALLOCATED,
        exclusive or EXCLUSIVE_PCPU,
        allocated_policy or EXCLUSIVE_PCPU,
    )
    assert got == parse_cpuset(want)


@pytest.mark.parametrize("strategy", [MOST_ALLOCATED, LEAST_ALLOCATED])
def test_spread_order(strategy: str) -> None:
    topo = build_topology(2, 2, 4, 2)
    acc = _Accumulator(topo, 1, topo.cpus(), {}, 8, EXCLUSIVE_NONE, strategy)
    assert acc.spread_cpus(acc.free_cpus(False)) == [*range(0, 32, 2), *range(1, 32, 2)]


STEPS_MAX_REF = [(4, FULL_PCPUS, "0-3"), (5, FULL_PCPUS, "0,4-7"), (4, FULL_PCPUS, "2-5")]
STEPS_SORT_BY_REF = [
    (16, SPREAD_BY_PCPUS, "0,2,4,6,8,10,12,14,16,18,20,22,24,26,28,30"),
    (16, FULL_PCPUS, "0-15"),
    (16, SPREAD_BY_PCPUS, "1,3,5,7,9,11,13,15,17,19,21,23,25,27,29,31"),
    (16, FULL_PCPUS, "16-31"),
]


@pytest.mark.parametrize(
    ("shape", "steps"),
    [((1, 1, 4, 2), STEPS_MAX_REF), ((1, 1, 16, 2), STEPS_SORT_BY_REF)],
    ids=["TestTakeCPUsWithMaxRefCount", "TestTakeCPUsSortByRefCount"],
)
def test_max_ref_count(shape: tuple[int, int, int, int], steps: list[tuple[int, str, str]]) -> None:
    topo = build_topology(*shape)
    node = NodeAllocation("test-node-1")
    for i, (needed, policy, want) in enumerate(steps):
        available = node.available(topo, 2, frozenset())
        result = take_cpus(topo, 2, available, node.cpus, needed, policy, EXCLUSIVE_NONE, MOST_ALLOCATED)
        assert result == parse_cpuset(want), i
        node.add(PodAllocation(f"pod-{i}", "default", f"pod-{i}", result, EXCLUSIVE_PCPU), topo)
    if len(steps) == 4:
        assert node.available(topo, 2, frozenset()) == frozenset()


def test_take_preferred_cpus() -> None:
    topo = build_topology(2, 1, 16, 2)
    cpus = topo.cpus()
    assert sorted(take_cpus(topo, 1, cpus, {}, 2, SPREAD_BY_PCPUS, EXCLUSIVE_NONE, MOST_ALLOCATED)) == [0, 2]
    first = take_preferred_cpus(topo, 1, cpus, frozenset({0, 2}), {}, 2, SPREAD_BY_PCPUS, EXCLUSIVE_NONE, MOST_ALLOCATED)
    assert sorted(first) == [0, 2]
    assert sorted(
        take_preferred_cpus(topo, 1, cpus - first, frozenset(), {}, 2, SPREAD_BY_PCPUS, EXCLUSIVE_NONE, MOST_ALLOCATED)
    ) == [1, 3]
    assert sorted(
        take_preferred_cpus(topo, 1, cpus, frozenset({11, 13, 15, 17}), {}, 2, SPREAD_BY_PCPUS, EXCLUSIVE_NONE, MOST_ALLOCATED)
    ) == [11, 13]


def test_not_enough_cpus() -> None:
    topo = build_topology(1, 1, 2, 2)
    with pytest.raises(CPUAllocationError, match="not enough cpus available to satisfy request"):
        take_cpus(topo, 1, frozenset({0, 1}), {}, 3, FULL_PCPUS, EXCLUSIVE_NONE, MOST_ALLOCATED)
