"""The floor's use cases: what the dashboard asks for, and what the floor does with each public
message and each event the recorder stored. No MQTT and no HTTP here: the floor's worker
(hub/floor_worker.py) feeds it what the broker delivers, checked against the contract, and
sends what it publishes (``FloorLink``); the dashboard (hub/web/) asks for its use cases.

Everything here runs on the floor's one worker thread, one thing at a time in the order of its
queue: the floor view (hub/floor.py), the venue clock (hub/venue_clock.py), the floor's storage
connection and the dashboards' event streams are touched by nothing else, so none has a lock.
Another thread reaches a use case through that queue (``OnFloor.submit``).
"""

from __future__ import annotations

import logging
import math
import random
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import asdict
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

from contract.commands import (
    Command,
    CommandError,
    HandForHandCommand,
    HubClockCommand,
    SeatingCommand,
)
from contract.snapshots import TableState, VenueClockReading
from contract.views import public_envelope
from contract.wire import decode, encode
from controller.clock import Structure, StructureError
from controller.profiles import ProfileError
from houses.loaders import house_structure, load_profile, structure_names
from hub import uplink_state
from hub.alerts import ALERT_EVENT_TYPES, Alert
from hub.auth import User
from hub.balance_desk import BalanceDesk, short_table_problems
from hub.floor import FloorView, Update, room_clock_view
from hub.refused import StaffError
from hub.roster import Player, Roster, RosterError
from hub.seating import SeatingPlan
from hub.seating_desk import BustOut
from hub.settings import HubSettings
from hub.storage import Storage, open_storage
from hub.venue_clock import VenueClock, clock_answer, refusal

log = logging.getLogger("tablectl.hub")

RECENT_ALERTS_MS = 12 * 3600 * 1000  # acknowledged alerts shown again after a restart
PURGE_INTERVAL = 3600.0
CLOCK_INTERVAL = 5.0  # seconds between the venue clock's publications when nothing changes
TV_KEY_BYTES = 18
# Withdrawn TV links remembered (kept in storage), for a TV still showing one to be told so.
TV_KEYS_WITHDRAWN_KEPT = 16

Sink = Callable[[Update | None], None]  # one dashboard stream's (None: the stream ends)
P = ParamSpec("P")
T = TypeVar("T")


class FloorLink(Protocol):
    """What the floor sends: the hub's MQTT connection (hub/floor_worker.py)."""

    def send_command(self, table: str, command: Command) -> None:
        """A floor command on the table's ``cmd/<name>``."""

    def publish_clock(self, reading: VenueClockReading) -> None:
        """The venue clock, retained, for the tables to follow."""

    def answer_clock(self, answer: dict[str, Any]) -> None:
        """The answer to a command on ``hub/cmd/clock``."""


class OnFloor(Protocol):
    """The floor's worker, from another thread: ``submit`` queues a use case (a method of
    FloorService and its arguments); its result or exception comes in the future."""

    def submit(self, use_case: Callable[Concatenate[FloorService, P], T], /,
               *args: P.args, **kwargs: P.kwargs) -> Future[T]: ...


class NotTheRoomKey(PermissionError):
    """A room clock page asking with a key that is not its viewer link's."""


class TvLinkWithdrawn(NotTheRoomKey):
    """A room clock page asking with a viewer link the floor withdrew."""


class TvLinkChanged(Exception):
    """A withdrawal of a TV link that is no longer the current one (withdrawn already, by
    another tablet or from another tab): refused, so that the link made in its place stays
    on the TVs. ``current``: the link now (``FloorService.tv_link``)."""

    def __init__(self, message: str, current: dict[str, Any]) -> None:
        super().__init__(message)
        self.current = current


def tournament_figures(roster: Roster, structure: Structure | None) -> dict[str, Any]:
    """What players look for on the TV, from the roster and the structure that runs:
    entrants, players left, the average stack (the starting stack for each entry and the
    add-ons' chips, over the players left), and where the structure gives a buy-in the prize
    pool and, with a payout table, each place's prize. Nothing without a roster."""
    if not roster.players:
        return {}
    counts = roster.counts()
    figures: dict[str, Any] = {"entrants": counts["entrants"], "entries": counts["entries"],
                               "add_ons": counts["add_ons"], "players_left": counts["left"]}
    winner = roster.winner()
    if winner is not None:
        figures["winner"] = winner.name
    if structure is None:
        return figures
    if structure.starting_stack and counts["left"]:
        chips = (structure.starting_stack * counts["entries"]
                 + (structure.add_on_stack or 0) * counts["add_ons"])
        figures["average_stack"] = round(chips / counts["left"])
    if structure.buy_in:
        pool = (structure.buy_in * counts["entries"]
                + (structure.add_on_price or 0) * counts["add_ons"])
        figures.update(prize_pool=pool, currency=structure.currency,
                       payouts=[int(pool * share / 100) for share in structure.payouts])
    return figures


def structure_choices(structures: str | None) -> list[dict[str, Any]]:
    """The structures the venue clock can start (the built-in ones and the house's own
    directory), each with its title, level count and first level (for the floor's list); one
    that does not load says why instead. Files only: no floor state."""
    listed: list[dict[str, Any]] = []
    for name in structure_names(structures):
        try:
            structure = house_structure(name, structures)
        except StructureError as exc:
            listed.append({"name": name, "problem": str(exc)[:300]})
            continue
        levels = [p for p in structure.periods if not p.is_break]
        first = levels[0] if levels else None
        listed.append({"name": name, "title": structure.title, "levels": len(levels),
                       "first": f"{first.sb}/{first.bb}" if first else None,
                       "minutes": round(first.seconds / 60) if first else None})
    return listed


class FloorService:
    """The floor: its view, the venue clock, its storage and the dashboards' streams."""

    def __init__(self, settings: HubSettings, link: FloorLink, *,
                 wall: Callable[[], float] = time.time) -> None:
        self.settings = settings
        self.venue = settings.venue
        self.link = link
        self.wall = wall
        # The house's balancing rule (a bad profile stops the hub here, saying which key).
        self.profile = load_profile(settings.profile)
        short_problems = short_table_problems(settings.short_tables,
                                              int(self.profile.value("table_size")))
        if short_problems:
            raise ProfileError(f"--short-table (house {self.profile.name})", short_problems)
        self.floor = FloorView(settings.venue, balance=BalanceDesk.of(
            self.profile, secrets.randbits(32), settings.short_tables))
        self.clock = VenueClock(structures=settings.structures)
        self.tv_key = ""  # the room clock page's key (its viewer link), kept in storage
        self.tv_generation = 0  # 1 for the first key, one more at each withdrawal: stored too
        self._withdrawn_tv_keys: list[str] = []  # the newest first, kept in storage
        self._rng = random.SystemRandom()  # a seat draw no one can foresee
        self._saved_players: dict[int, dict[str, Any]] = {}  # the roster as stored
        self._sinks: list[Sink] = []  # each dashboard stream's
        self._db: Storage | None = None
        self._connected = False
        self._clock_seen: OrderedDict[str, None] = OrderedDict()  # hub/cmd/clock transactions
        self._clock_due = 0.0
        self._last_purge = -math.inf  # the first tick purges (a machine up for under an hour too)
        self._kept_for_uplink = 0  # old events the retention last kept for the uplink (said)

    def now_ms(self) -> int:
        return int(self.wall() * 1000)

    @property
    def db(self) -> Storage:
        assert self._db is not None, "the floor's storage is opened by its worker (open)"
        return self._db

    # ------------------------------------------------------------------ the worker's
    def open(self) -> None:
        """The floor as it was left: its storage opened (on the worker's thread), the venue
        clock resumed, the alerts, bust-outs, dealers' names and roster of the session, and
        the alerts of what the recorder stored while the floor was away."""
        self._db = db = open_storage(self.settings.db)
        self.tv_key = db.setting("tv_key") or secrets.token_urlsafe(TV_KEY_BYTES)  # made once
        # A key kept before links had generations is the first.
        self.tv_generation = int(db.setting("tv_generation") or 1)
        db.set_setting("tv_key", self.tv_key)
        db.set_setting("tv_generation", str(self.tv_generation))
        self._withdrawn_tv_keys = (db.setting("tv_keys_withdrawn") or "").split()
        saved = db.saved_clock()
        if saved is not None:
            clock, saved_ms = saved
            try:  # a running clock ran on while the hub was down: the room played on
                self.clock.restore(clock, (self.now_ms() - saved_ms) / 1000.0)
            except ValueError as exc:  # its structure is gone: the floor must start one
                log.error("the venue clock kept in %s cannot resume: %s", self.settings.db,
                           exc)
        since = self.now_ms() - RECENT_ALERTS_MS
        for row in db.alerts(since):
            self.floor.alert_desk.restore_alert(Alert(**row))
        # The room's bust-outs of the session, as the floor made them before the restart.
        self.floor.bustouts = [BustOut(**row) for row in db.bustouts(
            since, FloorView.MAX_BUSTOUTS)]
        self.floor.dealer_names = db.dealer_names()
        # The room's seating as the floor left it: the tables are brought into line with it.
        kept = db.setting("seating")
        if kept:
            self.floor.seating = SeatingPlan.from_json(decode(kept))
        # The tournament's roster, as the floor left it.
        for row in db.roster_players():
            player = Player(**row)
            self._saved_players[player.id] = dict(row)
            self.floor.roster.players[player.id] = player
            self.floor.roster.next_id = max(self.floor.roster.next_id, player.id + 1)
        # Ids go on from the newest in the database, purged or not shown.
        self.floor.next_alert = max(self.floor.next_alert, db.max_alert_id() + 1)
        self.floor.alerted.update(dict.fromkeys(db.alerted_events(since)))
        # What the recorder stored while the floor was away raises its alerts now.
        self._save_alerts(self.floor.alert_desk.catch_up(self._public_since(since)))
        db.commit()  # ends the reading transaction (PostgreSQL keeps one open)

    def close(self) -> None:
        if self._db is not None:
            self._db.close()

    def rollback(self) -> None:
        """After a message whose handling failed (a bug, logged by the worker)."""
        if self._db is not None:
            self._db.rollback()

    def turn(self) -> None:
        """Between messages (at least twice a second): a move's tables settle, the storage's
        retention, the venue clock published again every few seconds."""
        registering = self.late_entry_closed() is None and self._registration_closes()
        if registering != self.floor.registration_open:
            self.floor.registration_open = registering  # a level began: the desk looks again
            self.floor.balance_stale = True
        self._reconcile(self.now_ms())
        mono = time.monotonic()
        if mono - self._last_purge >= PURGE_INTERVAL:
            self._last_purge = mono
            self._purge()
        if self._connected and mono >= self._clock_due:
            self._publish_clock()

    def _public_since(self, since_ms: int) -> list[dict[str, Any]]:
        """Stored events that can raise an alert, as the floor may see them (public view)."""
        found = []
        for stored in self.db.events_since(since_ms, ALERT_EVENT_TYPES):
            public = public_envelope({**stored, "historical": True})
            if public is not None:
                found.append(public)
        return found

    def _purge(self) -> None:
        if self.settings.retention_days <= 0:
            return
        cutoff = self.now_ms() - int(self.settings.retention_days * 86400 * 1000)
        if self.settings.uplink_state is None:
            self.db.purge(cutoff)
            return
        # The venue sends to a group: what its centre does not hold yet stays, however old
        # (an uplink down for longer than the retention loses nothing). No state file: the
        # uplink never ran, or its file was lost; the centre may hold nothing: keep it all.
        delivered = uplink_state.delivered(self.settings.uplink_state)
        counts = self.db.purge(cutoff, delivered or {})
        kept = counts.get("kept_for_uplink", 0)
        if kept and kept != self._kept_for_uplink:
            log.warning("retention keeps %d events older than %g days: the group's centre does "
                        "not hold them yet (%s). Is the uplink running? (systemctl status "
                        "tablectl-uplink)", kept, self.settings.retention_days,
                        "no uplink state file at " + self.settings.uplink_state
                        if delivered is None else "the uplink is behind")
        self._kept_for_uplink = kept

    # ------------------------------------------------------------------ what arrives
    def on_broker(self, connected: bool) -> None:
        """The hub's connection to the broker, up (the venue clock is published at once) or
        lost (what the floor sees is old until it is back)."""
        self._connected = connected
        self._broadcast(self.floor.on_broker("ok" if connected else "lost", self.now_ms()))
        if connected:
            self._publish_clock()

    def on_venue_clock(self, reading: VenueClockReading) -> None:
        """The venue clock as the broker holds it (the hub's own publication): on the
        dashboards, and hand-for-hand told to every table when it changes."""
        was = self.floor.hand_for_hand
        updates = self.floor.on_clock(reading, self.now_ms())
        if self.floor.hand_for_hand != was:
            self._hand_for_hand_everywhere("on" if self.floor.hand_for_hand else "off",
                                           "venue clock")
        self._broadcast(updates)

    def on_clock_command(self, command: HubClockCommand | CommandError) -> None:
        """A command on ``hub/cmd/clock`` (or why it is not one), answered on ``cmd-resp``;
        one the clock took goes in the floor log, as the dashboard's do."""
        if isinstance(command, CommandError):
            self.link.answer_clock(refusal(command.transaction, command))
            return
        answer, changed = clock_answer(self.clock, command, self._clock_seen)
        if changed:
            self._clock_changed()
            self._log(self.now_ms(), "floor (MQTT)", f"clock/{command.action}",
                      {"value": command.value, "transaction": command.transaction})
        self.link.answer_clock(answer)

    def on_status(self, table: str, body: dict[str, Any]) -> None:
        now = self.now_ms()
        updates = self.floor.on_status(table, body, now)
        if body.get("state") == "online" and self.floor.hand_for_hand:
            # A table that (re)joins while hand-for-hand is on is told so.
            self._send(table, HandForHandCommand(state="on"), "hub")
        self._after(updates, now)

    def on_state(self, table: str, state: TableState) -> None:
        now = self.now_ms()
        self._after(self.floor.on_state(table, state, now), now)

    def on_command_response(self, table: str, body: dict[str, Any]) -> None:
        now = self.now_ms()
        self._after(self.floor.on_command_response(table, body, now), now)

    def on_news(self, table: str, kind: str, text: str) -> None:
        """The recorder's news of a table's identity: an alert (and its floor log line)."""
        now = self.now_ms()
        self._after(self.floor.alert_desk.news_alert(table, kind, text, now), now)

    def on_recorded(self, table: str, envelopes: list[dict[str, Any]]) -> None:
        """What the recorder stored (checked against the contract there), as the floor may
        see it: each envelope's public view, derived by the code the tables publish theirs
        with."""
        now = self.now_ms()
        updates: list[Update] = []
        for stored in envelopes:
            body = public_envelope(stored)
            if body is None:
                continue  # private altogether (a hand's record)
            updates += self.floor.on_event(table, body, now)
            if body["type"] == "clock.hold" and not body["historical"]:
                self._hold_venue_clock(table, now)
        self._after(updates, now)

    def _after(self, updates: list[Update], now: int) -> None:
        """A table's news on the dashboards, its alerts kept, the seating brought into line
        and the balancing reviewed."""
        self._save_alerts(updates)
        self._broadcast(updates)
        self._reconcile(now)

    def _reconcile(self, now: int) -> None:
        """The seating's truth to the tables: seats held for moving players released, each
        seating a table does not deal yet sent (again), the seating kept, the balancing
        reviewed."""
        due, updates = self.floor.seating_desk.reconcile(now)
        for table, command in due:
            self.link.send_command(table, command)
            # Shown as sent by whoever made the change it carries ("hub": a player released
            # to the table they move to, a table brought back into line).
            by = self.floor.seating.tables[table].changed_by
            updates += self.floor.command_sent(command.transaction, table, command.name,
                                               command.fields(), by, now)
            log.info("table %s sent its seating version %s", table, command.version)
        self._keep_seating()
        self._broadcast(updates + self.floor.review_balance(now))

    def _keep_seating(self) -> None:
        """The seating kept for a restart, when it changed."""
        if self.floor.seating.dirty:
            self.db.set_setting("seating", encode(self.floor.seating.to_json()))
            self.db.commit()
            self.floor.seating.dirty = False

    def _balance(self, now: int) -> list[Update]:
        """The balancing proposal after a change of the tables."""
        return self.floor.review_balance(now)

    def _seating_changed(self, updates: list[Update], now: int) -> None:
        """A floor change of the seating: kept, on every dashboard, sent to the tables."""
        self._save_alerts(updates)
        self._keep_seating()
        self._broadcast(updates)
        self._reconcile(now)

    def _hold_venue_clock(self, table: str, now: int) -> None:
        """A table whose house stops the clock for disputes called the floor: pause the venue
        clock the tables follow (until the floor resumes it), and log who asked."""
        clock = self.clock
        if not clock.known or clock.structure is None or clock.running_since is None:
            return
        clock.apply("pause")
        self._clock_changed()
        self._log(now, f"table {table}", "clock/pause", {"reason": "floor call"})

    # ------------------------------------------------------------------ what goes out
    def _send(self, table: str, command: Command, user: str) -> dict[str, Any]:
        """Publish one command and remember it for its reply; what was sent."""
        command.payload()  # too long for a table: refused before anything is sent or logged
        self.link.send_command(table, command)
        now, args = self.now_ms(), command.fields()
        self._log(now, user, f"cmd/{command.name}",
                  {"table": table, "transaction": command.transaction, **args})
        updates = self.floor.command_sent(command.transaction, table, command.name, args, user,
                                          now)
        self._broadcast(updates)
        return dict(updates[0]["command"])

    def _hand_for_hand_everywhere(self, state: str, user: str) -> list[str]:
        """Hand-for-hand ``state`` to every table online (a command each); their names."""
        sent = []
        for table, view in sorted(self.floor.tables.items()):
            if view.status == "online":
                self._send(table, HandForHandCommand(state=state), user)
                sent.append(table)
        return sent

    def _clock_changed(self) -> None:
        """The venue clock changed: kept (a restart resumes it) and published."""
        self.db.save_clock(self.clock.saved(), self.now_ms())
        self.db.commit()
        self._publish_clock()

    def _publish_clock(self) -> None:
        self._clock_due = time.monotonic() + CLOCK_INTERVAL
        if not self._connected or not self.clock.known:
            return  # nothing the tables should follow: they keep their own count
        self.link.publish_clock(self.clock.reading(self.wall()))

    def _log(self, ts: int, user: str, action: str, detail: dict[str, Any]) -> None:
        """A line in the floor log (committed with what the caller wrote before it), shown
        live on the dashboards of staff who may read the log."""
        self.db.log(ts, user, action, detail)
        self.db.commit()
        self._show_log(ts, user, action, detail)

    def _show_log(self, ts: int, user: str, action: str, detail: dict[str, Any]) -> None:
        """A floor log line the database holds, sent to the dashboards that may read it."""
        self._broadcast([{"kind": "log", "line": {"ts": ts, "user": user, "action": action,
                                                  "detail": detail}}])

    def _save_alerts(self, updates: list[Update]) -> None:
        """Alerts, bust-outs and the roster go to the database as the floor view makes
        them."""
        alerts = [u["alert"] for u in updates if u["kind"] == "alert"]
        busts = [u["bustout"] for u in updates if u["kind"] == "bustout"]
        if any(u["kind"] == "roster" for u in updates):
            for player in self.floor.roster.players.values():
                row = asdict(player)
                if self._saved_players.get(player.id) != row:  # only who changed
                    self.db.save_player(row)
                    self._saved_players[player.id] = row
            self.db.commit()
        if alerts or busts:
            for alert in alerts:
                self.db.save_alert(alert)
            for bust in busts:
                if bust["undone_by"] is None:
                    self.db.save_bustout(bust)
                else:
                    self.db.bustout_undone(bust)
            self.db.commit()

    def _broadcast(self, updates: list[Update]) -> None:
        for sink in self._sinks:  # each must not block (hub/web/streams.py: it queues)
            for update in updates:
                sink(update)

    # ------------------------------------------------------------------ the dashboard's
    def subscribe(self, sink: Sink) -> dict[str, Any]:
        """A snapshot; ``sink`` is then given every update after it."""
        self._sinks.append(sink)
        return self.floor.snapshot(self.now_ms())

    def unsubscribe(self, sink: Sink) -> None:
        if sink in self._sinks:
            self._sinks.remove(sink)

    def end_streams(self) -> None:
        """Every stream ends (the hub stops: its server then stops at once)."""
        for sink in self._sinks:
            sink(None)

    def snapshot(self) -> dict[str, Any]:
        return self.floor.snapshot(self.now_ms())

    def dealers(self) -> dict[str, str]:
        return dict(self.floor.dealer_names)

    def acknowledge(self, user: User, alert_id: int) -> dict[str, Any]:
        return self._on_alert(user, alert_id, "acknowledge", self.floor.alert_desk.acknowledge,
                              f"no alert {alert_id}")

    def reopen(self, user: User, alert_id: int) -> dict[str, Any]:
        """An acknowledged alert open again, on every dashboard and in the database."""
        return self._on_alert(user, alert_id, "re-open", self.floor.alert_desk.reopen,
                              f"no alert {alert_id} (only recent ones can be re-opened)")

    def _on_alert(self, user: User, alert_id: int, action: str,
                  act: Callable[[int, str, int], list[Update]], missing: str) -> dict[str, Any]:
        """One alert acknowledged or re-opened: saved, logged, on every dashboard."""
        try:
            updates = act(alert_id, user.name, self.now_ms())
        except KeyError:
            raise StaffError(missing) from None
        alert = updates[0]["alert"]
        self.db.save_alert(alert)
        self._log(self.now_ms(), user.name, action,
                  {"alert": alert_id, "table": alert["table"], "kind": alert["kind"]})
        self._broadcast(updates)
        return dict(alert)

    def acknowledge_table(self, user: User, table: str,
                          shown: list[int] | None = None) -> list[int]:
        """The open alerts of a table that the dashboard showed (``shown``; None: every
        open one) acknowledged, and the older ones it counted as not shown; the ids."""
        self._heard(table)
        now = self.now_ms()
        updates, below = self.floor.alert_desk.acknowledge_table(table, user.name, now, shown)
        acked = [u["alert"]["id"] for u in updates if u["kind"] == "alert"]
        for update in updates:
            if update["kind"] == "alert":
                self.db.save_alert(update["alert"])
        closed = (self.db.acknowledge_open(table, user.name, now, below)
                  if below is not None else 0)
        self._log(now, user.name, "acknowledge all",
                  {"table": table, "alerts": len(acked) + closed})
        self._broadcast(updates)
        return acked

    def _heard(self, table: str) -> None:
        if table not in self.floor.tables:
            raise StaffError(f"no table {table!r} has been heard at this venue")

    def table_command(self, user: User, table: str, command: Command) -> dict[str, Any]:
        """Send a floor command (parsed from the dashboard's body: contract/commands.py) and
        return what was sent; StaffError says why the hub does not send it."""
        self._heard(table)
        if isinstance(command, SeatingCommand):
            if command.version is not None:
                raise StaffError("version: the hub numbers the seatings it sends; send the "
                                 "seats alone")
            return self.set_seats(user, table, command.seats, command.moves)
        return self._send(table, command, user.name)

    def set_seats(self, user: User, table: str, seats: list[Any],
                  moves: list[Any] | None = None) -> dict[str, Any]:
        """A table's whole seating set by the floor (a transition of the hub's seating: each
        seat taken out a bust-out); the table is sent it until it deals it. Its seating."""
        self._heard(table)
        if any(isinstance(s, bool) or not isinstance(s, int) or not 1 <= s <= 10
               for s in seats) or len(set(seats)) != len(seats):
            raise StaffError("seats: seat numbers from 1 to 10, each once")
        now = self.now_ms()
        updates = self.floor.seating_desk.set_seats(table, list(seats), user.name, now,
                                       [m for m in moves or () if isinstance(m, dict)])
        self._log(now, user.name, "seating", {"table": table, "seats": sorted(seats)})
        self._log_busts(updates, now)
        self._seating_changed(updates, now)
        return self._seating_of(table)

    def bust(self, user: User, table: str, seat: int) -> dict[str, Any]:
        """The player in ``table``'s ``seat`` is out (hub/floor.py's bust): the bust-out."""
        self._heard(table)
        now = self.now_ms()
        updates = self.floor.seating_desk.bust(table, seat, user.name, now)
        self._log_busts(updates, now)
        updates += self._tournament_over(now)
        self._seating_changed(updates, now)
        return dict(next(u["bustout"] for u in updates if u["kind"] == "bustout"))

    def undo_bustout(self, user: User, bust_id: str) -> dict[str, Any]:
        """Give a bust-out's seat back: the player is in again and the table is sent its
        seating with the seat; the bust-out, undone."""
        now = self.now_ms()
        updates = self.floor.seating_desk.undo_bustout(bust_id, user.name, now)
        bust = next(u["bustout"] for u in updates if u["kind"] == "bustout")
        self._log(now, user.name, "bust-out undone", {
            k: bust[k] for k in ("table", "seat", "player")})
        updates += self._tournament_over(now)
        self._seating_changed(updates, now)
        return dict(bust)

    def _log_busts(self, updates: list[Update], now: int) -> None:
        for bust in (u["bustout"] for u in updates if u["kind"] == "bustout"):
            self._log(now, bust["by"], "bust-out", {
                k: bust[k] for k in ("table", "seat", "player", "place")})

    def _seating_of(self, table: str) -> dict[str, Any]:
        view = self.floor.table(table)
        return {"table": table, "seats": list(view.seats), "seating": view.seating}

    def _tournament_over(self, now: int) -> list[Update]:
        """One player left of two or more: the winner (first place), the venue clock paused
        with "tournament over"; an undo of the last bust-out opens it again."""
        roster = self.floor.roster
        over = roster.winner() is not None
        if over == (self.db.setting("tournament_over") == "1"):
            return []
        self.db.set_setting("tournament_over", "1" if over else "0")
        if over:
            winner = roster.winner()
            assert winner is not None
            self._log(now, "hub", "tournament over", {"winner": winner.name})
            if self.clock.known and self.clock.running_since is not None:
                self.clock.apply("pause")
                self._clock_changed()
        else:
            self._log(now, "hub", "tournament open again", {})
        return [self.floor.seating_desk.roster_update()]

    def floor_log(self, limit: int = 100) -> list[dict[str, Any]]:
        lines = self.db.floor_log(limit)
        self.db.commit()  # ends the reading transaction (PostgreSQL keeps one open)
        return lines

    # -- the roster (RosterError: the desk's mistake, said to it)
    def _on_roster(self, user: User, action: str,
                   change: Callable[[Roster, int], dict[str, Any]]) -> dict[str, Any]:
        """A roster change at the desk: saved, logged (``change`` returns the log line's
        detail), on every dashboard."""
        now = self.now_ms()
        detail = change(self.floor.roster, now)
        update = self.floor.seating_desk.roster_update()
        self._save_alerts([update])
        self._log(now, user.name, action, detail)
        self._broadcast([update, *self._balance(now)])
        return dict(update["roster"])

    def roster(self) -> dict[str, Any]:
        return self.floor.roster.view()

    def finishing_csv(self) -> str:
        return self.floor.roster.finishing_csv()

    def late_entry_closed(self) -> str | None:
        """Why a new entry or a re-entry is refused now, by the structure that runs (its
        ``late_entry_until_level``, ``late_entry_min_left``; seed 002's latecomers), or None:
        late registration is open."""
        structure = self.clock.structure
        if structure is None:
            return None
        until = structure.late_entry_until_level
        if until is not None and structure.level_at(self.clock.elapsed()) >= until:
            return (f"late registration closed at the start of level {until} "
                    f"({structure.title})")
        least = structure.late_entry_min_left
        roster = self.floor.roster
        if least is not None and roster.left() < least and any(
                not p.playing for p in roster.players.values()):
            return (f"late registration is closed: {roster.left()} players are left, fewer "
                    f"than {least}, and somebody has gone out ({structure.title})")
        return None

    def _registration_closes(self) -> bool:
        """The structure that runs closes late registration at a level (until then no table
        is broken: the latecomers need its seats)."""
        structure = self.clock.structure
        return structure is not None and structure.late_entry_until_level is not None

    def _late_entry(self) -> None:
        closed = self.late_entry_closed()
        if closed is not None:
            raise RosterError(closed)

    def add_player(self, user: User, name: str) -> dict[str, Any]:
        self._late_entry()
        return self._on_roster(user, "roster/add", lambda roster, now: {
            "name": roster.add(name, now).name})

    def import_players(self, user: User, text: str) -> dict[str, Any]:
        """Entrants from a CSV; the columns it ignored are said (``ignored_columns``)."""
        self._late_entry()
        ignored = Roster.csv_columns_ignored(text)
        roster = self._on_roster(user, "roster/import", lambda roster, now: {
            "players": len(roster.import_csv(text, now)),
            **({"ignored_columns": ignored} if ignored else {})})
        return {**roster, "ignored_columns": ignored}

    def remove_entrant(self, user: User, player_id: int) -> dict[str, Any]:
        """An entrant entered by mistake removed (their drawn seat freed, no bust-out)."""
        now = self.now_ms()
        player, updates = self.floor.seating_desk.remove_entrant(player_id, user.name, now)
        self.db.delete_player(player_id)
        self._saved_players.pop(player_id, None)
        self._log(now, user.name, "roster/remove", {"player": player_id, "name": player.name})
        self._seating_changed(updates, now)
        return self.floor.roster.view()

    def reentry(self, user: User, player_id: int) -> dict[str, Any]:
        self._late_entry()
        return self._on_roster(user, "roster/re-entry", lambda roster, now: {
            "player": player_id, "name": roster.reentry(player_id, now).name})

    def add_on(self, user: User, player_id: int) -> dict[str, Any]:
        structure = self.clock.structure  # the add-ons it sells, and how many a player
        most = getattr(structure, "add_on_most", None)
        sold = bool(getattr(structure, "add_on_stack", None))
        return self._on_roster(user, "roster/add-on", lambda roster, now: {
            "player": player_id, "name": roster.add_on(player_id, most, sold).name})

    def take_back(self, user: User, player_id: int, what: str) -> dict[str, Any]:
        """A re-entry or an add-on tapped by mistake, taken back."""
        def change(roster: Roster, now: int) -> dict[str, Any]:
            player = (roster.take_back_reentry(player_id) if what == "re-entry"
                      else roster.take_back_add_on(player_id))
            return {"player": player_id, "name": player.name, "what": what}

        return self._on_roster(user, "roster/take-back", change)

    def clear_roster(self, user: User) -> dict[str, Any]:
        """A new tournament: the roster emptied (take the finishing order as CSV first)."""
        def clear(roster: Roster, now: int) -> dict[str, Any]:
            players = len(roster.players)
            roster.players.clear()
            self._saved_players.clear()
            self.db.clear_roster()
            return {"players": players}

        return self._on_roster(user, "roster/clear", clear)

    def draw_seats(self, user: User) -> dict[str, Any]:
        """Seats drawn for every player waiting (hub/roster.py's draw) at the tables in play
        or waiting for players (online, not broken); each table's seating takes them at once
        and is sent to it (it seats them at its next hand)."""
        now = self.now_ms()
        plans = self.floor.seating.tables
        taken = {name: set(plan.seats) for name, plan in plans.items()}
        drawn, updates = self.floor.seating_desk.draw_seats(user.name, now, self._rng)
        self._log(now, user.name, "roster/draw", {"seats": {
            table: [f"{p.name} seat {seat}" + (" (sitting there)"
                                               if seat in taken.get(table, ()) else "")
                    for seat, p in sorted(seated)]
            for table, seated in drawn.items()}})
        self._seating_changed(updates, now)
        return {"drawn": {table: [{"seat": seat, "player": p.name,
                                   "named": seat in taken.get(table, ())}
                                  for seat, p in sorted(seated)]
                          for table, seated in drawn.items()},
                "roster": self.floor.roster.view()}

    def final_table_draw(self, user: User, final: str) -> dict[str, Any]:
        """The final table: every player left draws a seat at ``final`` (the floor view's
        final_table_draw); each table's seating changes at once and is sent to it."""
        now = self.now_ms()
        updates = self.floor.seating_desk.final_table_draw(final, user.name, now, self._rng)
        seats = {p.seat: p.name for p in self.floor.roster.players.values()
                 if p.playing and p.table == final}
        self._log(now, user.name, "roster/final-draw", {
            "table": final, "seats": [f"{name} seat {seat}"
                                      for seat, name in sorted(seats.items())]})
        self._seating_changed(updates, now)
        return {"drawn": {final: [{"seat": seat, "player": name}
                                  for seat, name in sorted(seats.items())]},
                "roster": self.floor.roster.view()}

    def name_dealer(self, user: User, badge: str, name: str) -> dict[str, str]:
        """The badge-to-name list: a dealer's badge named (or, with "", unnamed)."""
        updates = self.floor.name_dealer(badge, name)
        self.db.name_dealer(badge, self.floor.dealer_names.get(badge, ""))
        self.db.commit()
        self._log(self.now_ms(), user.name, "dealers/name",
                  {"badge": badge, "name": self.floor.dealer_names.get(badge)})
        self._broadcast(updates)
        return dict(self.floor.dealer_names)

    # -- balancing (BalanceRefused: the desk's mistake, said to it)
    def confirm_balance(self, user: User, kind: str, tables: list[str],
                        moves: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """The floor confirms what the house's rule proposes (``kind``, ``tables`` and, when
        given, the ``moves`` as the dashboard showed them; BalanceRefused when the tables
        call for something else now): the moves are made at once in the hub's seating, each
        player leaving after their hand and seated at the other table once they have."""
        desk = self.floor.balance
        assert desk is not None
        now = self.now_ms()
        self.floor.review_balance(now)
        proposal = desk.confirm(kind, tables, moves)
        roster = self.floor.roster
        players = {(m.from_table, m.from_seat): player.name for m in proposal.moves
                   if (player := roster.at(m.from_table, m.from_seat)) is not None}
        updates = self.floor.seating_desk.make_moves(proposal, user.name, now)
        desk.made(proposal, user.name, now, players)
        self._log(now, user.name, "break table" if kind == "break" else "balance tables",
                  {"reason": proposal.reason, "moves": [
                      {**m.to_json(), **({"player": players[m.from_table, m.from_seat]}
                                         if (m.from_table, m.from_seat) in players else {})}
                      for m in proposal.moves]})
        self._seating_changed(updates, now)
        return desk.panel(self.floor.tables)

    # -- the venue clock (ClockError: the floor's mistake, said to it)
    def clock_action(self, user: User, command: HubClockCommand) -> dict[str, Any]:
        """A floor member's clock action (the same checks as ``hub/cmd/clock``), logged."""
        state = self.set_clock(command.action, command.value)
        self._log(self.now_ms(), user.name, f"clock/{command.action}",
                  {"value": command.value})
        return state

    def set_clock(self, action: str, value: Any = None) -> dict[str, Any]:
        """A clock action not logged (``tablectl hub --start``, a simulator): its state."""
        self.clock.apply(action, value)
        self._clock_changed()
        return self.clock.state()

    def release_hand(self, user: User) -> list[str]:
        """Hand-for-hand: every table has finished; deal the next hand everywhere."""
        panel = self.floor.hand_for_hand_panel()
        if not panel["on"]:
            raise StaffError("hand-for-hand is off")
        if panel["playing"]:
            raise StaffError("still playing their hand: " + ", ".join(panel["playing"]))
        if not panel["finished"]:
            raise StaffError("no table is waiting for the next hand")
        return self._hand_for_hand_everywhere("release", user.name)

    def clock_reading(self) -> tuple[Structure | None, float, bool]:
        """The structure, the clock's elapsed seconds and whether it runs."""
        clock = self.clock
        return clock.structure, clock.elapsed(), clock.running_since is not None

    def room_clock(self, key: str) -> dict[str, Any]:
        """What the room's TV shows; NotTheRoomKey for a key that is not the viewer link's."""
        if not secrets.compare_digest(key.encode(), self.tv_key.encode()):
            if any(secrets.compare_digest(key.encode(), old.encode())
                   for old in self._withdrawn_tv_keys):
                raise TvLinkWithdrawn("this TV link was withdrawn: ask the floor for the new "
                                      "one")
            raise NotTheRoomKey("this is not the room clock's link: ask a supervisor")
        in_play = self.floor.tables_in_play()
        reading = self.clock_reading()
        return {"venue": self.venue, "now": self.now_ms(), **room_clock_view(*reading),
                "tables": len(in_play), "players": sum(len(t.seats) for t in in_play),
                **tournament_figures(self.floor.roster, reading[0])}

    def tv_link(self) -> dict[str, Any]:
        """The room clock page's link: its path, the key in the fragment (never in a server's
        logs), and its generation (a withdrawal names it; a dashboard shows the highest it
        has seen)."""
        return {"path": f"/tv#{self.tv_key}", "generation": self.tv_generation}

    def withdraw_tv_link(self, user: User, generation: int) -> dict[str, Any]:
        """The TV link of ``generation`` withdrawn (one leaked, or a TV taken away) and a
        new one made, both kept for restarts and logged: a TV showing the old one is refused
        from its next question (every few seconds), told so (TvLinkWithdrawn). The new link.
        TvLinkChanged when ``generation`` is not the current one: a second tablet
        withdrawing what the first already did would withdraw the first's new link, which
        the TVs were given.

        The database first: the hub serves the new key only once it is committed, so a
        failed write (the worker then rolls back) leaves the old link working, as the
        database holds it, and never one a restart would bring back."""
        if generation != self.tv_generation:
            said = (f"the TV link of generation {generation} was already withdrawn"
                    if generation < self.tv_generation else
                    f"there is no TV link of generation {generation}")
            raise TvLinkChanged(f"{said}; the current link is generation "
                                f"{self.tv_generation}, left as it is (withdraw that one if "
                                "it must go too)", self.tv_link())
        key = secrets.token_urlsafe(TV_KEY_BYTES)
        withdrawn = [self.tv_key, *self._withdrawn_tv_keys][:TV_KEYS_WITHDRAWN_KEPT]
        now = self.now_ms()
        self.db.set_setting("tv_key", key)
        self.db.set_setting("tv_generation", str(generation + 1))
        self.db.set_setting("tv_keys_withdrawn", " ".join(withdrawn))
        self.db.log(now, user.name, "tv-link/withdraw", {})
        self.db.commit()
        self.tv_key, self.tv_generation = key, generation + 1
        self._withdrawn_tv_keys = withdrawn
        self._show_log(now, user.name, "tv-link/withdraw", {})
        return self.tv_link()
