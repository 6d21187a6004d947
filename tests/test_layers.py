"""The engine's layers import only downward (docs/architecture.md, "Layout").

Every `import` of `scheduler.*` inside `scheduler/` (at module level, inside functions and under
TYPE_CHECKING alike) must name a module of the same layer or a lower one; packages must not import
each other in a cycle; no function imports an engine module (a local import is how cycles hide);
and the engine never imports the web frameworks the console is built on. Nor does any module of
the engine or the console import another module's private (`_underscored`) names: what two modules
share is public, in the module that owns it.
"""

from __future__ import annotations

import ast
import pathlib
from collections.abc import Iterator

ROOT = pathlib.Path(__file__).resolve().parents[1]
ENGINE = ROOT / "scheduler"

LAYERS: tuple[tuple[str, ...], ...] = (
    ("scheduler.io", "scheduler.clock"),
    ("scheduler.api",),
    (
        "scheduler.cluster.contract",
        "scheduler.cluster.errors",
        "scheduler.cluster.events",
        "scheduler.cluster.informer",
        "scheduler.config",
        "scheduler.options",
    ),
    ("scheduler.framework",),
    ("scheduler.preemption", "scheduler.records", "scheduler.frameworkext"),
    ("scheduler.plugins",),
    (
        "scheduler.queue",
        "scheduler.cache",
        "scheduler.metrics",
        "scheduler.scheduler",
        "scheduler.schedule_one",
        "scheduler.nodestatus",
        "scheduler.eventhandlers",
        "scheduler.apicalls",
    ),
    ("scheduler.cluster",),
    ("scheduler.apiserver",),
    ("scheduler.kube",),
    ("scheduler.cli", "scheduler.bench", "scheduler.replay", "scheduler.__main__"),
)
"""Lowest first. A module belongs to the layer of its longest matching prefix, so the backend
contract (`cluster.contract`, `cluster.errors`, `cluster.events`, `cluster.informer`) sits far below the simulated
cluster that shares its package."""

PROJECT = ("scheduler", "schedconsole")
WEB_FRAMEWORKS = ("django", "celery", "channels", "rest_framework", "daphne", "uvicorn")


def layer_of(module: str) -> tuple[int, str]:
    """The layer index of a module and the prefix that placed it there."""
    best: tuple[int, str] | None = None
    for index, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and (best is None or len(prefix) > len(best[1])):
                best = (index, prefix)
    if best is None:
        raise AssertionError(f"{module} is in no layer: add it to LAYERS in tests/test_layers.py")
    return best


def module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(tree: ast.AST) -> Iterator[tuple[ast.stmt, str, bool]]:
    """(statement, imported module, inside a function) for every import in the tree."""
    local: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            local.update(id(n) for n in ast.walk(node) if isinstance(n, ast.Import | ast.ImportFrom))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node, node.module, id(node) in local
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield node, alias.name, id(node) in local


Module = tuple[str, str, ast.AST]
"""(module name, where it is for messages, its syntax tree)."""


def engine_modules() -> list[Module]:
    return [
        (module_name(path), str(path.relative_to(ROOT)), ast.parse(path.read_text(), str(path)))
        for path in sorted(ENGINE.rglob("*.py"))
        if path != ENGINE / "__init__.py"  # the package's root: empty
    ]


def package_of(module: str) -> str:
    """The unit of the cycle check: the layer prefix a module falls under."""
    return layer_of(module)[1]


def upward_imports(modules: list[Module]) -> list[str]:
    found = []
    for module, where, tree in modules:
        here, _ = layer_of(module)
        for node, target, _ in imports(tree):
            if target.split(".")[0] != "scheduler" or target == "scheduler":
                continue
            there, prefix = layer_of(target)
            if there > here:
                found.append(f"{where}:{node.lineno} imports {target} ({prefix}, a higher layer)")
    return found


def package_cycles(modules: list[Module]) -> list[str]:
    graph: dict[str, set[str]] = {}
    for module, _, tree in modules:
        source = package_of(module)
        for _, target, _ in imports(tree):
            if target.startswith("scheduler.") and package_of(target) != source:
                graph.setdefault(source, set()).add(package_of(target))
    cycles = []
    for start in sorted(graph):
        stack = [(start, [start])]
        seen: set[str] = set()
        while stack:
            node, trail = stack.pop()
            for nxt in sorted(graph.get(node, ())):
                if nxt == start:
                    cycles.append(" -> ".join([*trail, start]))
                elif nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, [*trail, nxt]))
    return cycles


def function_local_imports(modules: list[Module]) -> list[str]:
    return [
        f"{where}:{node.lineno} imports {target} inside a function"
        for _, where, tree in modules
        for node, target, inside in imports(tree)
        if inside and target.startswith("scheduler")
    ]


def web_framework_imports(modules: list[Module]) -> list[str]:
    return [
        f"{where}:{node.lineno} imports {target}"
        for _, where, tree in modules
        for node, target, _ in imports(tree)
        if target.split(".")[0] in WEB_FRAMEWORKS
    ]


def private_imports(modules: list[Module]) -> list[str]:
    """`from x import _name` of a project module's private name (dunders are not private)."""
    return [
        f"{where}:{node.lineno} imports {alias.name} from {node.module or '.'}"
        for _, where, tree in modules
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.level > 0 or (node.module or "").split(".")[0] in PROJECT)
        for alias in node.names
        if alias.name.startswith("_") and not alias.name.startswith("__")
    ]


def project_modules() -> list[Module]:
    return [
        (module_name(path), str(path.relative_to(ROOT)), ast.parse(path.read_text(), str(path)))
        for package in PROJECT
        for path in sorted((ROOT / package).rglob("*.py"))
    ]


def test_every_engine_module_is_in_a_layer() -> None:
    for module, _, _ in engine_modules():
        layer_of(module)


def test_imports_point_down() -> None:
    assert upward_imports(engine_modules()) == []


def test_no_package_imports_another_in_a_cycle() -> None:
    assert package_cycles(engine_modules()) == []


def test_no_function_imports_an_engine_module() -> None:
    assert function_local_imports(engine_modules()) == []


def test_the_engine_never_imports_the_web_frameworks() -> None:
    assert web_framework_imports(engine_modules()) == []


def test_no_module_imports_another_modules_private_names() -> None:
    assert private_imports(project_modules()) == []


def _fake(module: str, source: str) -> Module:
    return (module, module, ast.parse(source))


def test_the_checks_find_what_they_look_for() -> None:
    plugin = "scheduler.plugins.fake"
    assert upward_imports([_fake(plugin, "from scheduler.cluster.simulated import SimulatedCluster\n")]) == [
        "scheduler.plugins.fake:1 imports scheduler.cluster.simulated (scheduler.cluster, a higher layer)"
    ]
    assert upward_imports([_fake(plugin, "from scheduler.cluster.errors import APIError\n")]) == []
    assert function_local_imports([_fake(plugin, "def f():\n    from scheduler.api.objects import Pod\n")]) == [
        "scheduler.plugins.fake:2 imports scheduler.api.objects inside a function"
    ]
    assert web_framework_imports([_fake(plugin, "import django.conf\n")]) == ["scheduler.plugins.fake:1 imports django.conf"]
    assert private_imports([_fake(plugin, "from scheduler.api.objects import __all__, _amount, parse_pod\n")]) == [
        "scheduler.plugins.fake:1 imports _amount from scheduler.api.objects"
    ]
    assert private_imports([_fake(plugin, "from collections import _private\n")]) == []
    bench_cli = [_fake("scheduler.bench.run", "import scheduler.cli\n"), _fake("scheduler.cli", "import scheduler.bench.run\n")]
    assert package_cycles(bench_cli) == [
        "scheduler.bench -> scheduler.cli -> scheduler.bench",
        "scheduler.cli -> scheduler.bench -> scheduler.cli",
    ]
