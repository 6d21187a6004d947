"""The NUMA topology manager's merge, as koord-scheduler's tests pin it.

Cases ported from koordinator-sh/koordinator `pkg/scheduler/frameworkext/topologymanager/`
policy_test.go (commonPolicyMergeTestCases, singleNumaNodePolicy.mergeTestCases,
Test_checkExclusivePolicy) and `pkg/util/bitmask/bitmask.go` (String, IterateBitMasks).
"""

from __future__ import annotations

import pytest

from scheduler.frameworkext import topologymanager as tm
from scheduler.frameworkext.topologymanager import NUMATopologyHint as H

M = tm.mask_of
NODES = [0, 1]

MERGE = [
    # (name, policy, providers' hints, want hint, want reasons)
    (
        "two providers, same mask, both preferred",
        tm.POLICY_BEST_EFFORT,
        [{"resource1": [H(M([0]), True)]}, {"resource2": [H(M([0]), True)]}],
        H(M([0]), True),
        [],
    ),
    (
        "less narrow preferred over narrower not preferred",
        tm.POLICY_BEST_EFFORT,
        [
            {"resource1": [H(M([1]), True), H(M([0, 1]), False)]},
            {"resource2": [H(M([0]), True), H(M([1]), True), H(M([0, 1]), False)]},
        ],
        H(M([1]), True),
        [],
    ),
    (
        "single NUMA: no common mask",
        tm.POLICY_SINGLE_NUMA_NODE,
        [{"resource1": [H(M([0]), True)]}, {"resource2": [H(M([1]), True)]}],
        H(None, False),
        ["Unaligned NUMA Hint cause resource1 prefer [01] among [01],resource2 prefer [10] among [10]"],
    ),
    (
        "single NUMA hint generation",
        tm.POLICY_SINGLE_NUMA_NODE,
        [{"resource1": [H(M([0, 1]), True)], "resource2": [H(M([0]), True), H(M([1]), True), H(M([0, 1]), False)]}],
        H(None, False),
        ["Unaligned NUMA Hint cause resource1 prefer [11] among [11],resource2 prefer [01 10] among [01 10 11]"],
    ),
    (
        "single NUMA: one no-preference provider",
        tm.POLICY_SINGLE_NUMA_NODE,
        [{"resource1": [H(M([0]), True), H(M([1]), True), H(M([0, 1]), False)]}, None],
        H(M([0]), True),
        [],
    ),
    (
        "single NUMA: nil hint not preferred",
        tm.POLICY_SINGLE_NUMA_NODE,
        [{"resource": [H(None, False)]}],
        H(None, False),
        ["Unaligned NUMA Hint cause resource prefer [] among [<nil>]"],
    ),
    (
        "restricted: a resource without hints",
        tm.POLICY_RESTRICTED,
        [{"resource": []}],
        H(M(NODES), False),
        ["Unsatisfied NUMA resource"],
    ),
]


@pytest.mark.parametrize(("policy", "hints", "want", "reasons"), [c[1:] for c in MERGE], ids=[c[0] for c in MERGE])
def test_merge(policy: str, hints: list[dict[str, list[H]] | None], want: H, reasons: list[str]) -> None:
    best, admit, got = tm.merge(policy, NODES, hints, tm.EXCLUSIVE_PREFERRED, [])
    assert (best.mask, best.preferred) == (want.mask, want.preferred)
    assert got == reasons
    assert admit == (not reasons)


def test_equal_width_hints_go_to_the_higher_score() -> None:
    """policy.go mergeFilteredHints: as wide and as preferred, the higher summed score wins."""
    hints = [{"cpu": [H(M([0]), True, score=20), H(M([1]), True, score=60)]}]
    best, _, _ = tm.merge(tm.POLICY_SINGLE_NUMA_NODE, NODES, hints, "", [])
    assert best.mask == M([1])


EXCLUSIVE = [
    ("required 2", [0], ["shared", "single"], False),
    ("required 4", [0], ["single", "shared"], True),
    ("required 5", [0, 1], ["shared", "single"], False),
    ("required 6", [0, 1], ["shared", "idle"], True),
]


@pytest.mark.parametrize(("nodes", "statuses", "want"), [c[1:] for c in EXCLUSIVE], ids=[c[0] for c in EXCLUSIVE])
def test_check_exclusive_policy(nodes: list[int], statuses: list[str], want: bool) -> None:
    assert tm._check_exclusive(H(M(nodes), True), tm.EXCLUSIVE_REQUIRED, statuses) is want


def test_bitmask_text_and_iteration() -> None:
    assert [tm.mask_text(m) for m in (1, 2, 3, 4, 5)] == ["01", "10", "11", "100", "0101"]
    assert list(tm.iterate_masks([0, 1, 2])) == [1, 2, 4, 3, 5, 6, 7]
