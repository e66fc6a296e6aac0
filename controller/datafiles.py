"""The house's data files (profiles, blind structures, deck registries, configurations): parsing
them, and the error that lists every problem at once, each naming its key, so that whoever wrote
the file can mend them all in one go. Reading them is the shell's (``houses/loaders.py``)."""

from __future__ import annotations

import tomllib
from typing import Any


class ProblemsError(ValueError):
    """``origin`` is the file (or the name it was asked by); ``problems`` lists every fault."""

    subject = "data"  # what kind of file it is, as the message names it

    def __init__(self, origin: str, problems: list[str]) -> None:
        self.origin = origin
        self.problems = problems
        lines = "\n".join(f"  - {p}" for p in problems)
        super().__init__(f"{self.subject} {origin} has {len(problems)} problem(s):\n{lines}")


def parse_toml(text: str, error: type[ProblemsError], origin: str) -> dict[str, Any]:
    """The TOML document in ``text``, or ``error`` naming ``origin`` if it is not TOML."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise error(origin, [f"not valid TOML: {exc}"]) from None
