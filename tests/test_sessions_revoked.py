"""What the staff's accounts and the TV link can no longer be used for once they change
(issue 43): a new password or a user taken out of the users file ends every session made
before, its open event stream too; a role changed narrows the session at once, its open
stream included; the floor withdraws the room clock's TV link and makes a new one. Against
the real hub (a Mosquitto, the hub's process parts, its web server on a socket), the users
file changed as `tablectl hub-user` or an editor changes it while the hub runs."""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from contract.wire import encode
from hub import auth
from hub.service import FloorService
from simulators.broker import Broker
from simulators.staff import Staff
from tablectl.hub_app import Hub, HubSettings
from tests.conftest import wait_for

WITHDRAWN = "this TV link was withdrawn: ask the floor for the new one"
# The idle stream's look at its session, as often as the tests' streams take it (the hub runs
# in this process): an ended session's stream ends at the next look, whenever that comes, so
# the tests need not wait out the hub's 2 s for it.
QUICK_SESSION_CHECK = 0.2


@pytest.fixture(scope="module")
def venue(tmp_path_factory):
    """A broker and the users file (maria, floor), for hubs of the tests' own."""
    directory = tmp_path_factory.mktemp("revoked")
    broker = Broker(directory / "mosquitto").start()
    users = directory / "users.toml"
    auth.save_user(users, "maria", "floor", "maria-password")
    yield {"broker": broker, "users": users, "directory": directory}
    broker.kill()


def _start_hub(venue, db: str) -> Hub:
    hub = Hub(HubSettings(venue="revoked", db=str(venue["directory"] / db),
                          users=str(venue["users"]), port=venue["broker"].port,
                          http_port=0)).start()
    assert hub.connected.wait(10)
    return hub


@pytest.fixture(scope="module")
def hub(venue):
    started = _start_hub(venue, "hub.db")
    started.clock.apply("start", "tda-2024")
    yield started
    started.stop()


@pytest.fixture
def quick_session_check(monkeypatch) -> float:
    """Idle streams opened from here on look at their session every QUICK_SESSION_CHECK. The
    value: how long a stream may take to end at the hub's own pace, for the tests' deadlines. A
    stream with nothing to deliver looks at its session every SESSION_CHECK, at a users file
    read up to USERS_FILE_AGE before: it ends within both (and a busy machine's slack). (The
    web's modules are imported here, not by the module: each of the suite's workers imports
    every test module before running any.)"""
    from hub.web import streams

    stream_ends_within = streams.SESSION_CHECK + streams.USERS_FILE_AGE + 8.0
    monkeypatch.setattr(streams, "SESSION_CHECK", QUICK_SESSION_CHECK)
    return stream_ends_within


def _take_out(users: Path, name: str) -> None:
    """The user's table deleted from the users file, the file swapped in whole with its mode
    kept (as an editor saves it: one that saves it readable by others is refused, below)."""
    kept = [block for block in users.read_text().split("\n[users.")
            if not block.startswith(f"{name}]")]
    partial = users.with_name(users.name + ".edit")
    partial.write_text("\n[users.".join(kept))
    shutil.copymode(users, partial)
    os.replace(partial, users)


def _log_lines(staff: Staff) -> list[dict]:
    return [u["line"] for u in list(staff.updates) if u["kind"] == "log"]


def _tv(hub: Hub, key: str) -> tuple[int, dict]:
    """The room clock as a TV asks for it, with ``key``: the status and the answer."""
    import requests

    answer = requests.get(hub.url + "/api/tv", headers={"X-Room-Key": key}, timeout=10)
    return answer.status_code, answer.json()


@contextlib.contextmanager
def _own_hub(venue, db: str, *names: str) -> Iterator[tuple[Hub, list[Staff]]]:
    """A hub of the test's own on ``db``, and a session of each of ``names`` (each one's
    password NAME-password), closed after."""
    hub = _start_hub(venue, db)
    staff: list[Staff] = []
    try:
        for name in names:
            staff.append(Staff(hub.url, name, f"{name}-password"))
        yield hub, staff
    finally:
        for one in staff:
            one.close()
        hub.stop()


def _after_a_restart(venue, db: str, serves: str, generation: int,
                     withdrawn: str | None = None) -> None:
    """The hub started again on ``db``: it serves the link of key ``serves`` as that
    ``generation``, and says of ``withdrawn`` that it was withdrawn."""
    again = _start_hub(venue, db)
    try:
        assert again.call(FloorService.tv_link) == {"path": f"/tv#{serves}",
                                                     "generation": generation}
        assert _tv(again, serves)[0] == 200
        if withdrawn is not None:
            assert _tv(again, withdrawn) == (403, {"error": WITHDRAWN})
    finally:
        again.stop()


def test_a_new_password_ends_every_session_made_before_and_its_stream(
        venue, hub, quick_session_check):
    """A password changed while the hub runs (it leaked): the sessions logged in with the old
    one could pause the clock for 12 hours more; now the next request is refused as after a
    logout, and an open stream ends."""
    auth.save_user(venue["users"], "pat", "floor", "pat-password-1")
    pat = Staff(hub.url, "pat", "pat-password-1").listen()
    try:
        assert pat.get("/api/me")[0] == 200
        auth.save_user(venue["users"], "pat", "floor", "pat-password-2")
        assert pat.get("/api/me") == (401, {"error": "log in first"})
        assert pat.post("/api/clock", {"action": "pause"})[0] == 401
        assert pat.stream_ended.wait(quick_session_check), "a stream outlived its password"
        with pytest.raises(PermissionError, match="wrong user name or password"):
            Staff(hub.url, "pat", "pat-password-1")
        again = Staff(hub.url, "pat", "pat-password-2")  # the new one works
        assert again.get("/api/me")[1]["user"] == "pat"
        again.close()
    finally:
        pat.close()


def test_the_same_password_set_again_keeps_the_sessions(venue, hub):
    """`tablectl hub-user` asks for a password every time: given the same one (to change only
    the role, say) it keeps the hash, and so the sessions."""
    auth.save_user(venue["users"], "kim", "floor", "kim-password")
    kim = Staff(hub.url, "kim", "kim-password")
    try:
        before = auth.load_users(venue["users"])["kim"].password
        auth.save_user(venue["users"], "kim", "floor", "kim-password")
        assert auth.load_users(venue["users"])["kim"].password == before
        assert kim.get("/api/me")[0] == 200
    finally:
        kim.close()


def test_a_user_taken_out_of_the_file_ends_every_session_and_its_stream(
        venue, hub, quick_session_check):
    auth.save_user(venue["users"], "rem", "floor", "rem-password")
    rem = Staff(hub.url, "rem", "rem-password").listen()
    try:
        assert rem.get("/api/me")[0] == 200
        _take_out(venue["users"], "rem")
        assert "rem" not in auth.load_users(venue["users"])
        assert rem.get("/api/me")[0] == 401
        assert rem.post("/api/clock", {"action": "pause"})[0] == 401
        assert rem.stream_ended.wait(quick_session_check), "a stream outlived its user"
    finally:
        rem.close()


def test_a_demotion_narrows_the_session_and_its_open_stream_at_once(venue, hub):
    """Floor to viewer while logged in, a stream open: the next clock pause is refused, and
    the stream goes on with the floor (a badge named) but no longer carries the floor log,
    not even the line that waited for it when the role changed (whether one waits depends on
    timing here: the next test makes one wait)."""
    auth.save_user(venue["users"], "dem", "floor", "dem-password")
    dem = Staff(hub.url, "dem", "dem-password").listen()
    maria = Staff(hub.url, "maria", "maria-password")
    try:
        assert dem.post("/api/clock", {"action": "pause"})[0] == 200
        assert wait_for(lambda: any(line["action"] == "clock/pause" and line["user"] == "dem"
                                    for line in _log_lines(dem)), 10), \
            "the floor's stream did not carry the floor log to begin with"
        assert dem.post("/api/clock", {"action": "resume"})[0] == 200

        auth.save_user(venue["users"], "dem", "viewer", "dem-password")  # the same password
        status, refused = dem.post("/api/clock", {"action": "pause"})
        assert status == 403 and refused["error"] == "the role viewer may not clock"
        assert dem.get("/api/me")[1]["role"] == "viewer"
        # A floor action: its log line is broadcast first, then the dealers' list.
        assert maria.post("/api/dealers", {"badge": "B-DEM", "name": "Dee"})[0] == 200
        assert wait_for(lambda: any(u["kind"] == "dealers" and u["dealers"].get("B-DEM")
                                    for u in list(dem.updates)), 10), \
            "the demoted stream ended or stalled: it should go on, narrowed"
        assert not [line for line in _log_lines(dem) if line["action"] == "dealers/name"], \
            "a viewer's stream carried the floor log"
        assert not dem.stream_ended.is_set()
        status, refused = dem.get("/api/log")
        assert status == 403
    finally:
        dem.close()
        maria.close()


def test_floor_log_lines_waiting_for_a_stream_whose_user_was_demoted_are_not_sent():
    """The demotion above, without its timing: a floor log line was offered to the stream
    (its user could read the log then) and waits in its queue, beside a dealers' update, when
    the stream finds its user demoted to viewer. Only the dealers' update is written."""
    import asyncio

    floor = auth.User("dee", "floor", "hash")
    demoted = auth.User("dee", "viewer", "hash")
    line = {"kind": "log", "line": {"ts": 1, "user": "maria", "action": "dealers/name",
                                    "detail": {}}}
    dealers = {"kind": "dealers", "dealers": {"B-DEM": "Dee"}}

    async def written() -> list[bytes]:
        from hub.web import streams

        registry = streams.StreamRegistry()
        viewer = registry.open("session", floor, asyncio.get_running_loop())
        viewer._put(line)  # as the floor's worker offers them: sorted by the role then
        viewer._put(dealers)
        assert viewer.queue.qsize() == 2
        stream = streams.events(viewer, {}, streams=registry,
                                session_user=lambda session: demoted, unsubscribe=lambda: None)
        try:
            return [await anext(stream), await anext(stream)]
        finally:
            await stream.aclose()

    snapshot, updates = asyncio.run(written())
    assert snapshot.startswith(b"retry: 1000\nevent: snapshot\n")
    assert updates == b"event: update\ndata: " + encode(dealers).encode() + b"\n\n"


def test_a_users_file_saved_readable_by_others_is_not_used_until_mended(venue, hub, caplog):
    """An editor saves the users file mode 0644 while the hub runs, a new account in it: the
    hub treats it as a broken file (the accounts read last are kept, so the new login is
    refused and the sessions open go on), says why in its log once however many requests
    look, and reads the file again when it is mended (chmod 600)."""
    caplog.set_level(logging.WARNING, logger="tablectl.hub")
    users = venue["users"]
    maria = Staff(hub.url, "maria", "maria-password")
    edit = users.with_name(users.name + ".edit")
    shutil.copyfile(users, edit)
    auth.save_user(edit, "lou", "floor", "lou-password")
    edit.chmod(0o644)
    os.replace(edit, users)  # saved whole, as an editor does
    try:
        for _ in range(3):
            with pytest.raises(PermissionError, match="wrong user name or password"):
                Staff(hub.url, "lou", "lou-password")
            assert maria.get("/api/me")[0] == 200  # the accounts read last
        told = [r.getMessage() for r in caplog.records if "mode 0644" in r.getMessage()]
        assert len(told) == 1, told
        assert str(users) in told[0] and "chmod 600" in told[0]
        assert "account(s) it read last" in told[0]

        users.chmod(0o600)
        lou = Staff(hub.url, "lou", "lou-password")
        assert lou.get("/api/me")[1]["user"] == "lou"
        lou.close()
        assert any("mended" in r.getMessage() for r in caplog.records)
    finally:
        users.chmod(0o600)
        maria.close()


def test_the_floor_withdraws_the_tv_link_and_the_new_one_survives_a_restart(venue):
    """The TV link leaked: the floor withdraws it (a viewer may not); the old key is refused
    with words the TV page shows, the new one is served, the floor log says who did it, and
    after a restart the new link still works and the old one is still withdrawn."""
    import requests

    auth.save_user(venue["users"], "val", "viewer", "val-password")
    with _own_hub(venue, "tv.db", "maria", "val") as (hub, (maria, val)):
        old = hub.tv_key
        assert _tv(hub, old)[0] == 200
        assert maria.get("/api/tv-link") == (200, {"path": f"/tv#{old}", "generation": 1})
        assert val.post("/api/tv-link/withdraw", {"generation": 1})[0] == 403
        anonymous = requests.post(hub.url + "/api/tv-link/withdraw", json={"generation": 1},
                                  timeout=10)
        assert anonymous.status_code == 401
        assert _tv(hub, old)[0] == 200, "a refused withdrawal withdrew the link"

        status, made = maria.post("/api/tv-link/withdraw", {"generation": 1})
        assert status == 200 and made["generation"] == 2
        new = made["path"].removeprefix("/tv#")
        assert new and new != old and len(new) == len(old)
        assert _tv(hub, old) == (403, {"error": WITHDRAWN})
        assert _tv(hub, new)[0] == 200
        assert _tv(hub, "not-the-key") == (403, {"error": "this is not the room clock's link: ask "
                                                    "a supervisor"})
        assert maria.get("/api/tv-link") == (200, {"path": f"/tv#{new}", "generation": 2})
        line = maria.get("/api/log")[1][0]
        assert (line["user"], line["action"]) == ("maria", "tv-link/withdraw")
        assert old not in str(line) and new not in str(line)  # no key in the log
    _after_a_restart(venue, "tv.db", serves=new, generation=2, withdrawn=old)


def test_two_tablets_withdrawing_the_same_link_withdraw_it_once(venue):
    """Two staff withdraw the link of the same generation (the second's question was still
    open when the first's withdrawal was made): the second is refused (409), told the link
    was withdrawn already and which is current, and the link the first made stays on the
    TVs. A withdrawal names its generation strictly: a whole number, nothing else."""
    auth.save_user(venue["users"], "pat", "floor", "pat-password")
    with _own_hub(venue, "tv-twice.db", "maria", "pat") as (hub, (maria, pat)):
        first = hub.tv_key
        for wrong in ({}, {"generation": True}, {"generation": "1"}, {"generation": 1.0},
                      {"generation": 0}, {"generation": 1, "key": first}, [1]):
            status, refused = maria.post("/api/tv-link/withdraw", wrong)
            assert status == 400 and refused["error"], wrong
        assert hub.tv_key == first, "a refused withdrawal withdrew the link"

        status, made = maria.post("/api/tv-link/withdraw", {"generation": 1})
        assert status == 200 and made["generation"] == 2
        status, refused = pat.post("/api/tv-link/withdraw", {"generation": 1})
        assert status == 409
        assert refused["current"] == made
        assert refused["error"].startswith("the TV link of generation 1 was already withdrawn;"
                                           " the current link is generation 2"), refused
        assert made["path"] not in refused["error"]  # the key is never in words
        assert _tv(hub, made["path"].removeprefix("/tv#"))[0] == 200, \
            "the second withdrawal withdrew the link the first made"
        assert _tv(hub, first) == (403, {"error": WITHDRAWN})
        assert pat.get("/api/tv-link") == (200, made)
        assert [line["user"] for line in pat.get("/api/log")[1]
                if line["action"] == "tv-link/withdraw"] == ["maria"]
        status, refused = pat.post("/api/tv-link/withdraw", {"generation": 3})
        assert (status, refused["current"]) == (409, made)
        assert refused["error"].startswith("there is no TV link of generation 3;")


def test_a_withdrawal_the_database_did_not_keep_changes_nothing(venue, monkeypatch):
    """The database refuses the withdrawal's commit (a disk full, say): the hub goes on
    serving the link the database holds, the old one, and a restart finds the same: never a
    new key only the memory knew, nor a withdrawn link that works again after a restart."""
    import requests

    with _own_hub(venue, "tv-failing.db", "maria") as (hub, (maria,)):
        old = hub.tv_key
        storage = hub.service.db

        def disk_full() -> None:
            raise sqlite3.OperationalError("database or disk is full")

        monkeypatch.setattr(storage, "commit", disk_full)
        answer = requests.post(hub.url + "/api/tv-link/withdraw", json={"generation": 1},
                               cookies={c.name: c.value for c in maria.jar},
                               timeout=10)
        assert answer.status_code == 500  # not the client's fault
        monkeypatch.undo()
        assert hub.tv_key == old
        assert _tv(hub, old)[0] == 200, "the link the database holds was refused"
        assert maria.get("/api/tv-link") == (200, {"path": f"/tv#{old}", "generation": 1})
        assert not [line for line in maria.get("/api/log")[1]
                    if line["action"] == "tv-link/withdraw"]
    _after_a_restart(venue, "tv-failing.db", serves=old, generation=1)


@pytest.fixture(scope="module")
def browser():
    from tests.floor_browser import chromium

    with chromium() as launched:
        yield launched


def test_the_dashboard_withdraws_the_tv_link_and_the_tv_showing_it_says_so(hub, browser):
    """In a browser: the floor's button, its question, the new link shown; the TV showing
    the old link blanks its clock within its next question and says why in words; the new
    link runs the clock on the TV."""
    from playwright.sync_api import expect

    from tests.floor_browser import EXPECT_TIMEOUT_MS, TV_ASKS_EVERY_MS, login_page

    pages = []
    try:
        old = hub.tv_key
        # The TV's clock is Playwright's, running as the machine's: moved on one turn of its
        # asking below, it asks then what it would have asked within that turn.
        context = browser.new_context()
        context.clock.install()
        tv = context.new_page()
        pages.append(tv)
        tv.goto(f"{hub.url}/tv#{old}")
        tv.wait_for_selector("body[data-live='1']", timeout=EXPECT_TIMEOUT_MS)
        expect(tv.locator("#time")).not_to_have_text("")
        maria = login_page({"browser": browser, "hub": hub}, "maria")
        pages.append(maria)
        expect(maria.locator("#tv-link")).to_have_attribute("href", f"/tv#{old}")
        maria.click("#tv-link-withdraw")
        expect(maria.locator("#confirm .question")).to_contain_text(
            "Withdraw the room clock's TV link?")
        maria.click("#confirm .yes")
        expect(maria.locator("#tv-link")).not_to_have_attribute("href", f"/tv#{old}")
        new = hub.tv_key
        assert new != old
        expect(maria.locator("#tv-link")).to_have_attribute("href", f"/tv#{new}")
        expect(maria.locator("#log")).to_contain_text(
            "maria withdrew the TV link and made a new one")
        tv.clock.fast_forward(TV_ASKS_EVERY_MS)  # its next question
        expect(tv.locator("#problem")).to_have_text(WITHDRAWN)
        expect(tv.locator("#time")).to_have_text("")
        expect(tv.locator("body")).not_to_have_attribute("data-live", "1")
        renewed = browser.new_page()
        pages.append(renewed)
        renewed.goto(f"{hub.url}/tv#{new}")
        renewed.wait_for_selector("body[data-live='1']", timeout=EXPECT_TIMEOUT_MS)
        expect(renewed.locator("#time")).not_to_have_text("")
    finally:
        for page in pages:
            page.context.close()


def test_a_tablet_shows_the_newest_tv_link_and_withdraws_only_the_one_it_showed(
        venue, hub, browser):
    """Two tablets, Maria's in a browser and Pat's on the API. The answer to Maria's
    withdrawal, held back until Pat's withdrawal after it has reached her page, does not put
    the older link back on it. Then Maria's question is open when Pat withdraws the link it
    was about: Maria's confirmation is refused and says so, her page shows the link Pat
    made, and that link stays on the TVs."""
    from playwright.sync_api import expect

    from tests.floor_browser import login_page

    auth.save_user(venue["users"], "pat", "floor", "pat-password")
    pat = Staff(hub.url, "pat", "pat-password")
    maria = login_page({"browser": browser, "hub": hub}, "maria")
    link = maria.locator("#tv-link")
    held: list[tuple[object, object]] = []
    try:
        expect(link).to_have_attribute("href", hub.call(FloorService.tv_link)["path"])
        # Maria's withdrawal reaches the hub (which makes the new link); its answer waits.
        maria.route("**/api/tv-link/withdraw",
                    lambda route: held.append((route, route.fetch())))
        maria.click("#tv-link-withdraw")
        maria.click("#confirm .yes")
        deadline = time.monotonic() + 10
        while not held and time.monotonic() < deadline:
            maria.wait_for_timeout(20)  # (lets Playwright run the route's handler)
        assert held, "the page never asked to withdraw the link"
        mine = hub.call(FloorService.tv_link)
        expect(link).to_have_attribute("href", mine["path"])  # from its log line's GET
        status, theirs = pat.post("/api/tv-link/withdraw", {"generation": mine["generation"]})
        assert status == 200
        expect(link).to_have_attribute("href", theirs["path"])
        route, answer = held[0]
        route.fulfill(response=answer)  # Maria's link, older than the page's
        expect(maria.locator("#clock-reply")).to_have_text(
            "TV link withdrawn: open the new one on the TVs")  # the answer was taken
        assert link.get_attribute("href") == theirs["path"], \
            "an older answer put a withdrawn link back on the page"
        maria.unroute("**/api/tv-link/withdraw")

        maria.click("#tv-link-withdraw")  # about Pat's link: the question stays open
        expect(maria.locator("#confirm .question")).to_contain_text("Withdraw")
        status, last = pat.post("/api/tv-link/withdraw", {"generation": theirs["generation"]})
        assert status == 200
        expect(link).to_have_attribute("href", last["path"])
        maria.click("#confirm .yes")
        expect(maria.locator("#clock-reply")).to_contain_text(
            f"the TV link of generation {theirs['generation']} was already withdrawn")
        assert hub.call(FloorService.tv_link) == last, \
            "a question asked about a withdrawn link withdrew the one made in its place"
        assert link.get_attribute("href") == last["path"]
        assert _tv(hub, last["path"].removeprefix("/tv#"))[0] == 200
    finally:
        pat.close()
        maria.context.close()
