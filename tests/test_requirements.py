"""The requirement files: runtime apart from development, both locked with hashes.

requirements.txt lists what the engine and the console import in production; requirements.lock
pins it for the image (deploy/build.sh) and ./run.sh. requirements-dev.txt adds the tests and
tools; requirements-dev.lock pins both for ./test.sh and CI, at the runtime lock's versions.
"""

from __future__ import annotations

import ast
import importlib.metadata as metadata
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
FIRST_PARTY = {"scheduler", "schedconsole", "tests", "benchmarks"}
DEV_TOOLS = ("pytest", "pytest-django", "pytest-asyncio", "hypothesis", "mypy", "ruff", "playwright", "schemathesis")


@dataclass(frozen=True)
class Pin:
    name: str
    version: str
    marker: str
    hashes: int

    def applies(self) -> bool:
        return not self.marker or Marker(self.marker).evaluate()


def requirements(path: Path) -> list[Requirement]:
    """The requirements of a requirements file, following `-r` includes."""
    found: list[Requirement] = []
    for raw in path.read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if line.startswith("-r "):
            found += requirements(path.parent / line[3:].strip())
        elif line:
            found.append(Requirement(line))
    return found


def pins(path: Path) -> list[Pin]:
    """The pins of a lock file written by `uv pip compile --generate-hashes`."""
    text = re.sub(r"\\\n", " ", path.read_text())
    found = []
    for line in text.splitlines():
        if not line or line[0] in " #-":
            continue
        spec, _, rest = line.partition(" --hash=")
        requirement, _, marker = spec.partition(";")
        name, _, version = requirement.strip().partition("==")
        found.append(Pin(canonicalize_name(name), version, marker.strip(), (" --hash=" + rest).count("--hash=sha256:")))
    return found


def chosen(path: Path) -> dict[str, str]:
    """The version each package of a lock file has on this Python and platform."""
    return {pin.name: pin.version for pin in pins(path) if pin.applies()}


@pytest.mark.parametrize(
    ("source", "lock"), [("requirements.txt", "requirements.lock"), ("requirements-dev.txt", "requirements-dev.lock")]
)
def test_the_lock_satisfies_every_requirement(source: str, lock: str) -> None:
    versions = chosen(ROOT / lock)
    for requirement in requirements(ROOT / source):
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        name = canonicalize_name(requirement.name)
        assert name in versions, f"{lock}: no pin for {requirement} of {source}; regenerate the lock (CONTRIBUTING.md)"
        assert requirement.specifier.contains(versions[name], prereleases=True), (
            f"{lock}: {name}=={versions[name]} does not satisfy {requirement} of {source}; regenerate the lock"
        )


@pytest.mark.parametrize("lock", ["requirements.lock", "requirements-dev.lock"])
def test_every_pin_is_exact_and_hashed(lock: str) -> None:
    every = pins(ROOT / lock)
    assert every
    for pin in every:
        assert re.fullmatch(r"[0-9][0-9A-Za-z.+!-]*", pin.version), f"{lock}: {pin.name} is not pinned to one version"
        assert pin.hashes > 0, f"{lock}: {pin.name}=={pin.version} has no hash"


def test_the_dev_lock_pins_the_runtime_lock_versions() -> None:
    dev = {(pin.name, pin.version, pin.marker) for pin in pins(ROOT / "requirements-dev.lock")}
    for pin in pins(ROOT / "requirements.lock"):
        assert (pin.name, pin.version, pin.marker) in dev, (
            f"requirements-dev.lock pins {pin.name} otherwise than requirements.lock"
        )


def test_the_runtime_lock_holds_no_test_or_check_tool() -> None:
    runtime = {pin.name for pin in pins(ROOT / "requirements.lock")}
    assert not runtime & set(DEV_TOOLS), "the image would ship development tools"


def _third_party_imports(package: str) -> set[str]:
    found: set[str] = set()
    for path in (ROOT / package).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                found |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return {name for name in found if name not in sys.stdlib_module_names and name not in FIRST_PARTY}


def test_every_module_the_engine_and_console_import_is_a_runtime_requirement() -> None:
    listed = {canonicalize_name(r.name) for r in requirements(ROOT / "requirements.txt")}
    providers = metadata.packages_distributions()
    for package in ("scheduler", "schedconsole"):
        for module in sorted(_third_party_imports(package)):
            distributions = {canonicalize_name(d) for d in providers.get(module, [])}
            assert distributions, f"{package} imports {module}, which no installed distribution provides"
            assert distributions & listed, (
                f"{package} imports {module} ({', '.join(sorted(distributions))}): not in requirements.txt"
            )


def test_the_environment_is_the_dev_lock() -> None:
    """./test.sh installs requirements-dev.lock: what runs the tests is what CI runs."""
    for name, version in sorted(chosen(ROOT / "requirements-dev.lock").items()):
        try:
            installed = metadata.version(name)
        except metadata.PackageNotFoundError:
            pytest.fail(f"{name}=={version} of requirements-dev.lock is not installed; run ./setup.sh --dev")
        assert installed == version, (
            f"{name} {installed} is installed, requirements-dev.lock pins {version}; run ./setup.sh --dev"
        )
