"""A tournament's room for the tests that play one through (tests/test_tournament.py,
tests/test_tournament_browser.py): real table daemons (each the real daemon with the simulated
shoe on a pty, tablectl/sim_venue.py) dealt by dealers who follow what each table seats, a real
Mosquitto, the hub, and the floor's side through the hub's JSON API with the checks every step
must pass (hub/seating.py, docs/hub.md#one-seating-truth)."""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hub import auth
from simulators.broker import Broker
from simulators.shoe import perform, settle
from simulators.staff import Staff
from tablectl.hub_app import Hub, HubSettings
from tablectl.sim_venue import BETWEEN_GESTURES, Finger, SimTable, SimulatedVenue
from tests.conftest import wait_for

DECK = [rank + suit for suit in "cdhs" for rank in "23456789TJQKA"]
IN_LINE_SECONDS = 60.0  # for every table to deal the hub's seating (a hand each, or two)


class FollowingDealer(threading.Thread):
    """Deals hand after hand at one simulated table to whoever its core seats for the hand
    (its ``hand.started`` event), as a dealer deals to the players sitting there: the table's
    seats follow the hub's seating, and the dealer follows the table. A hand is the hole
    cards, then the dealer's double tap (everyone folds to the big blind)."""

    def __init__(self, table: SimTable, seats: Any) -> None:
        super().__init__(daemon=True, name=f"dealer-{table.name}")
        self.table = table
        self.seats = seats  # the seats the table says it deals now (the hub's view of it)
        self.stop = threading.Event()
        self.paused = threading.Event()
        self.hands = 0
        self.failure: str | None = None
        self.next_press = 0.0

    def _count(self, kind: str) -> int:
        row = self.table._ask("SELECT COUNT(*) FROM outbox WHERE json_extract(event, "
                              "'$.type') = ?", (kind,))
        return int(row[0]) if row else 0

    def _dealt(self) -> list[int]:
        row = self.table._ask("SELECT json_extract(event, '$.seats') FROM outbox WHERE "
                              "json_extract(event, '$.type') = 'hand.started' "
                              "ORDER BY seq DESC LIMIT 1")
        return list(json.loads(row[0])) if row and row[0] else []

    def _until(self, condition: Any, seconds: float = 20.0) -> bool:
        end = time.monotonic() + seconds
        while time.monotonic() < end and not self.stop.is_set():
            if condition():
                return True
            time.sleep(0.02)
        return False

    def _press(self, finger: Finger) -> None:
        # Two presses closer than the button's double-tap window would be one gesture: a
        # dealer's double taps are a hand apart (tablectl/sim_venue.py).
        time.sleep(max(0.0, self.next_press - time.monotonic()))
        seen = self.table._last_button()
        finger.press("double_tap")
        self.next_press = time.monotonic() + BETWEEN_GESTURES
        self.table._wait_button(seen, "double_tap", 5)

    def _finish(self, finger: Finger) -> None:
        """The dealer's double tap until the hand is over: a press lost while the table's
        daemon was down (killed, started again: its hand resumed) is made again."""
        ended = self._count("hand.ended")
        for _ in range(20):
            while self.paused.is_set() and not self.stop.is_set():
                time.sleep(0.05)
            self._press(finger)
            if self._until(lambda: self._count("hand.ended") > ended, 5):
                return
            if self.stop.is_set():
                return
        self.failure = f"{self.table.name}: hand {self.hands} did not end"

    def run(self) -> None:
        finger = Finger(self.table.control)
        shoe = self.table.shoe
        try:
            while not self.stop.is_set() and self.failure is None:
                if self.paused.is_set() or len(self.seats()) < 2:
                    time.sleep(0.05)
                    continue
                started = self._count("hand.started")
                if started > self._count("hand.ended"):
                    self._finish(finger)  # a hand the table resumed after a restart
                    continue
                self.hands += 1
                perform({"type": "deck_in", "deck": "R1" if self.hands % 2 else "B2"}, shoe,
                        lambda _line, _at: None)
                if not self._until(lambda n=started: self._count("hand.started") > n, 5):
                    continue  # the deck went in while the daemon was down: again
                dealt = self._dealt()
                moment = time.monotonic()
                for index, card in enumerate(DECK[:2 * len(dealt)]):
                    perform({"type": "card", "card": card}, shoe, lambda _line, _at: None,
                            at=moment + 0.005 * index)
                settle(shoe, 15)
                self._finish(finger)
        except Exception as exc:  # said by the test, which fails
            self.failure = f"{self.table.name}: {exc!r}"


class Tournament:
    """The floor's side: the hub's API as a floor member uses it, and the checks."""

    def __init__(self, hub: Hub, venue: SimulatedVenue, floor: Staff, size: int) -> None:
        self.hub, self.venue, self.floor, self.size = hub, venue, floor, size
        self.rng = random.Random(45)
        self.steps: list[str] = []
        self.dealers: dict[str, FollowingDealer] = {}
        self.confirmed: list[str] = []  # the kinds of moves confirmed

    def state(self) -> dict[str, Any]:
        status, state = self.floor.get("/api/state")
        assert status == 200, state
        return dict(state)

    def roster(self) -> dict[str, Any]:
        return dict(self.floor.get("/api/roster")[1])

    def post(self, path: str, body: Any = None) -> Any:
        status, answer = self.floor.post(path, body)
        assert status == 200, (path, body, answer)
        return answer

    def seated(self) -> dict[str, list[tuple[int, dict[str, Any]]]]:
        """Each table's players in the hub's seating (not those on their way)."""
        state = self.state()
        players = {(p["table"], p["seat"]): p for p in state["roster"]["players"]
                   if p["place"] is None or p["place"] == 1}
        return {t["name"]: [(seat, players[(t["name"], seat)]) for seat in
                            (t["seating"] or {}).get("seats", []) if (t["name"], seat) in players]
                for t in state["tables"]}

    def check(self, step: str) -> None:
        """What must hold after every step (said with the step that broke it)."""
        self.steps.append(step)
        state = self.state()
        roster = state["roster"]
        tables = {t["name"]: t for t in state["tables"]}
        playing = [p for p in roster["players"] if p["out_at"] is None]
        places = [(p["table"], p["seat"]) for p in playing if p["table"] is not None]
        assert len(places) == len(set(places)), (step, "a seat holds two players")
        for table, seat in places:
            assert seat in tables[table]["seats"], (step, table, seat, "not in the seating")
            assert 1 <= seat <= self.size, (step, table, seat)
        out = {(p["table"], p["seat"]) for p in roster["players"] if p["out_at"] is not None}
        for name, view in tables.items():
            held = {a["seat"] for a in (view["seating"] or {}).get("arriving", [])}
            for seat in set(view["seats"]) - held:
                assert (name, seat) not in out or (name, seat) in places, (
                    step, f"{name} seat {seat}: a player out is seated")
        # One count everywhere: the roster's players left, the seats of the tables in play,
        # the TV's figures.
        in_play = [t for t in tables.values()
                   if t["status"] in ("online", "lost") and t["seats"]]
        assert roster["left"] == sum(len(t["seats"]) for t in in_play), step
        tv = self.hub.call(lambda floor: floor.room_clock(floor.tv_key))
        assert tv["players"] == tv["players_left"] == roster["left"], (step, tv)

    def in_line(self, step: str) -> None:
        """Every online table deals the hub's seating, its seats those of the hub."""
        def lined() -> bool:  # (a lost table must be back: its seats are not known)
            tables = self.state()["tables"]
            return all(t["seating"] is None or (
                t["status"] == "online" and t["seating"]["state"] == "dealt"
                and not t["seating"]["arriving"]
                and sorted(t["table_seats"]) == sorted(t["seating"]["seats"]))
                for t in tables if t["status"] != "offline")

        assert wait_for(lined, IN_LINE_SECONDS), (step, [
            (t["name"], t["status"], t["table_seats"], t["seating"], t["in_progress"], t["hand"])
            for t in self.state()["tables"]], [
            (d.table.name, d.hands, d.failure) for d in self.dealers.values()])

    def someone_seated(self) -> tuple[str, int]:
        """A table and seat of a player in the hub's seating, at random: when every player
        left is on their way to another table (a break), once they sit there."""
        found: list[tuple[str, int]] = []

        def seated() -> bool:
            found[:] = [(name, seat) for name, pairs in self.seated().items()
                        for seat, _ in pairs]
            return bool(found)

        assert wait_for(seated, IN_LINE_SECONDS), "nobody sits: the moving players never did"
        return self.rng.choice(found)

    def bust(self, table: str, seat: int) -> dict[str, Any]:
        return dict(self.post(f"/api/tables/{table}/bust", {"seat": seat}))

    def confirm_what_is_proposed(self) -> bool:
        """The proposal confirmed as shown; looked at again when the hub says the seats
        changed since (a hand moved the blinds: who moves is someone else now)."""
        for _ in range(20):
            balance = self.state()["balance"]
            proposal = balance and balance["proposal"]
            if not proposal:
                return False
            status, answer = self.floor.post("/api/balance/confirm", {
                "kind": proposal["kind"], "tables": proposal["tables"],
                "moves": proposal["moves"]})
            if status == 200:
                self.confirmed.append(proposal["kind"])
                return True
            assert status == 400 and ("the seats changed since" in answer["error"]
                                      or "now call for" in answer["error"]), answer
        raise AssertionError("the proposal changed under every confirmation")




@contextmanager
def open_room(tmp_path: Path, house: str, tables: int = 3,
              users: tuple[tuple[str, str], ...] = (("maria", "floor"),)) -> Iterator[
                  tuple[Hub, SimulatedVenue, Tournament]]:
    """A broker, the hub (its clock running) and ``tables`` simulated tables of ``house``,
    each dealt by a following dealer; the floor logged in as maria."""
    broker = Broker(tmp_path / "mosquitto").start()
    users_file = tmp_path / "users.toml"
    for name, role in users:
        auth.save_user(users_file, name, role, f"{name}-password")
    hub = Hub(HubSettings(venue="sim", db=str(tmp_path / "hub.db"), users=str(users_file),
                          port=broker.port, http_port=0, profile=house)).start()
    venue = SimulatedVenue(tmp_path / "tables", tables=tables, hands=1, broker=broker,
                           recorder=False, quiet=True, irregularities=0.0, pace=0.05,
                           profile=house).start()
    dealers: dict[str, FollowingDealer] = {}
    try:
        hub.clock.connected.wait(10)
        hub.clock.apply("start", "tda-2024")
        names = [t.name for t in venue.tables]
        assert wait_for(lambda: all(n in hub.floor.tables and hub.floor.tables[n].status
                                    == "online" and hub.floor.tables[n].table_seats
                                    for n in names), 30)
        room = Tournament(hub, venue, Staff(hub.url, "maria", "maria-password"),
                          int(venue.profile.value("table_size")))
        for table in venue.tables:
            dealers[table.name] = FollowingDealer(
                table, lambda name=table.name: list(hub.floor.tables[name].table_seats))
            dealers[table.name].start()
        room.dealers = dealers
        yield hub, venue, room
        for dealer in dealers.values():
            assert dealer.failure is None, dealer.failure
    finally:
        for dealer in dealers.values():
            dealer.stop.set()
        for dealer in dealers.values():
            dealer.join(10)
        venue.stop()
        hub.stop()
        broker.kill()
