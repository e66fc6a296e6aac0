"""The floor's alerts: which public events call the floor, how urgently, and the alerts raised,
capped, acknowledged and re-opened. Pure like the floor view that composes it (hub/floor.py):
messages and time (UTC milliseconds) in, updates out.

Each event raises its alert once, however it arrives (live, replayed, caught up from the
store); one table's flood is capped in the view (the oldest open alerts counted, not shown).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from contract.envelope import LEGACY_INCARNATION, incarnation_of
from controller.events import RulingAction, RulingReason, Street
from hub.states import Severity
from hub.updates import AlertHiddenUpdate, AlertUpdate, Update

if TYPE_CHECKING:
    from hub.floor import FloorView


# How urgently the floor must come, most urgent first. Each level has its own sound on the
# dashboard, repeated until the alert is acknowledged (urgent more often).
SEVERITIES = tuple(Severity)
# Alert kinds the floor is called for: the label the dashboard shows and the severity.
# urgent: the game at that table waits for the floor (the dealer was told to call it, or the
# hand or the table cannot go on); attention: the dealer has ruled and the game goes on, the
# floor checks the ruling; notice: for the record.
URGENT, ATTENTION, NOTICE = Severity.URGENT, Severity.ATTENTION, Severity.NOTICE
ALERT_KINDS: dict[str, tuple[str, Severity]] = {
    "floor_called": ("Floor called", URGENT),
    "floor_ruling": ("Floor needed", URGENT),
    "deck_fouled": ("Deck fouled", URGENT),
    "void_hand": ("Void hand", URGENT),
    "unknown_tag": ("Card not known", URGENT),
    "shoe_fault": ("Shoe fault", URGENT),
    "missing_card": ("Cards missing", URGENT),
    "too_many_cards": ("Too many cards", URGENT),
    "wrong_game": ("Wrong game", URGENT),
    "flop_scramble": ("Four-card flop", URGENT),
    "clock_held": ("Clock paused for the floor", URGENT),
    "table_lost": ("Table lost", URGENT),
    "dealt_early": ("Dealt before release", URGENT),
    "misdeal": ("Misdeal", ATTENTION),
    "missing_burn": ("No burn", ATTENTION),
    "clock_called": ("Clock called", ATTENTION),
    "journal_quarantined": ("Journal line quarantined", NOTICE),
    # A table's identity and clock (hub/recorder.py): nothing is lost, but somebody must look.
    "two_tables_one_name": ("Two devices run as one table", URGENT),
    "journal_restored": ("Table restored from a copy", ATTENTION),
    "journal_new": ("Table has a new journal", NOTICE),
    "table_clock_off": ("Table clock wrong", ATTENTION),
}
ALERT_LABELS = {kind: label for kind, (label, _) in ALERT_KINDS.items()}


def severity_of(kind: str) -> Severity:
    return ALERT_KINDS.get(kind, ("", URGENT))[1]  # a kind this hub does not know: look


# The event types that can raise an alert (the floor's catch-up reads these from the store).
ALERT_EVENT_TYPES = ("ruling", "deck_check.result", "shot_clock", "floor.called",
                     "clock.hold", "hand_for_hand", "journal.quarantined")
# A ruling that sends the dealer to the floor, by its reason: the alert's kind.
FLOOR_REASONS: dict[str, str] = {
    RulingReason.UNKNOWN_TAG: "unknown_tag",
    RulingReason.SHOE_FAULT: "shoe_fault",
    RulingReason.WRONG_CARD_COUNT: "missing_card",
    RulingReason.TOO_MANY_BOARD_CARDS: "too_many_cards",
    RulingReason.MISSING_BURN: "missing_burn",
    RulingReason.WRONG_GAME: "wrong_game",
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
             if street == Street.PREFLOP else f" on the {street}"
             if isinstance(street, str) and street else "")
    return (f"{what}{where}: the floor checks the card (is it this table's deck? a card of "
            f"another deck goes out, a damaged one is replaced)"
            + (f"; tag {tag.group(1)}" if tag else ""))


def _ruling_alert(action: object, data: dict[str, Any]) -> tuple[str, str] | None:
    text = str(data.get("text", ""))
    seat = data.get("seat")
    if action == RulingAction.CALL_FLOOR and data.get("reason") == RulingReason.UNKNOWN_TAG:
        return "unknown_tag", card_problem(data)
    if isinstance(seat, int) and f"seat {seat}" not in text:
        text = f"seat {seat}: {text}"  # where the floor must look
    match action:
        case RulingAction.MISDEAL:
            return "misdeal", text or "misdeal"
        case RulingAction.VOID_HAND:
            fouled = data.get("reason") == RulingReason.DUPLICATE_CARD
            return ("deck_fouled" if fouled else "void_hand"), text or "void hand"
        case RulingAction.CALL_FLOOR:
            return FLOOR_REASONS.get(str(data.get("reason")), "floor_ruling"), text
        case RulingAction.SCRAMBLE_FLOP:  # TDA 39: the floor picks the burn
            return "flop_scramble", text
    return None

MAX_ACKED_ALERTS = 500  # acknowledged alerts kept in memory (all are in the database)


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


class AlertDesk:
    """The floor view's alerts (its ``alerts``, ``next_alert`` and ``alerted``): raised from
    events and the recorder's news, capped per table, acknowledged and re-opened."""

    def __init__(self, floor: FloorView) -> None:
        self.floor = floor

    def alert_for(self, name: str, envelope: dict[str, Any], ts: int,
                   historical: bool) -> list[Update]:
        alert = alert_of(envelope)
        seq = envelope.get("seq")
        incarnation = incarnation_of(envelope)
        if (alert is None or not isinstance(seq, int)
                or (name, incarnation, seq) in self.floor.alerted):
            return []
        self.floor.alerted[(name, incarnation, seq)] = None
        while len(self.floor.alerted) > MAX_ALERTED_REMEMBERED:
            del self.floor.alerted[next(iter(self.floor.alerted))]
        return self.raise_alert(name, alert[0], alert[1], envelope.get("hand"), ts, historical,
                           seq, incarnation)

    def news_alert(self, table: str, kind: str, text: str, now: int) -> list[Update]:
        """What the recorder found of a table (``TableNews``): one alert."""
        self.floor.table(table)
        return self.raise_alert(table, kind, text, None, now, False)

    def catch_up(self, envelopes: list[dict[str, Any]]) -> list[Update]:
        """Alerts for events recorded while the hub was down (the recorder's store, public
        view): each event raises its alert once, whichever way it arrives."""
        updates: list[Update] = []
        for envelope in envelopes:
            name, ts = envelope.get("table"), envelope.get("ts")
            if isinstance(name, str) and isinstance(ts, int):
                self.floor.table(name)
                updates += self.alert_for(name, envelope, ts, True)
        return updates

    def acknowledge(self, alert_id: int, user: str, now: int) -> list[AlertUpdate]:
        """Record who acknowledged an alert; KeyError if there is no such alert."""
        alert = self.floor.alerts[alert_id]
        if alert.acked_by is None:
            alert.acked_by, alert.acked_at = user, now
        acked = [a for a in self.floor.alerts.values() if a.acked_by is not None]
        for old in acked[:max(0, len(acked) - MAX_ACKED_ALERTS)]:
            del self.floor.alerts[old.id]
        return [AlertUpdate(kind="alert", alert=asdict(alert))]

    def acknowledge_table(self, table: str, user: str, now: int,
                          shown: list[int] | None = None) -> tuple[list[Update], int | None]:
        """Acknowledge the open alerts of a table that the dashboard showed in its group
        (``shown``; None: every open one), one tap when the floor has been to the table. An
        alert raised since, or filtered out of the group, stays open. The older ones past
        the cap, which the group counted as "older not shown", go too: the second value is
        the id below which the caller closes them in the database (None: none to close)."""
        updates: list[Update] = []
        wanted = None if shown is None else set(shown)
        mine = [a for a in self.floor.alerts.values() if a.table == table]
        for alert in [a for a in mine if not a.acked_by
                      and (wanted is None or a.id in wanted)]:
            updates += self.acknowledge(alert.id, user, now)
        view = self.floor.tables.get(table)
        below = None
        if view is not None and view.alerts_hidden:
            view.alerts_hidden = 0
            updates.append(self.floor.table_update(view))
            below = min((a.id for a in mine), default=self.floor.next_alert)
        return updates, below

    def reopen(self, alert_id: int, user: str, now: int) -> list[AlertUpdate]:
        """An acknowledged alert open again (acknowledged by mistake); KeyError if there is
        no such alert. ``reopened_by`` says who, until it is acknowledged again."""
        alert = self.floor.alerts[alert_id]
        if alert.acked_by is not None:
            alert.acked_by = alert.acked_at = None
            alert.reopened_by, alert.reopened_at = user, now
        return [AlertUpdate(kind="alert", alert=asdict(alert))]

    def restore_alert(self, alert: Alert) -> None:
        """An alert read back from the database at start (open ones, and recent ones)."""
        self.floor.alerts[alert.id] = alert
        self.floor.next_alert = max(self.floor.next_alert, alert.id + 1)
        if alert.seq is not None:
            self.floor.alerted[(alert.table, alert.incarnation or LEGACY_INCARNATION,
                          alert.seq)] = None
        self.cap(alert.table)

    def raise_alert(self, table: str, kind: str, text: str, hand: Any, ts: int,
               historical: bool, seq: int | None = None,
               incarnation: str | None = None) -> list[Update]:
        alert = Alert(self.floor.next_alert, table, kind, text[:MAX_ALERT_TEXT],
                      int(hand) if isinstance(hand, int) else None, ts, historical, seq=seq,
                      incarnation=incarnation)
        self.floor.next_alert += 1
        self.floor.alerts[alert.id] = alert
        updates: list[Update] = [AlertUpdate(kind="alert", alert=asdict(alert), new=True)]
        hidden = self.cap(table)
        if hidden:
            # One table's flood must not bury the others (or slow every update): the oldest
            # open alerts leave the view, stay open in the database, and are counted.
            updates += [AlertHiddenUpdate(kind="alert_hidden", id=a.id) for a in hidden]
            updates.append(self.floor.table_update(self.floor.table(table)))
        return updates

    def cap(self, table: str) -> list[Alert]:
        open_alerts = [a for a in self.floor.alerts.values()
                       if a.table == table and a.acked_by is None]
        hidden = open_alerts[:max(0, len(open_alerts) - MAX_OPEN_ALERTS_PER_TABLE)]
        for alert in hidden:
            del self.floor.alerts[alert.id]
        if hidden:
            self.floor.table(table).alerts_hidden += len(hidden)
        return hidden

