"""The shared scorer's helpers: broken linear shape, Go rounding and the strategies' batch forms."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.config.args import UtilizationShapePoint
from scheduler.plugins.noderesources.resource_allocation import (
    LeastAllocatedStrategy,
    MostAllocatedStrategy,
    RequestedToCapacityRatioStrategy,
    ResourceWeight,
    ShapePoint,
    Strategy,
    broken_linear,
    broken_linear_batch,
    go_div_int,
    go_round_array,
    go_round_float,
    least_requested_score,
    most_requested_score,
    scaled_shape,
)
from tests.support.examples import examples


def shape(*points: tuple[int, int]) -> tuple[ShapePoint, ...]:
    return tuple(ShapePoint(u, s) for u, s in points)


# TestBrokenLinearFunction (requested_to_capacity_ratio_test.go)
BROKEN_LINEAR = [
    (
        "rising",
        shape((10, 1), (90, 9)),
        [(-10, 1), (0, 1), (9, 1), (10, 1), (15, 1), (19, 1), (20, 2), (89, 8), (90, 9), (99, 9), (100, 9), (110, 9)],
    ),
    (
        "up then down",
        shape((0, 2), (40, 10), (100, 0)),
        [(-10, 2), (0, 2), (20, 6), (30, 8), (40, 10), (70, 5), (100, 0), (110, 0)],
    ),
    ("flat", shape((0, 2), (40, 2), (100, 2)), [(-10, 2), (0, 2), (20, 2), (30, 2), (40, 2), (70, 2), (100, 2), (110, 2)]),
    # A falling segment truncates toward zero: 100 + (-100 * 33) / 100 = 100 - 33, not 100 - 34.
    ("falling truncates toward zero", shape((0, 100), (100, 0)), [(33, 67), (1, 99), (99, 1)]),
    ("falling with a remainder", shape((0, 30), (7, 0)), [(1, 26), (3, 18), (6, 5)]),
]


@pytest.mark.parametrize(("points", "assertions"), [c[1:] for c in BROKEN_LINEAR], ids=[c[0] for c in BROKEN_LINEAR])
def test_broken_linear(points: tuple[ShapePoint, ...], assertions: list[tuple[int, int]]) -> None:
    ps = np.asarray([[p for p, _ in assertions]], dtype=np.int64)
    assert broken_linear_batch(points, ps).tolist() == [[want for _, want in assertions]]
    for p, want in assertions:
        assert broken_linear(points, p) == want


def test_shape_scores_are_scaled_by_ten() -> None:
    points = [UtilizationShapePoint(0, 10), UtilizationShapePoint(100, 0)]
    assert scaled_shape(points) == shape((0, 100), (100, 0))


@pytest.mark.parametrize(
    ("value", "want"),
    [
        (0.5, 1),
        (1.5, 2),
        (2.5, 3),
        (-0.5, -1),
        (-2.5, -3),
        (0.49999999999999994, 0),
        (2.4999999999999996, 2),
        (3.875, 4),
        (3.125, 3),
    ],
    ids=["half", "1.5", "2.5 away from zero", "-half", "-2.5", "just below half", "just below 2.5", "31/8", "25/8"],
)
def test_go_round(value: float, want: int) -> None:
    # math.Round rounds half away from zero (not to even), and exactly.
    assert go_round_float(value) == want
    assert go_round_array(np.asarray([value])).tolist() == [want]


@pytest.mark.parametrize(("a", "b", "want"), [(7, 2, 3), (-7, 2, -3), (7, -2, -3), (-7, -2, 3), (0, -5, 0)])
def test_go_div_int(a: int, b: int, want: int) -> None:
    assert go_div_int(a, b) == want


@pytest.mark.parametrize(
    ("requested", "capacity", "least", "most"),
    [(0, 0, 0, 0), (3, 4, 25, 75), (5, 4, 0, 100), (1, 3, 66, 33), (4, 4, 0, 100)],
    ids=["no capacity", "three quarters", "over capacity", "truncation", "full"],
)
def test_single_resource_scores(requested: int, capacity: int, least: int, most: int) -> None:
    assert least_requested_score(requested, capacity) == least
    assert most_requested_score(requested, capacity) == most


def test_weighted_mean_truncates() -> None:
    # (25 * 1 + 50 * 2) / 3 = 41 (least_allocated_test.go, different weights).
    strategy = LeastAllocatedStrategy([ResourceWeight("cpu", 1), ResourceWeight("memory", 2)])
    assert strategy.score([3000, 5000], [4000, 10000]) == 41


def test_requested_to_capacity_ratio_drops_zero_scores_and_rounds() -> None:
    # foo scores 2 (weight 3), bar 5 (weight 5): round(31 / 8) = 4; a zero score is left out.
    resources = [ResourceWeight("foo", 3), ResourceWeight("bar", 5), ResourceWeight("baz", 9)]
    strategy = RequestedToCapacityRatioStrategy(resources, shape((0, 0), (100, 10)))
    assert strategy.score([2, 2, 0], [8, 4, 4]) == 4


STRATEGIES: dict[str, Callable[[list[ResourceWeight]], Strategy]] = {
    "least": lambda r: LeastAllocatedStrategy(r),
    "most": lambda r: MostAllocatedStrategy(r),
    "ratio": lambda r: RequestedToCapacityRatioStrategy(r, shape((0, 100), (30, 20), (60, 70), (100, 0))),
}


@settings(max_examples=examples(200), deadline=None)
@given(
    kind=st.sampled_from(sorted(STRATEGIES)),
    weights=st.lists(st.integers(1, 100), min_size=1, max_size=4),
    data=st.data(),
)
def test_strategy_batch_matches_per_node(kind: str, weights: list[int], data: st.DataObject) -> None:
    resources = [ResourceWeight(f"r{i}", w) for i, w in enumerate(weights)]
    strategy = STRATEGIES[kind](resources)
    width = data.draw(st.integers(1, 6))
    cell = st.integers(0, 10**13)
    requested = np.asarray(
        data.draw(st.lists(st.lists(cell, min_size=width, max_size=width), min_size=len(weights), max_size=len(weights))),
        dtype=np.int64,
    )
    allocatable = np.asarray(
        data.draw(
            st.lists(
                st.lists(st.one_of(st.just(0), cell), min_size=width, max_size=width),
                min_size=len(weights),
                max_size=len(weights),
            )
        ),
        dtype=np.int64,
    )
    allocatable = np.where(allocatable == 0, 0, allocatable)
    requested = np.where(allocatable == 0, 0, requested)
    batch = strategy.score_batch(requested, allocatable).tolist()
    assert batch == [strategy.score(requested[:, j].tolist(), allocatable[:, j].tolist()) for j in range(width)]


def test_round_helper_agrees_with_math_on_ordinary_values() -> None:
    for value in np.linspace(-50, 50, 2001):
        assert go_round_float(float(value)) == int(math.copysign(math.floor(abs(value) + 0.5), value))


@settings(max_examples=examples(200), deadline=None)
@given(
    kind=st.sampled_from(sorted(STRATEGIES)),
    weights=st.lists(st.integers(1, 100), min_size=1, max_size=4),
    data=st.data(),
)
def test_strategy_batch_with_every_resource_positive_matches_per_node(kind: str, weights: list[int], data: st.DataObject) -> None:
    """`positive=True` (no allocatable entry is 0) drops the masks and changes no score."""
    resources = [ResourceWeight(f"r{i}", w) for i, w in enumerate(weights)]
    strategy = STRATEGIES[kind](resources)
    width = data.draw(st.integers(1, 6))
    rows = st.lists(
        st.lists(st.integers(0, 10**13), min_size=width, max_size=width), min_size=len(weights), max_size=len(weights)
    )
    requested = np.asarray(data.draw(rows), dtype=np.int64)
    positive = st.lists(
        st.lists(st.integers(1, 10**13), min_size=width, max_size=width), min_size=len(weights), max_size=len(weights)
    )
    allocatable = np.asarray(data.draw(positive), dtype=np.int64)
    batch = strategy.score_batch(requested, allocatable, positive=True).tolist()
    assert batch == [strategy.score(requested[:, j].tolist(), allocatable[:, j].tolist()) for j in range(width)]
    assert batch == strategy.score_batch(requested, allocatable).tolist()
