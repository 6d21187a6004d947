"""A real console (`manage.py runconsole`, the README's first command without setup) for browser tests."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "e2e-password-123"


@dataclass
class Console:
    """A running console: its address, admin token and log."""

    url: str
    token: str
    log: Path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def chromium() -> str:
    """Debian's chromium; in CI its absence fails instead of skipping."""
    path = shutil.which("chromium")
    if path is None:
        if os.getenv("CI"):
            pytest.fail("chromium is not installed (apt-get install chromium chromium-driver)")
        pytest.skip("chromium is not installed")
    return path


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Console]:
    """Start the embedded console on a free port with the demo cluster (no trickle)."""
    var = tmp_path_factory.mktemp("var")
    port = _free_port()
    env = {
        **os.environ,
        "SCHEDCONSOLE_VAR_DIR": str(var),
        "SCHEDCONSOLE_ADMIN_PASSWORD": PASSWORD,
        "SCHEDCONSOLE_DEMO_TRICKLE": "0",
        "PORT": str(port),
        "DJANGO_SETTINGS_MODULE": "schedconsole.settings",
    }
    env.pop("REDIS_URL", None)
    env.pop("DATABASE_URL", None)
    log = var / "console.log"
    with log.open("w") as out:
        proc = subprocess.Popen([sys.executable, "manage.py", "runconsole"], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while f"Console: http://127.0.0.1:{port}/" not in log.read_text():
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the console did not start:\n{log.read_text()}")
            time.sleep(0.2)
        token = subprocess.run(
            [sys.executable, "manage.py", "drf_create_token", "admin"], cwd=ROOT, env=env, capture_output=True, text=True, check=True
        ).stdout.split()[2]
        yield Console(f"http://127.0.0.1:{port}", token, log)
    finally:
        proc.terminate()
        proc.wait(20)
