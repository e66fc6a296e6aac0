"""What the floor sees: every table's status, the alerts, the venue clock, hand-for-hand and
the replies to floor commands, built from the public MQTT topics only.

Pure like the table core: messages and time (UTC milliseconds) in, updates out. The hub feeds
it from one queue; the dashboard gets a snapshot and then the updates (Server-Sent Events).
It never sees ``private``: the dashboard's MQTT role cannot read it (deploy/hub/acl.template),
and hand records with hole cards come from the recorder's storage, for roles allowed them.
"""

from __future__ import annotations

import contextlib
import random
import re
import unicodedata
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from contract.envelope import LEGACY_INCARNATION, incarnation_of
from controller.inputs import dealer_id_problem
from controller.seating import SEAT_MAX
from hub.balance_desk import COUNTED
from hub.roster import Roster, display_name
from hub.seating import PlannedMove, SeatingPlan, SeatingRefused

if TYPE_CHECKING:
    from contract.commands import SeatingCommand
    from contract.snapshots import TableState, VenueClockReading
    from controller.balancing import Proposal
    from controller.clock import Structure
    from hub.balance_desk import BalanceDesk

Update = dict[str, Any]

# How urgently the floor must come, most urgent first. Each level has its own sound on the
# dashboard, repeated until the alert is acknowledged (urgent more often).
SEVERITIES = ("urgent", "attention", "notice")
# Alert kinds the floor is called for: the label the dashboard shows and the severity.
# urgent: the game at that table waits for the floor (the dealer was told to call it, or the
# hand or the table cannot go on); attention: the dealer has ruled and the game goes on, the
# floor checks the ruling; notice: for the record.
ALERT_KINDS = {
    "floor_called": ("Floor called", "urgent"),
    "floor_ruling": ("Floor needed", "urgent"),
    "deck_fouled": ("Deck fouled", "urgent"),
    "void_hand": ("Void hand", "urgent"),
    "unknown_tag": ("Card not known", "urgent"),
    "shoe_fault": ("Shoe fault", "urgent"),
    "missing_card": ("Cards missing", "urgent"),
    "too_many_cards": ("Too many cards", "urgent"),
    "wrong_game": ("Wrong game", "urgent"),
    "flop_scramble": ("Four-card flop", "urgent"),
    "clock_held": ("Clock paused for the floor", "urgent"),
    "table_lost": ("Table lost", "urgent"),
    "dealt_early": ("Dealt before release", "urgent"),
    "misdeal": ("Misdeal", "attention"),
    "missing_burn": ("No burn", "attention"),
    "clock_called": ("Clock called", "attention"),
    "journal_quarantined": ("Journal line quarantined", "notice"),
    # A table's identity and clock (hub/recorder.py): nothing is lost, but somebody must look.
    "two_tables_one_name": ("Two devices run as one table", "urgent"),
    "journal_restored": ("Table restored from a copy", "attention"),
    "journal_new": ("Table has a new journal", "notice"),
    "table_clock_off": ("Table clock wrong", "attention"),
}
ALERT_LABELS = {kind: label for kind, (label, _) in ALERT_KINDS.items()}


def severity_of(kind: str) -> str:
    return ALERT_KINDS.get(kind, ("", "urgent"))[1]  # a kind this hub does not know: look


# The event types that can raise an alert (the floor's catch-up reads these from the store).
ALERT_EVENT_TYPES = ("ruling", "deck_check.result", "shot_clock", "floor.called",
                     "clock.hold", "hand_for_hand", "journal.quarantined")
# A ruling that sends the dealer to the floor, by its reason: the alert's kind.
FLOOR_REASONS = {
    "unknown_tag": "unknown_tag",
    "shoe_fault": "shoe_fault",
    "wrong_card_count": "missing_card",
    "too_many_board_cards": "too_many_cards",
    "missing_burn": "missing_burn",
    "wrong_game": "wrong_game",
}
MAX_OPEN_ALERTS_PER_TABLE = 50  # more are kept in the database and counted, not shown
MAX_ALERT_TEXT = 500  # characters of a table's text kept in an alert
MAX_ALERTED_REMEMBERED = 20000  # events known to have raised their alert (a night's many times)


def alert_of(envelope: dict[str, Any]) -> tuple[str, str] | None:
    """The alert a public event raises, as ``(kind, text)``, or None. The hub reads events as
    the contract's JSON (checked against its schema on arrival): it dispatches on ``type``."""
    data = envelope.get("data") or {}
    match envelope.get("type"), data:
        case "ruling", {"action": action}:
            return _ruling_alert(action, data)
        case "deck_check.result", _ if not data.get("ok", True):
            return "deck_fouled", str(data.get("text", "deck check failed"))
        case "hand_for_hand", {"state": "dealt_early"}:
            return "dealt_early", str(data.get("text", "a hand dealt before the floor "
                                                       "released the table"))
        case "shot_clock", {"state": "started"}:
            return "clock_called", f"clock called: {data.get('seconds', '?')} s"
        case "floor.called", _:
            return "floor_called", "the dealer calls the floor"
        case "clock.hold", _:
            return "clock_held", ("the house stops the blind clock for a floor call "
                                  f"({str(data.get('source', 'house rule'))[:100]}): the venue "
                                  "clock is paused; resume it when the dispute is settled")
        case "journal.quarantined", _:
            return "journal_quarantined", (f"journal line {data.get('line')} could not be "
                                           f"replayed at the table's start: "
                                           f"{data.get('reason')}")[:500]
    return None


# The table's words for a card it does not know, as its dealer's display shows them.
_UNKNOWN_TAG = re.compile(r"UNKNOWN TAG ([0-9A-Fa-f]{2,32})")


def card_problem(data: dict[str, Any]) -> str:
    """A card the table could not place, in the floor's words first (where it is, what is
    wrong with it, what to do), the tag's id last, for whoever checks the deck's list."""
    text = str(data.get("text", ""))
    tag = _UNKNOWN_TAG.search(text)
    what = ("A card not in this table's decks" if tag else "A card the shoe could not read"
            if "UNREADABLE" in text else "A card the table does not know")
    seat, street = data.get("seat"), data.get("street")
    where = (f" at seat {seat}" if isinstance(seat, int) else " in the deal"
             if street == "preflop" else f" on the {street}"
             if isinstance(street, str) and street else "")
    return (f"{what}{where}: the floor checks the card (is it this table's deck? a card of "
            f"another deck goes out, a damaged one is replaced)"
            + (f"; tag {tag.group(1)}" if tag else ""))


def _ruling_alert(action: object, data: dict[str, Any]) -> tuple[str, str] | None:
    text = str(data.get("text", ""))
    seat = data.get("seat")
    if action == "call_floor" and data.get("reason") == "unknown_tag":
        return "unknown_tag", card_problem(data)
    if isinstance(seat, int) and f"seat {seat}" not in text:
        text = f"seat {seat}: {text}"  # where the floor must look
    match action:
        case "misdeal":
            return "misdeal", text or "misdeal"
        case "void_hand":
            fouled = data.get("reason") == "duplicate_card"
            return ("deck_fouled" if fouled else "void_hand"), text or "void hand"
        case "call_floor":
            return FLOOR_REASONS.get(str(data.get("reason")), "floor_ruling"), text
        case "scramble_flop":  # TDA 39: the floor picks the burn
            return "flop_scramble", text
    return None


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


class StaffError(Exception):
    """A staff request the hub refuses: the message says why (shown in the dashboard)."""


@dataclass
class TableView:
    name: str
    status: str = "unknown"  # online, lost, offline; unknown until the table is heard
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
class Alert:
    id: int
    table: str
    kind: str
    text: str
    hand: int | None
    ts: int
    historical: bool = False
    acked_by: str | None = None
    acked_at: int | None = None
    seq: int | None = None  # the event that raised it: one alert per event, across restarts
    incarnation: str | None = None  # (its table's incarnation that made it)
    reopened_by: str | None = None  # acknowledged by mistake and opened again (floor log too)
    reopened_at: int | None = None
    severity: str = field(init=False, default="")  # urgent, attention, notice: from the kind

    def __post_init__(self) -> None:
        self.severity = severity_of(self.kind)


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
UNDO_BUSTOUT_MS = 120_000  # a bust-out can be undone this long after the table applied it


@dataclass
class BustOut:
    """A player the floor put out (their seat leaves the hub's seating at once; the table
    deals without it from its next hand). Its undo lives here, at the hub: every dashboard
    shows it, after a refresh too, for its window."""

    table: str
    seat: int
    hand: int | None  # the table's hand when it happened
    ts: int
    by: str
    undone_by: str | None = None  # the seat was given back
    undone_at: int | None = None
    player: str | None = None  # who sat there, by the roster (None: no roster)
    place: int | None = None  # their finishing place when it happened (the roster's is live)
    player_id: int | None = None
    id: str = field(init=False, default="")
    undo_until: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        self.id = f"{self.table}:{self.seat}:{self.ts}"
        self.undo_until = self.ts + UNDO_BUSTOUT_MS


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

    MAX_COMMANDS = 200  # replies kept for the dashboard
    MAX_BUSTOUTS = 500

    @property
    def hand_for_hand(self) -> bool:
        """Hand-for-hand is on: the venue clock says so."""
        return bool((self.clock or {}).get("hand_for_hand"))
    MAX_ACKED_ALERTS = 500  # acknowledged alerts kept in memory (all are in the database)

    # ------------------------------------------------------------------ from MQTT
    def table(self, name: str) -> TableView:
        if name not in self.tables:
            self.tables[name] = TableView(name)
        return self.tables[name]

    def on_status(self, name: str, payload: dict[str, Any], now: int) -> list[Update]:
        view = self.table(name)
        state = str(payload.get("state", "unknown"))
        updates: list[Update] = []
        if state != view.status or payload.get("boot") != view.boot:
            # A retained status read at start carries the time it was set. Not a Last Will:
            # the table wrote that at connection, so "lost" counts from when the hub heard it.
            view.status_since = now if state == "lost" else int(payload.get("ts") or now)
            if state == "lost" and view.status != "lost":
                updates += self._raise(name, "table_lost", "the table's connection was "
                                       "lost (no clean stop)", None, now, False)
        if state != view.status:
            self.balance_stale = True
            if state == "online":
                self.seating.back(name)  # what it missed is sent at once
        view.status, view.boot = state, payload.get("boot", view.boot)
        # The table's line last: an alert past the cap carries the line as it was before.
        return [*updates, self._table_update(view)]

    def on_state(self, name: str, state: TableState, now: int) -> list[Update]:
        view = self.table(name)
        before = (view.seats, view.button, view.blind_seats, view.in_progress)
        clock = state.clock or {}
        stats = state.dealer_stats or {}
        view.hand = state.hand
        view.in_progress = state.in_progress
        view.street = state.street
        view.dealer = state.dealer
        view.hands_per_hour = stats.get("hands_per_hour")
        view.dealer_hands = stats.get("hands")
        view.dealer_minutes = stats.get("minutes")
        view.level = clock.get("level")
        view.on_break = bool(clock.get("on_break"))
        view.clock_running = bool(clock.get("running"))
        view.remaining = clock.get("remaining")
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
        update = self._table_update(view)
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
        updates = [self._table_update(view)]
        updates += self._alert_for(name, envelope, ts, historical)
        return updates

    def _alert_for(self, name: str, envelope: dict[str, Any], ts: int,
                   historical: bool) -> list[Update]:
        alert = alert_of(envelope)
        seq = envelope.get("seq")
        incarnation = incarnation_of(envelope)
        if (alert is None or not isinstance(seq, int)
                or (name, incarnation, seq) in self.alerted):
            return []
        self.alerted[(name, incarnation, seq)] = None
        while len(self.alerted) > MAX_ALERTED_REMEMBERED:
            del self.alerted[next(iter(self.alerted))]
        return self._raise(name, alert[0], alert[1], envelope.get("hand"), ts, historical,
                           seq, incarnation)

    def news_alert(self, table: str, kind: str, text: str, now: int) -> list[Update]:
        """What the recorder found of a table (``TableNews``): one alert."""
        self.table(table)
        return self._raise(table, kind, text, None, now, False)

    def catch_up(self, envelopes: list[dict[str, Any]]) -> list[Update]:
        """Alerts for events recorded while the hub was down (the recorder's store, public
        view): each event raises its alert once, whichever way it arrives."""
        updates: list[Update] = []
        for envelope in envelopes:
            name, ts = envelope.get("table"), envelope.get("ts")
            if isinstance(name, str) and isinstance(ts, int):
                self.table(name)
                updates += self._alert_for(name, envelope, ts, True)
        return updates

    def _follow(self, view: TableView, envelope: dict[str, Any]) -> None:
        """Keep the table's line current between its state snapshots."""
        data = envelope.get("data") or {}
        match envelope.get("type"):
            case "hand.started":
                view.hand, view.in_progress, view.street = envelope.get("hand"), True, "preflop"
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
            case "shoe" if data.get("state") != "reads_lost":  # lost reads: an event, the
                view.shoe = data.get("state", view.shoe)       # shoe itself is back (alerted)
            case "hand_for_hand":
                view.hand_for_hand = _HAND_FOR_HAND.get(str(data.get("state")),
                                                        view.hand_for_hand)

    def on_clock(self, reading: VenueClockReading, now: int) -> list[Update]:
        self.clock = {**reading.to_json(), "received": now}
        return [{"kind": "clock", "clock": self.clock,
                 "hand_for_hand": self.hand_for_hand_panel()}]

    def on_broker(self, state: str, now: int) -> list[Update]:
        """The hub's own link to the broker: while it is lost, what the floor sees is old."""
        if state != self.broker:
            self.broker, self.broker_since = state, now
        return [{"kind": "hub", "broker": self.broker, "since": self.broker_since}]

    def on_command_response(self, name: str, payload: dict[str, Any],
                            now: int) -> list[Update]:
        command = self.commands.get(str(payload.get("transaction")))
        if command is None or command.table != name:
            return []  # someone else's command (the recorder's replay requests, a CLI)
        command.reply, command.replied_at = payload, now
        updates: list[Update] = [{"kind": "command", "command": asdict(command)}]
        if command.command == "seating" and not payload.get("ok") and self.seating.refused(
                name, command.args.get("version"), str(payload.get("error") or "refused")):
            updates.append(self._table_update(self.table(name)))
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
        return [{"kind": "dealers", "dealers": dict(self.dealer_names)}]

    def roster_update(self) -> Update:
        return {"kind": "roster", "roster": self.roster.view()}

    def final_table_draw(self, final: str, by: str, now: int,
                         rng: random.Random) -> list[Update]:
        """Every player left draws a seat at the final table (seed 002: "Before the start of
        any final table players seating positions are to be decided by use of the Ace - 8
        card system"; seed 001: "all players, including those already seated at the table,
        draw for their seat"). The final table's own players change seats at its next hand;
        the others leave theirs after their hand there and are seated at the final table
        once they have (hub/seating.py). StaffError says why not."""
        roster = self.roster
        players = [p for p in roster.players.values() if p.playing]
        if not players:
            raise StaffError("no roster: the final table's draw is among the players entered")
        if final not in self.tables:
            raise StaffError(f"no table {final!r} has been heard at this venue")
        size = self.table_size(final)
        if len(players) > size:
            raise StaffError(f"{len(players)} players are left and table {final} seats {size}:"
                             " break down to the final table first")
        plans = self.seating.tables
        on_their_way = [a for plan in plans.values() for a in plan.arriving]
        if on_their_way:
            a = on_their_way[0]
            raise StaffError(f"a player is on their way from table {a.from_table} seat "
                             f"{a.from_seat}: draw the final table once they are seated")
        for name, plan in sorted(plans.items()):
            unnamed = [s for s in plan.seats if roster.at(name, s) is None]
            if unnamed:
                raise StaffError(f"table {name} seat {unnamed[0]} has no one on the roster: "
                                 "enter them first")
        waiting = [p for p in players if p.table is None]
        if waiting:
            raise StaffError(f"{waiting[0].name} waits for a seat: draw seats first")
        new_seats = rng.sample(range(1, size + 1), len(players))
        rng.shuffle(players)
        drawn = list(zip(players, new_seats, strict=True))
        staying = [(p, seat) for p, seat in drawn if p.table == final]
        coming = [(p, seat) for p, seat in drawn if p.table != final]
        try:
            self.seating.set_seats(final, [seat for _, seat in staying], by, now, [
                {"seat": seat, "from_table": final, "from_seat": p.seat,
                 "player": display_name(p.name)}
                for p, seat in staying if p.seat != seat])
            emptied = tuple(sorted({str(p.table) for p, _ in coming}))
            self.seating.move([PlannedMove(str(p.table), int(p.seat or 0), final, seat,
                                           display_name(p.name)) for p, seat in coming],
                              by, now, breaking=emptied)
        except SeatingRefused as exc:
            raise StaffError(str(exc)) from None
        for player, seat in drawn:
            player.table, player.seat = final, seat
        self.balance_stale = True
        return [*self._seating_updates(), self.roster_update()]

    def draw_seats(self, by: str, now: int,
                   rng: random.Random) -> tuple[dict[str, list[tuple[int, Any]]], list[Update]]:
        """Seats drawn for every player waiting (hub/roster.py's draw) at the tables in play
        or waiting for players: online, not broken. Each table that gets a new seat taken
        has it in its seating at once (the table seats them at its next hand)."""
        unnamed: dict[str, list[int]] = {}
        free: dict[str, list[int]] = {}
        occupied: dict[str, int] = {}
        for name, view in sorted(self.tables.items()):
            plan = self.seating.plan(name)
            if view.status != "online" or plan.broken:
                continue
            unnamed[name] = [s for s in plan.seats if self.roster.at(name, s) is None]
            free[name] = [s for s in range(1, self.table_size(name) + 1)
                          if s not in plan.occupied]
            occupied[name] = len(plan.occupied)
        drawn = self.roster.draw(unnamed, free, occupied, rng)
        for table, seated in sorted(drawn.items()):
            plan = self.seating.plan(table)
            new = {seat for seat, _ in seated} - set(plan.seats)
            if new:
                self.seating.set_seats(table, sorted({*plan.seats, *new}), by, now)
        self.balance_stale = True
        return drawn, [*self._seating_updates(), self.roster_update()]

    # ------------------------------------------------------------------ the floor's seating
    def bust(self, table: str, seat: int, by: str, now: int) -> list[Update]:
        """The player in ``table``'s ``seat`` is out: the seat leaves the hub's seating at
        once (a second bust in the same hand leaves it too: the table gets both), the
        roster places them, and the bust-out can be undone for its window."""
        view = self.table(table)
        size = self.table_size(table)
        if not 1 <= seat <= size:
            raise StaffError(f"table {table} seats {size}: there is no seat {seat}")
        try:
            at_table, at_seat = self.seating.bust(table, seat, by, now)
        except SeatingRefused as exc:
            raise StaffError(str(exc)) from None
        player = self.roster.went_out(at_table, at_seat, now, view.hand)
        bust = BustOut(at_table, at_seat, view.hand, now, by,
                       player=player.name if player else None,
                       place=self.roster.places().get(player.id) if player else None,
                       player_id=player.id if player else None)
        self.bustouts.append(bust)
        del self.bustouts[:max(0, len(self.bustouts) - self.MAX_BUSTOUTS)]
        self.balance_stale = True
        return [*self._seating_updates(), {"kind": "bustout", "bustout": asdict(bust)},
                *([self.roster_update()] if player is not None else [])]

    def undo_bustout(self, bust_id: str, by: str, now: int) -> list[Update]:
        """A bust-out's seat given back (StaffError says why not: no such bust-out, undone
        already, its window closed, the seat taken since)."""
        bust = next((b for b in self.bustouts if b.id == bust_id), None)
        if bust is None:
            raise StaffError(f"no bust-out {bust_id!r} at this venue")
        if bust.undone_by is not None:
            raise StaffError(f"already undone by {bust.undone_by}: table {bust.table} seat "
                             f"{bust.seat} is back in the game")
        if now > bust.undo_until:
            raise StaffError(f"too late to undo table {bust.table} seat {bust.seat}'s bust-out: "
                             f"an undo is for {UNDO_BUSTOUT_MS // 60_000} minutes; seat the "
                             "player again from the table's panel")
        try:
            self.seating.give_back(bust.table, bust.seat, by, now)
        except SeatingRefused as exc:
            raise StaffError(str(exc)) from None
        bust.undone_by, bust.undone_at = by, now
        back = self.roster.back_in(bust.table, bust.seat, bust.ts, bust.player_id) is not None
        self.balance_stale = True
        return [*self._seating_updates(), {"kind": "bustout", "bustout": asdict(bust)},
                *([self.roster_update()] if back else [])]

    def set_seats(self, table: str, seats: list[int], by: str, now: int,
                  moves: list[dict[str, Any]] | None = None) -> list[Update]:
        """The floor sets a table's whole seating by hand: each seat taken out is a bust-out
        (its player out, as a bust), each new one an unnamed player (named by the draw)."""
        self.table(table)
        size = self.table_size(table)
        past = sorted(s for s in seats if s > size)
        if past:
            raise StaffError(f"table {table} seats {size} (the house's table size"
                             f"{', a short table' if size < self.house_size else ''}"
                             f"): no seat past {size}")
        updates: list[Update] = []
        gone = sorted(set(self.seating.plan(table).seats) - set(seats))
        moved = {m.get("seat") for m in moves or () if isinstance(m, dict)}
        for seat in gone:
            if seat not in moved:
                updates += self.bust(table, seat, by, now)
        try:
            self.seating.set_seats(table, seats, by, now, moves)
        except SeatingRefused as exc:
            raise StaffError(str(exc)) from None
        self.balance_stale = True
        return [*updates, *self._seating_updates()]

    def remove_entrant(self, player_id: int, by: str, now: int) -> tuple[Any, list[Update]]:
        """An entrant entered by mistake gone from the roster (hub/roster.py ``remove``); a
        seat drawn for them leaves the seating, as no bust-out (they never played)."""
        player = self.roster.player(player_id)
        if player.table is not None and player.seat is not None and player.playing:
            self.roster.remove(player_id)  # its refusals first, before the seating changes
            # (A seat not in the seating was never the hub's: drawn, then set by hand.)
            with contextlib.suppress(SeatingRefused):
                self.seating.bust(player.table, player.seat, by, now)
        else:
            self.roster.remove(player_id)
        self.balance_stale = True
        return player, [*self._seating_updates(), self.roster_update()]

    def make_moves(self, proposal: Proposal, by: str, now: int) -> list[Update]:
        """A balancing move or a table break the floor confirmed, made now: each player
        leaves after their hand and is seated at the other table once they have."""
        moves = []
        for m in proposal.moves:
            player = self.roster.at(m.from_table, m.from_seat)
            moves.append(PlannedMove(m.from_table, m.from_seat, m.to_table, m.to_seat,
                                     display_name(player.name) if player else None))
        breaking = (proposal.tables[0],) if proposal.kind == "break" else ()
        try:
            self.seating.move(moves, by, now, breaking)
        except SeatingRefused as exc:
            raise StaffError(str(exc)) from None
        for m in proposal.moves:
            self.roster.moved(m.from_table, m.from_seat, m.to_table, m.to_seat)
        self.balance_stale = True
        return [*self._seating_updates(), self.roster_update()]

    def reconcile(self, now: int) -> tuple[list[tuple[str, SeatingCommand]], list[Update]]:
        """Between messages: seats held for players who have left their table given to the
        table they go to, and each seating a table does not deal yet to send (again)."""
        statuses = {name: view.status for name, view in self.tables.items()}
        released = self.seating.release(statuses, now)
        online = {name for name, status in statuses.items() if status == "online"}
        due = self.seating.due(online, now)
        updates = [self._table_update(self.table(name))
                   for name in sorted({*released, *(name for name, _ in due)})]
        if released:
            self.balance_stale = True
        return due, updates

    def _seating_updates(self) -> list[Update]:
        """The line of every table whose seating changed (its new version)."""
        return [self._table_update(self.table(name))
                for name, plan in sorted(self.seating.tables.items())
                if (self.tables.get(name) is None
                    or (self.tables[name].seating or {}).get("version") != plan.version
                    or self.tables[name].seats != plan.occupied)]

    # ------------------------------------------------------------------ from staff
    def command_sent(self, transaction: str, table: str, command: str, args: dict[str, Any],
                     user: str, now: int) -> list[Update]:
        self.commands[transaction] = CommandView(transaction, table, command, args, user, now)
        while len(self.commands) > self.MAX_COMMANDS:
            self.commands.pop(next(iter(self.commands)))
        return [{"kind": "command", "command": asdict(self.commands[transaction])}]

    def acknowledge(self, alert_id: int, user: str, now: int) -> list[Update]:
        """Record who acknowledged an alert; KeyError if there is no such alert."""
        alert = self.alerts[alert_id]
        if alert.acked_by is None:
            alert.acked_by, alert.acked_at = user, now
        acked = [a for a in self.alerts.values() if a.acked_by is not None]
        for old in acked[:max(0, len(acked) - self.MAX_ACKED_ALERTS)]:
            del self.alerts[old.id]
        return [{"kind": "alert", "alert": asdict(alert)}]

    def acknowledge_table(self, table: str, user: str, now: int,
                          shown: list[int] | None = None) -> tuple[list[Update], int | None]:
        """Acknowledge the open alerts of a table that the dashboard showed in its group
        (``shown``; None: every open one), one tap when the floor has been to the table. An
        alert raised since, or filtered out of the group, stays open. The older ones past
        the cap, which the group counted as "older not shown", go too: the second value is
        the id below which the caller closes them in the database (None: none to close)."""
        updates: list[Update] = []
        wanted = None if shown is None else set(shown)
        mine = [a for a in self.alerts.values() if a.table == table]
        for alert in [a for a in mine if not a.acked_by
                      and (wanted is None or a.id in wanted)]:
            updates += self.acknowledge(alert.id, user, now)
        view = self.tables.get(table)
        below = None
        if view is not None and view.alerts_hidden:
            view.alerts_hidden = 0
            updates.append(self._table_update(view))
            below = min((a.id for a in mine), default=self.next_alert)
        return updates, below

    def reopen(self, alert_id: int, user: str, now: int) -> list[Update]:
        """An acknowledged alert open again (acknowledged by mistake); KeyError if there is
        no such alert. ``reopened_by`` says who, until it is acknowledged again."""
        alert = self.alerts[alert_id]
        if alert.acked_by is not None:
            alert.acked_by = alert.acked_at = None
            alert.reopened_by, alert.reopened_at = user, now
        return [{"kind": "alert", "alert": asdict(alert)}]

    def restore_alert(self, alert: Alert) -> None:
        """An alert read back from the database at start (open ones, and recent ones)."""
        self.alerts[alert.id] = alert
        self.next_alert = max(self.next_alert, alert.id + 1)
        if alert.seq is not None:
            self.alerted[(alert.table, alert.incarnation or LEGACY_INCARNATION,
                          alert.seq)] = None
        self._cap(alert.table)

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
                         if t.status == "online" and t.hand_for_hand == "playing")
        waiting = sorted(t.name for t in self.tables.values()
                         if t.status == "online" and t.hand_for_hand == "waiting")
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
    def _raise(self, table: str, kind: str, text: str, hand: Any, ts: int,
               historical: bool, seq: int | None = None,
               incarnation: str | None = None) -> list[Update]:
        alert = Alert(self.next_alert, table, kind, text[:MAX_ALERT_TEXT],
                      int(hand) if isinstance(hand, int) else None, ts, historical, seq=seq,
                      incarnation=incarnation)
        self.next_alert += 1
        self.alerts[alert.id] = alert
        updates: list[Update] = [{"kind": "alert", "alert": asdict(alert), "new": True}]
        hidden = self._cap(table)
        if hidden:
            # One table's flood must not bury the others (or slow every update): the oldest
            # open alerts leave the view, stay open in the database, and are counted.
            updates += [{"kind": "alert_hidden", "id": a.id} for a in hidden]
            updates.append(self._table_update(self.table(table)))
        return updates

    def _cap(self, table: str) -> list[Alert]:
        open_alerts = [a for a in self.alerts.values()
                       if a.table == table and a.acked_by is None]
        hidden = open_alerts[:max(0, len(open_alerts) - MAX_OPEN_ALERTS_PER_TABLE)]
        for alert in hidden:
            del self.alerts[alert.id]
        if hidden:
            self.table(table).alerts_hidden += len(hidden)
        return hidden

    def _table_update(self, view: TableView) -> Update:
        plan = self.seating.tables.get(view.name)
        if plan is not None:
            view.seats = plan.occupied
            view.seating = plan.view(view.status == "online")
        return {"kind": "table", "table": asdict(view),
                "hand_for_hand": self.hand_for_hand_panel()}
