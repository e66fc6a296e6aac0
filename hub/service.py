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
import secrets
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

from contract.commands import Command, HandForHandCommand, HubClockCommand, SeatingCommand
from contract.snapshots import TableState, VenueClockReading
from contract.views import public_envelope
from contract.wire import WireError, decode, encode
from controller.clock import Structure
from controller.events import HandForHandOrder
from controller.profiles import ProfileError
from houses.loaders import load_profile
from hub.alert_cases import AlertCases
from hub.alerts import ALERT_EVENT_TYPES, Alert
from hub.auth import User
from hub.balance_cases import BalanceCases
from hub.balance_desk import BalanceDesk, short_table_problems
from hub.broadcast_cases import BroadcastCases
from hub.chip_cases import ChipCases
from hub.clock_cases import ClockCases
from hub.floor import FloorView
from hub.floor_log import FloorLog
from hub.payout_cases import PayoutCases
from hub.players_cases import PlayersCases
from hub.refused import StaffError
from hub.roster import Alternate, Player
from hub.seating import SeatingPlan
from hub.seating_cases import SeatingCases
from hub.seating_desk import BustOut
from hub.settings import HubSettings
from hub.states import TableStatus
from hub.storage import Storage, open_storage
from hub.updates import Update
from hub.venue_clock import VenueClock
from store import uplink_state

log = logging.getLogger("tablectl.hub")

RECENT_ALERTS_MS = 12 * 3600 * 1000  # acknowledged alerts shown again after a restart
PURGE_INTERVAL = 3600.0

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

    def busy(self) -> str:
        """What the worker is on now (contract/worker.py, ``QueueWorker.busy``)."""
        ...


class FloorService:
    """The floor: its view, the venue clock, its storage and the dashboards' streams, what
    arrives from the tables, and the parts that hold its use cases by concern: seating and
    the roster (``seating_cases``), balancing (``balance_cases``), alerts
    (``alert_cases``), the venue clock and the TV link (``clock_cases``), the players' screen
    and seat cards (``players_cases``), the floor log
    (``log_book``). The dashboard's use cases are methods here, each handing over to its
    part, so that a route queues ``FloorService.method`` on the one worker."""

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
        self._shown_clock: VenueClockReading | None = None  # the echo the dashboards show
        self._sinks: list[Sink] = []  # each dashboard stream's
        self._db: Storage | None = None
        self.connected = False  # the hub's link to the broker
        self.seating_cases = SeatingCases(self)
        self.balance_cases = BalanceCases(self)
        self.alert_cases = AlertCases(self)
        self.clock_cases = ClockCases(self)
        self.players_cases = PlayersCases(self)
        self.payout_cases = PayoutCases(self)
        self.chip_cases = ChipCases(self)
        self.log_book = FloorLog(self)
        self.broadcast_cases = BroadcastCases(self)
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
        self.clock_cases.open()
        self.payout_cases.open()
        self.chip_cases.open()
        self.broadcast_cases.open()
        saved = db.saved_clock()
        if saved is not None:
            clock, saved_ms = saved
            try:  # a running clock ran on while the hub was down: the room played on
                self.clock.restore(clock, (self.now_ms() - saved_ms) / 1000.0)
            except ValueError as exc:  # its structure is gone: the floor must start one
                log.error("the venue clock kept in %s cannot resume: %s", self.settings.db,
                           exc)
        # The tables online were told hand-for-hand by the hub before it stopped; each is
        # told again when its status says it is online (on_status), the truth, and told a
        # change of it when the floor makes one (ClockCases.changed).
        self.clock_cases.told_hand_for_hand = self.clock.hand_for_hand
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
            try:
                self.floor.seating = SeatingPlan.from_json(decode(kept))
            except (WireError, KeyError, TypeError, ValueError) as exc:
                # An edited or damaged database: the floor starts, and each table's own seats
                # are taken as they are (as for a table never seated), said loudly.
                log.error("the seating kept in %s cannot be read (%s): each table's own seats "
                          "are taken as the seating; check them on the dashboard",
                          self.settings.db, exc)
        # The tournament's roster, as the floor left it.
        for row in db.roster_players():
            player = Player(**row)
            self.seating_cases.saved_players[player.id] = dict(row)
            self.floor.roster.players[player.id] = player
            self.floor.roster.next_id = max(self.floor.roster.next_id, player.id + 1)
        for row in db.roster_alternates():
            self.floor.roster.alternates.append(Alternate(**row))
        self.seating_cases.saved_alternates = db.roster_alternates()
        # The players' screen: its link, announcements and the moves seen (after the roster).
        self.players_cases.open()
        # Ids go on from the newest in the database, purged or not shown.
        self.floor.next_alert = max(self.floor.next_alert, db.max_alert_id() + 1)
        self.floor.alerted.update(dict.fromkeys(db.alerted_events(since)))
        # What the recorder stored while the floor was away raises its alerts now.
        self.save_alerts(self.floor.alert_desk.catch_up(self._public_since(since)))
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
        seating = self.seating_cases
        registering = seating.late_entry_closed() is None and seating.registration_closes()
        if registering != self.floor.registration_open:
            self.floor.registration_open = registering  # a level began: the desk looks again
            self.floor.balance_stale = True
        self.payout_cases.turn()
        if seating.registration_rules():  # re-entries left, the alternates list closed
            self.broadcast([self.floor.seating_desk.roster_update()])
        self.reconcile(self.now_ms())
        self.players_cases.observe()  # the moves made, for their seat cards
        mono = time.monotonic()
        if mono - self._last_purge >= PURGE_INTERVAL:
            self._last_purge = mono
            self._purge()
        if self.connected and mono >= self.clock_cases.due:
            self.clock_cases.publish()

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
        self.connected = connected
        self.broadcast(self.floor.on_broker("ok" if connected else "lost", self.now_ms()))
        if connected:
            self.clock_cases.publish()

    def on_venue_clock(self, reading: VenueClockReading) -> None:
        """The venue clock as the broker gives it back (the hub's own publication): a copy,
        shown on the dashboards, never a cause: the tables are told hand-for-hand when the
        hub's own clock changes (``ClockCases.changed``). An echo older than the truth (the
        hub's clock has a later revision) or than the one shown (a broker's redelivery, a
        retained message sent at a resubscription) is dropped: it would show the floor a
        clock, and a hand-for-hand, that the hub has moved past."""
        if reading.older_than_version(self.clock.incarnation, self.clock.revision) or \
                reading.older_than(self._shown_clock):
            return
        self._shown_clock = reading
        self.broadcast(self.floor.on_clock(reading, self.now_ms()))

    def on_status(self, table: str, body: dict[str, Any]) -> None:
        now = self.now_ms()
        updates = self.floor.on_status(table, body, now)
        if body.get("state") == TableStatus.ONLINE:
            # A table that (re)joins is told hand-for-hand by the hub's own clock, the truth,
            # on or off: a command carries the whole desired state, whatever the table last
            # said (a copy: it may say nothing yet, after a restart of the hub) or the
            # reading the broker gives back (it lags the clock or is stale). A table away
            # when the floor turned it off never got the order (its session is not kept);
            # an "off" to a table off changes nothing there (tablectl/daemon.py). Kept for
            # its reply and shown as the hub's, but no floor log line: a copy brought into
            # line at every join is no floor action (as the seating's ``reconcile``).
            order = HandForHandOrder.ON if self.clock.hand_for_hand else HandForHandOrder.OFF
            updates.append(self.bring_into_line(table, HandForHandCommand(state=order), "hub",
                                                now))
        self.after(updates, now)

    def on_state(self, table: str, state: TableState) -> None:
        now = self.now_ms()
        self.after(self.floor.on_state(table, state, now), now)

    def on_command_response(self, table: str, body: dict[str, Any]) -> None:
        now = self.now_ms()
        self.after(self.floor.on_command_response(table, body, now), now)

    def on_news(self, table: str, kind: str, text: str) -> None:
        """The recorder's news of a table's identity: an alert (and its floor log line)."""
        now = self.now_ms()
        self.after(self.floor.alert_desk.news_alert(table, kind, text, now), now)

    def on_recorded(self, table: str, envelopes: list[dict[str, Any]]) -> None:
        """What the recorder stored (checked against the contract there), as the floor may
        see it: each envelope's public view, derived by the code the tables publish theirs
        with."""
        now = self.now_ms()
        self.broadcast_cases.on_recorded(table, envelopes)
        updates: list[Update] = []
        for stored in envelopes:
            body = public_envelope(stored)
            if body is None:
                continue  # private altogether (a hand's record)
            updates += self.floor.on_event(table, body, now)
            if body["type"] == "clock.hold" and not body["historical"]:
                self.clock_cases.hold_for(table, now)
        self.after(updates, now)

    def after(self, updates: list[Update], now: int) -> None:
        """A table's news on the dashboards, its alerts kept, the seating brought into line
        and the balancing reviewed."""
        self.save_alerts(updates)
        self.broadcast(updates)
        self.reconcile(now)

    def reconcile(self, now: int) -> None:
        """The seating's truth to the tables: seats held for moving players released, each
        seating a table does not deal yet sent (again), the seating kept, the balancing
        reviewed."""
        due, updates = self.floor.seating_desk.reconcile(now)
        for table, command in due:
            # Shown as sent by whoever made the change it carries ("hub": a player released
            # to the table they move to, a table brought back into line).
            by = self.floor.seating.tables[table].changed_by
            updates.append(self.bring_into_line(table, command, by, now))
            log.info("table %s sent its seating version %s", table, command.version)
        self.keep_seating()
        self.broadcast(updates + self.floor.review_balance(now))

    def keep_seating(self) -> None:
        """The seating kept for a restart, when it changed."""
        if self.floor.seating.dirty:
            self.db.set_setting("seating", encode(self.floor.seating.to_json()))
            self.db.commit()
            self.floor.seating.dirty = False

    def seating_changed(self, updates: list[Update], now: int) -> None:
        """A floor change of the seating: kept, on every dashboard, sent to the tables."""
        self.save_alerts(updates)
        self.keep_seating()
        self.broadcast(updates)
        self.reconcile(now)

    # ------------------------------------------------------------------ what goes out
    def bring_into_line(self, table: str, command: Command, by: str, now: int) -> Update:
        """A table's copy brought into line with the truth (a seating it does not deal yet,
        hand-for-hand's state at its join): the command published and kept for its reply,
        shown as ``by``'s, but no floor log line (no floor action: it may come at every
        reconnect). The dashboards' update."""
        self.link.send_command(table, command)
        return self.floor.command_sent(command.transaction, table, command.name,
                                       command.fields(), by, now)

    def send(self, table: str, command: Command, user: str) -> dict[str, Any]:
        """Publish one command and remember it for its reply; what was sent."""
        command.payload()  # too long for a table: refused before anything is sent or logged
        self.link.send_command(table, command)
        now, args = self.now_ms(), command.fields()
        self.log_book.write(now, user, f"cmd/{command.name}",
                            {"table": table, "transaction": command.transaction, **args})
        update = self.floor.command_sent(command.transaction, table, command.name, args, user,
                                         now)
        self.broadcast([update])
        return dict(update["command"])

    def save_alerts(self, updates: Sequence[Update]) -> None:
        """Alerts, bust-outs and the roster go to the database as the floor view makes
        them."""
        alerts = [u["alert"] for u in updates if u["kind"] == "alert"]
        busts = [u["bustout"] for u in updates if u["kind"] == "bustout"]
        if any(u["kind"] == "roster" for u in updates):
            self.seating_cases.save_players()
        if alerts or busts:
            for alert in alerts:
                self.db.save_alert(alert)
            for bust in busts:
                if bust["undone_by"] is None:
                    self.db.save_bustout(bust)
                else:
                    self.db.bustout_undone(bust)
            self.db.commit()

    def broadcast(self, updates: Sequence[Update]) -> None:
        for sink in self._sinks:  # each must not block (hub/web/streams.py: it queues)
            for update in updates:
                sink(update)
        # The roster or the clock's structure changed: the prize money's figures with them.
        if any(u["kind"] in ("roster", "clock", "bustout") for u in updates):
            self.broadcast(self.payout_cases.changed())

    # ------------------------------------------------------------------ the dashboard's
    def subscribe(self, sink: Sink) -> dict[str, Any]:
        """A snapshot; ``sink`` is then given every update after it."""
        self._sinks.append(sink)
        return {**self.floor.snapshot(self.now_ms()), "payouts": self.payout_cases.figures()}

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

    def heard(self, table: str) -> None:
        if table not in self.floor.tables:
            raise StaffError(f"no table {table!r} has been heard at this venue")

    def table_command(self, user: User, table: str, command: Command) -> dict[str, Any]:
        """Send a floor command (parsed from the dashboard's body: contract/commands.py) and
        return what was sent; StaffError says why the hub does not send it."""
        self.heard(table)
        if isinstance(command, SeatingCommand):
            if command.version is not None:
                raise StaffError("version: the hub numbers the seatings it sends; send the "
                                 "seats alone")
            return self.seating_cases.set_seats(user, table, command.seats, command.moves)
        return self.send(table, command, user.name)

    def name_dealer(self, user: User, badge: str, name: str) -> dict[str, str]:
        """The badge-to-name list: a dealer's badge named (or, with "", unnamed)."""
        updates = self.floor.name_dealer(badge, name)
        self.db.name_dealer(badge, self.floor.dealer_names.get(badge, ""))
        self.db.commit()
        self.log_book.write(self.now_ms(), user.name, "dealers/name",
                            {"badge": badge, "name": self.floor.dealer_names.get(badge)})
        self.broadcast(updates)
        return dict(self.floor.dealer_names)

    # ------------------------------------------------------------------ by concern
    # The dashboard's use cases of each part, by the names the routes queue (hub/web/).
    def acknowledge(self, user: User, alert_id: int) -> dict[str, Any]:
        return self.alert_cases.acknowledge(user, alert_id)

    def reopen(self, user: User, alert_id: int) -> dict[str, Any]:
        return self.alert_cases.reopen(user, alert_id)

    def acknowledge_table(self, user: User, table: str,
                          shown: list[int] | None = None) -> list[int]:
        return self.alert_cases.acknowledge_table(user, table, shown)

    def set_seats(self, user: User, table: str, seats: list[Any],
                  moves: list[Any] | None = None) -> dict[str, Any]:
        return self.seating_cases.set_seats(user, table, seats, moves)

    def bust(self, user: User, table: str, seat: int) -> dict[str, Any]:
        return self.seating_cases.bust(user, table, seat)

    def undo_bustout(self, user: User, bust_id: str) -> dict[str, Any]:
        return self.seating_cases.undo_bustout(user, bust_id)

    def roster(self) -> dict[str, Any]:
        return self.seating_cases.roster()

    def finishing_csv(self) -> str:
        return self.seating_cases.finishing_csv()

    def add_player(self, user: User, name: str) -> dict[str, Any]:
        return self.seating_cases.add_player(user, name)

    def import_players(self, user: User, text: str) -> dict[str, Any]:
        return self.seating_cases.import_players(user, text)

    def remove_entrant(self, user: User, player_id: int) -> dict[str, Any]:
        return self.seating_cases.remove_entrant(user, player_id)

    def add_alternate(self, user: User, name: str) -> dict[str, Any]:
        return self.seating_cases.add_alternate(user, name)

    def drop_alternate(self, user: User, position: int) -> dict[str, Any]:
        return self.seating_cases.drop_alternate(user, position)

    def no_show(self, user: User, player_id: int) -> dict[str, Any]:
        return self.seating_cases.no_show(user, player_id)

    def reentry(self, user: User, player_id: int) -> dict[str, Any]:
        return self.seating_cases.reentry(user, player_id)

    def add_on(self, user: User, player_id: int) -> dict[str, Any]:
        return self.seating_cases.add_on(user, player_id)

    def take_back(self, user: User, player_id: int, what: str) -> dict[str, Any]:
        return self.seating_cases.take_back(user, player_id, what)

    def clear_roster(self, user: User) -> dict[str, Any]:
        return self.seating_cases.clear_roster(user)

    def draw_seats(self, user: User) -> dict[str, Any]:
        return self.seating_cases.draw_seats(user)

    def final_table_draw(self, user: User, final: str) -> dict[str, Any]:
        return self.seating_cases.final_table_draw(user, final)

    def confirm_balance(self, user: User, kind: str, tables: list[str],
                        moves: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        return self.balance_cases.confirm_balance(user, kind, tables, moves)

    def clock_action(self, user: User, command: HubClockCommand) -> dict[str, Any]:
        return self.clock_cases.clock_action(user, command)

    def set_clock(self, action: str, value: Any = None) -> dict[str, Any]:
        return self.clock_cases.set_clock(action, value)

    def release_hand(self, user: User) -> list[str]:
        return self.clock_cases.release_hand(user)

    def clock_reading(self) -> tuple[Structure | None, float, bool]:
        return self.clock_cases.clock_reading()

    def room_clock(self, key: str) -> dict[str, Any]:
        return self.clock_cases.room_clock(key)

    def tv_link(self) -> dict[str, Any]:
        return self.clock_cases.tv_link()

    def withdraw_tv_link(self, user: User, generation: int) -> dict[str, Any]:
        return self.clock_cases.withdraw_tv_link(user, generation)

    def players_screen(self, key: str) -> dict[str, Any]:
        return self.players_cases.players_screen(key)

    def players_link(self) -> dict[str, Any]:
        return self.players_cases.players_link()

    def withdraw_players_link(self, user: User, generation: int) -> dict[str, Any]:
        return self.players_cases.withdraw_players_link(user, generation)

    def announcement_list(self) -> list[dict[str, Any]]:
        return self.players_cases.announcement_list()

    def announce(self, user: User, text: str) -> list[dict[str, Any]]:
        return self.players_cases.announce(user, text)

    def take_down(self, user: User, announcement: int) -> list[dict[str, Any]]:
        return self.players_cases.take_down(user, announcement)

    def seat_cards(self, what: str, table: str | None = None,
                   player: int | None = None) -> dict[str, Any]:
        return self.players_cases.seat_cards(what, table, player)

    def payout_tables(self) -> dict[str, Any]:
        return self.payout_cases.choices()

    def set_payout_table(self, user: User, name: str | None, data: dict[str, Any] | None,
                         refreeze: bool) -> dict[str, Any]:
        return self.payout_cases.set_table(user, name, data, refreeze)

    def close_registration(self, user: User) -> dict[str, Any]:
        return self.payout_cases.close_registration(user)

    def payout_figures(self) -> dict[str, Any]:
        return self.payout_cases.figures()

    def results(self) -> dict[str, Any]:
        return self.payout_cases.results()

    def results_csv(self) -> str:
        return self.payout_cases.results_csv()

    def preview_deal(self, stacks: list[tuple[int, int]]) -> dict[str, Any]:
        return self.payout_cases.preview_deal(stacks)

    def accept_deal(self, user: User, stacks: list[tuple[int, int]],
                    method: str) -> dict[str, Any]:
        return self.payout_cases.accept_deal(user, stacks, method)

    def chip_counts(self) -> dict[str, Any]:
        return self.chip_cases.view()

    def count_chips(self, user: User, table: str,
                    stacks: list[tuple[int, int]]) -> dict[str, Any]:
        return self.chip_cases.enter(user, table, stacks)

    def floor_log(self, limit: int = 100) -> list[dict[str, Any]]:
        return self.log_book.lines(limit)

    def broadcast_settings(self) -> dict[str, Any]:
        return self.broadcast_cases.settings()

    def feature(self, user: User, table: str, featured: bool) -> dict[str, Any]:
        return self.broadcast_cases.feature(user, table, featured)

    def set_broadcast_delay(self, user: User, seconds: int) -> dict[str, Any]:
        return self.broadcast_cases.set_delay(user, seconds)

    def overlay_links(self) -> list[dict[str, Any]]:
        return self.broadcast_cases.overlay_links()

    def make_overlay_link(self, user: User, table: str) -> list[dict[str, Any]]:
        return self.broadcast_cases.make_overlay_link(user, table)

    def withdraw_overlay_link(self, user: User, table: str) -> list[dict[str, Any]]:
        return self.broadcast_cases.withdraw_overlay_link(user, table)

    def overlay_of(self, key: str) -> dict[str, Any]:
        return self.broadcast_cases.overlay_of(key)

    def fold(self, user: User, table: str, deal: str, seat: int, folded: bool,
             at_ms: int | None = None) -> dict[str, Any]:
        return self.broadcast_cases.fold(user, table, deal, seat, folded, at_ms)
