"""A real console (`manage.py runconsole`, the README's first command without setup) for browser tests."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import Any

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


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """A headless Chromium, one per test module."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=chromium(), headless=True, args=["--no-sandbox"])
        yield launched
        launched.close()


def login(browser: Any, console: ConsoleProcess, width: int = 1400, height: int = 900) -> Any:
    """A new page of `browser` at `width` x `height`, logged in to `console` as admin."""
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto(console.url + "/accounts/login/")
    page.fill("input[name=username]", "admin")
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(console.url + "/")
    return page


@pytest.fixture(scope="module")
def page(console: ConsoleProcess, browser: Any) -> Any:
    """A logged-in page of a headless Chromium (the module's `console`)."""
    return login(browser, console)
