"""A whole tournament, from a roster and a draw to the winner, through real table daemons (each
the real daemon with the simulated shoe on a pty, tablectl/sim_venue.py), a real Mosquitto
and the hub's JSON API, for a house of ten, nine and eight seats a table: two bust-outs in one
hand, a bust-out at a lost table, late entries and a re-entry, breaks and balancing confirmed
while every table deals, an undo. After every step: every player in is seated once within
the table's size, nobody out is seated, the tables' own seats become the hub's seating
(within a deadline), the counts agree on every screen, and at the end the finishing order is
complete, the winner first (hub/seating.py, docs/hub.md#one-seating-truth)."""

from __future__ import annotations

import random
import threading
import time
from typing import Any

import pytest

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
        import json

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

    def bust(self, table: str, seat: int) -> dict[str, Any]:
        return dict(self.post(f"/api/tables/{table}/bust", {"seat": seat}))

    def confirm_what_is_proposed(self) -> bool:
        balance = self.state()["balance"]
        proposal = balance and balance["proposal"]
        if not proposal:
            return False
        self.post("/api/balance/confirm", {"kind": proposal["kind"],
                                           "tables": proposal["tables"],
                                           "moves": proposal["moves"]})
        self.confirmed.append(proposal["kind"])
        return True


@pytest.mark.parametrize("house,size", [("tda-2024", 10), ("mikes-poker-tables", 9),
                                        ("lppl", 8)])
def test_a_whole_tournament_from_the_draw_to_the_winner(tmp_path, house, size):
    broker = Broker(tmp_path / "mosquitto").start()
    users = tmp_path / "users.toml"
    auth.save_user(users, "maria", "floor", "maria-password")
    hub = Hub(HubSettings(venue="sim", db=str(tmp_path / "hub.db"), users=str(users),
                          port=broker.port, http_port=0, profile=house)).start()
    venue = SimulatedVenue(tmp_path / "tables", tables=3, hands=1, broker=broker,
                           recorder=False, quiet=True, irregularities=0.0, pace=0.05,
                           profile=house).start()
    dealers: dict[str, FollowingDealer] = {}
    try:
        hub.clock.connected.wait(10)
        hub.clock.apply("start", "tda-2024")
        floor = Staff(hub.url, "maria", "maria-password")
        names = [t.name for t in venue.tables]
        assert wait_for(lambda: all(n in hub.floor.tables and hub.floor.tables[n].status
                                    == "online" and hub.floor.tables[n].table_seats
                                    for n in names), 30)
        room = Tournament(hub, venue, floor, size)
        for table in venue.tables:
            dealers[table.name] = FollowingDealer(
                table, lambda name=table.name: list(hub.floor.tables[name].table_seats))
            dealers[table.name].start()
        room.dealers = dealers

        # The draw: the players sitting at the tables named first, then the free seats.
        sitting = sum(len(hub.floor.tables[n].table_seats) for n in names)
        entrants = sitting + 3
        room.post("/api/roster/import", {"csv": "name\n" + "\n".join(
            f"Player {number:02d}" for number in range(1, entrants + 1))})
        room.post("/api/roster/draw")
        room.check("the draw")
        room.in_line("the draw")

        # Two bust-outs at one table in one hand.
        first = names[0]
        assert wait_for(lambda: hub.floor.tables[first].in_progress, 20)
        (a, _), (b, _) = room.seated()[first][:2]
        room.bust(first, a)
        room.bust(first, b)
        room.check("two bust-outs in one hand")
        room.in_line("two bust-outs in one hand")
        assert not {a, b} & set(hub.floor.tables[first].table_seats)

        # A bust-out at a lost table, applied when it is back.
        lost = venue.tables[1]
        dealers[lost.name].paused.set()
        lost.kill_daemon()
        assert wait_for(lambda: hub.floor.tables[lost.name].status == "lost", 20)
        seat, player = room.seated()[lost.name][0]
        room.bust(lost.name, seat)
        room.check("a bust-out at a lost table")
        assert hub.floor.tables[lost.name].seating["state"] == "unreachable"
        lost.start_daemon()
        dealers[lost.name].paused.clear()
        room.in_line("the lost table back")
        assert seat not in hub.floor.tables[lost.name].table_seats

        # Late entries and a re-entry, drawn to tables in play.
        room.post("/api/roster/players", {"name": "Late One"})
        room.post("/api/roster/players", {"name": "Late Two"})
        room.post(f"/api/roster/players/{player['id']}/re-entry")
        room.post("/api/roster/draw")
        room.check("late entries and a re-entry")
        room.in_line("late entries and a re-entry")

        # Bust-outs down to the winner, every move or break the house calls for confirmed
        # at once while the tables deal, one bust-out undone on the way.
        undone = False
        while room.roster()["left"] > 1:
            if room.confirm_what_is_proposed():
                room.check("a move confirmed")
                continue
            seated = [(name, seat) for name, pairs in room.seated().items()
                      for seat, _ in pairs]
            table, seat = room.rng.choice(seated)
            bust = room.bust(table, seat)
            room.check(f"bust-out at {table} seat {seat}")
            if not undone and room.roster()["left"] < entrants // 2:
                room.post(f"/api/bustouts/{bust['id']}/undo")
                room.check("an undo")
                undone = True
            if room.rng.random() < 0.3:
                room.in_line(f"bust-out at {table} seat {seat}")
        assert undone and "break" in room.confirmed, room.confirmed
        # The end: the winner first, every place once, the clock held, the TV says so.
        roster = room.roster()
        assert roster["winner"] is not None
        assert sorted(p["place"] for p in roster["players"]) == list(
            range(1, len(roster["players"]) + 1))
        with floor.opener.open(hub.url + "/api/roster/finishing.csv") as response:
            rows = response.read().decode().splitlines()[1:]
        assert [row.split(",")[0] for row in rows] == [
            str(place) for place in range(1, len(roster["players"]) + 1)]
        assert roster["winner"] in rows[0]
        assert wait_for(lambda: not room.state()["clock"]["running"], 10)  # held: it is over
        tv = hub.call(lambda floor: floor.room_clock(floor.tv_key))
        assert tv["winner"] == roster["winner"]
        room.in_line("the end")
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
