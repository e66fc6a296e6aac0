"""Every command the README shows in an ``sh`` block runs as written in the checkout, with the
exit status its ``# exit N`` comment says (else 0). ``make demo`` and ``make test`` are the two
set-up commands: CI runs the second, which runs this; the first sets up the same venv."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"^```sh\n(.*?)^```", re.M | re.S)
EXIT = re.compile(r"#\s*exit\s+(\d+)\b")


def _commands() -> list[tuple[str, int]]:
    found = []
    for block in BLOCK.findall((ROOT / "README.md").read_text()):
        for line in block.splitlines():
            if not line.strip() or line.startswith("make "):
                continue
            expected = EXIT.search(line)
            found.append((line, int(expected.group(1)) if expected else 0))
    return found


COMMANDS = _commands()


def test_the_readme_shows_commands_to_run():
    assert len(COMMANDS) >= 6


@pytest.mark.parametrize("command,status", COMMANDS, ids=[c for c, _ in COMMANDS])
def test_each_readme_command_runs_as_written(command, status):
    if not (ROOT / ".venv" / "bin" / "tablectl").exists():
        pytest.skip("no .venv in the checkout: make test (or make demo) sets it up")
    result = subprocess.run(["bash", "-c", command], cwd=ROOT, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == status, (command, result.stdout[-2000:],
                                         result.stderr[-2000:])
    assert "Traceback" not in result.stderr
