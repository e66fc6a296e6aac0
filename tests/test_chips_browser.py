"""Chip counts as the floor enters them, in a browser (tests/tournament_room.py: real table
daemons, the hub, a real Mosquitto): at level 3 of the TDA-style structure (300/600, a 600
big-blind ante) the floor picks the table on the dashboard, types four of its six players'
stacks (a mistake first, said on the tablet) and enters them; each stack shows with its M,
the counted average and the chip leader on the dashboard, and the TV says the average is the
counted players' and names the chip leader. The README's screenshot of a chip-count entry."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.floor_browser import SCREENSHOTS, ask_now, chromium, login_page, tv_page
from tests.tournament_room import open_room


@pytest.fixture
def browser():
    with chromium() as launched:
        yield launched


def test_the_floor_enters_a_tables_counts_and_sees_m_the_average_and_the_leader(
        tmp_path, browser):
    from playwright.sync_api import expect

    # No hand dealt: the counts are the floor's, at a table between hands.
    with open_room(tmp_path, "tda-2024", tables=1, users=(("maria", "floor"),),
                   dealing=False) as (
            hub, _venue, room):
        room.post("/api/clock", {"action": "start", "value": "tda-2024"})
        room.post("/api/clock", {"action": "level", "value": 3})
        room.post("/api/roster/import", {"csv": "name\n" + "\n".join(
            f"Player {number:02d}" for number in range(1, 7))})
        room.post("/api/roster/draw")
        maria = login_page({"hub": hub, "browser": browser}, "maria")
        tv = tv_page(browser, hub)
        expect(tv.locator("#field")).to_contain_text(
            "average stack 20,000 (from the starting stacks)")

        expect(maria.locator("#chips-summary")).to_have_text("No stack counted yet.")
        expect(maria.locator("#chips-level")).to_have_text(
            "M at level 3: stack \u00f7 1,500 (300 + 600 + 600 big-blind ante)")
        table = maria.locator("#chips-table-choice").input_value()
        seated = sorted((p.seat, p.id, p.name) for p in hub.call(
            lambda floor: list(floor.floor.roster.players.values())) if p.table == table)
        inputs = maria.locator("#chips-stacks input")
        expect(inputs).to_have_count(len(seated))
        # Four of the six counted; two left blank (counted later): not in the average.
        stacks = [30000, 12000, 0, 20000]
        inputs.nth(0).fill("30000.5")  # a slip of the finger: not a whole number
        maria.click("#chips-enter")
        expect(maria.locator("#chips-reply")).to_have_text(
            "Enter the stacks counted (whole numbers of chips, 0 or more)")
        for n, chips in enumerate(stacks):
            inputs.nth(n).fill(str(chips))
        maria.click("#chips-enter")
        expect(maria.locator("#chips-reply")).to_have_text(
            f"Table {table}: 4 stacks counted")

        leader = seated[0][2]
        average = f"{round(sum(stacks) / len(stacks)):,}"
        row = maria.locator(f"#chips-table tr[data-player='{seated[0][1]}']")
        expect(row.locator(".chips")).to_have_text("30,000")
        expect(row.locator(".m")).to_have_text("M 20.0")  # 30,000 / (300 + 600 + 600)
        expect(row.locator(".at")).to_have_attribute("title", "entered by maria")
        expect(maria.locator(f"#chips-table tr[data-player='{seated[1][1]}'] .m")).to_have_text(
            "M 8.0")
        expect(maria.locator("#chips-summary")).to_contain_text(
            f"Average {average} ({len(stacks)} of 6 stacks counted) \u00b7 chip leader "
            f"{leader} 30,000")
        expect(maria.locator(f"#chips-table tr[data-player='{seated[5][1]}'] .m")
               ).to_have_text("-")
        # The floor log says it in words, each stack by its player's name.
        expect(maria.locator("#log li", has_text=f"maria counted table {table}'s stacks: ")
               .filter(has_text=f"{seated[0][2]} 30,000")).to_have_count(1)
        if SCREENSHOTS:  # the panel alone, clear of the page's sticky header
            Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
            maria.evaluate("() => window.scrollTo(0, 0)")
            box = maria.locator("#chips-panel").evaluate(
                "(e) => { const r = e.getBoundingClientRect(); return {x: r.x + scrollX,"
                " y: r.y + scrollY, width: r.width, height: r.height}; }")
            maria.screenshot(path=str(Path(SCREENSHOTS) / "dashboard-chip-count.png"),
                             full_page=True, clip=box)
        ask_now(tv)
        expect(tv.locator("#field")).to_contain_text(
            f"average stack {average} ({len(stacks)} of 6 stacks counted)")
        expect(tv.locator("#field")).to_contain_text(f"chip leader {leader} 30,000")

        # The floor types the next count; meanwhile a player at the table busts (the form is
        # made again for the five left): what was typed for the others stays.
        inputs.nth(1).fill("15000")
        from hub.auth import User

        hub.call(lambda floor: floor.bust(User("sam", "floor", ""), table, seated[5][0]))
        expect(inputs).to_have_count(len(seated) - 1)
        expect(maria.locator(f"#chips-stacks input[data-player='{seated[1][1]}']")
               ).to_have_value("15000")
