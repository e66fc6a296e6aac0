"""The floor's MQTT worker: the hub's own connection (identity ``hub-VENUE``, role ``hub`` in
the broker's ACL: public topics only, so what the dashboard shows cannot hold a hole card).

Thin: each message is checked against the contract here, once, and handed to the floor's use
cases (hub/service.py) on this worker's thread; what the floor sends goes out on this
connection (``FloorLink``). The recorder's stored envelopes (``Recorded``) and the dashboard's
use cases (``submit``) come through the same queue, so the floor's state has one thread.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Concatenate, ParamSpec, TypeVar

from contract import topics
from contract.commands import Command, CommandError, parse_clock_command
from contract.mqtt import (
    BrokerClient,
    Connected,
    Disconnected,
    Endpoint,
    MqttWorker,
    Received,
    Retired,
)
from contract.schema import ContractError, receive
from contract.snapshots import TableState, VenueClockReading
from contract.supervise import LogOnce
from contract.wire import encode
from hub.calls import Call, submit, use_case_name
from hub.service import FloorService
from hub.settings import HubSettings

log = logging.getLogger("tablectl.hub")

# The floor's MQTT session outlives a hub restart: the tables' states, statuses and command
# answers wait at the broker meanwhile (their events the recorder's session keeps).
FLOOR_SESSION_SECONDS = 24 * 3600
# The schema each consumed public topic's payload must keep to. (Not ``events``: the floor
# follows what the recorder stored, as its public view: the broker sends the hub each event
# once, and the floor never shows an event the record does not hold.)
_SCHEMAS = {"status": "Status", "state": "State", "cmd-resp": "CommandResponse"}
# What an older hub subscribed to in this session and this one does not: each table's leaf,
# and the change that dropped it. The broker keeps the session across an upgrade (a day), and
# would send each table's messages there only to be refused; unsubscribed at every connection
# that finds the session kept (docs/hub.md, "Upgrading").
RETIRED = {"events": "1d7dc6b, 2026-12-03: the floor follows what the recorder stored"}
P = ParamSpec("P")
T = TypeVar("T")


@dataclass(frozen=True)
class Recorded:
    """Envelopes of one table the recorder stored for the first time (committed), in order."""

    table: str
    envelopes: list[dict[str, Any]]


@dataclass(frozen=True)
class TableNews:
    """What the recorder found of a table: an alert's kind and text (``hub/recorder.py``: a
    new journal, a restored one, two devices under one name, a clock far from the hub's)."""

    table: str
    kind: str
    text: str


class FloorWorker(MqttWorker):
    worker_name = "hub-floor"
    turn_seconds = 0.5

    def __init__(self, settings: HubSettings, *, wall: Callable[[], float]) -> None:
        super().__init__(Endpoint(settings.host, settings.port, f"hub-{settings.venue}",
                                  settings.tls, session_seconds=FLOOR_SESSION_SECONDS))
        self.venue = settings.venue
        self.wall = wall
        self.service: FloorService | None = None
        self.connected = threading.Event()
        self.invalid = 0  # messages refused by the contract
        self.errors = 0  # messages whose handling failed (a bug: logged with its topic)
        self._refused = LogOnce(log)

    def feed(self, service: FloorService) -> FloorWorker:
        """What arrives goes to ``service`` (built with this worker as its link)."""
        self.service = service
        return self

    def _floor(self) -> FloorService:
        assert self.service is not None, "FloorWorker.feed(service) before start"
        return self.service

    def submit(self, use_case: Callable[Concatenate[FloorService, P], T], /,
               *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        """A use case of the floor, run on this worker (from any thread)."""
        service = self._floor()
        return submit(self, lambda: use_case(service, *args, **kwargs),
                      use_case_name(use_case))

    def _status(self, state: str) -> str:
        return encode({"state": state, "venue": self.venue, "ts": int(self.wall() * 1000)})

    # ------------------------------------------------------------------ FloorLink
    def send_command(self, table: str, command: Command) -> None:
        self.client.publish(topics.table(self.venue, table, f"cmd/{command.name}"),
                            command.payload(), qos=1)

    def publish_clock(self, reading: VenueClockReading) -> None:
        self.client.publish(topics.venue_clock(self.venue), encode(reading.to_json()), qos=1,
                            retain=True)

    def answer_clock(self, answer: dict[str, Any]) -> None:
        self.client.publish(topics.hub(self.venue, "cmd-resp"), encode(answer), qos=1)

    # ------------------------------------------------------------------ the worker
    def configure(self, client: BrokerClient) -> None:
        client.will_set(topics.hub(self.venue, "status"), self._status("lost"), qos=1,
                        retain=True)

    def retired(self) -> tuple[Retired, ...]:
        return tuple(Retired(topics.every_table(self.venue, leaf), change)
                     for leaf, change in RETIRED.items())

    def setup(self) -> None:
        self._floor().open()

    def finish(self) -> None:
        if self.connected.is_set():
            try:
                self.client.publish(topics.hub(self.venue, "status"), self._status("offline"),
                                    qos=1, retain=True).wait_for_publish(2)
            except (RuntimeError, ValueError) as exc:  # paho: the connection went meanwhile
                # Not a failure of the stop: the broker gives the hub's will ("lost").
                log.info("the hub's 'offline' status not sent as it stopped: %s", exc)
        self._floor().close()

    def turn(self) -> None:
        self._floor().turn()

    def subscribed(self) -> None:
        self.connected.set()  # connected and subscribed: a command sent now is heard

    def handle(self, item: object) -> None:
        if isinstance(item, Call):
            # Its exception goes to whoever asked; what it wrote before it raised is undone
            # (on PostgreSQL an error leaves the connection refusing all until a rollback).
            if item.run() is not None:
                self._floor().rollback()
            return
        try:
            self._handle(item)
        except Exception:  # a bug: the floor goes on with the next message
            self.errors += 1
            log.exception("the floor failed on %s", str(item)[:200])
            self._floor().rollback()

    def _handle(self, item: object) -> None:
        floor = self._floor()
        match item:
            case Connected(refused=False):
                self.subscribe(
                    [(topics.every_table(self.venue, leaf), 1)
                     for leaf in ("status", "state", "cmd-resp")]
                    + [(topics.venue_clock(self.venue), 1),
                       (topics.hub(self.venue, "cmd/clock"), 1)])
                self.client.publish(topics.hub(self.venue, "status"), self._status("online"),
                                    qos=1, retain=True)
                floor.on_broker(True)
            case Disconnected():
                self.connected.clear()
                floor.on_broker(False)
            case Received(topic=name, payload=payload):
                try:
                    self._message(floor, name, payload)
                except ContractError as exc:
                    self.invalid += 1
                    self._refused(name, str(exc))
            case Recorded(table=table, envelopes=envelopes):
                floor.on_recorded(table, envelopes)
            case TableNews(table=table, kind=kind, text=text):
                floor.on_news(table, kind, text)

    def _message(self, floor: FloorService, name: str, payload: bytes) -> None:
        """One public message, checked against the contract before the floor acts on it."""
        if name == topics.hub(self.venue, "cmd/clock"):
            try:
                command = parse_clock_command(payload)
            except CommandError as exc:  # answered on cmd-resp, as the clock's own refusals
                floor.clock_cases.on_clock_command(exc)
                return
            floor.clock_cases.on_clock_command(command)
            return
        if name == topics.venue_clock(self.venue):
            floor.on_venue_clock(VenueClockReading.parse(payload))
            return
        topic = topics.parse(name)
        if topic is None or topic.table is None or topic.venue != self.venue or \
                topic.leaf not in _SCHEMAS:
            raise ContractError(f"topic {name[:120]!r} is not a table's public topic")
        table, leaf = topic.table, topic.leaf
        if leaf == "state":
            floor.on_state(table, TableState.parse(payload))
            return
        body = receive(_SCHEMAS[leaf], payload)
        if body.get("table", table) != table:
            raise ContractError(f"a message of table {body['table']!r} on {table}'s topic")
        if leaf == "status":
            floor.on_status(table, body)
        else:
            floor.on_command_response(table, body)
