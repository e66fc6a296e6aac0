"""The documentation holds: every command the README and the manual under ``docs/`` show in an
``sh`` block runs as written in the checkout, with the exit status its ``# exit N`` comment says
(else 0); every link between the Markdown files leads somewhere; the tables that restate the
code say what the code says. ``make demo`` and ``make test`` are the two set-up commands: CI
runs the second, which runs this; the first sets up the same venv, so ``make`` lines are
skipped."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from tests import docgen

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MANUAL = sorted((ROOT / "docs").rglob("*.md"))
BLOCK = re.compile(r"^```sh\n(.*?)^```", re.M | re.S)
EXIT = re.compile(r"#\s*exit\s+(\d+)\b")
# The front door: what it is, two commands, a picture, a tour, where to go next. The manual is
# under docs/, one topic a file.
README_MOST_LINES = 250


def _name(path: Path) -> str:
    return str(path.relative_to(ROOT))


def _commands() -> list[tuple[str, int, str]]:
    """(command, exit status, the files that show it): a command shown twice runs once."""
    found: dict[str, list[str]] = {}
    for path in [README, *MANUAL]:
        for block in BLOCK.findall(path.read_text()):
            for line in block.splitlines():
                if not line.strip() or line.startswith("make "):
                    continue
                found.setdefault(line, [])
                if _name(path) not in found[line]:
                    found[line].append(_name(path))
    return [(line, int(m.group(1)) if (m := EXIT.search(line)) else 0, ", ".join(files))
            for line, files in found.items()]


COMMANDS = _commands()


def test_the_readme_shows_commands_to_run():
    assert sum("README.md" in files.split(", ") for _, _, files in COMMANDS) >= 6


@pytest.mark.parametrize("command,status,files", COMMANDS,
                         ids=[f"{files}: {command}" for command, _, files in COMMANDS])
def test_each_documented_command_runs_as_written(command, status, files):
    if not (ROOT / ".venv" / "bin" / "tablectl").exists():
        pytest.skip("no .venv in the checkout: make test (or make demo) sets it up")
    result = subprocess.run(["bash", "-c", command], cwd=ROOT, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == status, (files, command, result.stdout[-2000:],
                                         result.stderr[-2000:])
    assert "Traceback" not in result.stderr


def test_the_readme_is_a_front_door():
    lines = len(README.read_text().splitlines())
    assert lines <= README_MOST_LINES, (
        f"README.md has {lines} lines: the manual goes under docs/ (one topic a file), "
        "the README links it")


def test_the_readme_links_every_file_of_the_manual():
    text = README.read_text()
    unlinked = [_name(p) for p in MANUAL if f"]({_name(p)})" not in text]
    assert not unlinked, f"not linked from README.md's 'Where to go next': {unlinked}"


# -- links ------------------------------------------------------------------------------------

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.M | re.S)


def _documents() -> list[Path]:
    """The project's Markdown files: not those of hidden folders (caches, the venv), of npm's
    packages, of a build or of an install's metadata."""
    def ours(part: str) -> bool:
        return not (part.startswith(".") or part in ("node_modules", "build")
                    or part.endswith(".egg-info"))
    return sorted(p for p in ROOT.rglob("*.md")
                  if all(ours(part) for part in p.relative_to(ROOT).parts[:-1]))


def _anchors(path: Path) -> set[str]:
    """GitHub's anchors for the file's headings: lower case, punctuation dropped, spaces to
    hyphens; a repeated heading gets -1, -2..."""
    seen: dict[str, int] = {}
    anchors = set()
    for line in FENCE.sub("", path.read_text()).splitlines():
        heading = re.match(r"#{1,6}\s+(.*)", line)
        if not heading:
            continue
        slug = re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def _broken_links(path: Path) -> list[str]:
    broken = []
    for target in LINK.findall(FENCE.sub("", path.read_text())):
        if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
            continue
        file_part, _, anchor = target.partition("#")
        where = (path.parent / file_part).resolve() if file_part else path
        if not where.exists():
            broken.append(f"{target}: no such file")
        elif anchor and where.suffix == ".md" and anchor not in _anchors(where):
            broken.append(f"{target}: no such heading")
    return broken


@pytest.mark.parametrize("path", _documents(), ids=_name)
def test_every_link_leads_somewhere(path):
    assert not _broken_links(path)


def test_a_broken_link_or_anchor_is_found(tmp_path):
    (tmp_path / "a.md").write_text("# The `a` page\n\n## A part, the first\n\n```sh\n# no\n```\n")
    page = tmp_path / "b.md"
    page.write_text("# B\n[ok](a.md#a-part-the-first) [self](#b) [page](#the-a-page)\n"
                    "[no file](c.md) [no heading](a.md#no) ![no picture](screens/x.png)\n"
                    "```text\n[in a synopsis](d.md)\n```\n")
    assert _broken_links(page) == ["#the-a-page: no such heading", "c.md: no such file",
                                   "a.md#no: no such heading", "screens/x.png: no such file"]


# -- what restates the code -----------------------------------------------------------------

def test_the_generated_tables_say_what_the_code_says():
    """The tables between ``<!-- generated: NAME ... -->`` comments (tests/docgen.py)."""
    assert docgen.stale() == [], "python -m tests.docgen --write writes them again"


def test_each_generated_table_is_in_the_docs():
    names = set()
    for path in docgen.documents():
        names |= {m["name"] for m in docgen.REGION.finditer(path.read_text())}
    assert names == set(docgen.WRITERS)


def test_a_table_that_differs_from_the_code_is_found(monkeypatch):
    monkeypatch.setitem(docgen.WRITERS, "events", lambda: "| a table written by hand |\n")
    assert docgen.stale() == ["docs/replay.md: events"]


def test_the_hub_api_table_has_a_row_for_each_operation():
    """docs/hub.md's table of the JSON API (roles are not in the OpenAPI document, so the table
    is written by hand): every operation of docs/openapi.json, and nothing else."""
    spec = json.loads((ROOT / "docs" / "openapi.json").read_text())
    operations = {(method.upper(), path) for path, methods in spec["paths"].items()
                  for method in methods}
    text = (ROOT / "docs" / "hub.md").read_text()
    table = text[text.index("| call | role | what |"):]
    table = table[:table.index("\n\n")]
    listed = set(re.findall(r"`(GET|POST|PUT|DELETE|PATCH) (/[^`?\s]*)", table))
    assert listed == operations, {"not in the table": operations - listed,
                                  "not in the document": listed - operations}
