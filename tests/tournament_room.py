"""A tournament's room for the tests that play one through (tests/test_tournament.py,
tests/test_tournament_browser.py): real table daemons (each the real daemon with the simulated
shoe on a pty, tablectl/sim_venue.py) dealt by dealers who follow what each table seats, a real
Mosquitto, the hub, and the floor's side through the hub's JSON API with the checks every step
must pass (hub/seating.py, docs/hub.md#one-seating-truth)."""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hub import auth
from simulators.broker import Broker
from simulators.staff import Staff
from tablectl.hub_app import Hub, HubSettings
from tablectl.sim_venue import FollowingDealer, SimTable, SimulatedVenue
from tests.conftest import wait_for

IN_LINE_SECONDS = 60.0  # for every table to deal the hub's seating (a hand each, or two)


class DealerThread(threading.Thread):
    """The simulator's following dealer (tablectl/sim_venue.py ``FollowingDealer``) at one
    table, in a thread of its own until stopped; ``paused`` while its daemon is down."""

    def __init__(self, table: SimTable) -> None:
        super().__init__(daemon=True, name=f"dealer-{table.name}")
        self.table = table
        self.stop = threading.Event()
        self.paused = threading.Event()
        self.dealer = FollowingDealer(table, self.stop, self.paused)

    @property
    def failure(self) -> str | None:
        return self.dealer.failure

    @property
    def hands(self) -> int:
        return self.dealer.hands

    def run(self) -> None:
        self.dealer.deal()


class Tournament:
    """The floor's side: the hub's API as a floor member uses it, and the checks."""

    def __init__(self, hub: Hub, venue: SimulatedVenue, floor: Staff, size: int) -> None:
        self.hub, self.venue, self.floor, self.size = hub, venue, floor, size
        self.rng = random.Random(45)
        self.steps: list[str] = []
        self.dealers: dict[str, DealerThread] = {}
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
        tv = self.hub.call(lambda floor: floor.room_clock(floor.clock_cases.tv_key))
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
            (d.dealer.describe(), d.failure) for d in self.dealers.values()],
            "\n".join(d.table.describe() for d in self.dealers.values()))

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
              users: tuple[tuple[str, str], ...] = (("maria", "floor"),),
              dealing: bool = True) -> Iterator[tuple[Hub, SimulatedVenue, Tournament]]:
    """A broker, the hub (its clock running) and ``tables`` simulated tables of ``house``,
    each dealt by a following dealer (``dealing``; False for a test of the floor's side that
    needs no hand dealt: the tables wait between hands, costing the machine nothing); the
    floor logged in as maria."""
    broker = Broker(tmp_path / "mosquitto").start()
    users_file = tmp_path / "users.toml"
    for name, role in users:
        auth.save_user(users_file, name, role, f"{name}-password")
    hub = Hub(HubSettings(venue="sim", db=str(tmp_path / "hub.db"), users=str(users_file),
                          port=broker.port, http_port=0, profile=house)).start()
    venue = SimulatedVenue(tmp_path / "tables", tables=tables, hands=1, broker=broker,
                           recorder=False, quiet=True, irregularities=0.0, pace=0.05,
                           profile=house).start()
    dealers: dict[str, DealerThread] = {}
    try:
        hub.clock.connected.wait(10)
        hub.clock.apply("start", "tda-2024")
        names = [t.name for t in venue.tables]
        assert wait_for(lambda: all(n in hub.floor.tables and hub.floor.tables[n].status
                                    == "online" and hub.floor.tables[n].table_seats
                                    for n in names), 30)
        room = Tournament(hub, venue, Staff(hub.url, "maria", "maria-password"),
                          int(venue.profile.value("table_size")))
        for table in venue.tables if dealing else ():
            dealers[table.name] = DealerThread(table)
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
