"""What follows the events a table commits, besides the outbox: the screen and the state
snapshot for the hub (the buzzer is a subscriber itself, and the link is told the outbox grew).
The daemon calls each subscriber after each commit, on its main loop, in the order subscribed.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from contract.snapshots import TableState
from controller.events import Event
from controller.screens import DisplayModel

if TYPE_CHECKING:
    from controller.table import Table
    from hardware.outbox import Outbox
    from tablectl.parts import Display, HubLink

Subscriber = Callable[[Sequence[Event]], None]  # called with each commit's events (maybe none)

STATE_REFRESH = 10.0  # seconds between state snapshots when only the clock moves
HUB_CONNECT_GRACE = 10.0  # seconds a starting table shows "HUB .." before "HUB LOST"


class ScreenFeed:
    """The display as a subscriber: the screen's model follows every committed event (and, at
    a start, those the journal replays); the display draws it at each turn of the timer."""

    def __init__(self, model: DisplayModel, started_at: float) -> None:
        self.model = model
        self.display: Display | None = None  # attached once the parts are built
        self.started_at = started_at
        self.hub_seen = False  # the link has been up at least once since the start

    def committed(self, events: Sequence[Event]) -> None:
        for event in events:
            self.model.update(event)

    def hub_link(self, connected: bool, mono: float) -> None:
        if connected:
            self.hub_seen = True
            self.model.status.hub = "ok"
        elif self.hub_seen or mono - self.started_at >= HUB_CONNECT_GRACE:
            self.model.status.hub = "lost"
        # else: still "connecting" (no false HUB LOST in the first frames after a start)

    def draw(self, t: float, table: Table) -> None:
        if self.display is not None:
            self.display.show(self.model.screen(t, table.clock_state(), table.now))


class StatePublisher:
    """The retained ``state`` snapshot for late joiners (the dashboard): published when
    something a viewer sees may have changed (a commit, a reload, the link's state), and every
    STATE_REFRESH seconds for the clock; never built when nothing can have changed."""

    def __init__(self, link: HubLink, table: Table, outbox: Outbox, *,
                 now: Callable[[], float], mono: Callable[[], float],
                 wall: Callable[[], float] = time.time) -> None:
        self.link = link
        self.table = table
        self.outbox = outbox
        self.now = now  # the daemon's time
        self.mono = mono
        self.wall = wall
        self.changed = True
        self.shown: tuple[Any, ...] | None = None  # what the last snapshot showed
        self.sent = 0.0
        self.link_state: bool | None = None

    def committed(self, events: Sequence[Event]) -> None:
        self.changed = True

    def publish(self) -> None:
        connected, mono = self.link.connected, self.mono()
        if not self.changed and connected == self.link_state and \
                mono - self.sent < STATE_REFRESH:
            return  # nothing a viewer sees can have changed: no snapshot built
        self.changed, self.link_state = False, connected
        # The snapshot describes the table at its core's time, its last input's moment (a
        # press is stamped when the finger moved, seconds back for a hold; the clock's ticks
        # are no input): ``ts`` says when that was, so that a viewer reading the clock's time
        # left against ``ts`` is right.
        behind = max(0.0, self.now() - self.table.now)
        state = TableState.of(self.table.state(), hub_link="ok" if connected else "lost",
                              last_seq=self.outbox.last_seq,
                              ts_ms=int((self.wall() - behind) * 1000))
        shown = state.shown()
        if shown != self.shown or mono - self.sent >= STATE_REFRESH:
            self.shown, self.sent = shown, mono
            self.link.publish_state(state.to_json())
