"""The README stays a door (short, its two commands first, its package map true) and the docs point at what exists:
every relative link resolves, every repository path they name is there."""

from __future__ import annotations

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)|src=\"([^\"]+)\"")
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
# Repository paths a page names in backticks (the dated records under docs/benchmarks/ keep old ones).
REPO_PATH = re.compile(r"`((?:scheduler|schedconsole|tests|benchmarks|deploy|examples|static|templates|docs)/[\w/.-]*)`")
CURRENT = [p for p in [*PAGES, ROOT / "CONTRIBUTING.md"] if "benchmarks" not in p.relative_to(ROOT).parts[1:-1]]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[`*_]", "", heading.strip()).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: pathlib.Path) -> set[str]:
    """The anchors of a page's headings (outside code blocks)."""
    text = FENCE.sub("", page.read_text())
    return {slug(m.group(1)) for m in re.finditer(r"^#+\s+(.*)$", text, re.MULTILINE)}


def broken_links(page: pathlib.Path) -> list[str]:
    """Relative links of one page whose file or heading does not exist."""
    broken = []
    for match in LINK.finditer(FENCE.sub("", page.read_text())):
        target = match.group(1) or match.group(2)
        if re.match(r"[a-z]+:", target):
            continue
        path, _, fragment = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif fragment and dest.suffix == ".md" and fragment not in anchors(dest):
            broken.append(f"{target}: no heading #{fragment}")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_relative_links_resolve(page: pathlib.Path) -> None:
    assert broken_links(page) == []


def test_a_broken_link_is_found(tmp_path: pathlib.Path) -> None:
    (tmp_path / "a.md").write_text("# Title\n\n[ok](#title) [no file](b.md) [no heading](a.md#nowhere)\n")
    assert broken_links(tmp_path / "a.md") == ["b.md: no such file", "a.md#nowhere: no heading #nowhere"]


def test_readme_is_short_and_starts_with_the_two_commands() -> None:
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= 250
    commands = [line.split("#")[0].strip() for line in lines[:6] if line.startswith("./")]
    assert commands == ["./run.sh", "./test.sh"]


def test_ci_runs_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert ci[-1] == "exec ./test.sh"


def missing_paths(page: pathlib.Path, root: pathlib.Path) -> list[str]:
    """Repository paths a page names that do not exist under root."""
    return [m.group(1) for m in REPO_PATH.finditer(page.read_text()) if not (root / m.group(1).rstrip("/")).exists()]


@pytest.mark.parametrize("page", CURRENT, ids=[str(p.relative_to(ROOT)) for p in CURRENT])
def test_named_paths_exist(page: pathlib.Path) -> None:
    assert missing_paths(page, ROOT) == []


def test_a_missing_path_is_found(tmp_path: pathlib.Path) -> None:
    (tmp_path / "scheduler").mkdir()
    (tmp_path / "a.md").write_text("`scheduler/` and `scheduler/gone.py`, not `var/x`\n")
    assert missing_paths(tmp_path / "a.md", tmp_path) == ["scheduler/gone.py"]


def map_entries(readme: str) -> list[str]:
    """The paths the README's package map names: each table row's first cell, under its package."""
    section = readme.split("## Map of the packages", 1)[1].split("\n## ", 1)[0]
    entries, package = [], ""
    for line in section.splitlines():
        if heading := re.match(r"\*\*`(\w+)/`\*\*", line):
            package = heading.group(1)
        elif package and line.startswith("| `"):
            first_cell = line.split("|")[1]
            entries += [f"{package}/{name}" for name in re.findall(r"`([\w./]+)`", first_cell)]
    return entries


def test_the_package_map_names_what_exists() -> None:
    entries = map_entries((ROOT / "README.md").read_text())
    assert len(entries) > 20
    assert [e for e in entries if not (ROOT / e.rstrip("/")).exists()] == []
