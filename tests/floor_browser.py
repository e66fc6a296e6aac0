"""The floor's browser tests' venue and helpers: Debian's Chromium (its headless shell:
tests/headless_chromium.py) driven by Playwright, against a real Mosquitto, the real hub and
simulated tables (each the real daemon with the simulated shoe on a pty). Each browser test
module opens a venue of its own (``floor_venue``), so that the modules run side by side in the
test processes."""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hub import auth
from simulators.broker import Broker
from simulators.shoe import perform
from tablectl.hub_app import Hub, HubSettings
from tablectl.sim_venue import SimulatedVenue
from tests.conftest import wait_for
from tests.headless_chromium import CHROMIUM, MISSING, present

# What a page shows after the venue does something (a table's event through the broker, the
# recorder, the floor and the stream) is waited for 15 s, not Playwright's 5: a run with both
# cores kept busy took longer, test after test (the wait ends as soon as it shows).
EXPECT_TIMEOUT_MS = 15_000
# How often the room clock's TV asks the hub (hub/static/tv.js).
TV_ASKS_EVERY_MS = 3_000
VENUE_ZONE = "Pacific/Kiritimati"  # UTC+14: no CI machine's own
# Where to keep the screenshots (docs/dashboard.md's come from a run with this set to
# docs/screens).
SCREENSHOTS = os.environ.get("TABLECTL_SCREENSHOTS")

# Records every message the page's event stream delivers, for the privacy check.
RECORD_STREAM = """
(() => {
  window.__received = [];
  const Original = window.EventSource;
  window.EventSource = function (url, options) {
    const source = new Original(url, options);
    for (const name of ["snapshot", "update"]) {
      source.addEventListener(name, (m) => window.__received.push(m.data));
    }
    return source;
  };
})();
"""


@contextlib.contextmanager
def chromium() -> Iterator[Any]:
    """Debian's Chromium (its headless shell), driven by Playwright, with the tests'
    expectation timeout: every browser test module's browser."""
    if not present():
        pytest.fail(MISSING)
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=EXPECT_TIMEOUT_MS)
    playwright = sync_playwright().start()
    try:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield browser
        finally:
            browser.close()
    finally:
        playwright.stop()


def floor_venue(tmp_path_factory: Any, structure: str = "tda-2024",
                structures: str | None = None) -> Iterator[dict[str, Any]]:
    """A venue for a module's browser tests: a broker, the hub (the venue clock running
    ``structure``, from the house's ``structures`` directory if given; its users maria, val
    and sam), two simulated tables t1 and t2 and a browser."""
    directory = tmp_path_factory.mktemp("floor")
    broker = Broker(directory / "mosquitto").start()
    users = directory / "users.toml"
    for name, role in (("maria", "floor"), ("val", "viewer"), ("sam", "supervisor")):
        auth.save_user(users, name, role, f"{name}-password")
    # A venue far from this machine's zone, writing times its own way (24-hour, German).
    hub = Hub(HubSettings(venue="sim", db=str(directory / "hub.db"), users=str(users),
                          port=broker.port, http_port=0, locale="de-DE",
                          time_zone=VENUE_ZONE, structures=structures)).start()
    hub.clock.connected.wait(10)
    hub.clock.apply("start", structure)  # the tables follow the venue clock
    tables = SimulatedVenue(directory / "tables", tables=2, hands=1, broker=broker,
                            recorder=False, quiet=True, irregularities=0.0, pace=0.05,
                            venue_clock=True).start()
    # What the tables and the venue clock publish for viewers, checked against the AsyncAPI
    # document by the test that wants it.
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    published: list[tuple[str, bytes]] = []
    watcher = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
    watcher.on_message = lambda c, u, msg: published.append((msg.topic, bytes(msg.payload)))
    watcher.connect("127.0.0.1", broker.port)
    watcher.subscribe([("pkr/v1/sim/tables/+/state", 1), ("pkr/v1/sim/clock", 1)])
    watcher.loop_start()
    try:
        with chromium() as browser:
            yield {"hub": hub, "tables": tables, "browser": browser, "broker": broker,
                   "published": published}
    finally:
        watcher.loop_stop()
        watcher.disconnect()
        tables.stop()
        hub.stop()
        broker.kill()


def login_page(venue: dict[str, Any], user: str, viewport: dict[str, int] | None = None,
               sound: str | None = None, clock: bool = False) -> Any:
    """A logged-in page of its own (a tablet each: a session each), recording its event
    stream; ``sound``: the tablet's alert sound setting, as the device keeps it from before
    the page loads; ``clock``: the page's clock is Playwright's, which the test may move
    forward (its timers, its ``Date``) instead of waiting.

    Logged in as the login form does it (its POST, whose session cookie the browser keeps),
    without loading and filling the form first: a page load saved, each time. The form
    itself is filled in a browser by test_dashboard_browser's first test."""
    context = venue["browser"].new_context(viewport=viewport or {"width": 1280, "height": 900})
    if clock:
        context.clock.install()
    answer = context.request.post(venue["hub"].url + "/login", max_redirects=0, form={
        "user": user, "password": f"{user}-password"})
    assert answer.status == 303 and answer.headers["location"] == "/", (
        user, answer.status, answer.headers.get("location"))
    page = context.new_page()
    page.add_init_script(RECORD_STREAM)
    if sound is not None:
        page.add_init_script(f"localStorage.setItem('alertSound', {json.dumps(sound)});")
    page.goto(venue["hub"].url + "/")
    page.wait_for_selector("body[data-live='1']", timeout=30000)  # deadline on a busy machine
    return page


# The dashboard leaves what is off screen undrawn (content-visibility: auto) until it is
# scrolled to; a whole page's picture is taken beyond the screen, so it is all drawn first.
DRAW_ALL = """() => { for (const e of document.querySelectorAll('main > section, .table'))
  e.style.contentVisibility = 'visible'; }"""
DRAW_AS_NEEDED = """() => { for (const e of document.querySelectorAll('main > section, .table'))
  e.style.contentVisibility = ''; }"""


def shoot(page: Any, name: str, tmp_path: Path, full_page: bool = True) -> None:
    """The page's picture for the docs, taken when TABLECTL_SCREENSHOTS names where to keep
    it. Otherwise none: nothing looks at a picture left in a test's temporary directory, and
    each took a browser's fraction of a second, or two on a busy machine (``tmp_path`` stays
    for the callers)."""
    if not SCREENSHOTS:
        return
    target = Path(SCREENSHOTS)
    target.mkdir(parents=True, exist_ok=True)
    if full_page:
        page.evaluate(DRAW_ALL)
    page.screenshot(path=str(target / f"{name}.png"), full_page=full_page)
    if full_page:
        page.evaluate(DRAW_AS_NEEDED)


def tv_page(browser: Any, hub: Any) -> Any:
    """The room clock's TV (1920x1080) on its link. Its clock is Playwright's, running as the
    machine's: ``ask_now`` has it ask the hub at once instead of at its next turn."""
    context = browser.new_context(viewport={"width": 1920, "height": 1080})
    context.clock.install()
    page = context.new_page()
    page.asks_every = TV_ASKS_EVERY_MS
    page.goto(hub.url + hub.call(lambda floor: floor.tv_link())["path"])
    return page


def ask_now(page: Any) -> None:
    """A screen that asks the hub every few seconds (``page.asks_every``, in ms: the TV, the
    players' screen), its clock moved on by one turn: it asks now what it would have asked
    within that time, instead of the test waiting for its turn. The turn is the page's own:
    a page that stopped asking, or asked less often, would show nothing new."""
    page.clock.fast_forward(page.asks_every)


def box_of(locator: Any) -> dict[str, float]:
    """An element's box on screen. The dashboard redraws its lists as updates come (a
    table's state, a balancing review): an element measured as it is replaced has none, so
    measure the one drawn next."""
    boxes: list[Any] = []
    assert wait_for(lambda: boxes.append(locator.bounding_box()) or boxes[-1] is not None, 10)
    return boxes[-1]  # type: ignore[no-any-return]


def deal_misdeal(table: Any) -> None:
    """Two cards face up in the deal: a misdeal (SPEC row 3)."""
    for line in ({"type": "deck_in", "deck": "R1"}, {"type": "card", "card": "As"},
                 {"type": "card", "card": "Ks"}, {"type": "card", "card": "Qs", "face": "up"},
                 {"type": "card", "card": "Js"}, {"type": "card", "card": "Ts", "face": "up"}):
        perform(line, table.shoe, lambda _line, _at: None)
        time.sleep(0.05)  # the dealer's pace: cards 50 ms apart, one dealing action


class RawTable:
    """A table as a bare MQTT client: events published as fast as a test needs them."""

    def __init__(self, venue: dict[str, Any], name: str) -> None:
        import paho.mqtt.client as mqtt
        from paho.mqtt.enums import CallbackAPIVersion

        self.name, self.seq = name, 0
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
        self.client.connect("127.0.0.1", venue["broker"].port)
        self.client.loop_start()

    def ruling(self, action: str, text: str, reason: str | None = None) -> None:
        """One ruling, its own hand, on the private topic (for the recorder: the floor shows
        what it stored) and on ``events``, as a table sends it."""
        self.seq += 1
        data = {"action": action, "text": text, **({"reason": reason} if reason else {})}
        envelope = json.dumps({
            "v": 1, "event_id": f"{self.name}:{self.seq}", "venue": "sim", "table": self.name,
            "seq": self.seq, "boot": 1, "type": "ruling", "ts": int(time.time() * 1000),
            "hand": self.seq, "dealer": None, "historical": False, "data": data})
        for leaf in ("private", "events"):
            self.client.publish(f"pkr/v1/sim/tables/{self.name}/{leaf}", envelope,
                                qos=1).wait_for_publish(5)

    def state(self, dealer: str, hands: int, seats: list[int]) -> None:
        """Online, between hands, with ``dealer`` in the box ``hands`` hands (retained, as a
        table publishes its ``status`` and ``state``)."""
        self.seq += 1
        now = int(time.time() * 1000)
        root = f"pkr/v1/sim/tables/{self.name}/"
        self.client.publish(root + "status", json.dumps(
            {"state": "online", "boot": 1, "table": self.name, "ts": now}), qos=1,
            retain=True).wait_for_publish(5)
        state = {"hand": hands, "in_progress": False, "street": None, "phase": "idle",
                 "dealer": dealer, "shoe": "ok", "clock": None, "profile": "tda-2024",
                 "hand_for_hand": "off", "seats": seats, "button": seats[0],
                 "dealer_stats": {"type": "dealer.summary", "dealer": dealer, "hands": hands,
                                  "minutes": 20, "hands_per_hour": 30, "t": now / 1000},
                 "links": {"hub": "ok"}, "last_seq": self.seq, "ts": now}
        self.client.publish(root + "state", json.dumps(state), qos=1,
                            retain=True).wait_for_publish(5)

    def forget(self) -> None:
        """Its retained ``status`` and ``state`` cleared: later tests' tables are their own."""
        for leaf in ("status", "state"):
            self.client.publish(f"pkr/v1/sim/tables/{self.name}/{leaf}", b"", qos=1,
                                retain=True).wait_for_publish(5)

    def close(self) -> None:
        self.client.loop_stop()
        self.client.disconnect()


__all__ = ["CHROMIUM", "SCREENSHOTS", "VENUE_ZONE", "RawTable", "ask_now", "box_of",
           "deal_misdeal", "floor_venue", "login_page", "shoot", "tv_page"]
