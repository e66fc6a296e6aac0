"""A whole tournament, from a roster and a draw to the winner, through real table daemons (each
the real daemon with the simulated shoe on a pty, tablectl/sim_venue.py), a real Mosquitto
and the hub's JSON API, for a house of ten, nine and eight seats a table: two bust-outs in one
hand, a bust-out at a lost table, late entries and a re-entry, breaks and balancing confirmed
while every table deals, an undo. After every step: every player in is seated once within
the table's size, nobody out is seated, the tables' own seats become the hub's seating
(within a deadline), the counts agree on every screen, and at the end the finishing order is
complete, the winner first (hub/seating.py, docs/hub.md#one-seating-truth)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import wait_for
from tests.tournament_room import open_room


def test_a_whole_tournament_from_the_draw_to_the_winner(tmp_path):
    """A house of ten a table (tests/test_tournament_houses.py: nine and eight)."""
    play_a_tournament(tmp_path, "tda-2024", 10)


def play_a_tournament(tmp_path: Path, house: str, size: int) -> None:
    with open_room(tmp_path, house) as (hub, venue, room):
        assert room.size == size
        floor, dealers = room.floor, room.dealers
        names = [t.name for t in venue.tables]

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
            table, seat = room.someone_seated()
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
        tv = hub.call(lambda floor: floor.room_clock(floor.clock_cases.tv_key))
        assert tv["winner"] == roster["winner"]
        room.in_line("the end")
