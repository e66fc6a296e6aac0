"""The hub's prize money (hub/payout_cases.py), through the floor's use cases with a real
database: the tournament's payout table (the default, or a supervisor's choice or edit, each in
the floor log), the figures as entries, re-entries and add-ons come, frozen when the structure
closes late registration, the prize of each bust-out in the money, the results with the
winner, and a deal recorded."""

from __future__ import annotations

import csv
import io

import pytest

from controller.payouts import PayoutTableError
from hub import auth
from hub.payout_cases import PayoutsFrozen
from hub.refused import StaffError
from hub.roster import RosterError
from hub.service import FloorService
from hub.settings import HubSettings
from tests.test_hub import VENUE, _Link

# A house's structure: seed 004's $50 buy-in and $25 add-on, late registration closing at the
# start of level 2.
HOUSE = """
title = "House deep stack"
source = "test"
currency = "$"
buy_in = 50
add_on_price = 25
starting_stack = 4000
add_on_stack = 2000
add_on_most = 1
late_entry_until_level = 2
[[schedule]]
level = 1
sb = 25
bb = 50
minutes = 20
[[schedule]]
level = 2
sb = 50
bb = 100
minutes = 20
"""

MARIA = auth.User("maria", "floor", "")
SAM = auth.User("sam", "supervisor", "")


class Wall:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def hub(tmp_path):
    structures = tmp_path / "structures"
    structures.mkdir()
    (structures / "house.toml").write_text(HOUSE)
    settings = HubSettings(venue=VENUE, db=str(tmp_path / "hub.db"),
                           structures=str(structures))
    wall = Wall()
    floor = FloorService(settings, _Link(), wall=wall)
    floor.open()
    floor.on_broker(True)
    for table in ("t1", "t2"):
        floor.on_status(table, {"state": "online", "boot": 1, "table": table, "ts": 1})
    yield floor, settings, wall
    floor.close()


def _enter(floor: FloorService, count: int) -> None:
    floor.import_players(MARIA, "name\n" + "\n".join(f"P{n:02d}" for n in range(1, count + 1)))
    floor.draw_seats(MARIA)


def _bust_next(floor: FloorService) -> dict:
    player = next(p for p in sorted(floor.floor.roster.players.values(), key=lambda p: p.id)
                  if p.playing)
    return floor.bust(MARIA, player.table, player.seat)


def test_the_figures_follow_the_entries_and_freeze_when_registration_closes(hub):
    floor, settings, wall = hub
    assert floor.payout_figures()["table"] == "standard"
    assert "prize_pool" not in floor.payout_figures()  # no clock: no buy-in
    floor.clock_action(MARIA, floor_command("start", "house"))
    _enter(floor, 12)
    figures = floor.payout_figures()
    # 12 entries of $50, the default's row from 11 entries: 50 / 30 / 20 % of $600.
    assert (figures["prize_pool"], figures["prizes"], figures["places_paid"]) == (
        600, [300, 180, 120], 3)
    assert (figures["in_the_money"], figures["next_pay_jump"]) == (
        False, {"players_left": 3, "prize": 120})
    _bust_next(floor)
    floor.reentry(MARIA, 1)
    floor.add_on(MARIA, 2)
    figures = floor.payout_figures()
    assert (figures["entries"], figures["add_ons"], figures["prize_pool"]) == (13, 1, 675)
    assert figures["frozen"] is None

    # Level 2: late registration closes, the figures are stored as they are.
    floor.clock_action(MARIA, floor_command("level", 2))
    floor.turn()
    frozen = floor.payout_figures()
    assert frozen["frozen"]["why"].startswith("late registration closed at the start of "
                                              "level 2")
    assert frozen["prize_pool"] == 675
    floor.add_on(MARIA, 3)  # after the freeze: nothing moves
    assert floor.payout_figures()["prize_pool"] == 675
    assert floor.payout_figures()["add_ons"] == 1
    assert any(line["action"] == "payouts/frozen" for line in floor.floor_log())

    # A restart keeps the frozen figures.
    floor.close()
    again = FloorService(settings, _Link(), wall=wall)
    again.open()
    try:
        assert again.payout_figures()["prizes"] == frozen["prizes"]
        assert again.payout_figures()["frozen"] == frozen["frozen"]
    finally:
        again.close()
    floor.open()


def floor_command(action, value):
    from contract.commands import HubClockCommand

    return HubClockCommand(action=action, value=value)


def test_a_supervisor_chooses_or_edits_the_table_every_problem_listed(hub):
    floor, _, _ = hub
    floor.clock_action(MARIA, floor_command("start", "house"))
    _enter(floor, 12)
    with pytest.raises(PayoutTableError) as refused:
        floor.set_payout_table(SAM, "ours", {"source": "", "paid": [
            {"from_entries": 1, "shares": [60, 30]}, {"from_entries": 1, "shares": [70]}]},
            False)
    assert refused.value.problems == [
        "source: say where the table comes from (a seed and its rule, or the house's own "
        "decision)",
        "paid[0].shares: add up to 90, not 100",
        "paid[0].shares: 2 places paid from 1 entries (never more places than entries)",
        "paid[1].shares: add up to 70, not 100",
        "paid[1].from_entries: 1 does not follow 1; rows go up by entries"]
    with pytest.raises(PayoutTableError, match="no payout table named 'nope'"):
        floor.set_payout_table(SAM, "nope", None, False)
    ours = {"source": "our floor", "fee": {"percent": 10},
            "paid": [{"from_entries": 1, "shares": [100]},
                     {"from_entries": 10, "shares": [70, 30]}]}
    answer = floor.set_payout_table(SAM, "ours", ours, False)
    assert answer["table"] == "ours" and answer["edited"]
    floor.close()
    floor.open()  # a restart keeps the supervisor's table
    assert floor.payout_figures()["table"] == "ours" and floor.payout_figures()["edited"]
    # $600 less 10 %: $540, 70 / 30.
    assert answer["figures"]["prizes"] == [378, 162]
    assert any(line["action"] == "payouts/table" and line["user"] == "sam"
               and line["detail"]["table"] == "ours" for line in floor.floor_log())

    floor.clock_action(MARIA, floor_command("level", 2))
    floor.turn()
    with pytest.raises(PayoutsFrozen, match="send refreeze"):
        floor.set_payout_table(SAM, "standard", None, False)
    floor.add_on(MARIA, 3)  # sold after the freeze: brought in by working them out again
    answer = floor.set_payout_table(SAM, "standard", None, True)
    assert answer["figures"]["prize_pool"] == 625 and answer["figures"]["frozen"]
    while floor.floor.roster.left() > 2:
        _bust_next(floor)  # third place paid
    with pytest.raises(PayoutsFrozen, match="place 3 has been paid already"):
        floor.set_payout_table(SAM, "standard", None, True)


def test_bust_outs_in_the_money_carry_their_prize_and_the_results_name_every_place(hub):
    floor, _, _ = hub
    floor.clock_action(MARIA, floor_command("start", "house"))
    _enter(floor, 12)
    busts = [_bust_next(floor) for _ in range(11)]
    assert [b["prize"] for b in busts] == [None] * 9 + [120, 180]
    figures = floor.payout_figures()
    assert figures["in_the_money"] and figures["players_left"] == 1
    assert figures["last_paid"] == {"player": busts[-1]["player"], "place": 2, "prize": 180}
    results = floor.results()
    assert results["winner"] == "P12"
    assert [(r["place"], r["name"], r["prize"]) for r in results["places"][:4]] == [
        (1, "P12", 300), (2, "P11", 180), (3, "P10", 120), (4, "P09", 0)]
    rows = list(csv.reader(io.StringIO(floor.results_csv())))
    assert rows[0] == ["place", "name", "prize", "currency", "dealt"]
    assert rows[1] == ["1", "P12", "300", "$", ""] and len(rows) == 13
    line = next(line for line in floor.floor_log() if line["action"] == "bust-out"
                and line["detail"]["player"] == "P11")
    assert line["detail"]["prize"] == 180


def test_a_deal_shows_chip_chop_and_icm_and_is_recorded_when_accepted(hub):
    floor, _, _ = hub
    floor.clock_action(MARIA, floor_command("start", "house"))
    _enter(floor, 12)
    for _ in range(9):
        _bust_next(floor)
    left = [p.id for p in floor.floor.roster.players.values() if p.playing]
    stacks = list(zip(left, (30_000, 12_000, 6_000), strict=True))
    with pytest.raises(StaffError, match="no stack for P12"):
        floor.preview_deal(stacks[:2])
    shown = floor.preview_deal(stacks)
    assert shown["prizes"] == [300, 180, 120] and shown["total"] == 600
    by = {s["name"]: s for s in shown["shares"]}
    assert by["P10"]["chip_chop"] == 375 and by["P12"]["chip_chop"] == 75
    assert sum(s["icm"] for s in shown["shares"]) == 600
    assert by["P12"]["icm"] > by["P12"]["chip_chop"]  # ICM gives the short stack more
    results = floor.accept_deal(SAM, stacks, "icm")
    assert {r["name"]: r["prize"] for r in results["places"] if r["dealt"]} == {
        s["name"]: s["icm"] for s in shown["shares"]}
    assert any(line["action"] == "payouts/deal" for line in floor.floor_log())
    with pytest.raises(StaffError, match="a deal is recorded already"):
        floor.accept_deal(SAM, stacks, "icm")
    third = _bust_next(floor)
    assert third["prize"] == by["P10"]["icm"]  # the bust-out says what the deal gave
    # P10 out third after the deal: still what the deal gave.
    assert next(r for r in floor.results()["places"] if r["name"] == "P10")["prize"] == \
        by["P10"]["icm"]


def test_the_payout_api_lets_a_supervisor_alone_change_the_table(tmp_path):
    """Through the hub's web side: every role reads the figures; only a supervisor sets the
    table (a floor member is refused), a bad table is a 400 listing every problem, a deal's
    stacks are checked at the boundary."""
    import requests

    from simulators.broker import Broker
    from tablectl.hub_app import Hub

    broker = Broker(tmp_path / "mosquitto").start()
    users = tmp_path / "users.toml"
    for name, role in (("maria", "floor"), ("sam", "supervisor"), ("val", "viewer")):
        auth.save_user(users, name, role, f"{name}-password")
    hub = Hub(HubSettings(venue=VENUE, db=str(tmp_path / "hub.db"), users=str(users),
                          port=broker.port, http_port=0)).start()
    try:
        sessions = {}
        for name in ("maria", "sam", "val"):
            session = sessions[name] = requests.Session()
            session.post(hub.url + "/login", data={"user": name,
                                                   "password": f"{name}-password"},
                         allow_redirects=False, timeout=10)
        figures = sessions["val"].get(hub.url + "/api/payouts", timeout=10)
        assert figures.status_code == 200 and figures.json()["table"] == "standard"
        choice = {"name": "ours", "table": {"source": "our floor", "paid": [
            {"from_entries": 1, "shares": [100]}]}}
        refused = sessions["maria"].post(hub.url + "/api/payouts/table", json=choice,
                                         timeout=10)
        assert refused.status_code == 403
        bad = sessions["sam"].post(hub.url + "/api/payouts/table", json={
            "name": "ours", "table": {"paid": [{"from_entries": 1, "shares": [50, 40]}]}},
            timeout=10)
        assert bad.status_code == 400 and bad.json()["problems"] == [
            "source: say where the table comes from (a seed and its rule, or the house's "
            "own decision)",
            "paid[0].shares: add up to 90, not 100",
            "paid[0].shares: 2 places paid from 1 entries (never more places than entries)"]
        chosen = sessions["sam"].post(hub.url + "/api/payouts/table", json=choice, timeout=10)
        assert chosen.status_code == 200 and chosen.json()["table"] == "ours"
        assert sessions["val"].get(hub.url + "/api/payouts", timeout=10).json()["edited"]
        stacks = sessions["maria"].post(hub.url + "/api/payouts/deal", json={
            "stacks": [{"player": 1, "chips": 1.5}, {"player": 2, "chips": 10}]}, timeout=10)
        assert stacks.status_code == 400 and "chips" in stacks.json()["error"]
    finally:
        hub.stop()
        broker.kill()


def test_the_floor_closes_registration_where_the_structure_leaves_it_to_the_floor(hub):
    floor, settings, wall = hub
    floor.clock_action(MARIA, floor_command("start", "dealers-choice"))  # says nothing of it
    with pytest.raises(StaffError, match="no roster"):
        floor.close_registration(MARIA)
    _enter(floor, 12)
    floor.turn()
    assert floor.payout_figures()["frozen"] is None  # nothing closes it but the floor
    figures = floor.close_registration(MARIA)
    assert figures["frozen"]["why"] == "registration closed by maria"
    assert figures["registration_closed"]["by"] == "maria" and figures["prize_pool"] == 600
    with pytest.raises(RosterError, match="registration was closed by maria"):
        floor.add_player(MARIA, "Late Larry")
    out = _bust_next(floor)
    with pytest.raises(RosterError, match="registration was closed by maria"):
        floor.reentry(MARIA, out["player_id"])
    with pytest.raises(StaffError, match="closed already by maria"):
        floor.close_registration(MARIA)
    assert any(line["action"] == "payouts/registration-closed" for line in floor.floor_log())
    floor.close()
    again = FloorService(settings, _Link(), wall=wall)
    again.open()
    try:  # a restart keeps it closed
        with pytest.raises(RosterError, match="registration was closed by maria"):
            again.add_player(MARIA, "Late Larry")
        again.clear_roster(MARIA)  # a new tournament: open again, nothing frozen
        again.add_player(MARIA, "Early Erin")
        assert again.payout_figures()["frozen"] is None
    finally:
        again.close()
    floor.open()


def test_a_no_show_refunded_is_no_entry_of_the_prize_pool_nor_chips_in_play(hub):
    """Issue 48, items 1 and 5 together: a no-show's buy-in was given back, so the pool, the
    places it pays and the TV's average stack count the entries that paid, not the refund."""
    floor, _, _ = hub
    floor.clock_action(MARIA, floor_command("start", "house"))
    _enter(floor, 12)
    assert floor.payout_figures()["prize_pool"] == 600
    floor.no_show(MARIA, 12)  # never came: refunded before a hand at the table
    figures = floor.payout_figures()
    assert (figures["entries"], figures["prize_pool"]) == (11, 550)
    room = floor.room_clock(floor.clock_cases.tv_key)
    assert room["entries"] == 11
    assert room["average_stack"] == 4000  # 11 entries' chips over the 11 left
