"""``tablectl hub``: what a poker room runs once, next to Mosquitto.

    recorder      private events -> storage, acks, replay requests (hub/recorder.py)
    venue clock   the retained tournament clock the tables follow (hub/venue_clock.py)
    floor         public topics -> FloorView (hub/floor.py) -> the dashboard (hub/web.py)

MQTT callbacks and web requests only put items on the floor's one queue; a single worker
applies them to the FloorView and the floor's database connection, and fans the updates out
to the dashboard's event streams. Each part has its own MQTT identity: the recorder reads
``private``; the floor client (role ``hub`` in the ACL) reads only public topics and writes
commands, so what the dashboard shows cannot contain hole cards.
"""

from __future__ import annotations

import logging
import random
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from dataclasses import asdict, dataclass, field
from typing import Any

from contract import topics
from contract.commands import (
    Command,
    HandForHandCommand,
    HubClockCommand,
    SeatingCommand,
)
from contract.envelope import event_of
from contract.mqtt import Connected, Disconnected, Endpoint, MqttWorker, Received, TlsSettings
from contract.schema import ContractError, receive
from contract.supervise import LogOnce
from contract.views import public_envelope, public_event
from contract.wire import encode
from controller.balancing import Proposal
from controller.clock import Structure, StructureError
from controller.profiles import ProfileError
from houses.loaders import house_structure, load_profile, structure_names
from hub.auth import Sessions, User, UsersFile
from hub.balance_desk import (
    BalanceDesk,
    BalanceRefused,
    seating_commands,
    short_table_problems,
)
from hub.floor import (
    ALERT_EVENT_TYPES,
    Alert,
    BustOut,
    FloorView,
    StaffError,
    Update,
    room_clock_view,
)
from hub.recorder import Recorder
from hub.roster import Player, Roster, RosterError
from hub.stats import STATS_TYPES, hands_csv_rows, statistics
from hub.storage import Storage, open_storage
from hub.venue_clock import VenueClockService

log = logging.getLogger("tablectl.hub")

RECENT_ALERTS_MS = 12 * 3600 * 1000  # acknowledged alerts shown again after a restart
PURGE_INTERVAL = 3600.0
# The floor's MQTT session outlives a hub restart: the tables' states, statuses and command
# answers wait at the broker meanwhile (their events the recorder's session keeps).
FLOOR_SESSION_SECONDS = 24 * 3600
STATS_DEFAULT_MS = 12 * 3600 * 1000  # statistics: a session, unless a period is asked for
STATS_MAX_MS = 31 * 86_400_000
STATS_TAIL_MS = 3600 * 1000  # read past the period's end: the last hands' ends
# The schema each consumed public topic's payload must keep to. (Not ``events``: the floor
# follows what the recorder stored, as its public view: the broker sends the hub each event
# once, and the floor never shows an event the record does not hold.)
_SCHEMAS = {"status": "Status", "state": "State", "cmd-resp": "CommandResponse"}


@dataclass(frozen=True)
class Recorded:
    """Envelopes of one table the recorder stored for the first time (committed), in order."""

    table: str
    envelopes: list[dict[str, Any]]


@dataclass
class HubSettings:
    venue: str
    db: str = "hub.db"
    users: str = "users.toml"
    host: str = "127.0.0.1"
    port: int = 1883
    tls: TlsSettings | None = None  # the hub's identity (CN "hub")
    recorder_tls: TlsSettings | None = None  # the recorder's (CN "recorder")
    http_host: str = "127.0.0.1"
    http_port: int = 8080
    web_cert: str | None = None  # HTTPS for the dashboard
    web_key: str | None = None
    retention_days: float = 90.0  # 0 keeps everything
    reorder_timeout: float = 2.0
    structures: str | None = None  # the house's own blind structures (NAME.toml files)
    profile: str = "tda-2024"  # the house's rules (balancing and breaking tables): name or path
    short_tables: dict[str, int] = field(default_factory=dict)  # tables seating fewer
    locale: str | None = None  # the venue's language for dates and times (None: the browser's)
    time_zone: str | None = None  # the venue's IANA zone for times (None: the browser's)


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


@dataclass(frozen=True)
class Call:
    """Run ``function`` on the floor's worker; its result or exception goes to ``future``."""

    function: Callable[[], Any]
    future: Future[Any]


class Hub(MqttWorker):
    """The floor's worker (an ``MqttWorker`` on the hub's connection, identity ``hub-VENUE``),
    beside the recorder (its own connection and session) and the venue clock (on the hub's
    connection); it starts the web side."""

    worker_name = "hub-floor"
    turn_seconds = 0.5

    def __init__(self, settings: HubSettings, *,
                 wall: Callable[[], float] = time.time) -> None:
        super().__init__(Endpoint(settings.host, settings.port, f"hub-{settings.venue}",
                                  settings.tls, session_seconds=FLOOR_SESSION_SECONDS))
        self.settings = settings
        self.venue = settings.venue
        self.wall = wall
        # The house's balancing rule (a bad profile stops the hub here, saying which key).
        self.profile = load_profile(settings.profile)
        short_problems = short_table_problems(settings.short_tables,
                                              int(self.profile.value("table_size")))
        if short_problems:
            raise ProfileError(f"--short-table (house {self.profile.name})", short_problems)
        self.floor = FloorView(settings.venue, balance=BalanceDesk.of(
            self.profile, secrets.randbits(32), settings.short_tables))
        self.sessions = Sessions(UsersFile(settings.users))
        self._rng = random.SystemRandom()  # a seat draw no one can foresee
        self._saved_players: dict[int, dict[str, Any]] = {}  # the roster as stored
        self._streams: list[Callable[[Update | None], None]] = []  # each viewer's sink
        self._streams_lock = threading.Lock()
        self._stopping = False
        self._db: Storage | None = None
        self.connected = threading.Event()
        self.recorder = Recorder(settings.db, venue=settings.venue, host=settings.host,
                                 port=settings.port, tls=settings.recorder_tls or settings.tls,
                                 client_id=f"recorder-{settings.venue}",
                                 reorder_timeout=settings.reorder_timeout,
                                 on_stored=lambda table, rows: self.put(Recorded(table, rows)))
        # The venue clock publishes through the hub's own connection (one identity, "hub"),
        # and is kept in the database at every change.
        self.clock = VenueClockService(venue=settings.venue, structures=settings.structures,
                                       on_change=self._save_clock)
        self.web: Any = None
        self.invalid = 0  # messages refused by the contract
        self.errors = 0  # messages whose handling failed (a bug: logged with its topic)
        self._refused = LogOnce(log)

    def now_ms(self) -> int:
        return int(self.wall() * 1000)

    def _status(self, state: str) -> str:
        return encode({"state": state, "venue": self.venue, "ts": self.now_ms()})

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> Hub:
        # The schema (and its migrations) first, in this thread: the recorder and the floor
        # then open a migrated database. The venue clock resumes where it was kept.
        storage = open_storage(self.settings.db)
        try:
            saved = storage.saved_clock()
            # The room clock page's key (its viewer link): made once, kept across restarts.
            self.tv_key = storage.setting("tv_key") or secrets.token_urlsafe(18)
            storage.set_setting("tv_key", self.tv_key)
            storage.commit()
        finally:
            storage.close()
        if saved is not None:
            clock, saved_ms = saved
            try:
                self.clock.restore(clock, (self.now_ms() - saved_ms) / 1000.0)
            except ValueError as exc:  # its structure is gone: the floor must start one
                log.error("the venue clock kept in %s cannot resume: %s", self.settings.db,
                          exc)
        self.recorder.start()
        super().start()  # the floor's worker is set up (setup) before paho delivers anything
        from hub.web import serve

        self.web = serve(self, self.settings.http_host, self.settings.http_port,
                         cert=self.settings.web_cert, key=self.settings.web_key)
        return self

    @property
    def url(self) -> str:
        scheme = "https" if self.settings.web_cert else "http"
        host, port = self.web.server_address[:2]
        return f"{scheme}://{host}:{port}"

    def stop(self, timeout: float = 5.0) -> None:
        if self._stopping:
            return  # stopped already
        self._stopping = True
        with self._streams_lock:  # the event streams end first: the server then stops at once
            for sink in self._streams:
                sink(None)
        if self.web is not None:
            self.web.shutdown()
        if self.client is not None and self.connected.is_set():
            self.client.publish(topics.hub(self.venue, "status"),
                                self._status("offline"), qos=1,
                                retain=True).wait_for_publish(2)
        super().stop(timeout)
        self.clock.stop()
        self.recorder.stop()

    def unhealthy(self, timeout: float = 5.0) -> str | None:
        """Why the hub cannot do its work now (None: it can): for the systemd watchdog."""
        for name, worker in (("floor", self.thread), ("recorder", self.recorder.thread)):
            if worker is None or not worker.is_alive():
                return f"the {name} worker is not running"
        if time.monotonic() - self.recorder.last_turn > timeout:
            return f"the recorder has not turned for {timeout:g} s"
        try:
            self.call(lambda: None, timeout)
        except TimeoutError:
            return f"the floor did not answer within {timeout:g} s"
        return None

    def _save_clock(self, saved: dict[str, Any]) -> None:
        """The venue clock changed: keep it (its own connection: called on the thread that
        changed it, under the clock's lock, so the last change is the one kept)."""
        storage = open_storage(self.settings.db)
        try:
            storage.save_clock(saved, self.now_ms())
            storage.commit()
        finally:
            storage.close()

    # ------------------------------------------------------------------ the floor worker
    def configure(self, client: Any) -> None:
        client.will_set(topics.hub(self.venue, "status"), self._status("lost"), qos=1,
                        retain=True)
        # The venue clock publishes through this connection, ready before it connects.
        self.clock.attach(client)

    def setup(self) -> None:
        self._db = open_storage(self.settings.db)
        for row in self._db.alerts(self.now_ms() - RECENT_ALERTS_MS):
            self.floor.restore_alert(Alert(**row))
        # The room's bust-outs of the session, as the floor made them before the restart.
        self.floor.bustouts = [BustOut(**row) for row in self._db.bustouts(
            self.now_ms() - RECENT_ALERTS_MS, FloorView.MAX_BUSTOUTS)]
        self.floor.dealer_names = self._db.dealer_names()
        # The tournament's roster, as the floor left it.
        for row in self._db.roster_players():
            player = Player(**row)
            self._saved_players[player.id] = dict(row)
            self.floor.roster.players[player.id] = player
            self.floor.roster.next_id = max(self.floor.roster.next_id, player.id + 1)
        # Ids go on from the newest in the database, purged or not shown.
        self.floor.next_alert = max(self.floor.next_alert, self._db.max_alert_id() + 1)
        since = self.now_ms() - RECENT_ALERTS_MS
        self.floor.alerted.update(dict.fromkeys(self._db.alerted_events(since)))
        # What the recorder stored while the floor was away raises its alerts now.
        caught_up = self.floor.catch_up(self._public_since(since))
        self._save_alerts(caught_up)
        self._db.commit()  # ends the reading transaction (PostgreSQL keeps one open)
        self._last_purge = 0.0

    def turn(self) -> None:
        if self.floor.balance is not None and self.floor.balance.moving:
            self._broadcast(self._balance(self.now_ms()))  # a move's tables settle (or not)
        if time.monotonic() - self._last_purge >= PURGE_INTERVAL:
            self._last_purge = time.monotonic()
            self._purge()

    def finish(self) -> None:
        assert self._db is not None
        self._db.close()

    def _public_since(self, since_ms: int) -> list[dict[str, Any]]:
        """Stored events that can raise an alert, as the floor may see them (public view)."""
        assert self._db is not None
        found = []
        for stored in self._db.events_since(since_ms, ALERT_EVENT_TYPES):
            public = public_envelope({**stored, "historical": True})
            if public is not None:
                found.append(public)
        return found

    def _purge(self) -> None:
        assert self._db is not None
        if self.settings.retention_days > 0:
            cutoff = self.now_ms() - int(self.settings.retention_days * 86400 * 1000)
            self._db.purge(cutoff)

    def handle(self, item: object) -> None:
        try:
            self._handle(item)
        except Exception:  # a bug: the floor goes on with the next message
            self.errors += 1
            log.exception("the floor failed on %s", str(item)[:200])
            assert self._db is not None
            self._db.rollback()

    def _handle(self, item: object) -> None:
        match item:
            case Connected(refused=False):
                self.client.subscribe(
                    [(topics.every_table(self.venue, leaf), 1)
                     for leaf in ("status", "state", "cmd-resp")]
                    + [(topics.venue_clock(self.venue), 1),
                       (topics.hub(self.venue, "cmd/clock"), 1)])
                self.client.publish(topics.hub(self.venue, "status"), self._status("online"),
                                    qos=1, retain=True)
                self.connected.set()
                self.clock.on_connect()
                self._broadcast(self.floor.on_broker("ok", self.now_ms()))
            case Disconnected():
                self.connected.clear()
                self._broadcast(self.floor.on_broker("lost", self.now_ms()))
            case Received(topic=name, payload=payload):
                self._broadcast(self._message(name, payload))
            case Recorded(table=table, envelopes=envelopes):
                self._broadcast(self._recorded(table, envelopes))
            case Call(function=function, future=future):
                try:
                    future.set_result(function())
                except Exception as exc:  # handed to the waiting web request
                    future.set_exception(exc)

    def _message(self, name: str, payload: bytes) -> list[Update]:
        try:
            return self._checked(name, payload)
        except ContractError as exc:
            self.invalid += 1
            self._refused(name, str(exc))
            return []

    def _checked(self, name: str, payload: bytes) -> list[Update]:
        """One public message, checked against the contract before the floor acts on it."""
        now = self.now_ms()
        if name == topics.hub(self.venue, "cmd/clock"):
            done = self.clock.command(payload)  # refused ones are answered on cmd-resp
            if done is not None:  # and done ones go in the floor log, as the dashboard's
                self._log(now, "floor (MQTT)", f"clock/{done.action}",
                          {"value": done.value, "transaction": done.transaction})
            return []
        if name == topics.venue_clock(self.venue):
            body = receive("VenueClock", payload)
            was = self.floor.hand_for_hand
            updates = self.floor.on_clock(body, now)
            if self.floor.hand_for_hand != was:
                self._hand_for_hand_everywhere("on" if self.floor.hand_for_hand else "off",
                                               "venue clock")
            return updates
        topic = topics.parse(name)
        if topic is None or topic.table is None or topic.venue != self.venue or \
                topic.leaf not in _SCHEMAS:
            raise ContractError(f"topic {name[:120]!r} is not a table's public topic")
        table, leaf = topic.table, topic.leaf
        body = receive(_SCHEMAS[leaf], payload)
        if body.get("table", table) != table:
            raise ContractError(f"a message of table {body['table']!r} on {table}'s topic")
        if leaf == "status":
            updates = self.floor.on_status(table, body, now)
            if body.get("state") == "online" and self.floor.hand_for_hand:
                # A table that (re)joins while hand-for-hand is on is told so.
                self._send(table, HandForHandCommand(state="on"), "hub")
        elif leaf == "state":
            updates = self.floor.on_state(table, body, now)
        else:
            updates = self.floor.on_command_response(table, body, now)
            for bust in (u["bustout"] for u in updates if u["kind"] == "bustout"):
                if bust["undone_by"] is None:  # the floor log names who went out
                    self._log(now, bust["by"], "bust-out", {
                        k: bust[k] for k in ("table", "seat", "player", "place")})
        self._save_alerts(updates)
        return updates + self._balance(now)

    def _recorded(self, table: str, envelopes: list[dict[str, Any]]) -> list[Update]:
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
        self._save_alerts(updates)
        return updates + self._balance(now)

    def _balance(self, now: int) -> list[Update]:
        """The balancing proposal after a change of the tables; a confirmed move is made as
        soon as no table of it is playing a hand."""
        updates = self.floor.review_balance(now)
        desk = self.floor.balance
        if desk is not None and desk.confirmed is not None:
            due = desk.due(self.floor.tables)
            if due is not None:
                updates += self._move_players(desk, due, desk.confirmed.by, now)
        return updates

    def _move_players(self, desk: BalanceDesk, proposal: Proposal, by: str,
                      now: int) -> list[Update]:
        commands = seating_commands(
            proposal, {name: self.floor.tables[name].seats for name in proposal.tables})
        self.floor.roster.name_moves(commands)  # the dealers' displays name who moves
        self._log(now, by, "break table" if proposal.kind == "break" else "balance tables",
                  {"reason": proposal.reason, "moves": [m.to_json() for m in proposal.moves]})
        for name, args in commands.items():
            self._send(name, SeatingCommand(**args), by)
        desk.sent(proposal, {name: args["seats"] for name, args in commands.items()}, by, now)
        return self.floor.review_balance(now)

    def _hold_venue_clock(self, table: str, now: int) -> None:
        """A table whose house stops the clock for disputes called the floor: pause the venue
        clock the tables follow (until the floor resumes it), and log who asked."""
        clock = self.clock.clock
        if not clock.known or clock.structure is None or clock.running_since is None:
            return
        self.clock.apply("pause")
        assert self._db is not None
        self._log(now, f"table {table}", "clock/pause", {"reason": "floor call"})

    def _log(self, ts: int, user: str, action: str, detail: dict[str, Any]) -> None:
        """A line in the floor log (committed with what the caller wrote before it), shown
        live on the dashboards of staff who may read the log."""
        assert self._db is not None
        self._db.log(ts, user, action, detail)
        self._db.commit()
        self._broadcast([{"kind": "log", "line": {"ts": ts, "user": user, "action": action,
                                                  "detail": detail}}])

    def _save_alerts(self, updates: list[Update]) -> None:
        """Alerts, bust-outs and the roster go to the database as the floor view makes
        them."""
        alerts = [u["alert"] for u in updates if u["kind"] == "alert"]
        busts = [u["bustout"] for u in updates if u["kind"] == "bustout"]
        if any(u["kind"] == "roster" for u in updates):
            assert self._db is not None
            for player in self.floor.roster.players.values():
                row = asdict(player)
                if self._saved_players.get(player.id) != row:  # only who changed
                    self._db.save_player(row)
                    self._saved_players[player.id] = row
            self._db.commit()
        if alerts or busts:
            assert self._db is not None
            for alert in alerts:
                self._db.save_alert(alert)
            for bust in busts:
                if bust["undone_by"] is None:
                    self._db.save_bustout(bust)
                else:
                    self._db.bustout_undone(bust)
            self._db.commit()

    def _broadcast(self, updates: list[Update]) -> None:
        if not updates:
            return
        with self._streams_lock:
            for sink in self._streams:
                for update in updates:
                    sink(update)

    # ------------------------------------------------------------------ for the web side
    def call(self, function: Callable[[], Any], timeout: float = 10.0) -> Any:
        """Run ``function`` on the floor worker (where the state lives) and return its
        result; its exception is raised here."""
        future: Future[Any] = Future()
        self.put(Call(function, future))
        return future.result(timeout)

    def subscribe(self, sink: Callable[[Update | None], None]) -> dict[str, Any]:
        """A snapshot; ``sink`` is then given every update after it (None: the stream ends).
        It is called on the floor's thread and must not block."""
        def attach() -> dict[str, Any]:
            with self._streams_lock:
                self._streams.append(sink)
            return self.floor.snapshot(self.now_ms())

        return dict(self.call(attach))

    def unsubscribe(self, sink: Callable[[Update | None], None]) -> None:
        with self._streams_lock:
            if sink in self._streams:
                self._streams.remove(sink)

    def snapshot(self) -> dict[str, Any]:
        return dict(self.call(lambda: self.floor.snapshot(self.now_ms())))

    def acknowledge(self, user: User, alert_id: int) -> dict[str, Any]:
        return self._on_alert(user, alert_id, "acknowledge", self.floor.acknowledge,
                              f"no alert {alert_id}")

    def reopen(self, user: User, alert_id: int) -> dict[str, Any]:
        """An acknowledged alert open again, on every dashboard and in the database."""
        return self._on_alert(user, alert_id, "re-open", self.floor.reopen,
                              f"no alert {alert_id} (only recent ones can be re-opened)")

    def _on_alert(self, user: User, alert_id: int, action: str,
                  act: Callable[[int, str, int], list[Update]], missing: str) -> dict[str, Any]:
        """One alert acknowledged or re-opened: saved, logged, on every dashboard."""
        def run() -> dict[str, Any]:
            assert self._db is not None
            try:
                updates = act(alert_id, user.name, self.now_ms())
            except KeyError:
                raise StaffError(missing) from None
            alert = updates[0]["alert"]
            self._db.save_alert(alert)
            self._log(self.now_ms(), user.name, action,
                      {"alert": alert_id, "table": alert["table"], "kind": alert["kind"]})
            self._broadcast(updates)
            return dict(alert)

        return dict(self.call(run))

    def acknowledge_table(self, user: User, table: str,
                          shown: list[int] | None = None) -> list[int]:
        """The open alerts of a table that the dashboard showed (``shown``; None: every
        open one) acknowledged, and the older ones it counted as not shown; the ids."""
        def run() -> list[int]:
            assert self._db is not None
            if table not in self.floor.tables:
                raise StaffError(f"no table {table!r} has been heard at this venue")
            now = self.now_ms()
            updates, below = self.floor.acknowledge_table(table, user.name, now, shown)
            acked = [u["alert"]["id"] for u in updates if u["kind"] == "alert"]
            for update in updates:
                if update["kind"] == "alert":
                    self._db.save_alert(update["alert"])
            closed = (self._db.acknowledge_open(table, user.name, now, below)
                      if below is not None else 0)
            self._log(now, user.name, "acknowledge all",
                      {"table": table, "alerts": len(acked) + closed})
            self._broadcast(updates)
            return acked

        return list(self.call(run))

    def table_command(self, user: User, table: str, command: Command) -> dict[str, Any]:
        """Send a floor command (parsed from the dashboard's body: contract/commands.py) and
        return what was sent; StaffError says why the hub does not send it."""
        def run() -> dict[str, Any]:
            if table not in self.floor.tables:
                raise StaffError(f"no table {table!r} has been heard at this venue")
            size = self.floor.table_size(table)
            if isinstance(command, SeatingCommand) and any(
                    isinstance(s, int) and s > size for s in command.seats):
                raise StaffError(f"table {table} seats {size} (the house's table size"
                                 f"{', a short table' if size < self.floor.house_size else ''}"
                                 f"): no seat past {size}")
            return self._send(table, command, user.name)

        return dict(self.call(run))

    # ------------------------------------------------------------------ the roster
    def _on_roster(self, user: User, action: str,
                   change: Callable[[Roster, int], dict[str, Any]]) -> dict[str, Any]:
        """A roster change at the desk, on the floor's worker: saved, logged (``change``
        returns the log line's detail), on every dashboard; RosterError becomes the staff's
        error."""
        def run() -> dict[str, Any]:
            now = self.now_ms()
            try:
                detail = change(self.floor.roster, now)
            except RosterError as exc:
                raise StaffError(str(exc)) from None
            update = self.floor.roster_update()
            self._save_alerts([update])
            self._log(now, user.name, action, detail)
            self._broadcast([update, *self._balance(now)])
            return dict(update["roster"])

        return dict(self.call(run))

    def roster(self) -> dict[str, Any]:
        return dict(self.call(self.floor.roster.view))

    def add_player(self, user: User, name: str) -> dict[str, Any]:
        return self._on_roster(user, "roster/add", lambda roster, now: {
            "name": roster.add(name, now).name})

    def import_players(self, user: User, text: str) -> dict[str, Any]:
        return self._on_roster(user, "roster/import", lambda roster, now: {
            "players": len(roster.import_csv(text, now))})

    def reentry(self, user: User, player_id: int) -> dict[str, Any]:
        return self._on_roster(user, "roster/re-entry", lambda roster, now: {
            "player": player_id, "name": roster.reentry(player_id, now).name})

    def add_on(self, user: User, player_id: int) -> dict[str, Any]:
        most = self._structure_figure("add_on_most")
        sold = bool(self._structure_figure("add_on_stack"))
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
            assert self._db is not None
            players = len(roster.players)
            roster.players.clear()
            self._saved_players.clear()
            self._db.clear_roster()
            return {"players": players}

        return self._on_roster(user, "roster/clear", clear)

    def draw_seats(self, user: User) -> dict[str, Any]:
        """Seats drawn for every player waiting (hub/roster.py's draw), a seating command to
        each table that gets a new seat taken; the players are seated as the tables apply
        it (a table that refuses, mid-hand, leaves them waiting for the next draw)."""
        def run() -> dict[str, Any]:
            now = self.now_ms()
            unnamed, free, occupied = self.floor.seats_for_a_draw()
            try:
                drawn = self.floor.roster.draw(unnamed, free, occupied, self._rng)
            except RosterError as exc:
                raise StaffError(str(exc)) from None
            update = self.floor.roster_update()
            self._save_alerts([update])
            taken = {table: set(self.floor.tables[table].seats) for table in drawn}
            self._log(now, user.name, "roster/draw", {"seats": {
                table: [f"{p.name} seat {seat}" + (" (sitting there)" if seat in taken[table]
                                                   else "") for seat, p in sorted(seated)]
                for table, seated in drawn.items()}})
            for table, seated in sorted(drawn.items()):
                now_seats = set(self.floor.tables[table].seats)
                new = {seat for seat, _ in seated} - now_seats
                if new:
                    sent = self._send(table, SeatingCommand(seats=sorted(now_seats | new)),
                                      user.name)
                    self.floor.commands[sent["transaction"]].drawn = [
                        p.id for seat, p in seated if seat in new]
            self._broadcast([update])
            return {"drawn": {table: [{"seat": seat, "player": p.name,
                                       "named": seat in taken[table]}
                                      for seat, p in sorted(seated)]
                              for table, seated in drawn.items()},
                    "roster": update["roster"]}

        return dict(self.call(run))

    def name_dealer(self, user: User, badge: str, name: str) -> dict[str, str]:
        """The badge-to-name list: a dealer's badge named (or, with "", unnamed)."""
        def run() -> dict[str, str]:
            assert self._db is not None
            updates = self.floor.name_dealer(badge, name)
            self._db.name_dealer(badge, self.floor.dealer_names.get(badge, ""))
            self._db.commit()
            self._log(self.now_ms(), user.name, "dealers/name",
                      {"badge": badge, "name": self.floor.dealer_names.get(badge)})
            self._broadcast(updates)
            return dict(self.floor.dealer_names)

        return dict(self.call(run))

    def final_table_draw(self, user: User, final: str) -> dict[str, Any]:
        """The final table: every player left draws a seat at ``final`` (the floor view's
        final_table_draw), and each table is sent its seating at once."""
        def run() -> dict[str, Any]:
            now = self.now_ms()
            commands = self.floor.final_table_draw(final, self._rng)
            update = self.floor.roster_update()
            self._save_alerts([update])
            seats = {p.seat: p.name for p in self.floor.roster.players.values()
                     if p.playing and p.table == final}
            self._log(now, user.name, "roster/final-draw", {
                "table": final, "seats": [f"{name} seat {seat}"
                                          for seat, name in sorted(seats.items())]})
            for table, args in sorted(commands.items()):
                sent = self._send(table, SeatingCommand(**args), user.name)
                self.floor.commands[sent["transaction"]].final_draw = True
            self._broadcast([update, *self._balance(now)])
            return {"drawn": {final: [{"seat": seat, "player": name}
                                      for seat, name in sorted(seats.items())]},
                    "roster": update["roster"]}

        return dict(self.call(run))

    def finishing_csv(self) -> str:
        return str(self.call(self.floor.roster.finishing_csv))

    def _structure_figure(self, key: str) -> Any:
        """A figure of the structure the venue clock runs (starting stack, buy-in...)."""
        return getattr(self.clock.reading()[0], key, None)

    def undo_bustout(self, user: User, bust_id: str) -> dict[str, Any]:
        """Give a bust-out's seat back (a seating command with it); the bust-out shows as
        undone on every dashboard once the table has applied it."""
        def run() -> dict[str, Any]:
            table, seats = self.floor.undo_bustout(bust_id, self.now_ms())
            sent = self._send(table, SeatingCommand(seats=seats), user.name)
            self.floor.commands[sent["transaction"]].undoes = bust_id
            return {**sent, "undoes": bust_id}

        return dict(self.call(run))

    def _send(self, table: str, command: Command, user: str) -> dict[str, Any]:
        """On the floor worker: publish one command and remember it for its reply."""
        assert self._db is not None
        self.client.publish(topics.table(self.venue, table, f"cmd/{command.name}"),
                            encode(command.to_json()), qos=1)
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

    def confirm_balance(self, user: User, kind: str, tables: list[str]) -> dict[str, Any]:
        """The floor confirms what the house's rule proposes (``kind`` and ``tables``, as the
        dashboard showed them): the players move as soon as those tables are between hands."""
        return self._at_the_desk(
            user, lambda desk, now: desk.confirm(kind, tables, user.name, now),
            "confirm " + ("break" if kind == "break" else "balance"), {"tables": tables})

    def cancel_balance(self, user: User) -> dict[str, Any]:
        """A confirmed move not made yet is withdrawn."""
        return self._at_the_desk(user, lambda desk, now: desk.cancel(), "cancel balance", {})

    def _at_the_desk(self, user: User, act: Callable[[BalanceDesk, int], None], action: str,
                     detail: dict[str, Any]) -> dict[str, Any]:
        """A staff action on the balancing desk, on the floor's worker: logged, shown on every
        dashboard, and a confirmed move made at once if its tables are between hands."""
        def run() -> dict[str, Any]:
            desk = self.floor.balance
            assert desk is not None
            now = self.now_ms()
            try:
                act(desk, now)
            except BalanceRefused as exc:
                raise StaffError(str(exc)) from None
            self._log(now, user.name, action, detail)
            self.floor.balance_stale = True  # the desk changed, not the tables: review it
            self._broadcast(self._balance(now))
            return desk.panel(self.floor.tables)

        return dict(self.call(run))

    def release_hand(self, user: User) -> list[str]:
        """Hand-for-hand: every table has finished; deal the next hand everywhere."""
        def run() -> list[str]:
            panel = self.floor.hand_for_hand_panel()
            if not panel["on"]:
                raise StaffError("hand-for-hand is off")
            if panel["playing"]:
                raise StaffError("still playing their hand: " + ", ".join(panel["playing"]))
            if not panel["finished"]:
                raise StaffError("no table is waiting for the next hand")
            return self._hand_for_hand_everywhere("release", user.name)

        return list(self.call(run))

    def clock_command(self, user: User, command: HubClockCommand) -> dict[str, Any]:
        """A floor member's clock action (the same checks as ``hub/cmd/clock``)."""
        try:
            state = self.clock.apply(command.action, command.value)
        except ValueError as exc:
            raise StaffError(str(exc)) from None

        def log() -> None:
            assert self._db is not None
            self._log(self.now_ms(), user.name, f"clock/{command.action}",
                      {"value": command.value})

        self.call(log)
        return state

    def hand_history(self, user: User, table: str, hands: int = 20) -> list[dict[str, Any]]:
        """The table's last hands: public data for every role, hole and burn cards and hand
        records only for a role allowed private data."""
        storage = open_storage(self.settings.db)
        try:
            envelopes = storage.hand_history(table, max(1, min(hands, 200)))
        finally:
            storage.close()
        private = user.may("private")
        grouped: dict[int, dict[str, Any]] = {}
        for stored in envelopes:
            event = event_of(stored)
            shown = event if private else public_event(event)
            if shown is None:
                continue
            number = int(stored["hand"])
            entry = grouped.setdefault(number, {"hand": number, "events": [],
                                                "dealer": stored.get("dealer")})
            entry["events"].append({**shown, "seq": stored["seq"], "ts": stored["ts"]})
        return [grouped[n] for n in sorted(grouped)]

    def _stats_period(self, start_ms: int | None, end_ms: int | None) -> tuple[int, int]:
        now = self.now_ms()
        end = now if end_ms is None else end_ms
        start = end - STATS_DEFAULT_MS if start_ms is None else start_ms
        if start > end:
            raise StaffError("the period's start is after its end")
        if end - start > STATS_MAX_MS:
            raise StaffError(f"a period of at most {STATS_MAX_MS // 86_400_000} days")
        return start, end

    def statistics(self, start_ms: int | None = None,
                   end_ms: int | None = None) -> dict[str, Any]:
        """Hands per hour per table and dealer, irregularities, hand durations: the last
        twelve hours unless a period is given (UTC ms). The events are streamed from the
        database and summed as they go by, never all in memory."""
        start, end = self._stats_period(start_ms, end_ms)
        storage = open_storage(self.settings.db)
        try:  # a hand started in the period may end (and the next start) after it
            return statistics(storage.stream_events(start, STATS_TYPES, end + STATS_TAIL_MS),
                              start, end)
        finally:
            storage.close()

    def hands_csv_stream(self, start_ms: int | None = None,
                         end_ms: int | None = None) -> Iterator[str]:
        """The period's hands as CSV, a table at a time (the period checked at once)."""
        start, end = self._stats_period(start_ms, end_ms)

        def pieces() -> Iterator[str]:
            # Starlette asks for each piece on whichever of its threads is free.
            storage = open_storage(self.settings.db, passed_between_threads=True)
            try:
                yield from hands_csv_rows(
                    storage.stream_events(start, STATS_TYPES, end + STATS_TAIL_MS), start, end)
            finally:
                storage.close()

        return pieces()

    def hands_csv(self, start_ms: int | None = None, end_ms: int | None = None) -> str:
        return "".join(self.hands_csv_stream(start_ms, end_ms))

    def room_clock(self, key: str) -> dict[str, Any]:
        """What the room's TV shows; PermissionError for a key that is not the viewer link's."""
        if not secrets.compare_digest(key.encode(), self.tv_key.encode()):
            raise PermissionError("this is not the room clock's link: ask a supervisor")

        def read() -> dict[str, Any]:
            in_play = self.floor.tables_in_play()
            reading = self.clock.reading()
            return {"venue": self.venue, "now": self.now_ms(), **room_clock_view(*reading),
                    "tables": len(in_play), "players": sum(len(t.seats) for t in in_play),
                    **tournament_figures(self.floor.roster, reading[0])}

        return dict(self.call(read))

    def structures(self) -> list[dict[str, Any]]:
        """The structures the venue clock can start, each with its title, level count and
        first level (for the floor's list); one that does not load says why instead."""
        listed: list[dict[str, Any]] = []
        for name in structure_names(self.settings.structures):
            try:
                structure = house_structure(name, self.settings.structures)
            except StructureError as exc:
                listed.append({"name": name, "problem": str(exc)[:300]})
                continue
            levels = [p for p in structure.periods if not p.is_break]
            first = levels[0] if levels else None
            listed.append({"name": name, "title": structure.title, "levels": len(levels),
                           "first": f"{first.sb}/{first.bb}" if first else None,
                           "minutes": round(first.seconds / 60) if first else None})
        return listed

    def floor_log(self, limit: int = 100) -> list[dict[str, Any]]:
        def read() -> list[dict[str, Any]]:
            assert self._db is not None
            lines = self._db.floor_log(limit)
            self._db.commit()  # ends the reading transaction (PostgreSQL keeps one open)
            return lines

        return list(self.call(read))
