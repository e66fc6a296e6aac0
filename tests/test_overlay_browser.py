"""The broadcast overlay as a production uses it (issue 49): a featured table's link sends its
hands as a table daemon's does (its outbox and MQTT link, through the real Mosquitto, the
recorder and the hub), the security delay set, the overlay page in Chromium at 1920x1080 as
OBS Studio's browser source opens it with a broadcast login's link: nothing before the delay,
then the delayed hand with names, hole cards, equities, the level's blinds and a corrected
seat marked; a fold tapped dims its seat; the link withdrawn blanks the page. The README's
screenshot is the overlay over a felt table this test draws (an SVG backdrop, the test's
only)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from houses.loaders import load_profile
from hub import auth
from hub.broadcast import deals
from simulators.dealer_script import session
from simulators.staff import Staff
from tablectl.hub_app import Hub, HubSettings
from tests.conftest import run
from tests.floor_browser import chromium, shoot
from tests.test_broadcast import TABLE_CLOCK_S, VENUE, HubClock, _deal, _stored, _table

PLAYERS = ("Ana Souza", "Ben Okafor", "Chloé Martin", "Dev Patel", "<b>Eve</b>", "Farid N.")
SEATS = """() => [...document.querySelectorAll('#seats .seat')].map((s) => ({
  seat: Number(s.dataset.seat), name: s.querySelector('.name').textContent,
  cards: [...s.querySelectorAll('.card')].map((c) => c.dataset.card || null),
  equity: (s.querySelector('.equity') || {}).textContent || '', status: s.dataset.status,
  folded: s.dataset.folded === '1', mark: (s.querySelector('.mark') || {}).textContent || ''}))"""
# A green felt table, drawn here (no picture of anyone's): the backdrop OBS would composite
# the overlay over, set on the page's root for the screenshot only.
FELT_SVG = """
<svg xmlns='http://www.w3.org/2000/svg' width='1920' height='1080'>
<defs><radialGradient id='f' cx='50%' cy='45%' r='60%'><stop offset='0' stop-color='#2e8b57'/>
<stop offset='1' stop-color='#0b3d23'/></radialGradient></defs>
<rect width='1920' height='1080' fill='#1a1410'/>
<ellipse cx='960' cy='560' rx='900' ry='470' fill='#5a3a1e'/>
<ellipse cx='960' cy='560' rx='850' ry='425' fill='url(#f)'/>
<ellipse cx='960' cy='560' rx='560' ry='250' fill='none' stroke='#e8d9a8' stroke-width='3'
 stroke-opacity='0.35'/></svg>"""
FELT = "data:image/svg+xml," + quote(FELT_SVG.replace("\n", " "))


@pytest.fixture
def browser():
    with chromium() as launched:
        yield launched


def _hands_to_a_correction(seats: tuple[int, ...]) -> list[list[dict[str, Any]]]:
    """A session's hands at these seats with the venue clock's blinds, up to the first one
    that ends with a seat's cards corrected and every live seat's equity known."""
    lines, _ = session(random.Random(5), load_profile("tda-2024"), hands=20,
                       irregularity_rate=0.8, seats=seats, brisk=True, seat_changes=False,
                       clock="tda-2024")
    events = run(lines)
    for _, deal in deals(_stored(events)):
        shown = deal.view({}, {})
        if shown["outcome"] == "complete" and shown["equity"] and \
                "corrected" in {s["status"] for s in shown["seats"]}:
            return [[e for e in events if e.get("hand") == n] for n in range(1, deal.hand + 1)]
    raise AssertionError("no corrected hand in the session: another seed")


@contextmanager
def featured_room(tmp_path: Path, broker: Any) -> Iterator[dict[str, Any]]:
    """The hub with a floor login (maria) and a broadcast one (bea), its clock the test's,
    table t1 linked as a daemon's outbox and MQTT link, the players drawn there, featured
    behind a 30 s delay: the overlay's and the broadcast desk's room."""
    users = tmp_path / "users.toml"
    for name, role in (("maria", "floor"), ("bea", "broadcast")):
        auth.save_user(users, name, role, f"{name}-password")
    clock = HubClock()
    hub = Hub(HubSettings(venue=VENUE, db=str(tmp_path / "hub.db"), users=str(users),
                          port=broker.port, http_port=0, reorder_timeout=1.0),
              wall=clock).start()
    link = None
    try:
        assert hub.connected.wait(10) and hub.recorder.connected.wait(10)
        maria, bea = (Staff(hub.url, n, f"{n}-password") for n in ("maria", "bea"))
        box, link = _table(tmp_path, broker, hub, "t1")
        for player in PLAYERS:
            assert maria.post("/api/roster/players", {"name": player})[0] == 200
        drawn = maria.post("/api/roster/draw")[1]["drawn"]["t1"]
        assert maria.post("/api/featured/tables/t1", {"featured": True})[0] == 200
        assert maria.post("/api/featured/delay", {"seconds": 30})[0] == 200
        clock.ahead += TABLE_CLOCK_S
        yield {"hub": hub, "clock": clock, "box": box, "link": link, "bea": bea,
               "names": {d["seat"]: d["player"] for d in drawn}}
    finally:
        if link is not None:
            link.stop()
        hub.stop()


def nothing_before_the_delay(bea: Staff, page: Any, seats: str) -> None:
    """The hands are stored (``_deal`` waits for the recorder) and within the delay: the
    hub's feed, which the page shows, holds none of them, and the page draws no seat. A
    positive check at the source, not a wait for nothing to happen."""
    assert bea.get("/api/broadcast/tables/t1?n=1")[1]["hands"] == []
    assert page.evaluate(seats) == []


def the_hand_as_it_ended(seats: dict[int, dict[str, Any]], names: dict[int, str],
                         ended: dict[str, Any]) -> list[dict[str, Any]]:
    """Seats drawn with the roster's names (as text), the cards the hand's end gives each and
    an equity each; the seats marked corrected, returned."""
    assert {n: s["name"] for n, s in seats.items()} == names  # "<b>Eve</b>" as text
    assert {str(n): s["cards"] for n, s in seats.items()} == ended["hole"]
    assert all(s["equity"].endswith("%") for s in seats.values())
    corrected = [s for s in seats.values() if s["status"] == "corrected"]
    assert corrected
    return corrected


def test_the_overlay_shows_the_delayed_hand_a_fold_a_correction(tmp_path, broker, browser):
    from playwright.sync_api import expect

    with featured_room(tmp_path, broker) as room:
        hub, clock, box, link, bea, names = (room[k] for k in (
            "hub", "clock", "box", "link", "bea", "names"))
        path = bea.post("/api/broadcast/overlay-links", {"table": "t1"})[1][0]["path"]

        page = browser.new_context(viewport={"width": 1920, "height": 1080}).new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("dialog", lambda d: errors.append(f"a dialog: {d.message}"))
        page.goto(hub.url + path)
        expect(page.locator("body")).to_have_attribute("data-state", "live")
        assert page.evaluate("() => getComputedStyle(document.body).backgroundColor") == \
            "rgba(0, 0, 0, 0)"  # transparent: OBS composites it
        hands = _hands_to_a_correction(tuple(sorted(names)))
        for hand in hands:
            _deal(hub, box, link, hand, clock)
        # Within the delay: nothing of these hands on the overlay.
        nothing_before_the_delay(bea, page, SEATS)
        clock.ahead += 31
        last = hands[-1]
        ended = next(e for e in last if e["type"] == "hand.ended")
        started = next(e for e in last if e["type"] == "hand.started")
        expect(page.locator("#hand")).to_have_text(f"Hand {started['hand']}")
        blinds = started["blinds"]
        expect(page.locator("#blinds")).to_contain_text(f"{blinds['sb']:,} / {blinds['bb']:,}")
        expect(page.locator("#level")).to_have_text(f"Level {started['level']}")
        seats = {s["seat"]: s for s in page.evaluate(SEATS)}
        corrected = the_hand_as_it_ended(seats, names, ended)
        assert all(s["mark"].startswith("corrected ") and len(s["mark"]) > 12
                   for s in corrected)
        board = page.evaluate("() => [...document.querySelectorAll('#board .card')]"
                              ".map((c) => c.dataset.card)")
        assert board == ended["board"]

        # The operator taps a fold: its seat dims and loses its equity.
        deal = page.evaluate("() => document.body.dataset.deal")
        folder = next(n for n, s in seats.items() if s["status"] == "dealt")
        assert bea.post("/api/broadcast/tables/t1/folds", {"deal": deal, "seat": folder})[0] \
            == 200
        seat = page.locator(f"#seats .seat[data-seat='{folder}']")
        expect(seat).to_have_class("seat folded")
        expect(seat.locator(".equity")).to_have_text("FOLD")
        assert float(seat.evaluate("(s) => getComputedStyle(s).opacity")) < 0.5

        # The screenshot: the overlay over a felt table (the backdrop the test's only).
        page.evaluate("(felt) => { document.documentElement.style.background = "
                      "`url(\"${felt}\")`; }", FELT)
        shoot(page, "overlay", tmp_path, full_page=False)
        page.evaluate("() => { document.documentElement.style.background = ''; }")

        # The link withdrawn: the page is told, blanks and says why.
        assert bea.post("/api/broadcast/overlay-links/withdraw", {"table": "t1"})[0] == 200
        expect(page.locator("body")).to_have_attribute("data-state", "refused")
        expect(page.locator("#problem")).to_contain_text("withdrawn")
        assert page.evaluate(SEATS) == [] and page.locator("#lower").is_hidden()
        assert errors == []
