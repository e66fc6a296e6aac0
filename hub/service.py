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

import json
import queue
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from controller.reporting import CommandError, event_of, parse_command, public_event
from hardware.mqtt_link import TlsSettings, mqtt_client
from hub.auth import Sessions, User, load_users
from hub.floor import Alert, FloorView, Update
from hub.recorder import Recorder
from hub.storage import Storage, open_storage
from hub.venue_clock import VenueClockService

RECENT_ALERTS_MS = 12 * 3600 * 1000  # acknowledged alerts shown again after a restart
PURGE_INTERVAL = 3600.0


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


class StaffError(Exception):
    """A staff request the hub refuses: the message says why (shown in the dashboard)."""


class Hub:
    def __init__(self, settings: HubSettings, *,
                 wall: Callable[[], float] = time.time) -> None:
        self.settings = settings
        self.venue = settings.venue
        self.wall = wall
        self.floor = FloorView(settings.venue)
        self.sessions = Sessions(load_users(settings.users))
        self.inbox: queue.Queue[tuple[Any, ...]] = queue.Queue()
        self._streams: list[queue.Queue[Update | None]] = []
        self._streams_lock = threading.Lock()
        self._stop = threading.Event()
        self._worker: threading.Thread | None = None
        self._client: Any = None
        self._db: Storage | None = None
        self.connected = threading.Event()
        self.recorder = Recorder(settings.db, venue=settings.venue, host=settings.host,
                                 port=settings.port, tls=settings.recorder_tls or settings.tls,
                                 client_id=f"recorder-{settings.venue}",
                                 reorder_timeout=settings.reorder_timeout)
        self.clock = VenueClockService(venue=settings.venue, host=settings.host,
                                       port=settings.port, tls=settings.tls,
                                       client_id=f"venue-clock-{settings.venue}")
        self.web: Any = None

    def now_ms(self) -> int:
        return int(self.wall() * 1000)

    def _status(self, state: str) -> str:
        return json.dumps({"state": state, "venue": self.venue, "ts": self.now_ms()})

    def _topic(self, rest: str) -> str:
        return f"pkr/v1/{self.venue}/{rest}"

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> Hub:
        # The schema (and its migrations) first, in this thread: the recorder and the floor
        # then open a migrated database.
        open_storage(self.settings.db).close()
        self.recorder.start()
        self.clock.start()
        client = mqtt_client(f"hub-{self.venue}", tls=self.settings.tls)
        status = self._topic("hub/status")
        client.will_set(status, self._status("lost"), qos=1,
                        retain=True)
        client.on_connect = lambda c, u, f, rc, p=None: self.inbox.put(("connect", rc))
        client.on_disconnect = lambda c, u, f, rc, p=None: self.inbox.put(("disconnect",))
        client.on_message = lambda c, u, msg: self.inbox.put(("mqtt", msg.topic,
                                                              bytes(msg.payload)))
        client.reconnect_delay_set(min_delay=1, max_delay=5)
        client.connect_async(self.settings.host, self.settings.port, keepalive=10)
        self._client = client
        ready = threading.Event()
        self._worker = threading.Thread(target=self._run, args=(ready,), name="hub-floor",
                                        daemon=True)
        self._worker.start()
        ready.wait(30)
        client.loop_start()
        from hub.web import serve

        self.web = serve(self, self.settings.http_host, self.settings.http_port,
                         cert=self.settings.web_cert, key=self.settings.web_key)
        return self

    @property
    def url(self) -> str:
        scheme = "https" if self.settings.web_cert else "http"
        host, port = self.web.server_address[:2]
        return f"{scheme}://{host}:{port}"

    def stop(self) -> None:
        if self._stop.is_set():
            return  # stopped already
        if self.web is not None:
            self.web.shutdown()
            self.web.server_close()
        with self._streams_lock:
            for stream in self._streams:
                stream.put(None)
        if self._client is not None and self.connected.is_set():
            self._client.publish(self._topic("hub/status"),
                                 self._status("offline"), qos=1,
                                 retain=True).wait_for_publish(2)
        self._stop.set()
        if self._worker is not None:
            self._worker.join(timeout=5)
        if self._client is not None:
            self._client.disconnect()
            self._client.loop_stop()
        self.clock.stop()
        self.recorder.stop()

    # ------------------------------------------------------------------ the floor worker
    def _run(self, ready: threading.Event) -> None:
        self._db = open_storage(self.settings.db)
        for row in self._db.alerts(self.now_ms() - RECENT_ALERTS_MS):
            self.floor.restore_alert(Alert(**row))
        # Ids go on from the newest in the database, purged or not shown.
        self.floor.next_alert = max(self.floor.next_alert, self._db.max_alert_id() + 1)
        self._db.commit()  # ends the reading transaction (PostgreSQL keeps one open)
        ready.set()
        last_purge = 0.0
        while not self._stop.is_set():
            try:
                item = self.inbox.get(timeout=0.5)
            except queue.Empty:
                item = None
            if item is not None:
                self._handle(item)
            if time.monotonic() - last_purge >= PURGE_INTERVAL:
                last_purge = time.monotonic()
                self._purge()
        self._db.close()

    def _purge(self) -> None:
        assert self._db is not None
        if self.settings.retention_days > 0:
            cutoff = self.now_ms() - int(self.settings.retention_days * 86400 * 1000)
            self._db.purge(cutoff)

    def _handle(self, item: tuple[Any, ...]) -> None:
        kind = item[0]
        if kind == "connect":
            if getattr(item[1], "is_failure", False):
                return
            base = self._topic("tables/+/")
            self._client.subscribe([(base + leaf, 1) for leaf in
                                    ("status", "state", "events", "cmd-resp")] +
                                   [(self._topic("clock"), 1)])
            self._client.publish(self._topic("hub/status"), self._status("online"), qos=1,
                                 retain=True)
            self.connected.set()
            self._broadcast(self.floor.on_broker("ok", self.now_ms()))
        elif kind == "disconnect":
            self.connected.clear()
            self._broadcast(self.floor.on_broker("lost", self.now_ms()))
        elif kind == "mqtt":
            self._broadcast(self._message(item[1], item[2]))
        elif kind == "call":
            function, future = item[1], item[2]
            try:
                future.set_result(function())
            except Exception as exc:  # handed to the waiting web request
                future.set_exception(exc)

    def _message(self, name: str, payload: bytes) -> list[Update]:
        try:
            body = json.loads(payload)
        except ValueError:
            return []
        if not isinstance(body, dict):
            return []
        now = self.now_ms()
        if name == self._topic("clock"):
            was = self.floor.hand_for_hand
            updates = self.floor.on_clock(body, now)
            if self.floor.hand_for_hand != was:
                self._to_every_table("hand-for-hand",
                                     {"state": "on" if self.floor.hand_for_hand else "off"},
                                     "venue clock")
            return updates
        parts = name.split("/")
        if len(parts) != 6:
            return []
        table, leaf = parts[4], parts[5]
        if leaf == "status":
            updates = self.floor.on_status(table, body, now)
            if body.get("state") == "online" and self.floor.hand_for_hand:
                # A table that (re)joins while hand-for-hand is on is told so.
                self._send(table, "hand-for-hand", {"state": "on"}, "hub")
        elif leaf == "state":
            updates = self.floor.on_state(table, body, now)
        elif leaf == "events":
            updates = self.floor.on_event(table, body, now)
        elif leaf == "cmd-resp":
            updates = self.floor.on_command_response(table, body, now)
        else:
            return []
        alerts = [u["alert"] for u in updates if u["kind"] == "alert"]
        if alerts:
            assert self._db is not None
            for alert in alerts:
                self._db.save_alert(alert)
            self._db.commit()
        return updates

    def _broadcast(self, updates: list[Update]) -> None:
        if not updates:
            return
        with self._streams_lock:
            for stream in self._streams:
                for update in updates:
                    stream.put(update)

    # ------------------------------------------------------------------ for the web side
    def call(self, function: Callable[[], Any], timeout: float = 10.0) -> Any:
        """Run ``function`` on the floor worker (where the state lives) and return its
        result; its exception is raised here."""
        future: Future[Any] = Future()
        self.inbox.put(("call", function, future))
        return future.result(timeout)

    def subscribe(self) -> tuple[dict[str, Any], queue.Queue[Update | None]]:
        """A snapshot and the queue of every update after it (for one event stream)."""
        stream: queue.Queue[Update | None] = queue.Queue()

        def attach() -> dict[str, Any]:
            with self._streams_lock:
                self._streams.append(stream)
            return self.floor.snapshot(self.now_ms())

        return self.call(attach), stream

    def unsubscribe(self, stream: queue.Queue[Update | None]) -> None:
        with self._streams_lock:
            if stream in self._streams:
                self._streams.remove(stream)

    def snapshot(self) -> dict[str, Any]:
        return dict(self.call(lambda: self.floor.snapshot(self.now_ms())))

    def acknowledge(self, user: User, alert_id: int) -> dict[str, Any]:
        def run() -> dict[str, Any]:
            assert self._db is not None
            try:
                updates = self.floor.acknowledge(alert_id, user.name, self.now_ms())
            except KeyError:
                raise StaffError(f"no alert {alert_id}") from None
            alert = updates[0]["alert"]
            self._db.save_alert(alert)
            self._db.log(self.now_ms(), user.name, "acknowledge",
                         {"alert": alert_id, "table": alert["table"], "kind": alert["kind"]})
            self._db.commit()
            self._broadcast(updates)
            return dict(alert)

        return dict(self.call(run))

    def table_command(self, user: User, table: str, name: str,
                      args: dict[str, Any]) -> dict[str, Any]:
        """Validate a floor command as the table will, send it, and return what was sent;
        StaffError says what is wrong with it."""
        # The rest (a known command, its fields) is checked by the table's own parser in _send.
        if not isinstance(args, dict) or "transaction" in args:
            raise StaffError("the command's fields are a JSON object (without a transaction)")

        def run() -> dict[str, Any]:
            if table not in self.floor.tables:
                raise StaffError(f"no table {table!r} has been heard at this venue")
            return self._send(table, name, args, user.name)

        return dict(self.call(run))

    def _send(self, table: str, name: str, args: dict[str, Any], user: str) -> dict[str, Any]:
        """On the floor worker: publish one validated command and remember it for its reply."""
        assert self._db is not None
        transaction = uuid.uuid4().hex
        payload = json.dumps({"transaction": transaction, **args}).encode()
        try:
            parse_command(name, payload)
        except CommandError as exc:
            raise StaffError(str(exc)) from None
        self._client.publish(self._topic(f"tables/{table}/cmd/{name}"), payload, qos=1)
        now = self.now_ms()
        self._db.log(now, user, f"cmd/{name}", {"table": table, "transaction": transaction,
                                                **args})
        self._db.commit()
        updates = self.floor.command_sent(transaction, table, name, args, user, now)
        self._broadcast(updates)
        return dict(updates[0]["command"])

    def _to_every_table(self, name: str, args: dict[str, Any], user: str) -> list[str]:
        sent = []
        for table, view in sorted(self.floor.tables.items()):
            if view.status == "online":
                self._send(table, name, args, user)
                sent.append(table)
        return sent

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
            return self._to_every_table("hand-for-hand", {"state": "release"}, user.name)

        return list(self.call(run))

    def clock_command(self, user: User, action: str, value: Any) -> dict[str, Any]:
        try:
            state = self.clock.apply(action, value)
        except (ValueError, TypeError) as exc:
            raise StaffError(str(exc)) from None

        def log() -> None:
            assert self._db is not None
            self._db.log(self.now_ms(), user.name, f"clock/{action}", {"value": value})
            self._db.commit()

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
        for envelope in envelopes:
            event = event_of(envelope)
            shown = event if private else public_event(event)
            if shown is None:
                continue
            number = int(envelope["hand"])
            entry = grouped.setdefault(number, {"hand": number, "events": [],
                                                "dealer": envelope.get("dealer")})
            entry["events"].append({**shown, "seq": envelope["seq"], "ts": envelope["ts"]})
        return [grouped[n] for n in sorted(grouped)]

    def floor_log(self, limit: int = 100) -> list[dict[str, Any]]:
        def read() -> list[dict[str, Any]]:
            assert self._db is not None
            lines = self._db.floor_log(limit)
            self._db.commit()  # ends the reading transaction (PostgreSQL keeps one open)
            return lines

        return list(self.call(read))
