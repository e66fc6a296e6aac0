"""The layout is checked by import-linter (``make lint`` runs ``lint-imports`` with the contracts
in ``pyproject.toml``, see ``docs/architecture.md``). Here: no package escapes those contracts."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text())


def _top_level_packages() -> set[str]:
    return {p.parent.name for p in ROOT.glob("*/__init__.py") if p.parent.name != "tests"}


def test_every_package_is_under_the_import_contracts():
    linted = set(CONFIG["tool"]["importlinter"]["root_packages"])
    assert linted == _top_level_packages()
    layered = set()
    for contract in CONFIG["tool"]["importlinter"]["contracts"]:
        if contract["type"] == "layers":
            for layer in contract["layers"]:
                layered.update(name.strip() for name in layer.split("|"))
        if contract["type"] == "acyclic_siblings":
            assert set(contract["ancestors"]) == linted
    assert layered == linted


# The lab's harness: type-checked and under the contracts like the rest, never installed.
HARNESS = "harness"


def _installed() -> set[str]:
    return {name.rstrip("*") for name in
            CONFIG["tool"]["setuptools"]["packages"]["find"]["include"]}


def test_every_package_but_the_harness_is_installed_and_every_one_type_checked():
    assert _installed() == _top_level_packages() - {HARNESS}
    assert set(CONFIG["tool"]["mypy"]["files"]) == _top_level_packages()


def test_nothing_installed_may_import_the_harness():
    """The fence holds every installed package: one added later is fenced too."""
    fences = [set(contract["source_modules"])
              for contract in CONFIG["tool"]["importlinter"]["contracts"]
              if contract["type"] == "forbidden" and HARNESS in contract["forbidden_modules"]]
    assert _installed() in fences
