"""Small helpers several plugins share (`pkg/scheduler/framework/plugins/helper`)."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from scheduler.framework.types import MAX_NODE_SCORE


def default_normalize_score(scores: npt.NDArray[np.int64], reverse: bool, max_priority: int = MAX_NODE_SCORE) -> None:
    """`helper.DefaultNormalizeScore`: scale to 0..max_priority by the maximum, optionally reversed.

    All scores are non-negative here, so floor division equals Go's truncation.
    """
    if scores.size == 0:
        return
    top = int(scores.max())
    if top <= 0:
        if reverse:
            scores[:] = max_priority
        return
    scaled = max_priority * scores // top
    scores[:] = max_priority - scaled if reverse else scaled


def go_div(numerator: npt.NDArray[np.int64], denominator: npt.NDArray[np.int64] | int) -> npt.NDArray[np.int64]:
    """Integer division truncating toward zero, as Go divides (NumPy floors)."""
    quotient = np.abs(numerator) // np.abs(denominator)
    negative = (numerator < 0) ^ (np.asarray(denominator) < 0)
    return np.where(negative, -quotient, quotient).astype(np.int64)


def go_round(value: float) -> int:
    """`math.Round`: half away from zero, exact (no `x + 0.5` rounding error near .5)."""
    whole = math.trunc(value)
    if abs(value - whole) >= 0.5:
        whole += 1 if value > 0 else -1
    return whole
