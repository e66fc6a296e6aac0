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
    # Beside the packages, the module that holds the tests' stand-ins to their Protocols.
    assert set(CONFIG["tool"]["mypy"]["files"]) == _top_level_packages() | {
        "tests/typed_fakes.py"}


def test_nothing_installed_may_import_the_harness():
    """The fence holds every installed package: one added later is fenced too."""
    fences = [set(contract["source_modules"])
              for contract in CONFIG["tool"]["importlinter"]["contracts"]
              if contract["type"] == "forbidden" and HARNESS in contract["forbidden_modules"]]
    assert _installed() in fences


def test_the_daemon_keeps_its_own_rules():
    """tablectl/daemon.py: the wall clock is the injected one (no ``time.time()`` call beside
    it: a test's or a simulator's clock would not reach those stamps), and every attribute of
    the Daemon is made in ``__init__`` (none appears first in ``start`` or later)."""
    import ast

    tree = ast.parse((ROOT / "tablectl" / "daemon.py").read_text())
    calls = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Call)
             and ast.unparse(node.func) == "time.time"]
    assert calls == [], f"time.time() called at lines {calls}: use the injected wall clock"
    daemon = next(node for node in tree.body
                  if isinstance(node, ast.ClassDef) and node.name == "Daemon")

    def assigned(function: ast.AST) -> set[str]:
        return {target.attr for node in ast.walk(function)
                for target in (node.targets if isinstance(node, ast.Assign) else
                               [node.target] if isinstance(node, ast.AnnAssign | ast.AugAssign)
                               else [])
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                and target.value.id == "self"}

    methods = [node for node in daemon.body if isinstance(node, ast.FunctionDef)]
    made = assigned(next(m for m in methods if m.name == "__init__"))
    later = {(m.name, attr) for m in methods if m.name != "__init__"
             for attr in assigned(m) - made}
    assert later == set(), f"attributes first made outside __init__: {sorted(later)}"


def test_the_browser_tests_wait_on_functions_not_bare_expressions():
    """Playwright evaluates a bare ``wait_for_function`` expression again with ``eval`` at each
    poll after the first, and the hub's pages' CSP refuses eval: such a wait fails whenever
    its first look comes too early (a function is evaluated once, then called)."""
    import re

    bare = [f"{path.name}:{number}"
            for path in sorted((ROOT / "tests").glob("*.py"))
            for number, line in enumerate(path.read_text().splitlines(), 1)
            if (call := re.search(r"wait_for_function\(\s*f?[\"']([^\"']*)", line))
            and not re.match(r"\s*(\(.*\)|\w+)\s*=>|\s*function\b", call.group(1))]
    assert bare == []
