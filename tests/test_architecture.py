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


def test_every_package_is_installed_and_type_checked():
    installed = {name.rstrip("*") for name in
                 CONFIG["tool"]["setuptools"]["packages"]["find"]["include"]}
    assert installed == _top_level_packages()
    assert set(CONFIG["tool"]["mypy"]["files"]) == _top_level_packages()
