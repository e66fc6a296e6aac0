"""The venue hub (`tablectl hub`): the floor view, staff accounts, the database, and the
whole hub against a real Mosquitto with tables that publish through the real table link."""

from __future__ import annotations

import contextlib
import json
import random
import sqlite3
import subprocess
import sys
import time

import pytest

from contract.commands import SeatingCommand
from contract.snapshots import VenueClockReading
from hardware.mqtt_link import TableLink
from hardware.outbox import Outbox
from houses.loaders import load_profile
from hub import auth
from hub.alerts import (
    ALERT_KINDS,
    ALERT_LABELS,
    MAX_OPEN_ALERTS_PER_TABLE,
    SEVERITIES,
    card_problem,
)
from hub.floor import FloorView
from hub.refused import StaffError
from hub.seating_desk import UNDO_BUSTOUT_MS
from hub.service import FloorService
from hub.storage import MIGRATIONS, open_storage
from simulators.dealer_script import session
from simulators.staff import Staff
from tablectl.hub_app import Hub, HubSettings
from tests.conftest import run, table_state, wait_for
from tests.privacy import private_leaks, shown_cards

VENUE = "hubtest"


def _envelope(seq, type_, hand=1, historical=False, **data):
    return {"v": 1, "event_id": f"t1:{seq}", "venue": VENUE, "table": "t1", "seq": seq,
            "boot": 1, "type": type_, "ts": 1000 + seq, "hand": hand, "dealer": "ann",
            "historical": historical, "data": data}


# ---------------------------------------------------------------------------- the floor view

def test_each_alert_kind_is_raised_by_the_event_that_calls_the_floor():
    floor = FloorView(VENUE)
    events = [
        _envelope(1, "ruling", action="misdeal", reason="exposed_two_cards", text="MISDEAL"),
        _envelope(2, "ruling", action="void_hand", reason="duplicate_card", text="VOID: fouled"),
        _envelope(3, "ruling", action="void_hand", reason="foreign_card", text="VOID: foreign"),
        _envelope(4, "deck_check.result", ok=False, text="DECK R1: missing As"),
        _envelope(5, "deck_check.result", ok=True, text="DECK R1 OK"),
        _envelope(6, "irregularity", kind="unknown_tag"),  # its ruling raises the alert
        _envelope(7, "ruling", action="replace_exposed", text="EXPOSED"),  # no floor call
        _envelope(8, "shot_clock", state="started", seconds=30),
        _envelope(9, "shot_clock", state="expired"),
        _envelope(10, "floor.called"),
    ]
    # Every ruling that sends the dealer to the floor, by its reason.
    calls = (("unknown_tag", "UNKNOWN TAG 04AB (seat 4): call the floor to check the card"),
             ("shoe_fault", "SHOE LINK LOST: call the floor"),
             ("wrong_card_count", "SHORT FLOP: call the floor"),
             ("too_many_board_cards", "EXTRA CARD 5h after the river: call the floor"),
             ("missing_burn", "NO BURN on the turn: call the floor"),
             ("wrong_game", "WRONG GAME: call the floor"))
    events += [_envelope(11 + i, "ruling", action="call_floor", reason=reason, text=text,
                         seat=4 if reason == "unknown_tag" else None)
               for i, (reason, text) in enumerate(calls)]
    events += [
        _envelope(17, "ruling", action="scramble_flop", reason="too_many_board_cards",
                  text="4-CARD FLOP: call the floor"),
        _envelope(18, "hand_for_hand", state="dealt_early", text="HAND FOR HAND: dealt early"),
        _envelope(19, "clock.hold", reason="floor_call", source="seed 003"),
    ]
    for envelope in events:
        floor.on_event("t1", envelope, 5000)
    kinds = [a.kind for a in floor.alerts.values()]
    assert kinds == ["misdeal", "deck_fouled", "void_hand", "deck_fouled", "clock_called",
                     "floor_called", "unknown_tag", "shoe_fault", "missing_card",
                     "too_many_cards", "missing_burn", "wrong_game", "flop_scramble",
                     "dealt_early", "clock_held"]
    assert all(kind in ALERT_LABELS for kind in kinds)
    unknown = next(a for a in floor.alerts.values() if a.kind == "unknown_tag")
    # In the floor's words first, the tag's id last.
    assert unknown.text.startswith("A card not in this table's decks at seat 4: the floor "
                                   "checks the card") and unknown.hand == 1
    assert unknown.text.endswith("; tag 04AB")
    unreadable = card_problem({"text": "UNREADABLE TAG (preflop): call the floor",
                               "street": "preflop"})
    assert unreadable.startswith("A card the shoe could not read in the deal: ")
    floor.on_event("t1", _envelope(20, "ruling", action="misdeal", seat=3,
                                   text="MISDEAL: 2nd card exposed"), 5000)
    assert list(floor.alerts.values())[-1].text == "seat 3: MISDEAL: 2nd card exposed"
    floor.on_status("t1", {"state": "online", "boot": 1, "ts": 1}, 5000)
    floor.on_status("t1", {"state": "lost", "boot": 1, "ts": 2}, 6000)
    assert list(floor.alerts.values())[-1].kind == "table_lost"
    # Lost counts from when the hub heard it, not from the Last Will's time (its connection).
    assert floor.tables["t1"].status == "lost" and floor.tables["t1"].status_since == 6000


def test_each_alert_kind_has_a_severity_and_a_table_is_acknowledged_at_once():
    assert {severity for _, severity in ALERT_KINDS.values()} == set(SEVERITIES)
    floor = FloorView(VENUE)
    floor.on_event("t1", _envelope(1, "floor.called"), 5000)
    floor.on_event("t1", _envelope(2, "ruling", action="misdeal", text="MISDEAL"), 5000)
    floor.on_event("t2", _envelope(1, "journal.quarantined", line=3, reason="bad"), 5000)
    assert [(a.table, a.kind, a.severity) for a in floor.alerts.values()] == [
        ("t1", "floor_called", "urgent"), ("t1", "misdeal", "attention"),
        ("t2", "journal_quarantined", "notice")]
    for seq in range(3, 3 + MAX_OPEN_ALERTS_PER_TABLE):  # past the cap: some hidden
        floor.on_event("t1", _envelope(seq, "floor.called"), 5000)
    assert floor.tables["t1"].alerts_hidden == 2
    # What t1's group showed when the floor tapped; one more arrives before the tap lands.
    shown = [a.id for a in floor.alerts.values() if a.table == "t1"]
    lowest = min(shown)
    floor.on_event("t1", _envelope(3 + MAX_OPEN_ALERTS_PER_TABLE, "floor.called"), 5500)
    updates, below = floor.alert_desk.acknowledge_table("t1", "maria", 6000, shown)
    acked = [u["alert"] for u in updates if u["kind"] == "alert"]
    assert len(acked) == MAX_OPEN_ALERTS_PER_TABLE - 1  # the cap pushed the oldest shown out
    assert {a["acked_by"] for a in acked} == {"maria"}
    assert below == lowest + 1  # the database closes the hidden ones, older than any kept
    assert floor.tables["t1"].alerts_hidden == 0 and updates[-1]["kind"] == "table"
    newer = [a for a in floor.alerts.values() if not a.acked_by]
    assert [a.kind for a in newer] == ["journal_quarantined", "floor_called"]  # not shown
    # Acknowledged by mistake: open again, with who opened it.
    [again] = floor.alert_desk.reopen(acked[0]["id"], "sam", 7000)
    assert again["alert"]["acked_by"] is None and again["alert"]["reopened_by"] == "sam"
    with pytest.raises(KeyError):
        floor.alert_desk.reopen(10_000, "sam", 7000)


def test_a_bust_out_is_undone_at_the_hub_within_its_window_once():
    floor = FloorView(VENUE)
    floor.on_status("t1", {"state": "online", "boot": 1, "ts": 1}, 1000)
    floor.on_state("t1", table_state(seats=[1, 3, 5, 7]), 1000)
    made = floor.seating_desk.bust("t1", 3, "maria", 3000)
    [bust] = [u["bustout"] for u in made if u["kind"] == "bustout"]
    assert (bust["seat"], bust["undo_until"], bust["undone_by"]) == (3, 3000 + UNDO_BUSTOUT_MS,
                                                                     None)
    assert floor.tables["t1"].seats == [1, 5, 7]  # the hub's seating, at once
    with pytest.raises(StaffError, match="too late"):
        floor.seating_desk.undo_bustout(bust["id"], "sam", 3001 + UNDO_BUSTOUT_MS)
    updates = floor.seating_desk.undo_bustout(bust["id"], "sam", 4000)
    assert [u["bustout"]["undone_by"] for u in updates if u["kind"] == "bustout"] == ["sam"]
    assert floor.tables["t1"].seats == [1, 3, 5, 7]
    assert len(floor.bustouts) == 1  # giving the seat back is no bust-out of its own
    with pytest.raises(StaffError, match="already undone by sam"):
        floor.seating_desk.undo_bustout(bust["id"], "sam", 5001)
    with pytest.raises(StaffError, match="no bust-out"):
        floor.seating_desk.undo_bustout("t1:9:1", "sam", 5001)


def test_the_table_line_shows_the_shoe_state_not_its_lost_reads():
    floor = FloorView(VENUE)
    floor.on_event("t1", _envelope(1, "shoe", state="lost"), 5000)
    assert floor.tables["t1"].shoe == "lost"
    floor.on_event("t1", _envelope(2, "shoe", state="ok"), 5001)
    floor.on_event("t1", _envelope(3, "shoe", state="reads_lost", lost=3, cards=3), 5002)
    assert floor.tables["t1"].shoe == "ok"  # the shoe is back; the lost reads are an alert


def test_a_replayed_event_counts_once_and_an_outage_backlog_is_flagged_historical():
    floor = FloorView(VENUE)
    first = floor.on_event("t1", _envelope(1, "floor.called"), 5000)
    assert [u["kind"] for u in first] == ["table", "alert"]
    assert floor.on_event("t1", _envelope(1, "floor.called"), 5001) == []
    floor.on_event("t1", _envelope(2, "floor.called", historical=True), 5002)
    alerts = list(floor.alerts.values())
    assert [a.historical for a in alerts] == [False, True]
    assert floor.tables["t1"].events == 2
    updates = floor.alert_desk.acknowledge(alerts[0].id, "maria", 6000)
    assert updates[0]["alert"]["acked_by"] == "maria"
    floor.alert_desk.acknowledge(alerts[0].id, "sam", 7000)  # the first acknowledgement stands
    assert floor.alerts[alerts[0].id].acked_by == "maria"
    with pytest.raises(KeyError):
        floor.alert_desk.acknowledge(99, "maria", 6000)


def test_the_hand_for_hand_panel_is_ready_when_every_online_table_has_finished():
    floor = FloorView(VENUE)
    floor.on_clock(VenueClockReading(structure="tda-2024", elapsed=0.0, running=True,
                                     hand_for_hand=True), 1)
    for name, state in (("t1", "waiting"), ("t2", "playing"), ("t3", "playing")):
        floor.on_status(name, {"state": "online", "boot": 1}, 1)
        floor.on_state(name, table_state(hand_for_hand=state, clock=None), 1)
    floor.on_status("t3", {"state": "lost", "boot": 1}, 2)  # a lost table holds no one up
    panel = floor.hand_for_hand_panel()
    assert panel == {"on": True, "playing": ["t2"], "finished": ["t1"], "ready": False}
    floor.on_event("t2", {**_envelope(1, "hand_for_hand", state="waiting"), "table": "t2"}, 3)
    assert floor.hand_for_hand_panel()["ready"]
    floor.on_event("t2", {**_envelope(2, "hand_for_hand", state="released"), "table": "t2"}, 4)
    assert floor.hand_for_hand_panel()["playing"] == ["t2"]


def test_a_reply_is_matched_to_the_command_it_answers():
    floor = FloorView(VENUE)
    floor.command_sent("tx1", "t1", "seating", {"seats": [1, 2]}, "maria", 10)
    assert floor.on_command_response("t1", {"transaction": "other", "ok": True}, 11) == []
    assert floor.on_command_response("t2", {"transaction": "tx1", "ok": True}, 11) == []
    [update] = floor.on_command_response("t1", {"transaction": "tx1", "ok": False,
                                                "error": "seats: missing"}, 12)
    assert update["command"]["reply"]["error"] == "seats: missing"
    assert update["command"]["sent_by"] == "maria"


# ---------------------------------------------------------------------------- staff accounts

def test_passwords_are_salted_scrypt_hashes():
    one, two = auth.hash_password("correct horse"), auth.hash_password("correct horse")
    assert one != two and one.startswith("scrypt$")
    assert auth.check_password("correct horse", one)
    assert not auth.check_password("correct hors", one)
    assert not auth.check_password("x", "not-a-hash")


def test_a_users_file_with_faults_lists_every_one(tmp_path):
    path = tmp_path / "users.toml"
    path.touch(mode=0o600)  # a users file, if a broken one: readable by its owner alone
    path.write_text('[users.ok]\nrole = "floor"\npassword = "scrypt$1$1$1$00$00"\n'
                    '[users."bad name"]\nrole = "boss"\npassword = "hunter2"\ncolour = 1\n'
                    'extra = 1\n')
    with pytest.raises(auth.UsersFileError) as caught:
        auth.load_users(path)
    text = str(caught.value)
    assert "has 5 problem(s)" in text  # every problem listed at once
    for part in ("extra: unknown key", "users.bad name: a user name",
                 "users.bad name.role: 'boss'", "users.bad name.password",
                 "users.bad name.colour: unknown key"):
        assert part in text, part


def test_logins_back_off_per_name_and_address_and_sessions_expire(tmp_path):
    auth.save_user(tmp_path / "u.toml", "maria", "floor", "maria-pass")
    with pytest.raises(ValueError, match="at least 8"):
        auth.save_user(tmp_path / "u.toml", "short", "floor", "1234")
    sessions = auth.Sessions(auth.load_users(tmp_path / "u.toml"))
    for attempt in range(auth.USER_FREE):
        with pytest.raises(auth.LoginRefused, match="wrong user name or password"):
            sessions.login("maria", "guess", 100.0 + attempt, "10.0.0.66")
    with pytest.raises(auth.LoginRefused, match="too many failed attempts: wait 2 seconds"):
        sessions.login("maria", "maria-pass", 104.5, "10.0.0.66")
    # The guesser elsewhere does not lock maria out of the room's tablet.
    assert sessions.login("maria", "maria-pass", 104.5, "10.0.0.12")
    with pytest.raises(auth.LoginRefused, match="wrong"):  # after the wait, one more try...
        sessions.login("maria", "guess", 106.1, "10.0.0.66")
    with pytest.raises(auth.LoginRefused, match="wait 4 seconds"):  # ...and the wait doubles
        sessions.login("maria", "guess", 106.2, "10.0.0.66")
    token = sessions.login("maria", "maria-pass", 200.0, "10.0.0.66")
    user = sessions.user(token, 200.0)
    assert user is not None and user.may("acknowledge") and not user.may("private")
    assert sessions.user(token, 200.0 + auth.SESSION_SECONDS) is None
    assert sessions.user("forged", 200.0) is None


# ---------------------------------------------------------------------------- the database

@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_storage_migrates_an_older_database_and_purges_by_retention(tmp_path, backend, request):
    location = (str(tmp_path / "hub.db") if backend == "sqlite"
                else request.getfixturevalue("postgres"))
    if backend == "sqlite":  # a database of the first schema, as the recorder left it
        db = sqlite3.connect(location)
        db.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
        for statement in MIGRATIONS[0]:
            db.execute(statement)
        db.execute("INSERT INTO schema_version VALUES (1)")
        db.execute("INSERT INTO events VALUES ('t1', 1, 1, 'hand.started', 5, 0, ?)",
                   (json.dumps(_envelope(1, "hand.started")),))
        db.commit()
        db.close()
    storage = open_storage(location)
    try:
        version = storage.execute("SELECT MAX(version) FROM schema_version").fetchone()[0]
        assert version == len(MIGRATIONS)
        if backend == "postgresql":
            storage.insert("t1", 1, _envelope(1, "hand.started"), "{}", 5)
            storage.execute("UPDATE events SET ts = 5")
        storage.insert("t1", 2, _envelope(2, "hand.ended"), json.dumps(_envelope(2, "x")),
                       1002)  # retention goes by the hub's time: this one is kept
        alert = {"id": 1, "table": "t1", "kind": "misdeal", "text": "MISDEAL", "hand": 1,
                 "ts": 5, "historical": False, "acked_by": None, "acked_at": None}
        storage.save_alert(alert)
        storage.save_alert({**alert, "id": 2, "acked_by": "maria", "acked_at": 6})
        storage.log(5, "maria", "acknowledge", {"alert": 2})
        for ts in (5, 2000):
            storage.save_bustout({"table": "t1", "seat": 4, "hand": 1, "ts": ts, "by": "maria"})
            storage.save_fold("t1", "0" * 32, 1, 4, True, ts, ts, "bea")
            storage.save_deal_names("t1", "0" * 32, ts, {"4": "Ana"}, ts)
        storage.commit()
        assert storage.purge(before_ts=1000) == {"events": 1, "alerts": 1, "floor_log": 1,
                                                 "bustouts": 1, "broadcast_names": 1,
                                                 "broadcast_folds": 1}
        assert [b["ts"] for b in storage.bustouts(since_ts=0, limit=10)] == [2000]
        assert storage.seqs("t1") == [2]
        assert [a["id"] for a in storage.alerts(since_ts=10**12)] == [1]  # open ones stay
    finally:
        storage.close()


# ---------------------------------------------------------------------------- the floor's use cases

class _Link:
    """What the floor sends, kept (in place of the hub's MQTT connection)."""

    def __init__(self):
        self.commands, self.clocks, self.answers = [], [], []

    def send_command(self, table, command):
        self.commands.append((table, command))

    def publish_clock(self, reading):
        self.clocks.append(reading)

    def answer_clock(self, answer):
        self.answers.append(answer)


def test_the_floor_s_use_cases_run_without_a_broker_or_a_server(tmp_path):
    """The floor's service is fed and called directly: what it sends goes to its link, what
    it keeps to its storage (the venue clock too, resumed by the next start)."""
    from contract.commands import HubClockCommand, StatusCommand

    settings = HubSettings(venue=VENUE, db=str(tmp_path / "hub.db"))
    link, maria = _Link(), auth.User("maria", "floor", "")
    floor = FloorService(settings, link, wall=lambda: 1_800_000_000.0)
    floor.open()
    try:
        floor.on_broker(True)
        assert link.clocks == []  # no clock yet: nothing the tables should follow
        floor.on_status("t1", {"state": "online", "boot": 1, "table": "t1", "ts": 1})
        seating = floor.table_command(maria, "t1", SeatingCommand(seats=[1, 2]))
        assert seating["seats"] == [1, 2] and seating["seating"]["state"] == "waiting"
        # Hand-for-hand as the clock has it (off), told at the join; the hub's seating.
        [(_, told), (table, sent)] = link.commands
        assert told.fields() == {"state": "off"}
        assert (table, sent.seats, sent.version) == ("t1", [1, 2], 1)
        with pytest.raises(StaffError, match="no table 't9'"):
            floor.table_command(maria, "t9", StatusCommand())
        state = floor.clock_action(maria, HubClockCommand(action="start", value="tda-2024"))
        assert state["level"] == 1 and link.clocks[-1].structure == "tda-2024"
        assert link.clocks[-1].at == 1_800_000_000.0
        for _ in range(2):  # the same transaction twice: done once
            floor.clock_cases.on_clock_command(HubClockCommand(action="pause", transaction="m1"))
        assert [a["ok"] for a in link.answers] == [True, False]
        assert not link.clocks[-1].running
        assert sorted(line["action"] for line in floor.floor_log()) == [
            "clock/pause", "clock/start", "seating"]
    finally:
        floor.close()
    again = FloorService(settings, _Link(), wall=lambda: 1_800_000_060.0)
    again.open()
    try:
        assert again.clock.structure is not None and again.clock.structure.name == "tda-2024"
        assert again.clock.running_since is None
        assert again.clock_cases.tv_key == floor.clock_cases.tv_key
    finally:
        again.close()


# ---------------------------------------------------------------------------- the whole hub

def _hands(count=3, seed=4):
    """The events of a few real hands, through the core (no irregularities)."""
    rng = random.Random(seed)
    lines, _ = session(rng, load_profile("tda-2024"), hands=count, irregularity_rate=0.0,
                       seats=(1, 3, 5, 7), brisk=True, seat_changes=False)
    return run(lines)


@pytest.fixture
def hub(tmp_path, broker):
    users = tmp_path / "users.toml"
    for name, role in (("maria", "floor"), ("val", "viewer"), ("sam", "supervisor")):
        auth.save_user(users, name, role, f"{name}-password")
    started = Hub(HubSettings(venue=VENUE, db=str(tmp_path / "hub.db"), users=str(users),
                              port=broker.port, http_port=0, reorder_timeout=1.0)).start()
    assert started.connected.wait(10) and started.recorder.connected.wait(10)
    yield started
    started.stop()


@contextlib.contextmanager
def _restarted(hub):
    """The hub stopped and started again on its database: what a restart keeps."""
    hub.stop()
    again = Hub(hub.settings).start()
    try:
        yield again
    finally:
        again.stop()


def _table(tmp_path, broker, name="t1", commands=None):
    box = Outbox(tmp_path / f"{name}.db")
    link = TableLink(box, venue=VENUE, table=name, port=broker.port,
                     on_command=commands).start()
    assert wait_for(lambda: link.connected, 10)
    return box, link


def test_the_hub_shows_live_tables_raises_alerts_and_serves_hand_histories_per_role(
        tmp_path, broker, hub):
    val = Staff(hub.url, "val", "val-password").listen()
    maria = Staff(hub.url, "maria", "maria-password").listen()
    sam = Staff(hub.url, "sam", "sam-password")
    commands = []
    box, link = _table(tmp_path, broker, commands=lambda c: commands.append(c) or None)
    try:
        events = _hands()
        for event in events:
            box.append(event, int(time.time() * 1000))
        box.append({"type": "floor.called", "hand": 3, "t": 999.0}, int(time.time() * 1000))
        link.notify()
        assert wait_for(lambda: val.alerts("floor_called"), 10)
        assert wait_for(lambda: hub.recorder.upto.get("t1") == box.last_seq, 10)
        [alert] = val.alerts("floor_called")
        assert alert["table"] == "t1" and alert["hand"] == 3 and alert["acked_by"] is None

        # The viewer may look, not act; the floor acknowledges, and every viewer sees who.
        assert val.post(f"/api/alerts/{alert['id']}/ack")[0] == 403
        status, acked = maria.post(f"/api/alerts/{alert['id']}/ack")
        assert status == 200 and acked["acked_by"] == "maria"
        assert wait_for(lambda: val.alerts("floor_called")[0]["acked_by"] == "maria", 5)

        # Hand histories: the public view for the floor, hole cards for the supervisor.
        status, public = maria.get("/api/tables/t1/hands?n=5")
        assert status == 200 and not public["private"] and len(public["hands"]) == 3
        status, private = sam.get("/api/tables/t1/hands?n=5")
        assert private["private"] and "hand.record" in json.dumps(private)
        assert "hand.record" not in json.dumps(public) and "hole_counts" in json.dumps(public)
        streamed = "\n".join(val.received)
        for number in (1, 2, 3):
            ended = next(e for e in events if e["type"] == "hand.ended" and e["hand"] == number)
            shown = shown_cards([e for e in events if e.get("hand") == number])
            [shown_publicly] = [h for h in public["hands"] if h["hand"] == number]
            assert private_leaks([json.dumps(shown_publicly)], ended, shown) == []
            [shown_privately] = [h for h in private["hands"] if h["hand"] == number]
            assert private_leaks([json.dumps(shown_privately)], ended, shown)  # the holes
            # Nothing the viewer's stream carried holds a hole card of it either (the stream
            # carries no cards at all: alerts and table lines).
            assert private_leaks([streamed], ended, shown) == []
    finally:
        link.stop()
        val.close()
        maria.close()
    assert wait_for(lambda: hub.floor.tables["t1"].status == "offline", 10)


def test_floor_commands_are_validated_at_the_hub_and_the_tables_reply_is_shown(
        tmp_path, broker, hub):
    maria = Staff(hub.url, "maria", "maria-password").listen()
    val = Staff(hub.url, "val", "val-password")
    taken = []

    def on_command(command):
        if not isinstance(command, SeatingCommand):
            return None  # (hand-for-hand, told as the clock has it at the table's join)
        taken.append(command)
        return None if command.seats else "no seats: a table needs players"

    _, link = _table(tmp_path, broker, commands=on_command)
    try:
        assert wait_for(lambda: "t1" in hub.floor.tables, 10)
        assert maria.post("/api/tables/t1/cmd/seating", {"seats": "1,2"}) == (
            400, {"error": 'seats: "1,2" is not of type "array"'})
        assert maria.post("/api/tables/t1/cmd/launch", {})[0] == 400
        # What a table would refuse unread (its transaction unknown, the floor left waiting
        # for an answer) is refused here: over the size a table takes, or 3.0 for a seq.
        status, too_long = maria.post("/api/tables/t1/cmd/seating", {"seats": [1], "moves": [
            {"seat": 1, "from_table": "t2", "from_seat": 2, "player": "x" * 16}] * 100})
        assert status == 400 and "over the 4096-byte limit" in too_long["error"]
        assert maria.post("/api/tables/t1/cmd/seating", {"seats": [1, 1]})[0] == 400
        assert maria.post("/api/tables/t1/cmd/replay", {"from_seq": 3.0}) == (
            400, {"error": "from_seq: 3.0 is not a whole number written as one"})
        assert maria.post("/api/tables/t9/cmd/status", {})[1] == {
            "error": "no table 't9' has been heard at this venue"}
        assert val.post("/api/tables/t1/cmd/status", {})[0] == 403
        assert maria.post("/api/tables/t1/cmd/seating", {"seats": [1, 2]},
                          content_type="application/x-www-form-urlencoded")[0] == 415
        assert taken == []  # nothing reached the table

        status, sent = maria.post("/api/tables/t1/cmd/seating", {"seats": [1, 2, 4]})
        assert status == 200 and sent["seats"] == [1, 2, 4]
        assert maria.post("/api/tables/t1/cmd/seating", {"seats": [1], "version": 9})[1] == {
            "error": "version: the hub numbers the seatings it sends; send the seats alone"}
        status, emptied = maria.post("/api/tables/t1/cmd/seating", {"seats": []})
        assert status == 200 and emptied["seats"] == []

        def replies():
            return [(u["command"]["args"]["version"], u["command"]["reply"])
                    for u in maria.updates if u["kind"] == "command"
                    and u["command"]["command"] == "seating" and u["command"]["reply"]]

        # The table answers each version; the one it refuses is said on its line.
        # (Emptied: each seat a bust-out, a version each, then the seating: version 5.)
        assert wait_for(lambda: {v for v, _ in replies()} == {1, 5}, 10)
        assert dict(replies())[5]["error"] == "no seats: a table needs players"
        assert [(c.seats, c.version) for c in taken] == [([1, 2, 4], 1), ([], 5)]
        assert wait_for(lambda: (hub.floor.tables["t1"].seating or {}).get("refused")
                        == "no seats: a table needs players", 10)
        log = maria.get("/api/log")[1]
        assert sorted((line["user"], line["action"]) for line in log) == [
            ("maria", "bust-out")] * 3 + [("maria", "seating")] * 2
    finally:
        link.stop()
        maria.close()


def test_the_venue_clock_and_hand_for_hand_are_run_from_the_hub(tmp_path, broker, hub):
    maria = Staff(hub.url, "maria", "maria-password").listen()
    taken = []
    _, link = _table(tmp_path, broker, commands=lambda c: taken.append(c) or None)
    try:
        assert wait_for(lambda: hub.floor.tables.get("t1") and
                        hub.floor.tables["t1"].status == "online", 10)
        # Told at its join (at each "online" the hub hears: the table says it again when the
        # hub asks its status), as every table: the clock has hand-for-hand off.
        off = {"state": "off"}
        assert wait_for(lambda: taken and all(c.fields() == off for c in taken), 10)
        assert maria.post("/api/clock", {"action": "start", "value": "nope"})[0] == 400
        status, state = maria.post("/api/clock", {"action": "start", "value": "tda-2024"})
        assert status == 200 and state["level"] == 1 and state["running"]
        assert wait_for(lambda: (hub.floor.clock or {}).get("structure") == "tda-2024", 10)
        maria.post("/api/clock", {"action": "hand-for-hand", "value": "on"})

        def told() -> list[dict[str, object]]:
            # The whole state, told again when the table says it is online (the hub asks each
            # table's status once a run, whenever that comes), is one command, not two.
            fields = [c.fields() for c in taken if c.fields() != off]
            return [f for i, f in enumerate(fields) if i == 0 or f != fields[i - 1]]
        assert wait_for(lambda: told() == [{"state": "on"}], 10), [c.fields() for c in taken]
        assert maria.post("/api/hand-for-hand/release") == (
            400, {"error": "no table is waiting for the next hand"})

        def table_says(state):  # what a table's state snapshot would say
            link.client.publish(f"pkr/v1/{VENUE}/tables/t1/state", json.dumps(
                {"hand": 3, "in_progress": state == "playing", "shoe": "ok", "clock": None,
                 "hand_for_hand": state, "seats": [1, 2], "links": {"hub": "ok"},
                 "last_seq": 0, "ts": 1}), qos=1, retain=True)

        table_says("playing")
        assert wait_for(lambda: hub.floor.tables["t1"].hand_for_hand == "playing", 5)
        assert maria.post("/api/hand-for-hand/release") == (
            400, {"error": "still playing their hand: t1"})
        table_says("waiting")
        assert wait_for(lambda: hub.floor.hand_for_hand_panel()["ready"], 5)
        status, released = maria.post("/api/hand-for-hand/release")
        assert status == 200 and released == {"released": ["t1"]}
        assert wait_for(lambda: taken[-1].fields() == {"state": "release"}, 10)
        maria.post("/api/clock", {"action": "hand-for-hand", "value": "off"})
        assert wait_for(lambda: taken[-1].fields() == {"state": "off"}, 10)
        actions = {line["action"] for line in maria.get("/api/log")[1]}
        assert {"clock/start", "clock/hand-for-hand", "cmd/hand-for-hand"} <= actions
    finally:
        link.stop()
        maria.close()


def test_a_floor_call_under_a_house_that_stops_the_clock_pauses_the_venue_clock(
        tmp_path, broker, hub):
    maria = Staff(hub.url, "maria", "maria-password").listen()
    box, link = _table(tmp_path, broker)
    try:
        assert maria.post("/api/clock", {"action": "start", "value": "tda-2024"})[0] == 200
        box.append({"type": "clock.hold", "reason": "floor_call", "hand": 3,
                    "source": "seed 003, Timer use and breaks", "t": 3.0},
                   int(time.time() * 1000))
        link.notify()
        assert wait_for(lambda: not hub.clock.reading()[2], 10)
        assert wait_for(lambda: maria.alerts("clock_held"), 10)
        [alert] = maria.alerts("clock_held")
        assert alert["hand"] == 3 and "seed 003" in alert["text"]
        assert {"user": "table t1", "action": "clock/pause"}.items() <= \
            maria.get("/api/log")[1][0].items()
        status, state = maria.post("/api/clock", {"action": "resume"})
        assert status == 200 and state["running"]  # the floor resumes it
    finally:
        link.stop()
        maria.close()


def test_pages_and_calls_need_a_staff_login(hub):
    import http.client
    import urllib.error
    import urllib.request

    with pytest.raises(PermissionError, match="wrong user name or password"):
        Staff(hub.url, "maria", "not-her-password")
    page = urllib.request.urlopen(hub.url + "/")  # redirected to the login page
    assert page.url.endswith("/login") and b"<form" in page.read()
    for path in ("/api/state", "/api/stream", "/api/tables/t1/hands"):
        with pytest.raises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(hub.url + path)
        assert caught.value.code == 401
    headers = urllib.request.urlopen(hub.url + "/login").headers
    assert "default-src 'self'" in headers["Content-Security-Policy"]
    host, port = hub.url.split("//")[1].split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    connection.request("POST", "/login", body="user=maria&password=maria-password",
                       headers={"Content-Type": "application/x-www-form-urlencoded"})
    response = connection.getresponse()
    response.read()
    cookie = response.getheader("Set-Cookie")
    assert "httponly" in cookie.lower() and "samesite=strict" in cookie.lower()
    connection.request("POST", "/login", body="user=maria&password=maria-password",
                       headers={"Content-Type": "application/x-www-form-urlencoded",
                                "Origin": "http://evil.example"})
    refused = connection.getresponse()
    assert refused.status == 403 and refused.getheader("Set-Cookie") is None
    assert b"http://evil.example is refused" in refused.read()
    maria = Staff(hub.url, "maria", "maria-password")
    assert maria.get("/api/me")[1]["role"] == "floor"


def test_tablectl_hub_user_writes_the_users_file_and_hub_refuses_a_bad_one(tmp_path):
    users = tmp_path / "users.toml"
    command = [sys.executable, "-m", "tablectl.cli", "hub-user", "maria", "--role", "floor",
               "--users", str(users), "--password-stdin"]
    done = subprocess.run(command, input="maria-password\n", capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert auth.load_users(users)["maria"].role == "floor"
    assert oct(users.stat().st_mode & 0o777) == "0o600"
    users.write_text('[users.maria]\nrole = "boss"\n')
    done = subprocess.run([sys.executable, "-m", "tablectl.cli", "hub", "--venue", VENUE,
                           "--users", str(users), "--db", str(tmp_path / "h.db"),
                           "--port", "1"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2  # the caller's mistake, said before anything starts
    assert "2 problem(s)" in done.stderr and "users.maria.role" in done.stderr


def test_tablectl_hub_serves_the_dashboard_and_says_offline_when_stopped(tmp_path, broker):
    import signal
    import urllib.request

    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    from contract.schema import validate
    from simulators.broker import free_port

    users = tmp_path / "users.toml"
    auth.save_user(users, "maria", "floor", "maria-password")
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "tablectl.cli", "hub", "--venue", VENUE, "--port",
         str(broker.port), "--users", str(users), "--db", str(tmp_path / "hub.db"),
         "--http", f"127.0.0.1:{port}", "--start", "tda-2024"],
        stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        assert f"dashboard at http://127.0.0.1:{port}" in line, line
        assert urllib.request.urlopen(f"http://127.0.0.1:{port}/login").status == 200
        maria = Staff(f"http://127.0.0.1:{port}", "maria", "maria-password")
        assert wait_for(lambda: (maria.get("/api/state")[1]["clock"] or {}).get(
            "structure") == "tda-2024", 10)
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(20) == 0
    statuses = []
    watcher = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
    watcher.on_message = lambda c, u, msg: statuses.append(json.loads(msg.payload))
    watcher.connect("127.0.0.1", broker.port)
    watcher.subscribe(f"pkr/v1/{VENUE}/hub/status", qos=1)
    watcher.loop_start()
    try:
        assert wait_for(lambda: statuses, 10)
        assert statuses[0]["state"] == "offline"  # retained: a clean stop, not lost
        validate("HubStatus", statuses[0])
    finally:
        watcher.loop_stop()
        watcher.disconnect()


def test_a_restarted_hub_shows_open_alerts_and_who_acknowledged_the_others(
        tmp_path, broker, hub):
    maria = Staff(hub.url, "maria", "maria-password").listen()
    box, link = _table(tmp_path, broker)
    try:
        for hand in (1, 2):
            box.append({"type": "floor.called", "hand": hand, "t": float(hand)},
                       int(time.time() * 1000))
        link.notify()
        assert wait_for(lambda: len(maria.alerts("floor_called")) == 2, 10)
        first = min(a["id"] for a in maria.alerts())
        assert maria.post(f"/api/alerts/{first}/ack")[0] == 200
    finally:
        link.stop()
        maria.close()
    with _restarted(hub) as again:
        alerts = {a["id"]: a for a in again.call(FloorService.snapshot)["alerts"]}
        assert alerts[first]["acked_by"] == "maria" and alerts[first]["kind"] == "floor_called"
        assert alerts[first + 1]["acked_by"] is None and alerts[first + 1]["hand"] == 2
        assert again.floor.next_alert > max(alerts)


def test_bust_outs_outlive_a_hub_restart(tmp_path, broker, hub):
    """A seat the floor takes out (the table applies the seating) is a bust-out; a restarted
    hub lists it again, with its table, seat, hand and who."""
    from contract.snapshots import TableState
    from controller.inputs import Setup
    from controller.table import Table

    table = Table(load_profile("tda-2024"))
    table.handle(Setup("holdem", (1, 3, 5, 7), 1, t=0.0))
    _box, link = _table(tmp_path, broker, commands=lambda command: None)  # the table agrees
    maria = Staff(hub.url, "maria", "maria-password").listen()
    try:
        link.publish_state(TableState.of(table.state(), hub_link="ok", last_seq=0,
                                         ts_ms=int(time.time() * 1000)).to_json())
        assert wait_for(lambda: hub.floor.tables.get("t1") is not None
                        and hub.floor.tables["t1"].seats == [1, 3, 5, 7], 10)
        status, _ = maria.post("/api/tables/t1/cmd/seating", {"seats": [1, 3, 7]})
        assert status == 200
        assert wait_for(lambda: [(b.table, b.seat, b.by) for b in hub.floor.bustouts]
                        == [("t1", 5, "maria")], 10)
    finally:
        link.stop()
        maria.close()
    with _restarted(hub) as again:
        busts = again.call(FloorService.snapshot)["bustouts"]
        assert [(b["table"], b["seat"], b["by"]) for b in busts] == [("t1", 5, "maria")]


def test_acknowledge_all_closes_a_tables_alerts_even_those_not_shown_and_logs_it_live(
        tmp_path, broker, hub):
    maria = Staff(hub.url, "maria", "maria-password").listen()
    val = Staff(hub.url, "val", "val-password").listen()
    boxes = {}
    try:
        for name, count in (("t1", MAX_OPEN_ALERTS_PER_TABLE + 5), ("t2", 1)):
            box, link = boxes[name] = _table(tmp_path, broker, name)
            for hand in range(1, count + 1):
                box.append({"type": "floor.called", "hand": hand, "t": float(hand)},
                           int(time.time() * 1000))
            link.notify()
        assert wait_for(lambda: hub.floor.tables.get("t1") is not None
                        and hub.floor.tables["t1"].alerts_hidden == 5
                        and len(maria.alerts("floor_called")) >= MAX_OPEN_ALERTS_PER_TABLE + 1
                        and any(a["table"] == "t2" for a in maria.alerts("floor_called")), 15)
        assert val.post("/api/tables/t1/alerts/ack")[0] == 403  # a viewer may not
        status, answer = maria.post("/api/tables/t1/alerts/ack")
        assert status == 200 and len(answer["acknowledged"]) == MAX_OPEN_ALERTS_PER_TABLE
        assert maria.post("/api/tables/t9/alerts/ack")[0] == 400  # never heard of
        # Live, to the floor: the log line; the viewer's stream gets the acknowledgements
        # (after the log line, had it been sent) and no log line.
        assert wait_for(lambda: any(u["kind"] == "log" and u["line"]["action"] ==
                                    "acknowledge all" for u in maria.updates), 10)
        line = next(u["line"] for u in maria.updates if u["kind"] == "log")
        assert line["user"] == "maria" and line["detail"] == {"table": "t1", "alerts": 55}
        assert wait_for(lambda: sum(1 for a in val.alerts("floor_called") if a["acked_by"])
                        == MAX_OPEN_ALERTS_PER_TABLE, 10)
        assert not any(u["kind"] == "log" for u in val.updates)
        alerts = hub.call(FloorService.snapshot)["alerts"]
        assert [a["table"] for a in alerts if not a["acked_by"]] == ["t2"]
    finally:
        for _, link in boxes.values():
            link.stop()
        maria.close()
        val.close()
    with _restarted(hub) as again:  # the five never shown are closed too
        still_open = [a for a in again.call(FloorService.snapshot)["alerts"]
                      if a["acked_by"] is None]
        assert [a["table"] for a in still_open] == ["t2"]
        assert again.floor.tables["t1"].alerts_hidden == 0


def test_a_hand_history_holds_whole_hands_only(tmp_path):
    storage = open_storage(str(tmp_path / "hub.db"))
    try:
        seq = 0
        for hand in range(1, 11):  # ten hands, the odd ones with a dozen rulings
            kinds = ["hand.started"] + ["ruling"] * (12 if hand % 2 else 0) + ["hand.ended"]
            for kind in kinds:
                seq += 1
                storage.insert("t1", seq, _envelope(seq, kind, hand=hand),
                               json.dumps(_envelope(seq, kind, hand=hand)), seq)
        storage.commit()
        history = storage.hand_history("t1", 3)
        counts = {}
        for _, envelope in history:
            counts[envelope["hand"]] = counts.get(envelope["hand"], 0) + 1
        assert counts == {8: 2, 9: 14, 10: 2}
        history = storage.hand_history("t1", 1)
        assert {e["hand"] for _, e in history} == {10}
    finally:
        storage.close()


def test_the_hub_on_postgresql_keeps_hands_alerts_and_acknowledgements(
        tmp_path, broker, postgres):
    users = tmp_path / "users.toml"
    auth.save_user(users, "sam", "supervisor", "sam-password")
    settings = HubSettings(venue=VENUE, db=postgres, users=str(users), port=broker.port,
                           http_port=0)
    hub = Hub(settings).start()
    box, link = _table(tmp_path, broker)
    try:
        assert hub.recorder.connected.wait(10)
        sam = Staff(hub.url, "sam", "sam-password")
        for event in [*_hands(2), {"type": "floor.called", "hand": 2, "t": 999.0}]:
            box.append(event, int(time.time() * 1000))
        link.notify()
        assert wait_for(lambda: hub.recorder.upto.get("t1") == box.last_seq, 10)
        assert wait_for(lambda: hub.call(FloorService.snapshot)["alerts"], 10)
        [alert] = hub.call(FloorService.snapshot)["alerts"]
        assert sam.post(f"/api/alerts/{alert['id']}/ack")[0] == 200
        hands = sam.get("/api/tables/t1/hands")[1]["hands"]
        assert [h["hand"] for h in hands] == [1, 2]
        assert any(e["type"] == "hand.record" for e in hands[0]["events"])
        assert [line["action"] for line in sam.get("/api/log")[1]] == ["acknowledge"]
    finally:
        link.stop()
        hub.stop()
    again = Hub(settings).start()
    try:
        [alert] = again.call(FloorService.snapshot)["alerts"]
        assert alert["acked_by"] == "sam" and alert["kind"] == "floor_called"
    finally:
        again.stop()


def test_the_floor_says_when_the_hub_loses_the_broker_and_resumes_after_it(
        tmp_path, broker, hub):
    maria = Staff(hub.url, "maria", "maria-password").listen()
    assert maria.snapshot["hub"]["broker"] == "ok"
    box, link = _table(tmp_path, broker)
    try:
        broker.kill()
        assert wait_for(lambda: any(u["kind"] == "hub" and u["broker"] == "lost"
                                    for u in maria.updates), 15)
        broker.start()
        assert wait_for(lambda: maria.updates[-1:] and any(
            u["kind"] == "hub" and u["broker"] == "ok" for u in maria.updates), 20)
        assert wait_for(lambda: link.connected, 20)
        box.append({"type": "floor.called", "hand": 7, "t": 7.0}, int(time.time() * 1000))
        link.notify()
        assert wait_for(lambda: [a for a in maria.alerts("floor_called") if a["hand"] == 7], 15)
    finally:
        link.stop()
        maria.close()


def test_the_floor_chooses_the_structure_from_the_venues_list(tmp_path, broker):
    """Built-in structures and the house's own (the hub's --structures), each described; a
    house file that does not load is listed with why, and the dashboard offers only the rest."""
    house = tmp_path / "structures"
    house.mkdir()
    (house / "friday-turbo.toml").write_text(
        'name = "friday-turbo"\ntitle = "Friday turbo"\nsource = "house"\n'
        '[[schedule]]\nlevel = 1\nsb = 25\nbb = 50\nante = 0\nminutes = 10\n'
        '[[schedule]]\nlevel = 2\nsb = 50\nbb = 100\nante = 0\nminutes = 10\n')
    (house / "broken.toml").write_text("name = ")
    (house / "not a name.toml").write_text("")  # never a structure's name: not listed
    users = tmp_path / "users.toml"
    auth.save_user(users, "val", "viewer", "val-password")
    started = Hub(HubSettings(venue=VENUE, db=str(tmp_path / "hub.db"), users=str(users),
                              port=broker.port, http_port=0, structures=str(house))).start()
    try:
        status, listed = Staff(started.url, "val", "val-password").get("/api/structures")
        assert status == 200
        by_name = {s["name"]: s for s in listed}
        assert set(by_name) == {"broken", "corner-pocket", "dealers-choice", "friday-turbo",
                                "lppl", "tda-2024"}
        assert by_name["friday-turbo"].items() >= {"title": "Friday turbo", "levels": 2,
                                                   "first": "25/50", "minutes": 10}.items()
        assert by_name["corner-pocket"]["levels"] == 13
        assert by_name["broken"]["problem"] and "levels" not in {
            k for k, v in by_name["broken"].items() if v is not None}
    finally:
        started.stop()


def test_the_room_clock_says_the_blinds_what_comes_next_and_the_colour_ups():
    from houses.loaders import load_structure
    from hub.floor import room_clock_view

    league = load_structure("corner-pocket")  # 15-minute levels, colour-ups, no break
    starts = league.starts()
    view = room_clock_view(league, starts[0] + 60, True)
    assert view["current"] == {"level": 1, "sb": 50, "bb": 100, "ante": 0, "minutes": 15.0}
    assert view["next"]["level"] == 2 and view["remaining"] == 840.0
    assert view["next_announcements"] == ["Colour up: red (50) out"]
    assert view["break_in"] is None  # no break in this structure
    assert room_clock_view(league, starts[1], False)["announcements"] == [
        "Colour up: red (50) out"]
    tda = load_structure("tda-2024")
    first_break = next(i for i, p in enumerate(tda.periods) if p.is_break)
    view = room_clock_view(tda, 30.0, True)
    assert view["break_in"] == tda.starts()[first_break] - 30.0
    on_break = room_clock_view(tda, tda.starts()[first_break] + 1, True)
    assert on_break["on_break"] and on_break["current"] is None and on_break["break_in"] is None
    assert on_break["next"]["level"] == tda.periods[first_break + 1].level
    assert room_clock_view(None, 0.0, False) == {"structure": None, "running": False}


def test_the_room_at_a_glance_follows_seats_button_blinds_and_bust_outs():
    floor = FloorView(VENUE)
    floor.on_status("t1", {"state": "online", "boot": 1, "ts": 1}, 1000)
    floor.on_state("t1", table_state(hand=7, seats=[1, 3, 5, 8], button=3,
                          blind_seats={"small": 5, "big": 8}, ts=1), 1000)
    view = floor.tables["t1"]
    assert (view.button, view.blind_seats) == (3, {"small": 5, "big": 8})
    updates = floor.seating_desk.bust("t1", 5, "maria", 3000)
    assert [u["bustout"] for u in updates if u["kind"] == "bustout"] == [
        {"table": "t1", "seat": 5, "hand": 7, "ts": 3000, "by": "maria", "undone_by": None,
         "undone_at": None, "player": None, "place": None, "player_id": None, "prize": None,
         "id": "t1:5:3000",
         "undo_until": 3000 + UNDO_BUSTOUT_MS}]
    with pytest.raises(StaffError, match="seat 5 is empty in the seating"):
        floor.seating_desk.bust("t1", 5, "sam", 3001)  # a second tablet's tap on the same seat
    assert [b.seat for b in floor.bustouts] == [5]
    assert floor.snapshot(4000)["bustouts"][0]["seat"] == 5
    # The table still deals its old seats until its next hand: the hub's seating shows.
    floor.on_state("t1", table_state(hand=7, seats=[1, 3, 5, 8], ts=2), 4000)
    assert (view.seats, view.table_seats, view.seating["state"]) == (
        [1, 3, 8], [1, 3, 5, 8], "waiting")


def test_a_backlog_batch_raises_each_of_its_alerts_once_and_a_bad_batch_nothing(
        tmp_path, broker, hub):
    """A table's backlog several events a message (EnvelopeBatch, on private): each envelope
    is taken as if alone (stored once, one alert each: the same seq twice counts once); a
    batch with one envelope of another table is refused whole, by the recorder, and the floor
    shows nothing of it."""
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    client = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
    client.connect("127.0.0.1", broker.port)
    client.loop_start()
    topic = f"pkr/v1/{VENUE}/tables/t1/private"
    try:
        stranger = {**_envelope(9, "floor.called", historical=True), "table": "t2"}
        client.publish(topic, json.dumps({"v": 1, "batch": [
            _envelope(8, "floor.called", historical=True), stranger]}), qos=1).wait_for_publish(5)
        client.publish(topic, json.dumps({"v": 1, "batch": [
            _envelope(seq, "floor.called", hand=seq, historical=True) for seq in (1, 2, 2, 3)]}),
            qos=1).wait_for_publish(5)
        assert wait_for(lambda: len([a for a in hub.floor.alerts.values()
                                     if a.kind == "floor_called"]) == 3, 10)
        alerts = [a for a in hub.floor.alerts.values() if a.kind == "floor_called"]
        assert sorted(a.hand for a in alerts) == [1, 2, 3] and all(a.historical for a in alerts)
        assert hub.recorder.stats.invalid == 1  # the batch with a stranger's event, whole
        assert not any(a.hand == 8 for a in hub.floor.alerts.values())
    finally:
        client.loop_stop()
        client.disconnect()


def test_the_floor_shows_what_the_recorder_stored_as_its_public_view(tmp_path, broker, hub):
    """The floor follows the recorder: an event on ``events`` alone (never recorded) raises
    nothing; the same kind of event on ``private`` is stored, then shown as its public view
    (a hole card's identity gone, as the table's own public view has it)."""
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    client = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
    client.connect("127.0.0.1", broker.port)
    client.loop_start()
    root = f"pkr/v1/{VENUE}/tables/t1/"
    try:
        client.publish(root + "events", json.dumps(_envelope(1, "floor.called", hand=1)),
                       qos=1).wait_for_publish(5)
        hole = _envelope(2, "card", hand=2, card="As", role="hole", seat=3, n=1, deck="R1",
                         street="preflop")
        client.publish(root + "private", json.dumps(hole), qos=1).wait_for_publish(5)
        client.publish(root + "private", json.dumps(_envelope(3, "floor.called", hand=3)),
                       qos=1).wait_for_publish(5)
        # The barrier: the recorded call is on the floor; the unrecorded one never came.
        assert wait_for(lambda: any(a.hand == 3 for a in hub.floor.alerts.values()), 10)
        assert not any(a.hand == 1 for a in hub.floor.alerts.values())
        assert hub.recorder.seqs("t1") == [2, 3]
        view = hub.floor.tables["t1"]
        assert view.events == 2 and view.last_seq == 3
        assert "As" not in json.dumps(hub.call(FloorService.snapshot))
    finally:
        client.loop_stop()
        client.disconnect()


def test_the_hands_csv_streams_whole_when_each_piece_is_read_on_another_thread(hub):
    """Starlette reads a streamed answer a piece at a time, each on whichever of its threads
    is free: a SQLite connection is bound to the thread that opened it, and the CSV broke off
    after its first table with "SQLite objects created in a thread can only be used in that
    same thread"."""
    import threading

    from tests.bench.stats_memory import MINUTE, T0, store_night

    storage = open_storage(hub.settings.db)
    store_night(storage, tables=3, hands=4)
    storage.commit()
    storage.close()
    stream = hub.reports.hands_csv_stream(T0, T0 + 60 * MINUTE)
    pieces: list[str] = []
    failures: list[BaseException] = []
    finished = threading.Event()

    def next_piece() -> None:
        try:
            pieces.append(next(stream))
        except StopIteration:
            pieces.append("")
        except BaseException as exc:  # reported below
            failures.append(exc)
        finished.wait(10)  # alive to the end: a thread's id is never reused by the next one

    readers: list[threading.Thread] = []
    while not failures and (not pieces or pieces[-1]):
        done = len(pieces) + len(failures)
        readers.append(threading.Thread(target=next_piece))  # a new thread each time
        readers[-1].start()
        assert wait_for(lambda done=done: len(pieces) + len(failures) > done, 10)
    finished.set()
    for reader in readers:
        reader.join(10)
    assert failures == []
    rows = "".join(pieces).splitlines()
    assert len(rows) == 1 + 3 * 4 and len(pieces) > 2


def test_the_hub_refuses_a_seat_past_the_houses_table_size_or_a_short_tables(tmp_path,
                                                                           broker):
    """Mike's seats nine a table (seed 003), and t2 is a six-seat table here: a seating naming
    seat 10 (or 7 at t2) is refused before it reaches the table, saying why; a bad short
    table is refused at start, every one listed."""
    import dataclasses

    from controller.profiles import ProfileError
    from hub.refused import StaffError

    users = tmp_path / "users.toml"
    auth.save_user(users, "sam", "supervisor", "sam-password")
    settings = HubSettings(venue=VENUE, db=str(tmp_path / "hub.db"), users=str(users),
                           port=broker.port, http_port=0, profile="mikes-poker-tables",
                           short_tables={"t2": 6})
    with pytest.raises(ProfileError) as refused:
        Hub(dataclasses.replace(settings, short_tables={"t2": 10, "t3": 1}))
    assert "t2=10" in str(refused.value) and "t3=1" in str(refused.value)
    hub = Hub(settings).start()
    try:
        sam = auth.User("sam", "supervisor", "")
        hub.call(lambda floor: [floor.floor.table(name) for name in ("t1", "t2")])
        with pytest.raises(StaffError, match="table t1 seats 9"):
            hub.call(FloorService.table_command, sam, "t1", SeatingCommand(seats=[1, 2, 10]))
        with pytest.raises(StaffError, match=r"table t2 seats 6 .*a short table"):
            hub.call(FloorService.table_command, sam, "t2", SeatingCommand(seats=[1, 7]))
        sent = hub.call(FloorService.table_command, sam, "t1", SeatingCommand(seats=[1, 2, 9]))
        assert sent["seats"] == [1, 2, 9]
        assert hub.floor.balance.panel(hub.floor.tables)["table_size"] == 9
    finally:
        hub.stop()


def test_dealer_names_and_the_roster_outlive_a_hub_restart(hub):
    maria = auth.User("maria", "floor", "")
    hub.call(FloorService.name_dealer, maria, "D17", "Maria Lopez")
    hub.call(FloorService.name_dealer, maria, "D9", "Ian")
    hub.call(FloorService.name_dealer, maria, "D9", "")  # the name taken off
    with pytest.raises(StaffError, match="at most 40 printable"):
        hub.call(FloorService.name_dealer, maria, "D3", "x" * 41)
    hub.call(FloorService.import_players, maria, "name,entries\nAnna,1\nBob,2\n")
    with _restarted(hub) as again:
        assert again.call(FloorService.snapshot)["dealers"] == {"D17": "Maria Lopez"}
        roster = again.call(FloorService.roster)
        assert [(p["name"], p["entries"]) for p in roster["players"]] == [("Anna", 1),
                                                                          ("Bob", 2)]
        again.call(FloorService.add_player, maria, "Carl")  # ids go on after the restart
        assert [p["id"] for p in again.call(FloorService.roster)["players"]] == [1, 2, 3]


def test_a_use_case_that_fails_leaves_nothing_half_written(hub):
    """A use case that raises after writing (a bug, or the database refusing) has its writes
    undone before the next item: on PostgreSQL the connection would refuse everything until
    a rollback, and on either a later commit would keep half a change."""
    def half(floor):
        floor.db.name_dealer("B-HALF", "Half Written")
        raise RuntimeError("a bug after a write")

    def whole(floor):
        floor.db.name_dealer("B-WHOLE", "Whole")
        floor.db.commit()
        return floor.db.dealer_names()

    with pytest.raises(RuntimeError, match="a bug after a write"):
        hub.worker.submit(half).result(10)
    names = hub.worker.submit(whole).result(10)
    assert names.get("B-WHOLE") == "Whole" and "B-HALF" not in names


def test_a_hub_whose_broker_went_as_it_stopped_stops_all_the_same(tmp_path):
    """Stopping, the hub says "offline"; when its connection went a moment before (the worker
    not yet told), paho refuses the message. The stop goes on and closes the floor: the broker
    gives the hub's will ("lost"), and no worker is reported dead (seen under load)."""
    from hub.floor_worker import FloorWorker
    from hub.settings import HubSettings

    class Refused:
        mid = 0

        def wait_for_publish(self, timeout: float | None = None) -> None:
            raise RuntimeError("Message publish failed: The client is not currently connected.")

    class GoneClient:
        def publish(self, *args: object, **kwargs: object) -> Refused:
            return Refused()

    class Floor:
        closed = False

        def close(self) -> None:
            self.closed = True

    worker = FloorWorker(HubSettings(venue="v", db=str(tmp_path / "hub.db")), wall=lambda: 0.0)
    floor = Floor()
    worker.client = GoneClient()  # type: ignore[assignment]
    worker.service = floor  # type: ignore[assignment]
    worker.connected.set()
    worker.finish()
    assert floor.closed
