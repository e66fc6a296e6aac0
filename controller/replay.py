"""``tablectl replay``: a recorded stream of shoe and button inputs through the table core.

One JSON object per input line in, one JSON object per event out. The same ``Table`` the daemon
runs; only the source of inputs differs.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from controller.clock import Structure, no_structures
from controller.events import Event
from controller.inputs import InputError, parse_input
from controller.profiles import Profile
from controller.table import Table, TableConfig, TableUsageError


class ReplayError(ValueError):
    """A line of the input that cannot be replayed; names the line."""

    def __init__(self, line: int, message: str) -> None:
        self.line = line
        self.message = message
        super().__init__(f"line {line}: {message}")


def replay(lines: Iterable[str], profile: Profile, config: TableConfig | None = None,
           table: Table | None = None,
           structure_loader: Callable[[str], Structure] = no_structures
           ) -> Iterator[dict[str, Any]]:
    """Every event the core emits for these input lines, in order, as the replay contract's
    JSON objects (a ``clock`` input finds its structure with ``structure_loader``)."""
    for event in replay_events(lines, profile, config, table, structure_loader):
        yield event.to_json()


def replay_events(lines: Iterable[str], profile: Profile, config: TableConfig | None = None,
                  table: Table | None = None,
                  structure_loader: Callable[[str], Structure] = no_structures
                  ) -> Iterator[Event]:
    """The same, as the core's typed events."""
    table = table or Table(profile, config, structure_loader)
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if not text:
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ReplayError(number, f"not a JSON object: {exc.msg} at column {exc.colno}") \
                from None
        try:
            item = parse_input(obj)
        except InputError as exc:
            raise ReplayError(number, "; ".join(exc.problems)) from None
        try:
            events = table.handle(item)
        except TableUsageError as exc:
            raise ReplayError(number, str(exc)) from None
        yield from events


def dumps(event: dict[str, Any]) -> str:
    return json.dumps(event, separators=(",", ":"))
