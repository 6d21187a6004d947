"""How many examples a property test runs under the loaded Hypothesis profile (tests/conftest.py)."""

from __future__ import annotations

from hypothesis import settings

CI_EXAMPLES = 100  # the ci profile's max_examples: Hypothesis's default


def examples(ci: int) -> int:
    """`ci` examples under the ci profile; the same share of the loaded profile's (dev: a tenth)."""
    return max(1, ci * settings.default.max_examples // CI_EXAMPLES)
