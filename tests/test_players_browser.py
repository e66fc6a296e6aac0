"""The players' screen and the seat cards as a floor person uses them, through a tournament
(tests/tournament_room.py: real table daemons, the hub, a real Mosquitto): the draw on the
board of a second screen (1920x1080) and a phone's seat lookup (390x844), a break followed on
the open board without a reload, the floor's announcements put up and taken down from the
dashboard, the link withdrawn by a supervisor; seat cards for the draw, the latest moves, one
player and the final table, printable one a page. A hostile name and announcement show as
text. Screenshots for the README."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from tests.conftest import wait_for
from tests.floor_browser import ask_now, chromium, login_page, shoot
from tests.tournament_room import open_room

HOSTILE = "<img src=x onerror=alert(1)>"
BOARD = """() => [...document.querySelectorAll('#seats li[data-name]')].map(
  (li) => [li.dataset.name, li.dataset.table, li.dataset.seat])"""
CARDS = """() => [...document.querySelectorAll('#cards .card')].map(
  (c) => [c.querySelector('.name').textContent, c.dataset.table, c.dataset.seat,
          (c.querySelector('.from') || {}).textContent || ''])"""


@pytest.fixture(scope="module")
def browser():  # one for the module's tests: each opens contexts of its own
    with chromium() as launched:
        yield launched


def screen(browser: Any, url: str, width: int, height: int, stopped: bool = False) -> Any:
    """A page of its own (a screen, a phone) that fails the test on any dialog (a name run
    as markup) or any error the page throws. Its clock is Playwright's: ``ask_now`` moves
    it on by one turn of the page's questions, so that it asks the hub at once. Going as
    the machine's, the page also asks at its turns meanwhile (what the hub learns later,
    over the broker, still shows); ``stopped``, only as it loads and when the test moves
    its clock (a page that asks less often fails every time, and a board turns its pages
    only when the test says: a busy machine's seconds once turned one under it)."""
    context = browser.new_context(viewport={"width": width, "height": height})
    now = datetime.datetime.now(datetime.UTC)
    context.clock.install(time=now)
    if stopped:
        context.clock.pause_at(now + datetime.timedelta(seconds=1))
    page = context.new_page()
    errors: list[str] = []
    page.on("dialog", lambda d: errors.append(f"a dialog: {d.message}"))
    page.on("pageerror", lambda e: errors.append(f"a page error: {e}"))
    page.errors = errors
    # How often it asks the hub (hub/static/players.js): a screen every 3 s, a phone (a
    # narrow screen) every 15 s.
    page.asks_every = 15_000 if width <= 800 else 3_000
    page.goto(url)
    return page


def board_of(roster: dict[str, Any]) -> list[list[str]]:
    """What the board must show: the players in the game by name, with table and seat."""
    playing = [p for p in roster["players"] if p["out_at"] is None]
    from hub.players_cases import name_order

    return [[p["name"], p["table"] or "", str(p["seat"] or "")]
            for p in sorted(playing, key=lambda p: name_order(p["name"]))]


def test_the_players_screen_and_seat_cards_through_a_tournament(tmp_path, browser):
    from playwright.sync_api import expect

    users = (("maria", "floor"), ("sam", "supervisor"))
    with open_room(tmp_path, "tda-2024", users=users) as (hub, _venue, room):
        site: dict[str, Any] = {"hub": hub, "browser": browser}
        sitting = sum(len(t.table_seats) for t in hub.floor.tables.values())
        names = [HOSTILE, "Zoë Ünal", *(f"Player {n:02d}" for n in range(1, sitting + 1))]
        room.post("/api/roster/import", {"csv": "name\n" + "\n".join(names)})
        room.post("/api/roster/draw")
        room.check("the draw")
        link = hub.url + hub.call(lambda floor: floor.players_link())["path"]

        # The seating board on a second screen: every player by name, table and seat.
        tv = screen(browser, link, 1920, 1080)
        assert wait_for(lambda: tv.evaluate(BOARD) == board_of(room.roster()), 15), (
            tv.evaluate(BOARD), board_of(room.roster()))
        hostile = tv.locator("#seats li", has_text=HOSTILE)
        expect(hostile.locator(".name")).to_have_text(HOSTILE)
        assert tv.locator("#seats img").count() == 0
        # Readable across a room: a row is over 4% of the screen's height, every name shown
        # one page at a time (a board longer than the screen turns its pages).
        rows = tv.locator("#seats li:not([hidden])")
        assert rows.first.bounding_box()["height"] >= 0.04 * 1080
        last = rows.nth(rows.count() - 1).bounding_box()
        assert last["y"] + last["height"] <= 1080
        shoot(tv, "players-board", tmp_path, full_page=False)

        # A phone on the same link: a player types part of their name, accents left out.
        phone = screen(browser, link, 390, 844, stopped=True)
        phone.fill("#find", "zoe un")
        zoe = next(p for p in room.roster()["players"] if p["name"] == "Zoë Ünal")
        expect(phone.locator("#found")).to_have_text(
            f"Zoë Ünal: table {zoe['table']}, seat {zoe['seat']}")
        found = phone.locator("#found").bounding_box()
        assert found["y"] + found["height"] <= 844 and found["width"] <= 390
        expect(phone.locator("#seats li:not([hidden])")).to_have_count(1)
        assert phone.evaluate("() => document.documentElement.scrollWidth") <= 390
        shoot(phone, "players-phone", tmp_path, full_page=False)
        phone.fill("#find", "<img")
        expect(phone.locator("#found")).to_have_text(
            f"{HOSTILE}: table {room.roster()['players'][0]['table']}, "
            f"seat {room.roster()['players'][0]['seat']}")

        # The draw's seat cards, from the dashboard: one a player, each its own printed page.
        maria = login_page(site, "maria")
        with maria.expect_popup() as opened:
            maria.click("#cards-draw")
        cards = opened.value
        cards.wait_for_selector("body[data-ready='1']")
        seated = sorted((p for p in room.roster()["players"] if p["out_at"] is None),
                        key=lambda p: (int(p["table"][1:]), p["seat"]))
        assert cards.evaluate(CARDS) == [[p["name"], p["table"], str(p["seat"]), ""]
                                         for p in seated]
        assert cards.locator("#cards img").count() == 0
        cards.emulate_media(media="print")
        assert cards.evaluate("""() => [...document.querySelectorAll('.card')].slice(0, -1)
          .every((c) => getComputedStyle(c).breakAfter === 'page')""")
        expect(cards.locator(".controls")).to_be_hidden()
        cards.emulate_media(media="screen")
        shoot(cards, "seat-cards", tmp_path, full_page=False)
        cards.close()

        # Down to a break, confirmed: the open board follows it without a reload.
        while True:
            proposal = (room.state()["balance"] or {}).get("proposal")
            if proposal and proposal["kind"] == "break":
                break
            if proposal:
                room.confirm_what_is_proposed()
                continue
            table, seat = room.someone_seated()
            room.bust(table, seat)
        assert room.confirm_what_is_proposed()
        broken = proposal["tables"][0]
        room.check("a break")
        ask_now(tv)
        assert wait_for(lambda: tv.evaluate(BOARD) == board_of(room.roster()), 15), (
            tv.evaluate(BOARD), board_of(room.roster()))
        assert broken not in {table for _, table, _ in tv.evaluate(BOARD)}

        # The break's seat cards: each moving player's new seat and where they come from.
        moves = room.floor.get("/api/seat-cards?what=moves")[1]["cards"]
        assert moves and {c["from_table"] for c in moves} == {broken}
        with maria.expect_popup() as opened:
            maria.click("#cards-moves")
        cards = opened.value
        cards.wait_for_selector("body[data-ready='1']")
        assert cards.evaluate(CARDS) == [
            [c["name"], c["table"], str(c["seat"]),
             f"Moves from table {c['from_table']} seat {c['from_seat']}"] for c in moves]
        cards.close()

        # Announcements from the dashboard on the players' screen's second mode, live.
        news = screen(browser, link.replace("/players#", "/players?show=news#"), 1920, 1080)
        expect(news.locator("#announcements li")).to_have_text(["No announcements"])
        for text in ("Dinner break at level 6: 45 minutes", "<script>alert(1)</script>"):
            maria.fill("#announce-text", text)
            maria.click("#announce-form button[type=submit]")
            expect(maria.locator("#announcements-up li").first).to_contain_text(text)
        expect(maria.locator("#players-reply")).to_have_text(
            "Announcement up on the players' screen")
        ask_now(news)
        ask_now(tv)
        expect(news.locator("#announcements li")).to_have_count(2)
        expect(news.locator("#announcements li").first).to_contain_text(
            "<script>alert(1)</script>")
        expect(news.locator("#announcements li").nth(1)).to_contain_text(
            "Dinner break at level 6: 45 minutes")
        expect(tv.locator("#latest")).to_have_text("<script>alert(1)</script>")
        assert room.floor.post("/api/announcements", {"text": "x" * 161})[0] == 400
        assert room.floor.post("/api/announcements", {"text": "a\u0007b"})[0] == 400
        maria.locator("#announcements-up li", has_text="<script>").get_by_role(
            "button", name="Take down").click()
        expect(maria.locator("#announcements-up li")).to_have_count(1)  # the hub's answer
        ask_now(news)
        expect(news.locator("#announcements li")).to_have_count(1)
        shoot(news, "players-news", tmp_path, full_page=False)
        maria.locator("#players-panel").scroll_into_view_if_needed()
        shoot(maria, "dashboard-players", tmp_path, full_page=False)
        log = [line["action"] for line in room.floor.get("/api/log")[1]]
        assert log.count("players/announce") == 2 and "players/take-down" in log
        # The dashboard's floor log says each in words (escaped: the text is the floor's).
        expect(maria.locator("#log li", has_text="took down the announcement "
                             "\u201c<script>alert(1)</script>\u201d")).to_have_count(1)
        expect(maria.locator("#log li", has_text="announced on the players' screen: "
                             "\u201cDinner break")).to_have_count(1)

        # One player's card, from the dashboard's list (a player in the game).
        one = min((p for p in room.roster()["players"] if p["out_at"] is None),
                  key=lambda p: p["name"])
        maria.locator("#cards-player").focus()
        expect(maria.locator(f"#cards-player option[value='{one['id']}']")).to_have_count(1)
        with maria.expect_popup() as opened:
            maria.select_option("#cards-player", str(one["id"]))
        cards = opened.value
        cards.wait_for_selector("body[data-ready='1']")
        assert cards.evaluate(CARDS) == [[one["name"], one["table"], str(one["seat"]), ""]]
        cards.close()

        # The final table: its cards refused until every player left sits at one table.
        status, answer = room.floor.get("/api/seat-cards?what=final")
        assert status == 400 and "draw the final table first" in answer["error"]
        size = room.size
        while room.roster()["left"] > size:
            if room.confirm_what_is_proposed():
                continue
            table, seat = room.someone_seated()
            room.bust(table, seat)
        room.in_line("down to the final table")
        final = room.someone_seated()[0]
        room.post("/api/roster/final-table", {"table": final})
        with maria.expect_popup() as opened:
            maria.click("#cards-final")
        cards = opened.value
        cards.wait_for_selector("body[data-ready='1']")
        left = [p for p in room.roster()["players"] if p["out_at"] is None]
        assert sorted(cards.evaluate(CARDS)) == sorted(
            [p["name"], final, str(p["seat"]), ""] for p in left)
        cards.close()
        ask_now(tv)
        assert wait_for(lambda: tv.evaluate(BOARD) == board_of(room.roster()), 15)

        # The link withdrawn by a supervisor (a floor member is not offered it): every
        # screen showing it says so; the room clock's TV link is left alone.
        expect(maria.locator("#players-link-withdraw")).to_be_hidden()
        assert room.floor.post("/api/players-link/withdraw", {"generation": 1})[0] == 403
        sam = login_page(site, "sam")
        expect(sam.locator("#players-link")).to_be_visible()
        sam.click("#players-link-withdraw")
        sam.wait_for_function("() => performance.now() - Number(document.querySelector("
                              "'#confirm').dataset.opened) > 700")
        sam.click("#confirm .yes")
        expect(sam.locator("#players-reply")).to_have_text(
            "Players' link withdrawn: open the new one on the screens")
        for page in (tv, news, phone):  # each at its next question (a phone's: 15 s)
            ask_now(page)
            expect(page.locator("#problem")).to_have_text(
                "this players' screen link was withdrawn: ask the floor for the new one")
            expect(page.locator("#seats li")).to_have_count(0)
        assert hub.call(lambda floor: floor.room_clock(floor.clock_cases.tv_key))["venue"]
        assert "players-link/withdraw" in [
            line["action"] for line in room.floor.get("/api/log")[1]]
        fresh = screen(browser, hub.url + sam.locator("#players-link").get_attribute("href"),
                       1920, 1080)
        assert wait_for(lambda: fresh.evaluate(BOARD) == board_of(room.roster()), 15)
        for page in (tv, phone, news, fresh):
            assert page.errors == [], page.errors
        for page in (tv, phone, news, fresh, maria, sam):
            page.context.close()


def test_a_150_player_board_turns_its_pages_and_the_clock_announces_on_the_news(
        tmp_path, browser):
    """150 entrants (a big field, most waiting for a seat at a room of no tables yet): the
    board at 1920x1080 shows them a page at a time, each row on screen, every name on one
    page exactly, the pages turning on their own; the news shows the structure's own
    announcements with the floor's. After a restart the link and the announcements are the
    same."""
    from playwright.sync_api import expect

    from hub import auth
    from simulators.broker import Broker
    from simulators.staff import Staff
    from tablectl.hub_app import Hub, HubSettings

    broker = Broker(tmp_path / "mosquitto").start()
    users = tmp_path / "users.toml"
    auth.save_user(users, "maria", "floor", "maria-password")
    settings = HubSettings(venue="sim", db=str(tmp_path / "hub.db"), users=str(users),
                           port=broker.port, http_port=0)
    hub = Hub(settings).start()
    try:
        hub.clock.connected.wait(10)
        hub.clock.apply("start", "lppl")
        hub.clock.apply("level", 2)
        maria = Staff(hub.url, "maria", "maria-password")
        names = [HOSTILE, *(f"Entrant {n:03d}" for n in range(1, 150))]
        assert maria.post("/api/roster/import", {"csv": "name\n" + "\n".join(names)})[0] == 200
        assert maria.post("/api/announcements", {"text": "  Seats are drawn at 19:00  "})[0] \
            == 200
        path = hub.call(lambda floor: floor.players_link())["path"]
        link = hub.url + path
        # Without a login: the players' screen, never the seat cards (nor the floor's calls).
        import requests

        def anonymous(where, **headers):
            return requests.get(hub.url + where, headers=headers, allow_redirects=False,
                                timeout=10)

        assert anonymous("/players").status_code == 200
        assert anonymous("/seat-cards?what=draw").headers["location"] == "/login"
        for call in ("/api/seat-cards", "/api/announcements", "/api/players-link"):
            assert anonymous(call).status_code == 401, call
        assert anonymous("/api/players-screen").status_code == 400  # no key
        wrong = anonymous("/api/players-screen", **{"X-Room-Key": hub.tv_key})
        assert (wrong.status_code, wrong.json()) == (403, {
            "error": "this is not the players' screen link: ask the floor"})
        assert "default-src 'self'" in anonymous("/players").headers["content-security-policy"]

        board = screen(browser, link, 1920, 1080, stopped=True)
        expect(board.locator("#page")).to_contain_text("Page 1 of ")
        pages = int(board.locator("#page").text_content().split(" of ")[1].split()[0])
        assert pages >= 2
        seen: list[str] = []
        for number in range(1, pages + 1):
            expect(board.locator("#page")).to_contain_text(f"Page {number} of {pages}")
            shown = board.locator("#seats li:not([hidden])")
            for box in (shown.first.bounding_box(), shown.last.bounding_box()):
                assert box["y"] >= 0 and box["y"] + box["height"] <= 1080, (number, box)
                assert box["height"] >= 0.04 * 1080
            seen += shown.evaluate_all("(items) => items.map((li) => li.dataset.name)")
            board.clock.run_for(10_000)  # the page turns on its own
        expect(board.locator("#page")).to_contain_text(f"Page 1 of {pages}")
        assert sorted(seen) == sorted(names), "each name on one page exactly"
        expect(board.locator("#latest")).to_have_text("Seats are drawn at 19:00")
        expect(board.locator("#seats li", has_text=HOSTILE).first).to_contain_text(
            "waiting for a seat")

        news = screen(browser, link.replace("/players#", "/players?show=news#"), 1920, 1080,
                      stopped=True)
        expect(news.locator("#announcements li")).to_have_count(1)
        expect(news.locator("#announcements li")).to_contain_text("Seats are drawn at 19:00")
        expect(news.locator("#clock-announcements li")).to_have_text(
            ["Next level: Latecomers can no longer join: level 3 has started"])
        hub.clock.apply("level", 3)
        # The floor hears the venue clock's new level over the broker: once it has, the
        # news's next question shows it.
        key = path.split("#")[1]
        assert wait_for(lambda: hub.call(lambda floor: floor.players_screen(key))[
            "clock_announcements"] == ["Latecomers can no longer join: level 3 has started"])
        ask_now(news)
        expect(news.locator("#clock-announcements li")).to_have_text(
            ["Latecomers can no longer join: level 3 has started"])
        board.context.close()
        news.context.close()
    finally:
        hub.stop()

    hub = Hub(settings).start()  # the same database: the link and announcements kept
    try:
        assert hub.call(lambda floor: floor.players_link())["path"] == path
        kept = hub.call(lambda floor: floor.players_screen(path.split("#")[1]))
        assert [a["text"] for a in kept["announcements"]] == ["Seats are drawn at 19:00"]
    finally:
        hub.stop()
        broker.kill()
