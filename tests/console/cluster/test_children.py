"""A benchmark the console starts ends with the console: a process that starts one and is then
killed leaves nothing running (schemathesis's POST /api/bench/ used to leave default-size runs
going for minutes after its console had stopped)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
STARTER = """
import sys, time
from schedconsole.cluster.children import popen_tied
child = popen_tied([sys.executable, "-c", "import time; time.sleep(120)"])
print(child.pid, flush=True)
time.sleep(120)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie has ended; it waits only for its (new) parent to reap it.
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(") ", 1)[1].startswith("Z"))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_the_child_ends_when_its_starter_is_killed() -> None:
    starter = subprocess.Popen([sys.executable, "-c", STARTER], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert starter.stdout is not None
    child = int(starter.stdout.readline())
    try:
        assert _alive(child)
        starter.send_signal(signal.SIGKILL)
        starter.wait(10)
        deadline = time.monotonic() + 10
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(child), "the child outlived the process that started it"
    finally:
        if _alive(child):
            os.kill(child, signal.SIGKILL)
        if starter.poll() is None:
            starter.kill()


def test_the_child_runs_while_its_starter_does() -> None:
    from schedconsole.cluster.children import popen_tied

    child = popen_tied([sys.executable, "-c", "print('ran')"], stdout=subprocess.PIPE)
    out, _ = child.communicate(timeout=30)
    assert child.returncode == 0 and out.strip() == "ran"
