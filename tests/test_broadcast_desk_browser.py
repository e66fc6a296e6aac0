"""The broadcast operator's desk (issue 49) as a production uses it: a broadcast login on a
laptop, in Chromium, against the real hub, a featured table's hands sent as a table daemon
sends them (its outbox and MQTT link, through the real Mosquitto and the recorder), the
security delay on the hub's clock. The desk shows nothing before the delay, then the delayed
hand with names, hole cards, equities and a corrected seat's reasons; a fold is one tap; an
earlier hand is replayed, marked as no live one, while a new hand is announced; an
overlay link is made, copied, and withdrawn after a question, its overlay then refused; a
refusal, a lost hub and a session ended are said in words; no other role gets the page or its
API. The README's screenshot of the desk is this test's."""

from __future__ import annotations

import os
import re
from typing import Any

import pytest

from tests.conftest import wait_for
from tests.floor_browser import box_of, chromium, login_page, shoot
from tests.test_broadcast import _deal
from tests.test_overlay_browser import (
    _hands_to_a_correction,
    featured_room,
    nothing_before_the_delay,
    the_hand_as_it_ended,
)

TABLET_PICTURE = os.environ.get("TABLECTL_DESK_TABLET")  # a look at it by hand, not kept
SEATS = """() => [...document.querySelectorAll('#seats .seat')].map((s) => ({
  seat: Number(s.dataset.seat), name: s.querySelector('.name').textContent,
  cards: [...s.querySelectorAll('.card')].map((c) => c.dataset.card || null),
  equity: (s.querySelector('.equity') || {}).textContent || '', status: s.dataset.status,
  folded: s.dataset.folded === '1',
  why: [...s.querySelectorAll('.mark .why li')].map((li) => li.textContent)}))"""


@pytest.fixture
def browser():
    with chromium() as launched:
        yield launched


@pytest.fixture
def desk_hub(tmp_path, broker):
    """The overlay's room (tests/test_overlay_browser.py): t1 featured behind a 30 s delay."""
    with featured_room(tmp_path, broker) as room:
        yield room


def test_the_desk_shows_the_delayed_hand_taps_a_fold_and_keeps_the_links(
        tmp_path, desk_hub, browser):
    from playwright.sync_api import expect

    hub, clock, bea, names = desk_hub["hub"], desk_hub["clock"], desk_hub["bea"], \
        desk_hub["names"]
    # The operator logs in as the dashboard's staff do, and lands on the desk, its stream live.
    page = login_page({"browser": browser, "hub": hub}, "bea")
    assert page.url == hub.url + "/broadcast"
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    expect(page.locator("#me")).to_have_text("bea (broadcast)")
    expect(page.locator("#delay")).to_have_text("Delay 30 s")
    expect(page.locator("#tables .tab[aria-selected='true']")).to_have_text("Table t1")
    expect(page.locator("#waiting")).to_contain_text("No hand of table t1 on the feed yet")

    hands = _hands_to_a_correction(tuple(sorted(names)))
    for hand in hands:
        _deal(hub, desk_hub["box"], desk_hub["link"], hand, clock)
    # Within the delay: nothing of these hands on the desk.
    nothing_before_the_delay(bea, page, SEATS)
    clock.ahead += 31
    ended = next(e for e in hands[-1] if e["type"] == "hand.ended")
    started = next(e for e in hands[-1] if e["type"] == "hand.started")
    expect(page.locator("#hand-head")).to_contain_text(f"Hand {started['hand']}")
    expect(page.locator("#hand-head")).to_contain_text(f"Level {started['level']}")
    seats = {s["seat"]: s for s in page.evaluate(SEATS)}
    corrected = the_hand_as_it_ended(seats, names, ended)
    assert all(s["why"] and all(s["why"]) for s in corrected)
    fed = bea.get("/api/broadcast/tables/t1?n=1")[1]["hands"][-1]
    assert {s["seat"]: s["why"] for s in fed["seats"] if s["status"] == "corrected"} == \
        {s["seat"]: s["why"] for s in corrected}  # every reason, as the feed gives them
    board = page.evaluate("() => [...document.querySelectorAll('#board .card')]"
                          ".map((c) => c.dataset.card)")
    assert board == ended["board"]

    # One tap folds a seat: marked on the desk and on the feed.
    folder = next(n for n, s in seats.items() if s["status"] == "dealt")
    seat = page.locator(f"#seats .seat[data-seat='{folder}']")
    seat.locator("button.fold").click()
    expect(seat).to_have_attribute("data-folded", "1")
    expect(seat.locator(".equity")).to_have_text("folded")
    expect(seat.locator("button.fold")).to_have_text("Folded: undo")
    expect(page.locator("#reply")).to_contain_text(f"Seat {folder} folded")
    assert wait_for(lambda: any(
        s["seat"] == folder and s["folded"]
        for s in bea.get("/api/broadcast/tables/t1?n=1")[1]["hands"][-1]["seats"]), 10)

    # The hub out of reach: the next tap is said in words, nothing marked.
    other = next(n for n, s in seats.items() if n != folder and s["status"] == "dealt")
    page.route("**/folds", lambda route: route.abort())
    page.locator(f"#seats .seat[data-seat='{other}'] button.fold").click()
    expect(page.locator("#reply")).to_have_text(
        f"Seat {other}'s fold: the hub did not answer (this device's network, or the hub is "
        "down). Check the network and try again.")
    expect(page.locator("#reply")).to_have_class("reply error")
    page.unroute("**/folds")
    assert page.locator(f"#seats .seat[data-seat='{other}']").get_attribute("data-folded") == ""

    # An overlay link: made, shown whole to copy into OBS, and its overlay live.
    expect(page.locator("#links")).to_contain_text("No overlay link")
    page.select_option("#link-table", "t1")
    page.click("#make-link button[type=submit]")
    field = page.locator(".overlay-link[data-table='t1'] input.url")
    expect(field).to_have_value(re.compile(rf"^{re.escape(hub.url)}/overlay#.{{20,}}$"))
    url = field.input_value()
    assert url == hub.url + bea.get("/api/broadcast/overlay-links")[1][0]["path"]
    page.locator(".overlay-link[data-table='t1'] button.copy").click()
    expect(page.locator("#reply")).to_contain_text("Table t1's overlay link copied")
    assert page.evaluate("() => navigator.clipboard.readText()") == url
    overlay = browser.new_context(viewport={"width": 1920, "height": 1080}).new_page()
    overlay.goto(url)
    expect(overlay.locator("body")).to_have_attribute("data-state", "live")

    page.evaluate("() => window.scrollTo(0, 0)")  # the links, clicked, scrolled it
    shoot(page, "broadcast-desk", tmp_path)
    # On a tablet held upright: one column, nothing wider than the screen, a fold a big tap.
    page.set_viewport_size({"width": 820, "height": 1180})
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 820
    assert min(box_of(b)["height"] for b in page.locator("button.fold").all()) >= 44
    if TABLET_PICTURE:
        page.screenshot(path=TABLET_PICTURE, full_page=True)
    page.set_viewport_size({"width": 1280, "height": 900})

    # Withdrawing asks first: "Cancel" keeps the link; the question's yes withdraws it.
    withdraw = page.locator(".overlay-link[data-table='t1'] button.withdraw")
    withdraw.click()
    dialog = page.locator("#confirm")
    expect(dialog).to_be_visible()
    expect(dialog.locator(".question")).to_contain_text("Withdraw table t1's overlay link?")
    dialog.locator(".no").click()
    expect(dialog).to_be_hidden()
    assert bea.get("/api/broadcast/overlay-links")[1] != []
    withdraw.click()
    dialog.locator(".yes").click()
    expect(page.locator("#reply")).to_contain_text("Table t1's overlay link withdrawn")
    expect(page.locator(".overlay-link")).to_have_count(0)
    assert bea.get("/api/broadcast/overlay-links")[1] == []
    # The overlay showing it blanks; the link opened again is refused, in words.
    expect(overlay.locator("body")).to_have_attribute("data-state", "refused")
    overlay.goto("about:blank")
    overlay.goto(url)
    expect(overlay.locator("body")).to_have_attribute("data-state", "refused")
    expect(overlay.locator("#problem")).to_contain_text("this overlay link was withdrawn")
    overlay.context.close()

    # Another operator withdraws the link while this desk asks its question: the refusal is
    # the hub's, in its words.
    page.click("#make-link button[type=submit]")
    page.locator(".overlay-link[data-table='t1'] button.withdraw").click()
    expect(dialog).to_be_visible()
    assert bea.post("/api/broadcast/overlay-links/withdraw", {"table": "t1"})[0] == 200
    dialog.locator(".yes").click()
    expect(page.locator("#reply")).to_have_text(
        "Withdrawing table t1's overlay link: refused by the hub: no overlay link for table "
        "'t1': nothing to withdraw.")
    expect(page.locator(".overlay-link")).to_have_count(0)  # what the hub holds now

    # The session ends (logged out on another tab): the desk says so, blanks the hand, stops.
    assert page.request.post(hub.url + "/logout", max_redirects=0).status == 303
    expect(page.locator("#problem")).to_contain_text("this login's session has ended")
    expect(page.locator("#problem a")).to_have_attribute("href", "/login")
    expect(page.locator("#seats .seat")).to_have_count(0)
    expect(page.locator("#history li")).to_have_count(0)  # nor the earlier hands
    expect(page.locator("#link")).to_have_text("stopped")
    assert errors == []


def test_no_other_role_gets_the_desk_or_its_api(desk_hub, browser):
    from playwright.sync_api import expect

    hub = desk_hub["hub"]
    # No session: the desk's address sends to the login page, and gives nothing away.
    anonymous = browser.new_context()
    answer = anonymous.request.get(hub.url + "/broadcast", max_redirects=0)
    assert answer.status == 303 and answer.headers["location"] == "/login"
    assert answer.body() == b""
    anonymous.close()
    # A floor login opening the desk gets its dashboard, and the desk's API refuses it.
    page = login_page({"browser": browser, "hub": hub}, "maria")
    page.goto(hub.url + "/broadcast")
    expect(page.locator("body.dashboard")).to_be_visible()
    assert page.url == hub.url + "/"
    statuses: dict[str, Any] = page.evaluate("""async () => {
      const asked = {};
      for (const path of ['/api/broadcast', '/api/broadcast/tables/t1',
                          '/api/broadcast/tables/t1/stream', '/api/broadcast/overlay-links']) {
        asked[path] = (await fetch(path)).status;
      }
      const post = (path, body) => fetch(path, { method: 'POST', body: JSON.stringify(body),
        headers: { 'Content-Type': 'application/json' } }).then((r) => r.status);
      asked.make = await post('/api/broadcast/overlay-links', { table: 't1' });
      asked.fold = await post('/api/broadcast/tables/t1/folds',
                              { deal: '0'.repeat(32) + ':1', seat: 1 });
      return asked;
    }""")
    assert set(statuses.values()) == {403}, statuses
    page.context.close()


HISTORY = """() => [...document.querySelectorAll('#history button.past')].map((b) => ({
  deal: b.dataset.deal, hand: Number(b.dataset.hand), marks: b.dataset.marks,
  live: !!b.querySelector('.chip.live'), pressed: b.getAttribute('aria-pressed') === 'true'}))"""


def _marks(hand: dict[str, Any]) -> str:
    """The marks the desk's list gives a hand, from the feed's own statuses."""
    statuses = {hand["board_status"], *(s["status"] for s in hand["seats"])}
    marks = [m for m in ("void", "uncertain", "corrected") if m in statuses]
    return " ".join(marks + (["redealt"] if hand["voided"] else []))


def test_the_desk_replays_an_earlier_hand_while_the_live_one_goes_on(
        tmp_path, desk_hub, browser):
    from playwright.sync_api import expect

    hub, clock, bea, names = desk_hub["hub"], desk_hub["clock"], desk_hub["bea"], \
        desk_hub["names"]
    page = login_page({"browser": browser, "hub": hub}, "bea")
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    hands = _hands_to_a_correction(tuple(sorted(names)))
    earlier, last = hands[:-1], hands[-1]
    assert len(earlier) >= 2
    for hand in earlier:
        _deal(hub, desk_hub["box"], desk_hub["link"], hand, clock)
    clock.ahead += 31

    # The list: the table's hands on the feed, the newest first and marked live, each marked
    # as the feed marks it.
    fed = bea.get("/api/broadcast/tables/t1?n=20")[1]["hands"]
    assert len(fed) == len(earlier)
    expect(page.locator("#history button.past")).to_have_count(len(fed))
    listed = page.evaluate(HISTORY)
    assert [(h["deal"], h["hand"], h["marks"]) for h in listed] == \
        [(h["deal"], h["hand"], _marks(h)) for h in reversed(fed)]
    assert [h["live"] for h in listed] == [True] + [False] * (len(fed) - 1)
    expect(page.locator("body")).to_have_attribute("data-deal", fed[-1]["deal"])
    # A fold tapped live on the newest hand, ended: taken back on its replay below.
    live_folder = next(s["seat"] for s in fed[-1]["seats"] if s["status"] == "dealt")
    page.locator(f"#seats .seat[data-seat='{live_folder}'] button.fold").click()
    expect(page.locator(f"#seats .seat[data-seat='{live_folder}']")).to_have_attribute(
        "data-folded", "1")
    expect(page.locator("#history button.past").first.locator(".folds")).to_have_text(
        "1 folded")

    # One is replayed: said to be a replay, not live, with its seats, cards, equities at the
    # end, its board and its reasons as the feed holds them.
    old = fed[0]
    page.locator(f"#history button.past[data-deal='{old['deal']}']").click()
    expect(page.locator("body")).to_have_attribute("data-mode", "replay")
    expect(page.locator("body")).to_have_attribute("data-deal", old["deal"])
    expect(page.locator("#replay-banner")).to_be_visible()
    expect(page.locator("#replay-what")).to_contain_text(f"Hand {old['hand']}")
    expect(page.locator("#replay-what")).to_contain_text("not live")
    expect(page.locator("#hand-title")).to_have_text(f"Table t1: replay of hand {old['hand']}")
    expect(page.locator("#hand-head")).to_contain_text(f"Hand {old['hand']}")
    seats = {s["seat"]: s for s in page.evaluate(SEATS)}
    assert {n: s["cards"] for n, s in seats.items()} == \
        {s["seat"]: s["cards"] for s in old["seats"]}
    assert {n: s["why"] for n, s in seats.items()} == \
        {s["seat"]: (s["why"] if s["status"] != "dealt" else []) for s in old["seats"]}
    assert {n: s["equity"].endswith("%") for n, s in seats.items()} == \
        {s["seat"]: s["equity"] is not None for s in old["seats"]}
    board = page.evaluate("() => [...document.querySelectorAll('#board .card')]"
                          ".map((c) => c.dataset.card || null)")
    assert board == old["board"]

    # A fold tapped on it corrects its record from now on (as of the hand's end, it stood as
    # it did then); the live hand is untouched.
    folder = next(s["seat"] for s in old["seats"] if s["status"] == "dealt"
                  and not s["folded"])
    seat = page.locator(f"#seats .seat[data-seat='{folder}']")
    seat.locator("button.fold").click()
    expect(seat).to_have_attribute("data-folded", "1")
    expect(page.locator("#reply")).to_contain_text(
        f"Seat {folder} folded in hand {old['hand']}, a replay")

    def folded_at(deal: str, seat: int, at: str = "") -> bool:
        hand = next(h for h in bea.get(f"/api/broadcast/tables/t1?n=20{at}")[1]["hands"]
                    if h["deal"] == deal)
        return next(s["folded"] for s in hand["seats"] if s["seat"] == seat)

    assert wait_for(lambda: folded_at(old["deal"], folder), 10)
    assert not folded_at(old["deal"], folder, f"&at={old['ended_at']}")
    expect(page.locator(f"#history button.past[data-deal='{old['deal']}'] .folds")
           ).to_have_text("1 folded")
    assert [s["seat"] for s in bea.get("/api/broadcast/tables/t1?n=1")[1]["hands"][-1]["seats"]
            if s["folded"]] == [live_folder]

    # The next hand, dealt meanwhile: within the delay the list holds nothing of it, even
    # asked afresh (another replay chosen asks the hub again).
    _deal(hub, desk_hub["box"], desk_hub["link"], last, clock)
    second = fed[1]
    with page.expect_response(lambda r: "/api/broadcast/tables/t1?n=" in r.url) as answer:
        page.locator(f"#history button.past[data-deal='{second['deal']}']").click()
    assert len(answer.value.json()["hands"]) == len(earlier)
    expect(page.locator("#hand-head")).to_contain_text(f"Hand {second['hand']}")
    expect(page.locator("#history button.past")).to_have_count(len(fed))
    # Its time come, it is announced, not forced on screen: the replay stays.
    clock.ahead += 31
    started = next(e for e in last if e["type"] == "hand.started")
    expect(page.locator("#replay-news")).to_contain_text(
        f"Hand {started['hand']} is on the feed now")
    expect(page.locator("#history button.past")).to_have_count(len(fed) + 1)
    expect(page.locator("body")).to_have_attribute("data-deal", second["deal"])
    expect(page.locator("#hand-head")).to_contain_text(f"Hand {second['hand']}")
    page.evaluate("() => window.scrollTo(0, 0)")
    shoot(page, "broadcast-desk-replay", tmp_path)
    # On a tablet held upright the replay's banner and the list fit the screen, a big tap each.
    page.set_viewport_size({"width": 820, "height": 1180})
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 820
    assert min(box_of(b)["height"] for b in page.locator(
        "#history button.past, #back-to-live").all()) >= 44
    page.set_viewport_size({"width": 1280, "height": 900})

    # The hand that was live, replayed: its live fold taken back holds, on the desk and on the
    # feed (the newest tap, wherever it was tapped).
    was_live = fed[-1]
    page.locator(f"#history button.past[data-deal='{was_live['deal']}']").click()
    expect(page.locator("body")).to_have_attribute("data-deal", was_live["deal"])
    seat = page.locator(f"#seats .seat[data-seat='{live_folder}']")
    expect(seat).to_have_attribute("data-folded", "1")
    seat.locator("button.fold").click()
    expect(page.locator("#reply")).to_contain_text(
        f"Seat {live_folder}'s fold taken back in hand {was_live['hand']}, a replay")
    assert wait_for(lambda: not folded_at(was_live["deal"], live_folder), 10)
    expect(page.locator(f"#history button.past[data-deal='{was_live['deal']}'] .folds")
           ).to_have_count(0)
    expect(seat).to_have_attribute("data-folded", "")

    # One tap back to live: the new hand, the banner gone; the list marks the corrected one.
    page.locator("#back-to-live").click()
    expect(page.locator("body")).to_have_attribute("data-mode", "live")
    expect(page.locator("#replay-banner")).to_be_hidden()
    expect(page.locator("#hand-head")).to_contain_text(f"Hand {started['hand']}")
    newest = page.evaluate(HISTORY)[0]
    assert newest["hand"] == started["hand"] and newest["live"] and newest["pressed"]
    assert "corrected" in newest["marks"].split()
    assert errors == []
