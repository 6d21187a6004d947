"""The engine must not import Django, Celery, Channels or DRF (STYLE habit 1)."""

from __future__ import annotations

import pathlib
import re

ENGINE = pathlib.Path(__file__).resolve().parents[1] / "scheduler"
FORBIDDEN = re.compile(r"^\s*(import|from)\s+(django|celery|channels|rest_framework)\b", re.MULTILINE)


def test_engine_imports_no_web_framework() -> None:
    offenders = [str(p) for p in ENGINE.rglob("*.py") if FORBIDDEN.search(p.read_text())]
    assert offenders == []


CONSOLE = pathlib.Path(__file__).resolve().parents[1] / "schedconsole"
BRIDGE = CONSOLE / "engine" / "bridge.py"
ENGINE_IMPORT = re.compile(r"^\s*(import|from)\s+scheduler\b", re.MULTILINE)


def test_only_the_bridge_imports_the_engine() -> None:
    offenders = [str(p.relative_to(CONSOLE)) for p in CONSOLE.rglob("*.py") if p != BRIDGE and ENGINE_IMPORT.search(p.read_text())]
    assert offenders == []
    assert ENGINE_IMPORT.search(BRIDGE.read_text())
