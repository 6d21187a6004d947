"""Only the bridge imports the engine (the engine's side, never importing the web frameworks, is
checked in tests/test_layers.py)."""

from __future__ import annotations

import pathlib
import re

CONSOLE = pathlib.Path(__file__).resolve().parents[1] / "schedconsole"
BRIDGE = CONSOLE / "engine" / "bridge"
ENGINE_IMPORT = re.compile(r"^\s*(import|from)\s+scheduler\b", re.MULTILINE)


def test_only_the_bridge_imports_the_engine() -> None:
    offenders = [
        str(p.relative_to(CONSOLE))
        for p in CONSOLE.rglob("*.py")
        if BRIDGE not in p.parents and ENGINE_IMPORT.search(p.read_text())
    ]
    assert offenders == []
    assert any(ENGINE_IMPORT.search(p.read_text()) for p in BRIDGE.glob("*.py"))
