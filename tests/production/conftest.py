"""Fixtures for the production-wiring tests: a whole stack per test module."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.stack import Stack


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[Stack]:
    tmp: Path = tmp_path_factory.mktemp("stack")
    s = Stack(tmp)
    try:
        yield s
    finally:
        if request.session.testsfailed:
            # Past pytest's capture: the teardown of a module's fixture belongs to its last test,
            # whose output is not shown when that test passed.
            print(s.logs(), file=sys.__stderr__, flush=True)
        s.close()
