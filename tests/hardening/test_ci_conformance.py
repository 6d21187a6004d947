"""Without ../shared the conformance cases are skipped locally but fail in CI."""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("ci", "code", "said"), [("true", 1, "CI needs ../shared"), ("", 0, "skipped")], ids=["ci", "local"])
def test_missing_shared_cases(tmp_path: pathlib.Path, ci: str, code: int, said: str) -> None:
    # A checkout with nothing beside it: tmp/checkout/tests/conformance/test_cases.py, no tmp/shared.
    target = tmp_path / "checkout" / "tests" / "conformance"
    target.mkdir(parents=True)
    shutil.copy(ROOT / "tests" / "conformance" / "test_cases.py", target / "test_cases.py")
    (tmp_path / "checkout" / "pytest.ini").write_text("[pytest]\n")
    env = {**os.environ, "CI": ci}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:django", "-rs", str(target / "test_cases.py")],
        cwd=tmp_path / "checkout",
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == code, proc.stdout + proc.stderr
    assert said in proc.stdout
