"""The broadcast feed (issue 49): the deal view built from the table's private events (never a
wrong card shown as certain, every correction said), and the feed at the hub: the broadcast
role's own routes, the security delay enforced on the hub's clock, the floor's featured
tables, the operator's folds, and no hole card to any other role."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import random
import socket
import threading
import time
import zlib

import paho.mqtt.client as mqtt
import pytest

from contract.envelope import envelope
from controller.replay import replay
from hardware.mqtt_link import TableLink
from hardware.outbox import Outbox
from houses.loaders import builtin_names, load_profile, load_structure
from hub import auth
from hub.broadcast import deals, hands
from hub.refused import StaffError
from hub.service import FloorService
from hub.storage import open_storage
from simulators.dealer_script import session, session_lines
from simulators.staff import Staff
from tablectl.hub_app import Hub, HubSettings
from tests.conftest import SCENARIOS, QuietLink, run, subscribed, wait_for
from tests.privacy import private_leaks, shown_cards

INC = "ab" * 16


def _stored(events, start_ms=1_000_000, step_ms=1000):
    """The events as the recorder stores them and the feed reads them back: envelopes with
    their incarnation and the hub's time."""
    return [(0, {**envelope(e, venue="v", table="t1", seq=seq, boot=1,
                            ts_ms=start_ms + seq * step_ms, incarnation=INC),
                 "ts": start_ms + seq * step_ms})
            for seq, e in enumerate(events, start=1)]


def _hands(events):
    return hands(deals(_stored(events)), {}, {})


def _scenario(name):
    return run([json.loads(line) for line in (SCENARIOS / f"{name}.jsonl").read_text()
                .splitlines() if line.strip()])


def _seats(hand):
    return {s["seat"]: s for s in hand["seats"]}


def test_a_clean_hand_shows_every_seat_s_cards_as_dealt():
    [hand] = _hands(_scenario("row02_later_exposed"))[:1]
    seats = _seats(hand)
    assert {k: v for k, v in seats[2].items() if k != "equity"} == {
        "seat": 2, "player": None, "cards": ["Ks", "9s"], "status": "dealt", "why": [],
        "folded": False}
    assert hand["board"] == ["3c", "4c", "5c", "7c", "9c"] and hand["board_status"] == "dealt"


def test_each_live_seat_s_equity_at_the_street_the_board_is_at():
    """On the river (every runout: one) and before the flop (sampled) the live seats' shares
    of the pot sum to one; a folded seat has none; the same deal gives the same figures."""
    events = _scenario("row04_boxed")
    stored = _stored(events)
    [(_, deal)] = deals(stored)
    river = deal.view({}, {})
    assert river["equity"]["street"] == "river" and river["equity"]["exact"]
    assert sum(s["equity"]["equity"] for s in river["seats"]) == pytest.approx(1.0)
    flop = next(i for i, (_, e) in enumerate(stored) if e["data"].get("role") == "board")
    [(_, early)] = deals(stored[:flop])
    preflop = early.view({}, {4: True})
    assert preflop["equity"]["street"] == "preflop" and not preflop["equity"]["exact"]
    assert _seats(preflop)[4]["equity"] is None
    assert sum(s["equity"]["equity"] for s in preflop["seats"] if s["equity"]) == \
        pytest.approx(1.0)
    assert early.view({}, {4: True}) == preflop  # the same feed, the same figures


@pytest.mark.parametrize("scenario", ["row17_unknown_tag", "row18_shoe_fault"])
def test_no_equity_when_a_live_seat_s_cards_are_uncertain(scenario):
    hand = _hands(_scenario(scenario))[0]
    assert hand["equity"] is None and "not all known" in hand["equity_why"]
    assert {s["equity"] for s in hand["seats"]} == {None}


@pytest.mark.parametrize("scenario, seat, status, why", [
    ("row02_later_exposed", 1, "corrected", "Ts dealt to it face up"),
    ("row04_boxed", 6, "corrected", "Ad boxed"),
    ("row06_joker", 2, "corrected", "a joker scrapped"),
    ("row09_missing_hole_card", 6, "uncertain", "1 card(s) missing"),
    ("row17_unknown_tag", 1, "uncertain", "could not read"),
    ("row18_shoe_fault", 4, "uncertain", "failed mid-hand"),
    ("row16_foreign_card", 2, "void", "another deck's card"),
    ("row15_duplicate_card", 6, "void", "drawn twice"),
])
def test_a_corrected_or_uncertain_seat_says_why(scenario, seat, status, why):
    shown = _seats(_hands(_scenario(scenario))[0])[seat]
    assert shown["status"] == status and any(why in w for w in shown["why"]), shown


def test_an_unreadable_card_is_shown_as_unknown_not_as_a_card():
    shown = _seats(_hands(_scenario("row17_unknown_tag"))[0])[1]
    assert shown["cards"] == ["As", None]


def test_a_redealt_hand_replaces_the_one_a_misdeal_voided():
    [hand] = _hands(_scenario("row01_first_exposed_misdeal"))
    assert hand["redeal"] == 1 and hand["outcome"] == "complete"
    assert _seats(hand)[1]["cards"] == ["Kh", "9h"] and _seats(hand)[1]["status"] == "dealt"
    [voided] = hand["voided"]
    assert voided["outcome"] == "misdeal" and voided["redeal"] == 0
    assert {s["status"] for s in voided["seats"]} == {"void"}
    assert any("As exposed" in w for w in _seats(voided)[1]["why"])
    assert voided["irregularities"][0]["ruling"]["action"] == "misdeal"


def test_a_scrambled_flop_marks_the_board_not_the_seats():
    [hand] = _hands(_scenario("row13_fourth_flop_scrambled"))
    assert hand["board_status"] == "corrected" and hand["board"][:3] == ["3c", "5c", "6c"]
    assert {s["status"] for s in hand["seats"]} == {"dealt"}


@pytest.mark.parametrize("profile", sorted(builtin_names()))
def test_no_seat_is_ever_shown_as_dealt_with_a_card_it_did_not_get(profile):
    """Every prefix of every deal of a long session with many irregularities, as a feed at
    that moment would show it: a seat shown ``dealt`` holds exactly the first cards of what
    the hand's end (the core's last word) gives it, in order; a seat whose cards the hand's
    end changed is never ``dealt``."""
    rng = random.Random(zlib.crc32(profile.encode()))
    lines = [json.dumps(x) for x in session_lines(
        rng, load_profile(profile), hands=30, irregularity_rate=0.7, game="mixed",
        clock="tda-2024")]
    events = [e for e in replay(lines, load_profile(profile), structure_loader=load_structure)]
    stored = _stored(events)
    ends = {}
    for at, (_, item) in enumerate(stored):
        if item["type"] == "hand.started":
            start = at
        if item["type"] == "hand.ended":
            ends[(item["hand"], start)] = item["data"]["hole"]
    checked = 0
    for (_, start), hole in ends.items():
        stop = next(i for i in range(start, len(stored)) if stored[i][1]["type"] == "hand.ended")
        for upto in range(start + 1, stop + 2):
            [(_, deal)] = deals(stored[start:upto])
            for seat in deal.view({}, {}, with_equity=False)["seats"]:
                final = [None if c == "??" else c for c in hole.get(str(seat["seat"]), [])]
                if seat["status"] == "dealt":
                    assert seat["cards"] == final[:len(seat["cards"])], (profile, seat, final)
                    checked += 1
    assert checked > 1000


# ---------------------------------------------------------------------------- the hub's feed

VENUE = "feedtest"
STAFF = {"val": "viewer", "maria": "floor", "sam": "supervisor", "bea": "broadcast"}
# The hub's time of a table's event is the table's stamp moved by its clock's offset, which
# the recorder measures to within half a round trip (hub/recorder.py: CLOCK_ROUND_TRIP_S): the
# tests keep this far from the moments they compare it with.
TABLE_CLOCK_S = 5


class HubClock:
    """The hub's clock, set by the test: real time plus what the test moved it on."""

    def __init__(self) -> None:
        self.ahead = 0.0

    def __call__(self) -> float:
        return time.time() + self.ahead

    def ms(self) -> int:
        return int(self() * 1000)


@pytest.fixture
def feed_hub(tmp_path, broker, request):
    db = request.getfixturevalue("postgres") if request.param == "postgresql" else \
        str(tmp_path / "hub.db")
    users = tmp_path / "users.toml"
    for name, role in STAFF.items():
        auth.save_user(users, name, role, f"{name}-password")
    clock = HubClock()
    hub = Hub(HubSettings(venue=VENUE, db=db, users=str(users), port=broker.port, http_port=0,
                          reorder_timeout=1.0), wall=clock).start()
    assert hub.connected.wait(10) and hub.recorder.connected.wait(10)
    staff = {name: Staff(hub.url, name, f"{name}-password") for name in STAFF}
    try:
        yield hub, clock, staff
    finally:
        hub.stop()


def _table(tmp_path, broker, hub, name):
    box = Outbox(tmp_path / f"{name}.db")
    link = TableLink(box, venue=VENUE, table=name, port=broker.port).start()
    assert wait_for(lambda: link.connected, 10)
    # Heard, and its clock measured against the hub's (the events' times are the hub's).
    assert wait_for(lambda: name in hub.floor.tables, 10)
    storage = open_storage(hub.settings.db)
    try:
        # (A deadline for a loaded machine: make test failed here once at 10 s.)
        assert wait_for(lambda: any(s["table"] == name and s["clock_offset"] is not None
                                    for s in storage.streams() if not storage.commit()), 60)
    finally:
        storage.close()
    return box, link


def _deal(hub, box, link, events, clock):
    """The table sends these events, stamped by the hub's clock now; stored."""
    for event in events:
        box.append(event, clock.ms())
    link.notify()
    assert wait_for(lambda: hub.recorder.upto.get(link.table) == box.last_seq, 10)


def _session_hands(seats, count, seed):
    lines, _ = session(random.Random(seed), load_profile("tda-2024"), hands=count,
                       irregularity_rate=0.0, seats=seats, brisk=True, seat_changes=False)
    events = run(lines)
    return [[e for e in events if e.get("hand") == n] for n in range(1, count + 1)]


@pytest.mark.parametrize("feed_hub", ["postgresql"], indirect=True)
def test_the_feed_shows_only_what_the_delay_allows_whatever_the_client_asks(tmp_path, broker,
                                                                           feed_hub):
    hub, clock, staff = feed_hub
    bea, maria, val = staff["bea"], staff["maria"], staff["val"]
    box, link = _table(tmp_path, broker, hub, "t1")
    try:
        for player in ("Ana", "Ben", "Cy", "Dee"):
            assert maria.post("/api/roster/players", {"name": player})[0] == 200
        status, drawn = maria.post("/api/roster/draw")
        assert status == 200, drawn
        names = {d["seat"]: d["player"] for d in drawn["drawn"]["t1"]}
        assert val.post("/api/featured/tables/t1", {"featured": True})[0] == 403
        assert bea.post("/api/featured/tables/t1", {"featured": True})[0] == 403
        status, featured = maria.post("/api/featured/tables/t1", {"featured": True})
        assert status == 200 and featured["delay_seconds"] == 1800
        assert [t["table"] for t in featured["tables"]] == ["t1"]
        clock.ahead += TABLE_CLOCK_S

        hands = _session_hands(tuple(sorted(names)), 3, seed=49)
        one, two, three = hands
        started = clock.ms()
        _deal(hub, box, link, one, clock)  # hand 1 at T
        clock.ahead += 60
        half = next(i for i, e in enumerate(two) if e["type"] == "card" and e["role"] != "hole")
        _deal(hub, box, link, two[:half], clock)  # hand 2's hole cards at T + 1 min
        clock.ahead += 60
        _deal(hub, box, link, two[half:], clock)  # its board and end at T + 2 min
        clock.ahead += 60
        _deal(hub, box, link, three[:-3], clock)  # hand 3 begins at T + 3 min, not ended

        # The present, and the future, asked for: nothing within the delay leaves the hub.
        for ask in ("", f"?at={clock.ms()}", f"?at={clock.ms() + 3600_000}"):
            status, feed = bea.get("/api/broadcast/tables/t1" + ask)
            assert status == 200 and feed["hands"] == [], feed
            assert feed["feed_time"] <= clock.ms() - 1800_000
        # 30 minutes on from hand 2's hole cards: hand 1 whole, hand 2 up to its hole cards.
        clock.ahead += 30 * 60 - 2 * 60 + 10
        feed = bea.get("/api/broadcast/tables/t1")[1]
        assert [h["hand"] for h in feed["hands"]] == [1, 2]
        first, second = feed["hands"]
        ended = {e["hand"]: e for e in one + two if e["type"] == "hand.ended"}
        for shown in (first, second):
            for seat in shown["seats"]:
                assert seat["cards"] == ended[shown["hand"]]["hole"][str(seat["seat"])]
                assert seat["status"] == "dealt" and seat["player"] == names[seat["seat"]]
        assert first["board"] == ended[1]["board"] and first["outcome"] == "complete"
        assert second["board"] == [] and second["ended_at"] is None  # as of the feed's time
        assert second["started_at"] <= feed["feed_time"]

        # A replay: an earlier time, hand 1 alone.
        replay_at = started + 30_000
        earlier = bea.get(f"/api/broadcast/tables/t1?at={replay_at}")[1]
        assert [h["hand"] for h in earlier["hands"]] == [1] and earlier["feed_time"] == replay_at

        # The hand in play is never shown, however long ago it began: hand 3 waits for its end.
        clock.ahead += 3600
        feed = bea.get("/api/broadcast/tables/t1")[1]
        assert [h["hand"] for h in feed["hands"]] == [1, 2]
        assert feed["hands"][1]["outcome"] == "complete"
        _deal(hub, box, link, three[-3:], clock)  # its end comes now
        feed = bea.get("/api/broadcast/tables/t1")[1]
        assert [h["hand"] for h in feed["hands"]] == [1, 2, 3]
        assert feed["hands"][2]["ended_at"] is None  # its end is within the delay

        # The floor shortens the delay (logged); it cannot go below 0 or past a day.
        assert maria.post("/api/featured/delay", {"seconds": -1})[0] == 400
        assert val.post("/api/featured/delay", {"seconds": 60})[0] == 403
        assert maria.post("/api/featured/delay", {"seconds": 60})[0] == 200
        clock.ahead += 61
        feed = bea.get("/api/broadcast/tables/t1")[1]
        assert feed["hands"][2]["outcome"] == "complete" and feed["delay_seconds"] == 60
        log = maria.get("/api/log")[1]
        assert {"broadcast/feature", "broadcast/delay"} <= {line["action"] for line in log}
    finally:
        link.stop()


def _operations():
    spec = json.loads((SCENARIOS.parent.parent / "docs" / "openapi.json").read_text())
    for path, methods in spec["paths"].items():
        for method in methods:
            yield method.upper(), path


def _page(who, path):
    """A page's status and where it sends ``who`` (not followed)."""
    host, port = who.url.split("//")[1].split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        connection.request("GET", path, headers={"Cookie": who.cookie()})
        response = connection.getresponse()
        response.read()
        return response.status, response.getheader("Location")
    finally:
        connection.close()


def _call(who, method, path):
    """One call as ``who``: its status and its answer's text (of an event stream, the
    snapshot)."""
    concrete = (path.replace("{table}", "t1").replace("{name}", "status")
                .replace("{alert}", "1").replace("{player}", "1")
                .replace("{bustout}", "t1:1:1"))
    host, port = who.url.split("//")[1].split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        headers = {"Cookie": who.cookie(), "Content-Type": "application/json"}
        connection.request(method, concrete, body=b"{}" if method == "POST" else None,
                           headers=headers)
        response = connection.getresponse()
        if concrete.endswith("/stream") and response.status == 200:
            return 200, "".join(response.readline().decode() for _ in range(3))
        return response.status, response.read().decode()
    finally:
        connection.close()


def _asgi_get(app, path, cookie, scheme, client, headers=()):
    """A GET straight into the hub's application, as a client at that address over that
    scheme would make it: the status and body (of a stream, what came before the end of
    the first event)."""
    sent = []
    asked = []

    async def receive():
        asked.append(1)
        if len(asked) == 1:
            return {"type": "http.request", "body": b"", "more_body": False}
        await asyncio.sleep(3600)  # the client stays until the test has what it wants

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
             "method": "GET", "scheme": scheme, "path": path, "raw_path": path.encode(),
             "query_string": b"", "root_path": "", "client": (client, 50000),
             "server": ("hub", 443 if scheme == "https" else 80),
             "headers": [(b"host", b"hub"), (b"cookie", cookie.encode()),
                         *((k.lower().encode(), v.encode()) for k, v in headers)]}

    async def until_an_event():
        task = asyncio.ensure_future(app(scope, receive, send))
        while not task.done() and not any(b"\n\n" in m.get("body", b"") for m in sent[1:]):
            await asyncio.sleep(0.05)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    asyncio.run(until_an_event())
    return sent[0]["status"], b"".join(m.get("body", b"") for m in sent[1:])


@pytest.mark.parametrize("feed_hub", ["sqlite"], indirect=True)
def test_only_the_broadcast_role_reaches_the_feed_and_it_reaches_nothing_else(feed_hub):
    """Every operation of the API, as each role: the broadcast routes refuse every other role
    (403), and the broadcast role is refused every other route but who it is."""
    hub, _, staff = feed_hub
    reached = set()
    for method, path in _operations():
        if path in ("/api/openapi.json", "/api/tv", "/api/players-screen",
                    "/api/overlay/stream"):
            continue  # the document; the TV's, the players' screens, the overlay: a key each
        for name, role in STAFF.items():
            status, answer = _call(staff[name], method, path)
            if path.startswith("/api/broadcast"):
                assert (status == 403) == (role != "broadcast"), (role, method, path, answer)
            elif role == "broadcast" and path != "/api/me":
                assert status == 403, (method, path, answer)
            if status != 403:
                reached.add((role, path))
    assert ("broadcast", "/api/broadcast/tables/{table}") in reached
    # Hole cards go over HTTPS, or to the hub's own machine: the app as another address
    # reaches it, each way.
    app, cookie = hub.web.app, staff["bea"].cookie()
    for scheme, client, status in (("http", "10.1.2.3", 403), ("https", "10.1.2.3", 200),
                                   ("http", "127.0.0.1", 200), ("http", "::1", 200)):
        answer = _asgi_get(app, "/api/broadcast", cookie, scheme, client)
        assert answer[0] == status, (scheme, client, answer)
    assert b"HTTPS only" in _asgi_get(app, "/api/broadcast", cookie, "http", "10.1.2.3")[1]
    # The dashboard's page sends a production's login to its desk, and the desk's page any
    # other login to the dashboard.
    assert _page(staff["bea"], "/") == (303, "/broadcast")
    assert _page(staff["bea"], "/broadcast")[0] == 200
    for name in ("val", "maria", "sam"):
        assert _page(staff[name], "/broadcast") == (303, "/"), name
    assert ("viewer", "/api/featured") in reached and ("floor", "/api/state") in reached


@pytest.mark.parametrize("feed_hub", ["sqlite", "postgresql"], indirect=True)
def test_folds_corrections_and_no_hole_card_for_any_other_role(tmp_path, broker, feed_hub):
    hub, clock, staff = feed_hub
    bea, maria, val = staff["bea"], staff["maria"], staff["val"]
    val.listen()
    public = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="watcher")
    seen: list[tuple[str, str]] = []
    public.on_message = lambda c, u, m: seen.append((m.topic, m.payload.decode("utf-8",
                                                                              "replace")))
    public.connect("127.0.0.1", broker.port)
    public.loop_start()
    subscribed(public, f"pkr/v1/{VENUE}/#")
    t1, link1 = _table(tmp_path, broker, hub, "t1")
    t2, link2 = _table(tmp_path, broker, hub, "t2")
    try:
        # t2 deals a hand before it is featured: never on the feed, even once it is.
        early = _session_hands((2, 4, 6), 1, seed=7)[0]
        _deal(hub, t2, link2, early, clock)
        clock.ahead += TABLE_CLOCK_S
        for table in ("t1", "t2"):
            assert maria.post(f"/api/featured/tables/{table}", {"featured": True})[0] == 200
        assert maria.post("/api/featured/delay", {"seconds": 600})[0] == 200
        clock.ahead += TABLE_CLOCK_S
        # t1: a hand misdealt on an exposed card and redealt; a hand with a later card
        # exposed and replaced; t2, a hand with a card the shoe could not read.
        misdeal = _scenario("row01_first_exposed_misdeal")
        exposed = [{**e, "hand": 2} for e in _scenario("row02_later_exposed")]
        unread = [{**e, "hand": 2} for e in _scenario("row17_unknown_tag")]
        _deal(hub, t1, link1, misdeal + exposed, clock)
        _deal(hub, t2, link2, unread, clock)
        assert bea.get("/api/broadcast/tables/t1")[1]["hands"] == []
        clock.ahead += 610
        first, second = bea.get("/api/broadcast/tables/t1")[1]["hands"]
        assert first["redeal"] == 1 and first["voided"][0]["outcome"] == "misdeal"
        assert {s["status"] for s in first["voided"][0]["seats"]} == {"void"}
        assert _seats(first)[1]["cards"] == ["Kh", "9h"]
        corrected = _seats(second)[1]
        assert corrected["status"] == "corrected" and corrected["cards"] == ["As", "Ah"]
        assert corrected["why"] == ["Ts dealt to it face up: the flop's burn now",
                                    "Ah replaces it: the first card after the deal"]
        [later] = bea.get("/api/broadcast/tables/t2")[1]["hands"]
        assert later["hand"] == 2 and _seats(later)[1]["cards"] == ["As", None]
        assert _seats(later)[1]["status"] == "uncertain"

        # Folds: one tap a seat, on a deal the feed shows, by the broadcast operator only.
        deal = second["deal"]
        fold = {"deal": deal, "seat": 4}
        assert maria.post("/api/broadcast/tables/t1/folds", fold)[0] == 403
        assert bea.post("/api/broadcast/tables/t1/folds", {**fold, "seat": 3})[0] == 400
        assert bea.post("/api/broadcast/tables/t1/folds",
                        {**fold, "deal": deal.split(":")[0] + ":999"})[0] == 400
        status, tapped = bea.post("/api/broadcast/tables/t1/folds",
                                  {**fold, "at": second["started_at"] + 5000})
        assert status == 200 and tapped["at"] == second["started_at"] + 5000
        shown = bea.get("/api/broadcast/tables/t1")[1]["hands"][1]
        assert _seats(shown)[4]["folded"] and not _seats(shown)[2]["folded"]
        before = bea.get(f"/api/broadcast/tables/t1?at={second['started_at'] + 4000}")[1]
        assert not _seats(before["hands"][1])[4]["folded"]  # a replay shows it when it came
        assert bea.post("/api/broadcast/tables/t1/folds", {**fold, "folded": False})[0] == 200
        assert not _seats(bea.get("/api/broadcast/tables/t1")[1]["hands"][1])[4]["folded"]
        assert "broadcast/fold" in {line["action"] for line in maria.get("/api/log")[1]}

        # Unfeatured: t1's later deals are not on the feed.
        assert maria.post("/api/featured/tables/t1", {"featured": False})[0] == 200
        clock.ahead += TABLE_CLOCK_S
        later_hand = [{**e, "hand": 3} for e in _session_hands((1, 2, 4, 6), 1, seed=8)[0]]
        _deal(hub, t1, link1, later_hand, clock)
        clock.ahead += 601
        assert [h["hand"] for h in bea.get("/api/broadcast/tables/t1")[1]["hands"]] == [1, 2]

        # No other role, on any GET of the API, and no topic but the private ones, ever
        # carried a hole card of these hands (the supervisor's hand records aside).
        texts = []
        for name in ("val", "maria", "sam"):
            for method, path in _operations():
                if method == "GET" and not (name == "sam" and path.endswith("/hands")):
                    for table in ("t1", "t2"):
                        texts.append(_call(staff[name], method,
                                           path.replace("{table}", table))[1])
        texts += val.received
        texts += [text for topic, text in seen if not topic.endswith("/private")]
        # (a card the table saw in any of these hands, a board card, may be named)
        dealt = (misdeal, exposed, unread, early, later_hand)
        anyone_saw = set().union(*(shown_cards(hand) for hand in dealt))
        for hand in dealt:
            for ended in [e for e in hand if e["type"] == "hand.ended"]:
                assert private_leaks(texts, ended, anyone_saw) == []
        # (and the check would see one: the feed itself carries them)
        redealt = [e for e in misdeal if e["type"] == "hand.ended"][-1]
        assert private_leaks([json.dumps(first)], redealt, set())
    finally:
        link1.stop()
        link2.stop()
        public.loop_stop()
        public.disconnect()
        val.close()


class FeedReader:
    """A graphics system on the feed's event stream: each ``feed`` event's data, in a
    thread (and each other event's, by name, in ``others``)."""

    def __init__(self, who, table, path=None, headers=None):
        host, port = who.url.split("//")[1].split(":")
        self.connection = http.client.HTTPConnection(host, int(port), timeout=30)
        self.connection.request("GET", path or f"/api/broadcast/tables/{table}/stream",
                                headers={"Cookie": who.cookie()} if headers is None
                                else headers)
        self.response = self.connection.getresponse()
        self.feeds: list[dict] = []
        self.others: list[tuple[str, dict]] = []
        self.ended = threading.Event()
        if self.response.status == 200:
            threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        name = "feed"
        try:
            for raw in self.response:
                line = raw.decode().rstrip("\n")
                if line.startswith("event: "):
                    name = line[7:]
                elif line.startswith("data: "):
                    data = json.loads(line[6:])
                    self.feeds.append(data) if name == "feed" else \
                        self.others.append((name, data))
        except (OSError, ValueError, AttributeError, http.client.HTTPException):
            pass  # closed
        self.ended.set()

    def close(self):
        if self.connection.sock is not None:
            with contextlib.suppress(OSError):
                self.connection.sock.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError, AttributeError):
            self.connection.close()


@pytest.mark.parametrize("feed_hub", ["sqlite", "postgresql"], indirect=True)
def test_a_graphics_system_s_stream_gets_each_hand_when_the_delay_lets_it(tmp_path, broker,
                                                                         feed_hub):
    hub, clock, staff = feed_hub
    bea, maria = staff["bea"], staff["maria"]
    box, link = _table(tmp_path, broker, hub, "t1")
    assert FeedReader(maria, "t1").response.status == 403
    reader = FeedReader(bea, "t1")
    try:
        assert reader.response.status == 200
        assert reader.response.getheader("Content-Type").startswith("text/event-stream")
        assert maria.post("/api/featured/tables/t1", {"featured": True})[0] == 200
        clock.ahead += TABLE_CLOCK_S
        assert wait_for(lambda: reader.feeds, 10) and reader.feeds[0]["hands"] == []
        [hand] = _session_hands((1, 3, 5), 1, seed=3)
        _deal(hub, box, link, hand, clock)
        assert not wait_for(lambda: reader.feeds[-1]["hands"], 1.5)  # within the delay
        clock.ahead += 1801
        assert wait_for(lambda: reader.feeds[-1]["hands"], 10)
        [shown] = reader.feeds[-1]["hands"]
        streets = {0: "preflop", 3: "flop", 4: "turn", 5: "river"}
        assert shown["outcome"] == "complete"
        assert shown["equity"]["street"] == streets[len(shown["board"])]
        assert sum(s["equity"]["equity"] for s in shown["seats"]) == pytest.approx(1.0)
        # A fold tapped comes on the stream as a change.
        deal = shown["deal"]
        assert bea.post("/api/broadcast/tables/t1/folds", {"deal": deal, "seat": 3})[0] == 200
        assert wait_for(lambda: _seats(reader.feeds[-1]["hands"][0])[3]["folded"], 10)
        assert _seats(reader.feeds[-1]["hands"][0])[3]["equity"] is None
        # Four streams an account; the stream ends with the session.
        more = [FeedReader(bea, "t1") for _ in range(3)]
        assert FeedReader(bea, "t1").response.status == 429
        for other in more:
            other.close()
        assert _call(bea, "POST", "/logout")[0] == 303
        assert wait_for(lambda: reader.response.isclosed() or reader.response.fp is None, 10)
    finally:
        reader.close()
        link.stop()


def _overlay(who, key):
    """The overlay page's stream, as OBS's browser source opens it: the link's key, and
    whatever session ``who`` has (none needed)."""
    headers = {"X-Overlay-Key": key}
    if who.cookie():
        headers["Cookie"] = who.cookie()
    return FeedReader(who, None, "/api/overlay/stream", headers)


@pytest.mark.parametrize("feed_hub", ["sqlite"], indirect=True)
def test_an_overlay_link_is_a_broadcast_login_s_and_stops_when_withdrawn(tmp_path, broker,
                                                                        feed_hub):
    """The overlay page's way in: a link only a broadcast login makes, reading the feed's
    delayed hands with their hole cards; no other role makes one or reads cards through
    the overlay's stream without one; a withdrawn link's open page is told and ends, and a
    link whose login stops being a broadcast one stops too."""
    hub, clock, staff = feed_hub
    bea, maria, sam, val = staff["bea"], staff["maria"], staff["sam"], staff["val"]
    box, link = _table(tmp_path, broker, hub, "t1")
    try:
        for who in (maria, sam, val):
            assert who.post("/api/broadcast/overlay-links", {"table": "t1"})[0] == 403
            assert who.get("/api/broadcast/overlay-links")[0] == 403
        assert bea.post("/api/broadcast/overlay-links", {"table": "t9"})[0] == 400
        status, links = bea.post("/api/broadcast/overlay-links", {"table": "t1"})
        assert status == 200 and [(x["table"], x["by"]) for x in links] == [("t1", "bea")]
        path = links[0]["path"]
        assert path.startswith("/overlay#")
        key = path.split("#", 1)[1]
        assert "overlay-link/make" in {line["action"] for line in maria.get("/api/log")[1]}

        assert maria.post("/api/featured/tables/t1", {"featured": True})[0] == 200
        assert maria.post("/api/featured/delay", {"seconds": 60})[0] == 200
        clock.ahead += TABLE_CLOCK_S
        [hand] = _session_hands((1, 3, 5), 1, seed=11)
        _deal(hub, box, link, hand, clock)
        clock.ahead += 61
        ended = next(e for e in hand if e["type"] == "hand.ended")

        # No key, another key, a staff session of any role with no key: no cards.
        for who in (maria, sam, val, bea):
            assert FeedReader(who, None, "/api/overlay/stream",
                              {"Cookie": who.cookie()}).response.status == 400
            wrong = _overlay(who, key[:-2] + ("AA" if key[-2:] != "AA" else "BB"))
            assert wrong.response.status == 403
            assert b"not an overlay link" in wrong.response.read()
        # Hole cards over HTTPS, or to the hub's own machine, only.
        app = hub.web.app
        for scheme, client, status in (("http", "10.1.2.3", 403), ("https", "10.1.2.3", 200),
                                       ("http", "127.0.0.1", 200)):
            answer = _asgi_get(app, "/api/overlay/stream", "", scheme, client,
                               (("X-Overlay-Key", key),))
            assert answer[0] == status, (scheme, client, answer)
        # The page's stream: the feed's delayed hand, hole cards and all.
        page = _overlay(val, key)
        assert page.response.status == 200
        assert wait_for(lambda: page.feeds and page.feeds[-1]["hands"], 10)
        [shown] = page.feeds[-1]["hands"]
        assert page.feeds[-1]["table"] == "t1" and shown["outcome"] == "complete"
        assert {str(s["seat"]): s["cards"] for s in shown["seats"]} == ended["hole"]
        assert page.feeds[-1]["feed_time"] <= clock.ms() - 60_000

        # Withdrawn: the open page is told why and its stream ends; the key opens nothing.
        assert maria.post("/api/broadcast/overlay-links/withdraw", {"table": "t1"})[0] == 403
        status, links = bea.post("/api/broadcast/overlay-links/withdraw", {"table": "t1"})
        assert status == 200 and links == []
        assert page.ended.wait(10)
        assert [name for name, _ in page.others] == ["refused"]
        assert "withdrawn" in page.others[0][1]["error"]
        again = _overlay(val, key)
        assert again.response.status == 403 and b"withdrawn" in again.response.read()
        assert bea.post("/api/broadcast/overlay-links/withdraw", {"table": "t1"})[0] == 400

        # A new link; its login made a floor one: the link reads nothing more.
        key = bea.post("/api/broadcast/overlay-links", {"table": "t1"})[1][0]["path"][9:]
        page = _overlay(val, key)
        assert page.response.status == 200 and wait_for(lambda: page.feeds, 10)
        auth.save_user(hub.settings.users, "bea", "floor", "bea-password")
        assert page.ended.wait(10)
        assert "may no longer read" in page.others[0][1]["error"]
        assert _overlay(val, key).response.status == 403
        page.close()
    finally:
        link.stop()


def test_featured_tables_the_delay_and_names_outlive_a_hub_restart(tmp_path):
    """The floor's use cases called directly: what the floor set is kept, and a featured
    table's deal started after the restart is still given its seats' names (a table not
    featured, or a deal from a table's backlog, none)."""
    settings = HubSettings(venue=VENUE, db=str(tmp_path / "hub.db"))
    maria = auth.User("maria", "floor", "")
    floor = FloorService(settings, QuietLink(), wall=lambda: 1_800_000_000.0)
    floor.open()
    try:
        floor.on_status("t1", {"state": "online", "boot": 1, "table": "t1", "ts": 1})
        floor.add_player(maria, "Ana")
        floor.add_player(maria, "Ben")
        floor.set_seats(maria, "t1", [1, 2])
        floor.draw_seats(maria)  # both at t1, the one table in play
        floor.on_status("t2", {"state": "online", "boot": 1, "table": "t2", "ts": 1})
        floor.feature(maria, "t1", True)
        floor.set_broadcast_delay(maria, 900)
        with pytest.raises(StaffError, match="no table 't9'"):
            floor.feature(maria, "t9", True)
        with pytest.raises(StaffError, match="a delay from 0"):
            floor.set_broadcast_delay(maria, 86_401)
    finally:
        floor.close()
    again = FloorService(settings, QuietLink(), wall=lambda: 1_800_000_060.0)
    again.open()
    try:
        settings_now = again.broadcast_settings()
        assert settings_now["delay_seconds"] == 900
        assert settings_now["tables"] == [{"table": "t1", "since": 1_800_000_000_000,
                                           "by": "maria"}]
        seated = {p["name"]: (p["table"], p["seat"]) for p in again.roster()["players"]}
        assert sorted(seated.values()) == [("t1", 1), ("t1", 2)]

        def started(table, seq, historical=False):
            return {**envelope({"type": "hand.started", "hand": seq, "seats": [1, 2, 3, 4]},
                               venue=VENUE, table=table, seq=seq, boot=1, ts_ms=1,
                               historical=historical, incarnation=INC)}

        again.on_recorded("t1", [started("t1", 1), started("t1", 2, historical=True)])
        again.on_recorded("t2", [started("t2", 1)])
        names = again.db.deal_names("t1", [(INC, 1), (INC, 2)])
        assert names == {(INC, 1): {str(seat): name for name, (_, seat) in seated.items()}}
        assert again.db.deal_names("t2", [(INC, 1)]) == {}
    finally:
        again.close()
