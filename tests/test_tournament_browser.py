"""Three tablets open through a tournament (tests/tournament_room.py: real table daemons, the
hub, a real Mosquitto): after each step of the floor (the draw, two bust-outs in one hand, a
break confirmed on one tablet while every table deals, a late entry drawn from another, the
last bust-out), each open tablet shows what a page loaded afresh shows: the tables' seats and
the seats held for moving players, the room's count, the roster, the bust-outs, the balancing
proposal. Screenshots for the README of a break, a late entry and the end."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import wait_for
from tests.floor_browser import chromium, login_page, shoot, tv_page
from tests.tournament_room import open_room

# What a floor member reads on a tablet, without what moves on its own (times, "ago").
SHOWN = """
() => {
  const text = (el) => [...el.childNodes].filter((n) => n.nodeName !== "BUTTON")
    .map((n) => n.textContent).join("").trim();
  const hidden = (sel) => { const e = document.querySelector(sel); return !e || e.hidden; };
  return {
    totals: document.querySelector("#totals").textContent,
    tables: [...document.querySelectorAll("#tables .table")].map((card) => [
      card.dataset.table, ["online", "lost", "offline"].find((s) => card.classList.contains(s)),
      [...card.querySelectorAll(".seat.taken")].map((s) => s.dataset.seat).join(","),
      [...card.querySelectorAll(".seat.arriving")].map((s) => s.dataset.seat).join(",")]),
    roster: document.querySelector("#roster-summary").textContent,
    players: [...document.querySelectorAll("#roster-players li")].map(text),
    bustouts: [...document.querySelectorAll("#bustouts li")].map(
      (li) => li.dataset.bustout + (li.classList.contains("undone") ? " undone" : "")),
    proposal: hidden("#balance") ? "" : document.querySelector("#balance .what").textContent,
    moves: document.querySelector("#move-count").textContent,
  };
}
"""


@pytest.fixture
def browser():
    with chromium() as launched:
        yield launched


def test_three_tablets_show_the_room_a_fresh_page_shows_through_a_tournament(
        tmp_path, browser):
    from playwright.sync_api import expect

    users = (("maria", "floor"), ("sam", "supervisor"), ("val", "viewer"))
    with open_room(tmp_path, "tda-2024", users=users) as (hub, venue, room):
        site: dict[str, Any] = {"hub": hub, "browser": browser}
        tablets = [login_page(site, "maria"), login_page(site, "sam", viewport={
            "width": 768, "height": 1024}), login_page(site, "val")]
        # A login of sam's kept for the pages loaded afresh (no page open between them).
        signed_in = login_page(site, "sam")
        fresh_pages = signed_in.context
        signed_in.close()

        def same_room(step: str) -> None:
            """Each open tablet shows what a page loaded now shows."""
            room.in_line(step)
            fresh = fresh_pages.new_page()
            try:
                fresh.goto(hub.url + "/")
                fresh.wait_for_selector("body[data-live='1']", timeout=30000)
                for tablet in tablets:
                    assert wait_for(lambda tablet=tablet: tablet.evaluate(SHOWN)
                                    == fresh.evaluate(SHOWN), 15), (
                        step, tablet.evaluate(SHOWN), fresh.evaluate(SHOWN))
            finally:
                fresh.close()

        sitting = sum(len(t.table_seats) for t in hub.floor.tables.values())
        room.post("/api/roster/import", {"csv": "name\n" + "\n".join(
            f"Player {number:02d}" for number in range(1, sitting + 4))})
        room.post("/api/roster/draw")
        room.check("the draw")
        same_room("the draw")

        first = venue.tables[0].name
        assert wait_for(lambda: hub.floor.tables[first].in_progress, 20)
        (a, _), (b, _) = room.seated()[first][:2]
        room.bust(first, a)
        room.bust(first, b)
        room.check("two bust-outs in one hand")
        same_room("two bust-outs in one hand")

        # Down to a break, confirmed on the first tablet while every table deals.
        maria = tablets[0]
        while True:
            proposal = (room.state()["balance"] or {}).get("proposal")
            if proposal and proposal["kind"] == "break":
                break
            if proposal:
                room.confirm_what_is_proposed()
                continue
            table, seat = room.someone_seated()
            room.bust(table, seat)
        expect(maria.locator("#balance .what")).to_contain_text("Break a table")
        shoot(maria, "dashboard-break", tmp_path, full_page=False)
        maria.click("#balance .confirm-move")
        maria.wait_for_function("() => performance.now() - Number(document.querySelector("
                                "'#confirm').dataset.opened) > 700")
        maria.click("#confirm .yes")
        assert wait_for(lambda: "break" in [m["kind"] for m in
                                            room.state()["balance"]["recent"]], 15)
        room.check("a break confirmed on a tablet")
        same_room("a break confirmed on a tablet")
        broken = proposal["tables"][0]
        expect(maria.locator(f"#broken-tables .table[data-table={broken}]")).to_have_count(1)
        expect(maria.locator(f"#tables .table[data-table={broken}]")).to_have_count(0)

        # A late entry, drawn from the second tablet: seated at a table in play (a seat
        # freed first: a break leaves the tables full, and the broken one takes nobody).
        freed = room.rng.choice(sorted(name for name, pairs in room.seated().items() if pairs))
        room.bust(freed, room.seated()[freed][0][0])
        sam = tablets[1]
        room.post("/api/roster/players", {"name": "Late Entry"})
        expect(sam.locator("#roster-draw")).to_be_enabled()
        sam.click("#roster-draw")
        sam.wait_for_function("() => performance.now() - Number(document.querySelector("
                              "'#confirm').dataset.opened) > 700")
        sam.click("#confirm .yes")
        expect(sam.locator("#roster-reply")).to_contain_text("Late Entry goes to seat")
        late = next(p for p in room.roster()["players"] if p["name"] == "Late Entry")
        assert late["table"] is not None
        assert not hub.floor.seating.tables[late["table"]].broken
        room.check("a late entry")
        same_room("a late entry")
        sam.locator("#roster-panel").scroll_into_view_if_needed()
        shoot(sam, "dashboard-late-entry", tmp_path, full_page=False)

        # To the winner.
        while room.roster()["left"] > 1:
            if room.confirm_what_is_proposed():
                continue
            table, seat = room.someone_seated()
            room.bust(table, seat)
        room.check("the end")
        same_room("the end")
        winner = room.roster()["winner"]
        for tablet in tablets:
            expect(tablet.locator("#roster-summary")).to_contain_text(
                f"Tournament over: {winner} wins")
        shoot(maria, "dashboard-end", tmp_path, full_page=False)
        tv = tv_page(browser, hub)
        expect(tv.locator("#level")).to_have_text("Tournament over")
        expect(tv.locator("#time")).to_have_text(winner)
        shoot(tv, "tv-end", tmp_path, full_page=False)
        tv.context.close()
        for tablet in tablets:
            tablet.context.close()
        fresh_pages.close()
