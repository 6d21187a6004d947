"""Fixtures for the production-wiring tests: a whole stack per test module."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.production.harness import Stack


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[Stack]:
    tmp: Path = tmp_path_factory.mktemp("stack")
    s = Stack(tmp)
    try:
        yield s
    finally:
        if request.session.testsfailed:
            print(s.logs())
        s.close()
