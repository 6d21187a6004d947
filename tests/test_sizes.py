"""Modules and functions a reader can hold in mind: in `scheduler/` and `schedconsole/` no module
is over 800 lines and no function over 100 (CONTRIBUTING.md, "The engine's layers")."""

from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGES = ("scheduler", "schedconsole")
MAX_MODULE_LINES = 800
MAX_FUNCTION_LINES = 100


def sources() -> list[pathlib.Path]:
    return sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py") if "migrations" not in p.parts)


def long_functions(path: pathlib.Path, tree: ast.AST) -> dict[str, int]:
    """Qualified name (`module:Class.method`) -> lines, for every function over the limit."""
    found: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                assert child.end_lineno is not None
                lines = child.end_lineno - child.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    found[f"{path.relative_to(ROOT)}:{prefix}{child.name}"] = lines
                visit(child, f"{prefix}{child.name}.")

    visit(tree, "")
    return found


def test_no_module_is_over_800_lines() -> None:
    long = {str(p.relative_to(ROOT)): n for p in sources() if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES}
    assert long == {}


def test_no_function_is_over_100_lines() -> None:
    found: dict[str, int] = {}
    for path in sources():
        found.update(long_functions(path, ast.parse(path.read_text(), str(path))))
    assert found == {}


def test_the_function_check_finds_a_long_method() -> None:
    body = "\n".join(f"        x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    source = f"class A:\n    def long(self):\n{body}\n\n    def short(self):\n        return 1\n"
    path = ROOT / "scheduler" / "example.py"
    assert long_functions(path, ast.parse(source)) == {"scheduler/example.py:A.long": MAX_FUNCTION_LINES + 1}
