"""The prize money as the floor works it, in a browser (tests/tournament_room.py: real table
daemons, the hub, a real Mosquitto): a supervisor edits the payout table on the dashboard (a
mistake first, every problem said), the floor's tablet and the TV follow the entries, re-entries
and add-ons, "in the money" and the next pay jump show when they come, a bust-out in the money
shows its prize on the dashboard and the TV, the floor enters the stacks of the three left and
records the ICM deal, and the results page and CSV list every place with its player and amount,
the winner included. Screenshots for the README of the TV in the money."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import pytest

from tests.floor_browser import ask_now, chromium, login_page, shoot, tv_page
from tests.tournament_room import open_room

# The house's table a supervisor types in: 10 % taken first, four places paid from 10 entries.
HOUSE_TABLE = {"title": "House, 10 % fee", "source": "our floor, this season",
               "fee": {"percent": 10},
               "paid": [{"from_entries": 1, "shares": [100]},
                        {"from_entries": 10, "shares": [40, 30, 20, 10]}]}


@pytest.fixture
def browser():
    with chromium() as launched:
        yield launched


def _confirm(page: Any) -> None:
    page.wait_for_function("() => performance.now() - Number(document.querySelector("
                           "'#confirm').dataset.opened) > 700")
    page.click("#confirm .yes")


def test_the_floor_follows_the_prize_money_to_a_deal_and_the_results(tmp_path, browser):
    from playwright.sync_api import expect

    users = (("maria", "floor"), ("sam", "supervisor"))
    with open_room(tmp_path, "tda-2024", tables=2, users=users) as (hub, _venue, room):
        site: dict[str, Any] = {"hub": hub, "browser": browser}
        # Seed 004's structure: $50 a buy-in, $25 an add-on.
        room.post("/api/clock", {"action": "start", "value": "dealers-choice"})
        room.post("/api/roster/import", {"csv": "name\n" + "\n".join(
            f"Player {number:02d}" for number in range(1, 13))})
        room.post("/api/roster/draw")
        maria, sam = login_page(site, "maria"), login_page(site, "sam")
        tv = tv_page(browser, hub)

        # The default table: 12 entries of $50, three places paid.
        expect(maria.locator("#payouts-table")).to_have_text("(standard)")
        expect(maria.locator("#payouts-summary")).to_have_text(
            "Prize pool $600 \u00b7 3 places paid \u00b7 12 entries")
        expect(maria.locator("#payouts-prizes li")).to_have_text(
            ["1st $300", "2nd $180", "3rd $120"])
        expect(maria.locator("#payouts-status")).to_have_text("Next pay jump at 3 left: $120")
        expect(maria.locator("#payouts-edit")).to_be_hidden()  # the supervisor's alone

        # The supervisor types the house's table, a share wrong first.
        sam.click("#payouts-edit summary")
        wrong = json.loads(json.dumps(HOUSE_TABLE))
        wrong["paid"][1]["shares"] = [40, 30, 20, 5]
        sam.fill("#payouts-name", "house-fee")
        sam.fill("#payouts-data", json.dumps(wrong))
        sam.click("#payouts-save")
        expect(sam.locator("#payouts-reply")).to_have_text(
            "Refused: paid[1].shares: add up to 95, not 100")
        expect(maria.locator("#payouts-table")).to_have_text("(standard)")
        sam.fill("#payouts-data", json.dumps(HOUSE_TABLE))
        sam.click("#payouts-save")
        expect(sam.locator("#payouts-reply")).to_have_text("Payout table house-fee saved")
        # The floor's tablet follows: $600 less 10 %, four places.
        expect(maria.locator("#payouts-table")).to_have_text("(house-fee, edited)")
        expect(maria.locator("#payouts-prizes li")).to_have_text(
            ["1st $216", "2nd $162", "3rd $108", "4th $54"])

        # A re-entry and an add-on: the pool grows on the tablet and the TV.
        table, seat = room.someone_seated()
        out = room.bust(table, seat)
        room.post(f"/api/roster/players/{out['player_id']}/re-entry")
        room.post("/api/roster/draw")
        someone = next(p for p in room.roster()["players"] if p["out_at"] is None)
        room.post(f"/api/roster/players/{someone['id']}/add-on")
        expect(maria.locator("#payouts-summary")).to_have_text(
            "Prize pool $608 \u00b7 4 places paid \u00b7 13 entries \u00b7 1 add-on "
            "\u00b7 fee $67")
        expect(maria.locator("#payouts-prizes li")).to_have_text(
            ["1st $245", "2nd $182", "3rd $121", "4th $60"])
        ask_now(tv)
        expect(tv.locator("#prizes")).to_have_text(
            "Prize pool $608 \u00b7 4 places paid: 1. $245  2. $182  3. $121  4. $60")
        expect(tv.locator("#money")).to_have_text("Next pay jump at 4 left: $60")
        expect(tv.locator("#field")).to_contain_text(
            "12 entrants \u00b7 1 re-entry \u00b7 1 add-on")

        # Dealers Choice leaves registration to the floor: maria closes it, the money frozen.
        maria.click("#payouts-close")
        expect(maria.locator("#confirm .question")).to_have_text(
            "Close registration? No more entries or re-entries. The prize money is frozen as "
            "it is: $608, 4 paid.")
        _confirm(maria)
        expect(maria.locator("#payouts-status")).to_contain_text(
            "registration closed by maria")
        expect(maria.locator("#payouts-close")).to_be_disabled()
        status, refused = room.floor.post("/api/roster/players", {"name": "Too Late"})
        assert status == 400 and refused["error"] == "registration was closed by maria"

        def down_to(left: int) -> dict[str, Any]:
            bust: dict[str, Any] = {}
            while room.roster()["left"] > left:
                if room.confirm_what_is_proposed():
                    continue
                bust = room.bust(*room.someone_seated())
            return bust

        down_to(4)
        expect(maria.locator("#payouts-status")).to_contain_text(
            "In the money: 4 left \u00b7 Next pay jump at 3 left: $121 \u00b7 Frozen ")
        ask_now(tv)
        expect(tv.locator("#money")).to_have_text(
            "In the money \u00b7 Next pay jump at 3 left: $121")
        fourth = down_to(3)
        assert fourth["prize"] == 60
        maria.click("#bustouts-panel summary")
        expect(maria.locator(f"#bustouts li[data-bustout='{fourth['id']}']")).to_contain_text(
            f"{fourth['player']}, 4th, wins $60")
        ask_now(tv)
        expect(tv.locator("#money")).to_have_text(
            f"In the money \u00b7 Next pay jump at 2 left: $182 \u00b7 "
            f"{fourth['player']} out 4th: $60")
        shoot(tv, "tv-payouts", tmp_path, full_page=False)

        # The deal: the floor counts the three stacks and enters them.
        left = sorted((p for p in room.roster()["players"] if p["out_at"] is None),
                      key=lambda p: p["id"])
        maria.click("#deal-panel summary")
        stacks = maria.locator("#deal-stacks input")
        expect(stacks).to_have_count(3)
        for index, chips in enumerate((30000, 12000, 6000)):
            stacks.nth(index).fill(str(chips))
        maria.click("#deal-work")
        expect(maria.locator("#deal-reply")).to_have_text("Places 1 to 3: $548 to share")
        # Chip chop and ICM side by side (tests/test_payouts.py holds the arithmetic).
        rows = maria.locator("#deal-table tbody tr")
        expected = [(left[0]["name"], "30,000", "$343", "$217"),
                    (left[1]["name"], "12,000", "$137", "$179"),
                    (left[2]["name"], "6,000", "$68", "$152")]
        for index, row in enumerate(expected):
            expect(rows.nth(index).locator("td")).to_have_text(list(row))
        maria.locator("#deal-table").scroll_into_view_if_needed()
        shoot(maria, "dashboard-deal", tmp_path, full_page=False)
        maria.click("#deal-accept-icm")
        _confirm(maria)
        dealt = {left[0]["name"]: 217, left[1]["name"]: 179, left[2]["name"]: 152}
        expect(maria.locator("#deal-reply")).to_have_text("Deal recorded: " + ", ".join(
            f"{name} ${amount}" for name, amount in dealt.items()))
        expect(maria.locator("#payouts-status")).to_contain_text("Deal recorded (ICM) by maria")

        # Played out for the title: each bust-out shows what the deal gave.
        third = down_to(2)
        expect(maria.locator(f"#bustouts li[data-bustout='{third['id']}']")).to_contain_text(
            f"{third['player']}, 3rd, wins ${dealt[third['player']]}")
        down_to(1)
        winner = room.roster()["winner"]
        ask_now(tv)
        expect(tv.locator("#time")).to_have_text(winner)
        expect(tv.locator("#blinds")).to_have_text("wins")  # a deal's amounts: the results'

        # The results: every place, name and amount, the winner first.
        results = maria.context.new_page()
        results.goto(hub.url + "/results")
        results.wait_for_selector("body[data-loaded='1']")
        places = {p["place"]: p["name"] for p in room.roster()["players"]}
        shown = results.locator("#results tbody tr")
        expect(shown).to_have_count(12)
        for place in (1, 2, 3):
            expect(shown.nth(place - 1).locator("td")).to_have_text([
                {1: "1st", 2: "2nd", 3: "3rd"}[place], places[place],
                f"${dealt[places[place]]} (deal)"])
        expect(shown.nth(3).locator("td")).to_have_text(["4th", places[4], "$60"])
        expect(shown.nth(4).locator("td")).to_have_text(["5th", places[5], ""])
        expect(results.locator("#results-summary")).to_have_text(
            f"Prize pool $608 \u00b7 4 places paid \u00b7 Winner: {winner}")
        shoot(results, "results", tmp_path, full_page=False)
        results.emulate_media(media="print")  # printed: the table, not the buttons
        expect(results.locator("#results-print")).to_be_hidden()
        expect(shown.nth(0)).to_be_visible()
        results.emulate_media(media="screen")
        answer = maria.context.request.get(hub.url + "/api/payouts/results.csv")
        rows_csv = list(csv.reader(io.StringIO(answer.text())))
        assert rows_csv[0] == ["place", "name", "prize", "currency", "dealt"]
        assert rows_csv[1] == ["1", winner, str(dealt[winner]), "$", "yes"]
        assert rows_csv[4] == ["4", places[4], "60", "$", ""]
        assert len(rows_csv) == 13
        # The floor log says each change as a sentence.
        log = maria.locator("#log li")
        for said in ("sam set an edited payout table house-fee",
                     "maria closed registration (13 entries)",
                     "payouts frozen: registration closed by maria: prize pool $608, 4 paid",
                     f"busted {fourth['player']} at table {fourth['table']} seat "
                     f"{fourth['seat']} (4th, $60)",
                     "maria recorded a deal (ICM): " + ", ".join(
                         f"{name} ${amount}" for name, amount in dealt.items())):
            expect(log.filter(has_text=said)).to_have_count(1)
        for context in {page.context for page in (maria, sam, tv)}:
            context.close()
