"""The venue clock: the hub is the authority for the tournament clock that every table follows.

It keeps the clock (structure, elapsed time, running or paused) on the hub's monotonic time and
publishes it, retained, on ``pkr/v1/<venue>/clock`` at every change and every few seconds, so a
table that joins late gets a state at most that old and is corrected by the next one. Floor
commands arrive on ``pkr/v1/<venue>/hub/cmd/clock`` (start STRUCTURE, pause, resume, add
SECONDS, level N, break start|end, stop, hand-for-hand on|off), each with a ``transaction``,
answered on ``pkr/v1/<venue>/hub/cmd-resp``.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

from controller.clock import Structure, load_structure
from hardware.mqtt_link import TlsSettings, mqtt_client

ACTIONS = ("start", "pause", "resume", "add", "level", "break", "stop", "hand-for-hand")


class VenueClock:
    """The clock itself, pure but for the time function it is given."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.structure: Structure | None = None
        self.elapsed_before = 0.0
        self.running_since: float | None = None
        self.hand_for_hand = False

    def elapsed(self) -> float:
        extra = self.clock() - self.running_since if self.running_since is not None else 0.0
        return self.elapsed_before + extra

    def apply(self, action: str, argument: Any = None) -> None:
        now = self.clock()
        if action == "hand-for-hand":
            if argument not in ("on", "off"):
                raise ValueError(f"hand-for-hand: 'on' or 'off', not {argument!r}")
            self.hand_for_hand = argument == "on"
            return
        if action == "start":
            self.structure = load_structure(str(argument))
            self.elapsed_before, self.running_since = 0.0, now
            return
        if self.structure is None:
            raise ValueError("no clock: start one with a structure first")
        if action == "pause" and self.running_since is not None:
            self.elapsed_before, self.running_since = self.elapsed(), None
        elif action == "resume" and self.running_since is None:
            self.running_since = now
        elif action == "add":
            # Time added to the current level: the clock goes back by that much, but never
            # into the level before (a floor adds time to this level, not back to the last).
            elapsed = self.elapsed()
            start = self.structure.starts()[self.structure.index_at(elapsed)]
            self._set_elapsed(max(start, elapsed - float(argument)), now)
        elif action == "level":
            level = int(argument)
            levels = [period.level for period in self.structure.periods]
            if level not in levels:
                raise ValueError(f"level {level} is not in {self.structure.name}")
            self._set_elapsed(self.structure.starts()[levels.index(level)], now)
        elif action == "break":
            self._break(str(argument), now)
        elif action == "stop":
            self.structure = None

    def _break(self, which: str, now: float) -> None:
        """``start``: the next scheduled break begins now (the rest of the level is skipped);
        ``end``: the break ends now and the next level begins."""
        assert self.structure is not None
        periods, starts = self.structure.periods, self.structure.starts()
        index = self.structure.index_at(self.elapsed())
        if which == "start":
            if periods[index].is_break:
                raise ValueError("the clock is on a break already")
            later = [i for i in range(index + 1, len(periods)) if periods[i].is_break]
            if not later:
                raise ValueError(f"no break is left in {self.structure.name}")
            self._set_elapsed(starts[later[0]], now)
        elif which == "end":
            if not periods[index].is_break:
                raise ValueError("the clock is not on a break")
            if index + 1 >= len(periods):
                raise ValueError(f"the break is the end of {self.structure.name}")
            self._set_elapsed(starts[index + 1], now)
        else:
            raise ValueError(f"break: 'start' or 'end', not {which!r}")

    def _set_elapsed(self, elapsed: float, now: float) -> None:
        self.elapsed_before = elapsed
        if self.running_since is not None:
            self.running_since = now

    def state(self) -> dict[str, Any]:
        if self.structure is None:
            return {"structure": None, "elapsed": 0.0, "running": False,
                    "hand_for_hand": self.hand_for_hand}
        elapsed = self.elapsed()
        index = self.structure.index_at(elapsed)
        period = self.structure.periods[index]
        ends = self.structure.starts()[index] + period.seconds
        # level, on_break and remaining are for viewers (the dashboard); tables compute them
        # from structure and elapsed themselves.
        return {"structure": self.structure.name, "elapsed": round(elapsed, 3),
                "running": self.running_since is not None, "hand_for_hand": self.hand_for_hand,
                "level": period.level, "on_break": period.is_break,
                "remaining": round(max(0.0, ends - elapsed), 3)}


class VenueClockService:
    def __init__(self, *, venue: str, host: str = "127.0.0.1", port: int = 1883,
                 tls: TlsSettings | None = None, interval: float = 5.0,
                 client_id: str = "venue-clock") -> None:
        self.venue = venue
        self.host, self.port, self.tls = host, port, tls
        self.interval = interval
        self.client_id = client_id
        self.clock = VenueClock()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._client: Any = None
        self._thread: threading.Thread | None = None
        self.connected = threading.Event()
        self.seen: set[str] = set()

    @property
    def topic(self) -> str:
        return f"pkr/v1/{self.venue}/clock"

    def start(self) -> VenueClockService:
        client = mqtt_client(self.client_id, tls=self.tls)
        client.on_connect = self._on_connect
        client.on_message = lambda c, u, msg: self._command(bytes(msg.payload))
        client.connect_async(self.host, self.port, keepalive=10)
        client.loop_start()
        self._client = client
        self._thread = threading.Thread(target=self._publisher, name="venue-clock",
                                        daemon=True)
        self._thread.start()
        return self

    def _on_connect(self, client: Any, userdata: Any, flags: Any, reason: Any,
                    properties: Any = None) -> None:
        if reason.is_failure:
            return
        client.subscribe(f"pkr/v1/{self.venue}/hub/cmd/clock", qos=1)
        self.connected.set()
        self.publish()

    def publish(self) -> None:
        with self._lock:
            state = self.clock.state()
        if self._client is not None:
            self._client.publish(self.topic, json.dumps(state), qos=1, retain=True)

    def _publisher(self) -> None:
        while not self._stop.wait(self.interval):
            if self.connected.is_set():
                self.publish()

    def apply(self, action: str, argument: Any = None) -> dict[str, Any]:
        if action not in ACTIONS:
            raise ValueError(f"unknown clock action {action!r} (known: {', '.join(ACTIONS)})")
        with self._lock:
            self.clock.apply(action, argument)
            state = self.clock.state()
        self.publish()
        return state

    def _command(self, payload: bytes) -> None:
        transaction = None
        try:
            body = json.loads(payload)
            transaction = body.get("transaction")
            if not isinstance(transaction, str) or not transaction:
                raise ValueError("transaction: every command carries a transaction id")
            if transaction in self.seen:
                raise ValueError(f"transaction {transaction!r} was already handled")
            self.seen.add(transaction)
            state = self.apply(str(body.get("action")), body.get("value"))
            response = {"transaction": transaction, "command": "clock", "ok": True, **state}
        except (ValueError, TypeError) as exc:
            response = {"transaction": transaction, "command": "clock", "ok": False,
                        "error": str(exc)}
        self._client.publish(f"pkr/v1/{self.venue}/hub/cmd-resp", json.dumps(response), qos=1)

    def stop(self) -> None:
        self._stop.set()
        if self._client is not None:
            self._client.loop_stop()
            self._client.disconnect()
