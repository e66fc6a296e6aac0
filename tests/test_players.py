"""The players' screen's and seat cards' use cases (hub/players_cases.py), called on the floor's
service directly (no broker, no server): what the screen shows and nothing more, its link
refused once withdrawn, the announcements checked, kept and logged, the moves seen in
batches for their cards, and each set of cards refused with a reason when there is none."""

from __future__ import annotations

import pytest

from hub import auth
from hub.clock_cases import NotTheRoomKey
from hub.players_cases import (
    MAX_ANNOUNCEMENTS,
    PlayersLinkChanged,
    PlayersLinkWithdrawn,
    name_order,
    table_order,
)
from hub.refused import StaffError
from hub.service import FloorService
from tablectl.hub_app import HubSettings
from tests.conftest import QuietLink

MARIA = auth.User("maria", "floor", "")


@pytest.fixture
def floor(tmp_path):
    service = FloorService(HubSettings(venue="venue", db=str(tmp_path / "hub.db")), QuietLink(),
                           wall=lambda: 1_800_000_000.0)
    service.open()
    yield service
    service.close()


def _seat(floor, name, table, seat):
    player = floor.floor.roster.add(name, 1)
    player.table, player.seat = table, seat
    return player


def _key(floor):
    return floor.players_link()["path"].split("#")[1]


def test_the_screen_shows_names_tables_and_seats_of_the_players_in_the_game_only(floor):
    zoe = _seat(floor, "Zoë Ünal", "t10", 3)
    _seat(floor, "zack", "t2", 1)
    out = _seat(floor, "Ann Out", "t1", 5)
    out.out_at = 5
    floor.floor.roster.add("Waiting Walt", 1)
    screen = floor.players_screen(_key(floor))
    assert screen["players"] == [
        {"name": "Waiting Walt", "table": None, "seat": None},
        {"name": "zack", "table": "t2", "seat": 1},
        {"name": "Zoë Ünal", "table": "t10", "seat": 3}]
    assert set(screen) == {"venue", "now", "title", "on_break", "level", "players", "winner",
                           "announcements", "clock_announcements", "next_announcements"}
    assert zoe.entries == 1 and "entries" not in screen["players"][2]
    assert sorted(["Zora", "Zoë", "Zoe", "zoa"], key=name_order) == ["zoa", "Zoe", "Zoë", "Zora"]
    assert sorted(["Fay", "Eric", "Émile"], key=name_order) == ["Émile", "Eric", "Fay"]
    assert sorted(["t10", "t2", "t1", "final"], key=table_order) == ["final", "t1", "t2", "t10"]


def test_the_players_link_is_its_own_and_a_withdrawn_one_is_refused_saying_so(floor, tmp_path):
    sam = auth.User("sam", "supervisor", "")
    old = _key(floor)
    assert old != floor.clock_cases.tv_key
    with pytest.raises(NotTheRoomKey, match="not the players' screen link"):
        floor.players_screen(floor.clock_cases.tv_key)  # the TV's key is not this one
    link = floor.withdraw_players_link(sam, 1)
    assert link["generation"] == 2 and link["path"] != f"/players#{old}"
    with pytest.raises(PlayersLinkWithdrawn, match="was withdrawn: ask the floor"):
        floor.players_screen(old)
    with pytest.raises(PlayersLinkChanged, match="generation 1 was already withdrawn") as said:
        floor.withdraw_players_link(sam, 1)
    assert said.value.current == link
    floor.players_screen(_key(floor))
    floor.room_clock(floor.clock_cases.tv_key)  # the TV's link is left alone
    assert [line["action"] for line in floor.floor_log()] == ["players-link/withdraw"]
    again = FloorService(HubSettings(venue="venue", db=str(tmp_path / "hub.db")), QuietLink())
    again.open()
    try:  # kept for a restart, the old one still known as withdrawn
        assert again.players_link() == link
        with pytest.raises(PlayersLinkWithdrawn):
            again.players_screen(old)
    finally:
        again.close()


def test_announcements_are_checked_kept_logged_and_on_the_screen_at_once(floor, tmp_path):
    key = _key(floor)
    assert floor.players_screen(key)["announcements"] == []
    for bad, said in (("   ", "empty"), ("x" * 161, "at most 160 characters"),
                      ("a\u200bb", "U\\+200B"), ("bell\u0007", "U\\+0007"), (7, "is text")):
        with pytest.raises(StaffError, match=said):
            floor.announce(MARIA, bad)
    up = floor.announce(MARIA, "  Dinner   break\tat 8  ")
    assert [(a["text"], a["by"]) for a in up] == [("Dinner break at 8", "maria")]
    # On the screen at its next question (an answer is otherwise served again for a second).
    assert [a["text"] for a in floor.players_screen(key)["announcements"]] == [
        "Dinner break at 8"]
    for n in range(2, MAX_ANNOUNCEMENTS + 1):
        floor.announce(MARIA, f"note {n}")
    with pytest.raises(StaffError, match="take one down first"):
        floor.announce(MARIA, "one too many")
    first = up[0]["id"]
    left = floor.take_down(MARIA, first)
    assert first not in [a["id"] for a in left] and len(left) == MAX_ANNOUNCEMENTS - 1
    with pytest.raises(StaffError, match=f"no announcement {first} is up"):
        floor.take_down(MARIA, first)
    assert floor.players_screen(key)["announcements"][0]["text"] == f"note {MAX_ANNOUNCEMENTS}"
    actions = [line["action"] for line in floor.floor_log()]
    assert actions.count("players/announce") == MAX_ANNOUNCEMENTS
    assert actions.count("players/take-down") == 1
    again = FloorService(HubSettings(venue="venue", db=str(tmp_path / "hub.db")), QuietLink())
    again.open()
    try:
        assert again.announcement_list() == left
        assert again.announce(MARIA, "after a restart")[0]["id"] == MAX_ANNOUNCEMENTS + 1
    finally:
        again.close()


def test_moves_are_seen_in_batches_and_each_set_of_cards_says_why_there_is_none(floor):
    with pytest.raises(StaffError, match="no player has a seat yet"):
        floor.seat_cards("draw")
    a = _seat(floor, "Ann", "t1", 1)
    b = _seat(floor, "Bob", "t1", 2)
    c = _seat(floor, "Cy", "t2", 4)
    floor.players_cases.observe()  # the draw: first seats, no move
    with pytest.raises(StaffError, match="no player has moved"):
        floor.seat_cards("moves")
    assert [(x["name"], x["table"], x["seat"]) for x in floor.seat_cards("draw")["cards"]] == [
        ("Ann", "t1", 1), ("Bob", "t1", 2), ("Cy", "t2", 4)]
    # A break: two players of t1 move together, one batch.
    a.table, a.seat = "t2", 5
    b.table, b.seat = "t2", 6
    floor.players_cases.observe()
    cards = floor.seat_cards("moves")["cards"]
    assert [(x["name"], x["from_table"], x["from_seat"], x["table"], x["seat"])
            for x in cards] == [("Ann", "t1", 1, "t2", 5), ("Bob", "t1", 2, "t2", 6)]
    assert [x["name"] for x in floor.seat_cards("final")["cards"]] == ["Cy", "Ann", "Bob"]
    # A later move is the latest batch alone.
    c.table, c.seat = "t3", 1
    assert [x["name"] for x in floor.seat_cards("moves")["cards"]] == ["Cy"]
    with pytest.raises(StaffError, match="sit at 2 tables: draw the final table first"):
        floor.seat_cards("final")
    assert [x["name"] for x in floor.seat_cards("table", table="t2")["cards"]] == ["Ann", "Bob"]
    with pytest.raises(StaffError, match="no player of the roster sits at table t9"):
        floor.seat_cards("table", table="t9")
    with pytest.raises(StaffError, match="say which table"):
        floor.seat_cards("table")
    assert floor.seat_cards("player", player=b.id)["cards"][0]["name"] == "Bob"
    b.out_at = 9
    with pytest.raises(StaffError, match="Bob has no seat: out of the tournament"):
        floor.seat_cards("player", player=b.id)
    with pytest.raises(StaffError, match="no player 99"):
        floor.seat_cards("player", player=99)
    with pytest.raises(StaffError, match="no seat cards for 'all'"):
        floor.seat_cards("all")
