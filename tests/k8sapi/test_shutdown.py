"""Stopping the console while clients hold long requests open (a `kubectl get -w` watch)."""

from __future__ import annotations

import signal
import ssl
import time
import urllib.request
from pathlib import Path

import pytest

from tests.k8sapi.conftest import start_console

pytestmark = pytest.mark.slow


def test_an_open_watch_does_not_hold_the_console_up_on_sigterm(tmp_path: Path) -> None:
    # uvicorn waits for open requests to finish before it exits; a watch lasts its timeoutSeconds
    # (kubectl asks for minutes), so the console gives them a short grace and then ends them.
    proc, console = start_console(tmp_path)
    try:
        req = urllib.request.Request(f"{console.url}/k8s/api/v1/pods?watch=true&timeoutSeconds=600")
        req.add_header("Authorization", f"Bearer {console.token}")
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        watch = urllib.request.urlopen(req, context=context, timeout=60)
        assert watch.status == 200
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
        took = time.monotonic() - started
        assert proc.returncode is not None
        assert took < 20, f"the console took {took:.1f}s to stop with a watch open"
        watch.close()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
