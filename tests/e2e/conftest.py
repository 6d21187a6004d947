"""A real console (`manage.py runconsole`, the README's first command without setup) for browser tests."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator

import pytest

from tests.support.servers import ConsoleProcess, start_console

PASSWORD = "e2e-password-123"


def chromium() -> str:
    """Debian's chromium; in CI its absence fails instead of skipping."""
    path = shutil.which("chromium")
    if path is None:
        if os.getenv("CI"):
            pytest.fail("chromium is not installed (apt-get install chromium chromium-driver)")
        pytest.skip("chromium is not installed")
    return path


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConsoleProcess]:
    """Start the embedded console on a free port with the demo cluster (no trickle)."""
    running = start_console(tmp_path_factory.mktemp("var"), {"SCHEDCONSOLE_ADMIN_PASSWORD": PASSWORD})
    try:
        yield running
    finally:
        running.stop(20)
