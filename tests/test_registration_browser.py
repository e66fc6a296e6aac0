"""Registration details at the desk in a real browser (``tests.floor_browser``'s venue, the
house's structure giving a buy-in and a re-entry limit): an entrant who never came removed as
a no-show with the buy-in refunded, one who has played refused, and the re-entries a player
has left as the structure allows, and alternates seated in order as seats open until
registration closes."""

from __future__ import annotations

import threading

import pytest

from contract.commands import HubClockCommand
from hub import auth
from hub.service import FloorService
from tests.conftest import wait_for
from tests.floor_browser import floor_venue, login_page

HOUSE = """title = "House deep stack (one re-entry)"
source = "a test's house: a buy-in and one re-entry a player"
starting_stack = 5000
currency = "$"
buy_in = 60
max_reentries = 1
late_entry_until_level = 2
[[schedule]]
level = 1
sb = 25
bb = 50
minutes = 60
[[schedule]]
level = 2
sb = 50
bb = 100
minutes = 60
"""
MARIA = auth.User("maria", "floor", "")


@pytest.fixture(scope="module")
def venue(tmp_path_factory):
    house = tmp_path_factory.mktemp("house")
    (house / "house-deep.toml").write_text(HOUSE)
    yield from floor_venue(tmp_path_factory, structure="house-deep", structures=str(house))


def _line(page, name):
    return page.locator("#roster-players li", has_text=name)


def test_a_no_show_is_refunded_and_a_player_who_played_is_not(venue):
    """The floor enters two players; Nora never comes: No-show, the buy-in refunded, her line
    kept, the summary and the floor log say so. Rita is drawn to a seat and dealt in: No-show
    is refused, saying she has played."""
    from playwright.sync_api import expect

    hub = venue["hub"]
    maria = login_page(venue, "maria", viewport={"width": 1440, "height": 900})
    try:
        maria.locator("#roster-panel details").evaluate("(d) => { d.open = true; }")
        for name in ("Nora Noshow", "Rita Reentry"):
            maria.fill("#roster-name", name)
            maria.press("#roster-name", "Enter")
            expect(_line(maria, name)).to_contain_text("waiting for a seat")
        nora = _line(maria, "Nora Noshow")
        nora.locator("button.no-show").click()
        expect(maria.locator("#confirm .question")).to_contain_text(
            "Nora Noshow never came: remove them as a no-show and refund the buy-in?")
        maria.click("#confirm .yes")
        expect(nora).to_have_text("Nora Noshow no-show, refunded $60")
        expect(nora.locator("button")).to_have_count(0)
        expect(maria.locator("#roster-summary")).to_contain_text(
            "2 entrants \u00b7 1 left \u00b7 1 waiting for a seat \u00b7 1 no-show (refunded)")
        expect(maria.locator("#log li", has_text="maria removed Nora Noshow as a no-show, "
                                                 "refunded $60")).to_have_count(1)
        roster = hub.call(FloorService.roster)
        assert (roster["entries"], roster["paid_entries"], roster["no_shows"]) == (2, 1, 1)
        # Rita is drawn (she names a seat a table deals to) and the table deals on.
        hub.call(FloorService.draw_seats, MARIA)
        rita = next(p for p in hub.floor.roster.players.values() if p.name == "Rita Reentry")
        assert rita.table is not None and rita.seated_hand is not None
        table = next(t for t in venue["tables"].tables if t.name == rita.table)
        stop = threading.Event()
        dealer = threading.Thread(target=table.play, args=(stop,), daemon=True)
        dealer.start()  # her table deals its next hand: she is dealt in
        try:
            assert wait_for(lambda: (hub.floor.tables[rita.table].hand or 0) > rita.seated_hand,
                            60)
        finally:
            stop.set()
            dealer.join(30)
        line = _line(maria, "Rita Reentry")
        expect(line).to_contain_text(f"table {rita.table} seat {rita.seat}")
        line.locator("button.no-show").click()
        maria.click("#confirm .yes")
        expect(maria.locator("#roster-reply")).to_contain_text(
            f"Rita Reentry has played (table {rita.table} has started hand")
        expect(maria.locator("#roster-reply")).to_contain_text("no refund")
        assert rita.no_show_at is None and rita.playing
    finally:
        maria.context.close()


def test_the_re_entries_left_are_shown_and_none_left_is_no_re_entry(venue):
    """The structure allows one re-entry: Rita, busted, shows one left and re-enters; busted
    again she has none left and Re-entry cannot be tapped."""
    from playwright.sync_api import expect

    hub = venue["hub"]
    maria = login_page(venue, "maria", viewport={"width": 1440, "height": 900})
    try:
        maria.locator("#roster-panel details").evaluate("(d) => { d.open = true; }")
        rita = next(p for p in hub.floor.roster.players.values() if p.name == "Rita Reentry")
        line = _line(maria, "Rita Reentry")
        expect(line).to_contain_text("1 re-entry left")
        hub.call(FloorService.bust, MARIA, rita.table, rita.seat)
        expect(line).to_contain_text("out, ")
        line.locator("button.reentry").click()
        expect(maria.locator("#confirm .question")).to_contain_text(
            "Rita Reentry buys in again (entry 2)?")
        maria.click("#confirm .yes")
        expect(line).to_contain_text("waiting for a seat \u00b7 2 entries \u00b7 0 re-entries left")
        hub.call(FloorService.draw_seats, MARIA)
        assert wait_for(lambda: rita.table is not None)
        hub.call(FloorService.bust, MARIA, rita.table, rita.seat)
        expect(line).to_contain_text("out, ")
        expect(line.locator("button.reentry")).to_be_disabled()
        expect(line.locator("button.no-show")).to_have_count(0)  # she played
    finally:
        maria.context.close()


def test_alternates_wait_while_the_field_is_full_and_take_the_seats_that_open(venue):
    """The floor adds an alternate while seats are free: refused, saying so. Once the field is
    full Alma and Bert wait in order; a bust-out's seat goes to Alma (her line, the log), Bert
    moves up; when late registration closes the list says it is closed."""
    from playwright.sync_api import expect

    hub = venue["hub"]
    maria = login_page(venue, "maria", viewport={"width": 1440, "height": 900})
    try:
        maria.locator("#roster-panel details").evaluate("(d) => { d.open = true; }")
        maria.fill("#alternate-name", "Alma Alt")
        maria.press("#alternate-name", "Enter")
        expect(maria.locator("#roster-reply")).to_contain_text(
            "free seats: enter the player and draw seats")
        # Fill every seat: the tables' players nobody named, then the free seats.
        online = [name for name, t in hub.floor.tables.items() if t.status == "online"
                  and not hub.floor.seating.plan(name).broken]
        seats = sum(hub.floor.table_size(name) - len(hub.floor.seating.plan(name).occupied)
                    for name in online)
        seats += sum(1 for name in online for seat in hub.floor.seating.plan(name).seats
                     if hub.floor.roster.at(name, seat) is None)
        hub.call(FloorService.import_players, MARIA, "name\n" + "\n".join(
            f"Field {number}" for number in range(seats)))
        hub.call(FloorService.draw_seats, MARIA)
        for name in ("Alma Alt", "Bert Alt"):
            maria.fill("#alternate-name", name)
            maria.press("#alternate-name", "Enter")
            expect(maria.locator("#roster-reply")).to_contain_text(
                f"{name} is an alternate: seated when a seat opens")
        expect(maria.locator("#alternates li")).to_have_count(2)
        expect(maria.locator("#alternates li").first).to_contain_text("Alma Alt")
        expect(maria.locator("#alternates-count")).to_have_text("(2)")
        gone = next(p for p in hub.floor.roster.players.values()
                    if p.name.startswith("Field ") and p.table is not None)
        table, seat = gone.table, gone.seat
        hub.call(FloorService.bust, MARIA, table, seat)
        expect(_line(maria, "Alma Alt")).to_contain_text(f"table {table} seat {seat}")
        expect(maria.locator("#alternates li")).to_have_count(1)
        expect(maria.locator("#alternates li").first).to_contain_text("Bert Alt")
        expect(maria.locator(
            "#log li", has_text=f"Alma Alt, the first alternate, took table {table} seat {seat}"
        )).to_have_count(1)
        assert wait_for(lambda: seat in hub.floor.tables[table].seats, 15)  # the table seats her
        # Level 2: late registration is over, and so is the list.
        hub.call(FloorService.clock_action, MARIA, HubClockCommand(action="level", value=2))
        expect(maria.locator("#alternates-closed")).to_have_text(
            "The list is closed: late registration closed at the start of level 2 (House deep "
            "stack (one re-entry)).")
        expect(maria.locator("#alternates-closed")).to_be_visible()
        expect(maria.locator("#alternate-add")).to_be_hidden()
        expect(maria.locator("#alternates li")).to_have_count(1)  # Bert, never seated
    finally:
        maria.context.close()
