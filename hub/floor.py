"""What the floor sees: every table's status, the alerts, the venue clock, hand-for-hand and
the replies to floor commands, built from the public MQTT topics only.

The floor view holds the room's state and follows the tables (status, state, events) itself;
it composes the desks that change it by concern: the alerts (hub/alerts.py), the seating and
the roster (hub/seating_desk.py, on the seating's truth in hub/seating.py) and the balancing
(hub/balance_desk.py).

Pure like the table core: messages and time (UTC milliseconds) in, updates out. The hub feeds
it from one queue; the dashboard gets a snapshot and then the updates (Server-Sent Events).
It never sees ``private``: the dashboard's MQTT role cannot read it (deploy/hub/acl.template),
and hand records with hole cards come from the recorder's storage, for roles allowed them.
"""

from __future__ import annotations

import unicodedata
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from controller.events import ShoeState, Street
from controller.inputs import dealer_id_problem
from controller.seating import SEAT_MAX
from hub.alerts import ALERT_LABELS, Alert, AlertDesk
from hub.refused import StaffError
from hub.roster import Roster
from hub.seating import SeatingPlan
from hub.seating_desk import BustOut, SeatingDesk
from hub.states import COUNTED, TableStatus
from hub.updates import (
    ClockUpdate,
    CommandUpdate,
    DealersUpdate,
    HubUpdate,
    TableUpdate,
    Update,
)

if TYPE_CHECKING:
    from contract.snapshots import TableState, VenueClockReading
    from controller.clock import Structure
    from hub.balance_desk import BalanceDesk



def room_clock_view(structure: Structure | None, elapsed: float,
                    running: bool) -> dict[str, Any]:
    """The tournament clock as the room reads it on the wall: the level or break with its
    blinds and ante, the time left, the next level, the time to the next break, and what the
    floor announces now (colour-ups, late registration) and at the next level."""
    if structure is None:
        return {"structure": None, "running": False}
    periods, starts = structure.periods, structure.starts()
    index = structure.index_at(elapsed)
    period = periods[index]
    left = max(0.0, starts[index] + period.seconds - elapsed)
    following = [p for p in periods[index + 1:] if not p.is_break]
    upcoming = next((i for i in range(index + 1, len(periods)) if periods[i].is_break), None)

    def blinds(p: Any) -> dict[str, Any]:
        return {"level": p.level, "sb": p.sb, "bb": p.bb, "ante": p.ante,
                "minutes": round(p.seconds / 60, 1)}

    return {
        "structure": structure.name, "title": structure.title, "running": running,
        "on_break": period.is_break, "remaining": round(left, 3),
        "current": None if period.is_break else blinds(period),
        "next": blinds(following[0]) if following else None,
        "break_in": None if upcoming is None or period.is_break
        else round(starts[upcoming] - elapsed, 3),
        "announcements": list(dict.fromkeys([*period.announcements, period.note] if period.note
                                            else period.announcements)),
        "next_announcements": list(periods[index + 1].announcements)
        if index + 1 < len(periods) else [],
    }


# A table's hand-for-hand state after each of its hand_for_hand events.
_HAND_FOR_HAND = {"off": "off", "waiting": "waiting", "playing": "playing",
                  "released": "playing", "dealt_early": "playing"}


@dataclass
class TableView:
    name: str
    status: str = TableStatus.UNKNOWN  # until the table is heard (hub/states.py)
    status_since: int | None = None
    boot: int | None = None
    hand: int | None = None
    in_progress: bool = False
    street: str | None = None
    dealer: str | None = None
    hands_per_hour: float | None = None
    redeal_pending: bool = False  # the last hand was a misdeal: its redeal comes next
    dealer_hands: int | None = None  # the dealer's hands at this table since signing in
    dealer_minutes: float | None = None  # their time in the box, at ``state_ts``
    level: int | None = None
    on_break: bool = False
    clock_running: bool = False
    remaining: float | None = None  # seconds left in the level at ``state_ts``
    state_ts: int | None = None
    shoe: str | None = None
    hub_link: str | None = None
    hand_for_hand: str = "off"  # off, waiting (hand finished), playing
    # The seats taken as the floor decided them (hub/seating.py: the seating's truth, what
    # every count is made of), and as the table says it deals them.
    seats: list[int] = field(default_factory=list)
    table_seats: list[int] = field(default_factory=list)
    seating: dict[str, Any] | None = None  # the plan's version, its state at the table, since
    button: int | None = None  # the button's seat (the table's state)
    blind_seats: dict[str, int] | None = None  # {"small": seat, "big": seat}
    last_seq: int = 0
    last_event_ts: int | None = None
    events: int = 0
    alerts_hidden: int = 0  # open alerts past the newest MAX_OPEN_ALERTS_PER_TABLE


@dataclass
class CommandView:
    transaction: str
    table: str
    command: str
    args: dict[str, Any]
    sent_by: str
    sent_at: int
    reply: dict[str, Any] | None = None
    replied_at: int | None = None


MAX_DEALER_NAMES = 500


@dataclass
class FloorView:
    venue: str
    tables: dict[str, TableView] = field(default_factory=dict)
    alerts: dict[int, Alert] = field(default_factory=dict)
    commands: dict[str, CommandView] = field(default_factory=dict)
    clock: dict[str, Any] | None = None
    broker: str = "connecting"  # the hub's own link to the broker: ok, lost
    broker_since: int | None = None
    next_alert: int = 1
    bustouts: list[BustOut] = field(default_factory=list)  # newest last, MAX_BUSTOUTS kept
    roster: Roster = field(default_factory=Roster)  # the entrants (empty: seats by number)
    dealer_names: dict[str, str] = field(default_factory=dict)  # badge id -> the dealer's name
    balance: BalanceDesk | None = None  # the house's balancing rule (None: not proposed)
    balance_stale: bool = True  # seats, blinds, hands or a status changed since the review
    seating: SeatingPlan = field(default_factory=SeatingPlan)  # the room's seating: the truth
    registration_open: bool = False  # late registration runs: no table is broken meanwhile
    # (table, seq) of events that raised an alert, oldest first: each raises one, however it
    # arrives (live, replayed, caught up from the store); bounded like _seen.
    alerted: dict[tuple[str, str, int], None] = field(default_factory=dict)
    _seen: dict[str, set[int]] = field(default_factory=dict)
    # The desks that change the room by concern (each works on this view's state).
    alert_desk: AlertDesk = field(init=False, repr=False, compare=False)
    seating_desk: SeatingDesk = field(init=False, repr=False, compare=False)

    MAX_COMMANDS = 200  # replies kept for the dashboard
    MAX_BUSTOUTS = 500

    def __post_init__(self) -> None:
        self.alert_desk = AlertDesk(self)
        self.seating_desk = SeatingDesk(self)

    @property
    def hand_for_hand(self) -> bool:
        """Hand-for-hand is on: the venue clock says so."""
        return bool((self.clock or {}).get("hand_for_hand"))

    # ------------------------------------------------------------------ from MQTT
    def table(self, name: str) -> TableView:
        if name not in self.tables:
            self.tables[name] = TableView(name)
        return self.tables[name]

    def on_status(self, name: str, payload: dict[str, Any], now: int) -> list[Update]:
        view = self.table(name)
        state = str(payload.get("state", TableStatus.UNKNOWN))
        updates: list[Update] = []
        if state != view.status or payload.get("boot") != view.boot:
            # A retained status read at start carries the time it was set. Not a Last Will:
            # the table wrote that at connection, so "lost" counts from when the hub heard it.
            view.status_since = now if state == TableStatus.LOST else int(payload.get("ts") or now)
            if state == TableStatus.LOST and view.status != TableStatus.LOST:
                updates += self.alert_desk.raise_alert(
                    name, "table_lost", "the table's connection was lost (no clean stop)",
                    None, now, False)
        if state != view.status:
            self.balance_stale = True
            if state == TableStatus.ONLINE:
                self.seating.back(name)  # what it missed is sent at once
        view.status, view.boot = state, payload.get("boot", view.boot)
        # The table's line last: an alert past the cap carries the line as it was before.
        return [*updates, self.table_update(view)]

    def on_state(self, name: str, state: TableState, now: int) -> list[Update]:
        view = self.table(name)
        before = (view.seats, view.button, view.blind_seats, view.in_progress)
        clock, stats = state.clock, state.dealer_stats
        view.hand = state.hand
        view.in_progress = state.in_progress
        view.street = state.street
        view.dealer = state.dealer
        view.hands_per_hour = stats["hands_per_hour"] if stats else None
        view.dealer_hands = stats["hands"] if stats else None
        view.dealer_minutes = stats["minutes"] if stats else None
        view.level = clock["level"] if clock else None
        view.on_break = clock["on_break"] if clock else False
        view.clock_running = clock["running"] if clock else False
        view.remaining = clock["remaining"] if clock else None
        view.state_ts = state.ts or now
        view.shoe = state.shoe
        view.hub_link = state.links.get("hub", view.hub_link)
        view.hand_for_hand = state.hand_for_hand
        # The table's seats are what it deals; the hub's seating stays the floor's (a table
        # never heard before is taken as it is).
        view.table_seats = list(state.seats)
        self.seating.heard(name, list(state.seats), state.seating, now)
        view.button = state.button
        view.blind_seats = state.blind_seats
        view.last_seq = max(view.last_seq, state.last_seq)
        update = self.table_update(view)
        if (view.seats, view.button, view.blind_seats, view.in_progress) != before:
            self.balance_stale = True
        return [update]

    def on_event(self, name: str, envelope: dict[str, Any], now: int) -> list[Update]:
        """One public event; the same ``(table, seq)`` twice (a replay) counts once."""
        seq = int(envelope.get("seq", 0))
        seen = self._seen.setdefault(name, set())
        if seq in seen:
            return []
        seen.add(seq)
        if len(seen) > 20000:  # replays reach back a few thousand events at most
            seen.difference_update(sorted(seen)[:10000])
        view = self.table(name)
        view.events += 1
        view.last_seq = max(view.last_seq, seq)
        ts = int(envelope.get("ts") or now)
        historical = bool(envelope.get("historical"))
        if not historical:
            view.last_event_ts = ts
            self._follow(view, envelope)
        updates: list[Update] = [self.table_update(view)]
        updates += self.alert_desk.alert_for(name, envelope, ts, historical)
        return updates

    def _follow(self, view: TableView, envelope: dict[str, Any]) -> None:
        """Keep the table's line current between its state snapshots."""
        data = envelope.get("data") or {}
        match envelope.get("type"):
            case "hand.started":
                view.hand, view.in_progress = envelope.get("hand"), True
                view.street = Street.PREFLOP
                view.level = data.get("level", view.level)
                view.redeal_pending = False
                self.balance_stale = True
            case "card" if data.get("street"):
                view.street = data["street"]
            case "hand.ended":
                view.in_progress, view.street = False, None
                # A misdeal is dealt again with the same players: the hand is not over.
                view.redeal_pending = data.get("outcome") == "misdeal"
                self.balance_stale = True
            case "dealer":
                view.dealer = envelope.get("dealer")
            case "dealer.summary":
                view.hands_per_hour = data.get("hands_per_hour")
            case "level":
                view.level = data.get("level", view.level)
            case "shoe" if data.get("state") != ShoeState.READS_LOST:  # lost reads: an event, the
                view.shoe = data.get("state", view.shoe)       # shoe itself is back (alerted)
            case "hand_for_hand":
                view.hand_for_hand = _HAND_FOR_HAND.get(str(data.get("state")),
                                                        view.hand_for_hand)

    def on_clock(self, reading: VenueClockReading, now: int) -> list[Update]:
        self.clock = {**reading.to_json(), "received": now}
        return [ClockUpdate(kind="clock", clock=self.clock,
                            hand_for_hand=self.hand_for_hand_panel())]

    def on_broker(self, state: str, now: int) -> list[Update]:
        """The hub's own link to the broker: while it is lost, what the floor sees is old."""
        if state != self.broker:
            self.broker, self.broker_since = state, now
        return [HubUpdate(kind="hub", broker=self.broker, since=self.broker_since)]

    def on_command_response(self, name: str, payload: dict[str, Any],
                            now: int) -> list[Update]:
        command = self.commands.get(str(payload.get("transaction")))
        if command is None or command.table != name:
            return []  # someone else's command (the recorder's replay requests, a CLI)
        command.reply, command.replied_at = payload, now
        updates: list[Update] = [CommandUpdate(kind="command", command=asdict(command))]
        if command.command == "seating" and not payload.get("ok") and self.seating.refused(
                name, command.args.get("version"), str(payload.get("error") or "refused")):
            updates.append(self.table_update(self.table(name)))
        return updates

    def name_dealer(self, badge: str, name: str) -> list[Update]:
        """A dealer's badge named ("" takes the name off); StaffError for a badge or name the
        tables and the dashboard could not show."""
        problem = dealer_id_problem(badge) if badge else "a badge id is needed"
        if problem:
            raise StaffError(f"badge: {problem}")
        # As a table spells it: "d31" typed at the desk is the D31 signed in at a table.
        seen = {t.dealer for t in self.tables.values() if t.dealer} | set(self.dealer_names)
        badge = next((b for b in sorted(seen) if b.casefold() == badge.casefold()), badge)
        said = " ".join(name.split())
        if len(said) > 40 or any(unicodedata.category(c)[0] == "C" for c in said):
            raise StaffError("a dealer's name has at most 40 printable characters")
        if said:
            if len(self.dealer_names) >= MAX_DEALER_NAMES and badge not in self.dealer_names:
                raise StaffError(f"at most {MAX_DEALER_NAMES} dealers are named")
            self.dealer_names[badge] = said
        else:
            self.dealer_names.pop(badge, None)
        return [DealersUpdate(kind="dealers", dealers=dict(self.dealer_names))]

    # ------------------------------------------------------------------ from staff
    def command_sent(self, transaction: str, table: str, command: str, args: dict[str, Any],
                     user: str, now: int) -> CommandUpdate:
        """A floor command sent, kept for its reply (MAX_COMMANDS kept)."""
        self.commands[transaction] = CommandView(transaction, table, command, args, user, now)
        while len(self.commands) > self.MAX_COMMANDS:
            self.commands.pop(next(iter(self.commands)))
        return CommandUpdate(kind="command", command=asdict(self.commands[transaction]))

    # ------------------------------------------------------------------ views
    @property
    def house_size(self) -> int:
        return self.balance.rules.table_size if self.balance else SEAT_MAX

    def table_size(self, table: str) -> int:
        """The seats a table has: the house's table size, or fewer at a short table."""
        return self.balance.table_size(table) if self.balance else SEAT_MAX

    def tables_in_play(self) -> list[TableView]:
        """The tables whose players count: seated, online or lost (a lost table keeps its last
        known seats: its players did not leave), not stopped cleanly."""
        return [t for _, t in sorted(self.tables.items())
                if t.status in COUNTED and t.seats]

    def hand_for_hand_panel(self) -> dict[str, Any]:
        """Which tables have finished the current hand; the next is released when all have."""
        playing = sorted(t.name for t in self.tables.values()
                         if t.status == TableStatus.ONLINE and t.hand_for_hand == "playing")
        waiting = sorted(t.name for t in self.tables.values()
                         if t.status == TableStatus.ONLINE and t.hand_for_hand == "waiting")
        return {"on": self.hand_for_hand, "playing": playing, "finished": waiting,
                "ready": self.hand_for_hand and bool(waiting) and not playing}

    def snapshot(self, now: int) -> dict[str, Any]:
        return {
            "venue": self.venue, "now": now, "clock": self.clock,
            "hub": {"broker": self.broker, "since": self.broker_since},
            "tables": [asdict(t) for _, t in sorted(self.tables.items())],
            "alerts": [asdict(a) for a in self.alerts.values()],
            "commands": [asdict(c) for c in self.commands.values()],
            "bustouts": [asdict(b) for b in self.bustouts],
            "hand_for_hand": self.hand_for_hand_panel(),
            "labels": ALERT_LABELS,
            "balance": self.balance.panel(self.tables) if self.balance else None,
            "roster": self.roster.view(),
            "dealers": dict(self.dealer_names),
        }

    def review_balance(self, now: int) -> list[Update]:
        """The balancing proposal after a change of the tables (seats, blinds, hands,
        statuses); nothing to do when none changed (a venue's many other messages)."""
        if self.balance is None or not self.balance_stale:
            return []
        self.balance_stale = False
        return self.balance.review(self.tables, now, self.registration_open)

    # ------------------------------------------------------------------ helpers
    def table_update(self, view: TableView) -> TableUpdate:
        plan = self.seating.tables.get(view.name)
        if plan is not None:
            view.seats = plan.occupied
            view.seating = plan.view(view.status == TableStatus.ONLINE)
        return TableUpdate(kind="table", table=asdict(view),
                           hand_for_hand=self.hand_for_hand_panel())
