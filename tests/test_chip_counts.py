"""Chip counts (hub/chip_cases.py), through the floor's use cases with a real database and
through the hub's web side: a table's stacks validated (every problem listed), kept with the
time and who counted across a restart, in the floor log; the average stack from the counts
(the counted players' own, said so) or the starting stacks', the chip leader on the TV, and
each stack's M at the level in play."""

from __future__ import annotations

import pytest

from hub import auth
from hub.chip_cases import ChipCountRefused, m_of
from hub.service import FloorService
from tests.test_hub import VENUE
from tests.test_hub_payouts import MARIA, _enter, floor_command, hub  # noqa: F401


def _at(floor: FloorService, table: str) -> list[int]:
    return sorted(p.id for p in floor.floor.roster.players.values()
                  if p.table == table and p.playing)


def test_a_tables_counts_are_checked_every_problem_listed(hub):  # noqa: F811
    floor, _, _ = hub
    _enter(floor, 6)
    t1, t2 = _at(floor, "t1"), _at(floor, "t2")
    with pytest.raises(ChipCountRefused) as refused:
        floor.count_chips(MARIA, "t1", [(t1[0], 5000), (t2[0], 3000), (99, 10),
                                        (t1[0], 4000)])
    assert refused.value.problems == [
        f"player {t2[0]} ({floor.floor.roster.players[t2[0]].name}): seated at table t2, "
        "not at table t1",
        "player 99: not on the roster",
        f"player {t1[0]}: sent twice"]
    assert floor.chip_counts()["players"][0]["chips"] is None  # nothing taken
    with pytest.raises(ChipCountRefused, match="no stack sent"):
        floor.count_chips(MARIA, "t1", [])


def test_the_average_and_the_leader_come_from_the_counts_and_survive_a_restart(hub):  # noqa: F811
    floor, settings, wall = hub
    floor.clock_action(MARIA, floor_command("start", "house"))
    _enter(floor, 6)
    room = floor.room_clock(floor.clock_cases.tv_key)
    assert room["average_stack"] == 4000 and room["average_from"] == "starting stacks"
    assert "chip_leader" not in room
    t1 = _at(floor, "t1")
    stacks = [(t1[0], 2500), (t1[1], 9000), (t1[2], 0)]
    shown = floor.count_chips(MARIA, "t1", stacks)
    assert shown["average_stack"] == 3833 and shown["counted"] == 3
    assert shown["players_left"] == 6
    leader = floor.floor.roster.players[t1[1]]
    assert shown["chip_leader"] == {"player": t1[1], "name": leader.name, "chips": 9000,
                                    "at": int(wall.now * 1000)}
    by_id = {p["player"]: p for p in shown["players"]}
    # Level 1 of the house: 25/50, no ante: an orbit costs 75.
    assert by_id[t1[1]]["m"] == 120.0 and by_id[t1[1]]["by"] == "maria"
    room = floor.room_clock(floor.clock_cases.tv_key)
    assert room["average_stack"] == 3833 and room["average_from"] == "counts"
    assert room["counted"] == 3
    assert room["chip_leader"] == {"name": leader.name, "chips": 9000}
    line = next(x for x in floor.floor_log() if x["action"] == "chips/count")
    assert line["user"] == "maria" and line["detail"]["table"] == "t1"
    # A recount replaces the player's count; kept across a restart.
    wall.now += 60
    floor.count_chips(MARIA, "t1", [(t1[1], 1000)])
    floor.close()
    again = FloorService(settings, floor.link, wall=wall)
    again.open()
    again.on_broker(True)
    again.on_status("t1", {"state": "online", "boot": 1, "table": "t1", "ts": 1})
    try:
        kept = again.chip_counts()
        assert kept["chip_leader"]["player"] == t1[0]
        assert {p["player"]: p["chips"] for p in kept["players"]}[t1[1]] == 1000
        assert kept["counted_at"] == int(wall.now * 1000)
        # A busted player's count is no longer in the figures.
        player = again.floor.roster.players[t1[0]]
        again.bust(MARIA, "t1", player.seat)
        assert again.chip_counts()["chip_leader"]["player"] == t1[1]
        assert again.chip_counts()["counted"] == 2
        again.clear_roster(MARIA)
        assert again.chip_counts()["players"] == [] and "average_stack" not in (
            again.chip_counts())
    finally:
        again.close()
        floor.open()  # the fixture closes it


def test_m_is_the_stack_over_one_orbit_with_a_big_blind_ante():
    assert m_of(33000, {"sb": 1000, "bb": 2000, "ante": 2000, "level": 9}) == 6.6
    assert m_of(100, {"sb": 0, "bb": 0, "ante": 0, "level": 1}) is None
    assert m_of(100, None) is None


def test_the_chip_count_api_checks_the_body_and_lists_every_problem(tmp_path):
    import requests

    from hub.settings import HubSettings
    from simulators.broker import Broker
    from tablectl.hub_app import Hub

    broker = Broker(tmp_path / "mosquitto").start()
    users = tmp_path / "users.toml"
    for name, role in (("maria", "floor"), ("val", "viewer")):
        auth.save_user(users, name, role, f"{name}-password")
    served = Hub(HubSettings(venue=VENUE, db=str(tmp_path / "hub.db"), users=str(users),
                             port=broker.port, http_port=0)).start()
    try:
        sessions = {}
        for name in ("maria", "val"):
            session = sessions[name] = requests.Session()
            session.post(served.url + "/login", data={"user": name,
                                                   "password": f"{name}-password"},
                         allow_redirects=False, timeout=10)
        sessions["maria"].post(served.url + "/api/roster/players", json={"name": "Ann"},
                               timeout=10)
        url = served.url + "/api/chips/t1"
        assert sessions["val"].post(url, json={"stacks": [{"player": 1, "chips": 5}]},
                                    timeout=10).status_code == 403
        for bad in ({"stacks": [{"player": 1, "chips": 1.5}]},
                    {"stacks": [{"player": 1, "chips": -1}]},
                    {"stacks": [{"player": 1, "chips": "5"}]},
                    {"stacks": []}, {"stacks": [{"player": 1}]}):
            answer = sessions["maria"].post(url, json=bad, timeout=10)
            assert answer.status_code == 400, bad
        refused = sessions["maria"].post(url, json={"stacks": [
            {"player": 1, "chips": 5}, {"player": 7, "chips": 5}]}, timeout=10)
        assert refused.status_code == 400 and refused.json()["problems"] == [
            "player 1 (Ann): not seated, not at table t1", "player 7: not on the roster"]
        shown = sessions["val"].get(served.url + "/api/chips", timeout=10)
        assert shown.status_code == 200 and shown.json()["players"][0]["chips"] is None
    finally:
        served.stop()
        broker.kill()
