"""A table's snapshot (controller/snapshot.py) and the daemon's start from it (issue 44, item 5):
a table restored from a snapshot then fed the journal after it behaves as one fed the whole
journal, event for event; a start replays the lines after the newest snapshot only, however
long the table has dealt; a snapshot that cannot be restored never stops the table."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import io
import json
import os
import random
import shutil
import sqlite3
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contract.wire import decode, encode
from controller.cards import Rereads
from controller.clock import BlindClock
from controller.inputs import parse_input
from controller.screens import DisplayModel, Status
from controller.snapshot import SnapshotError, restore, snapshot
from controller.table import Table, TableConfig, TableUsageError
from controller.table_parts import (
    DealersChoice,
    DealerShift,
    HandForHandState,
    RunningShot,
    ShotClockTimer,
)
from houses.loaders import load_profile, load_structure
from simulators.dealer_script import session
from tablectl.config import config_from_data
from tablectl.daemon import Daemon
from tablectl.doctor import WARN, check_journal
from tests.behaviour import cases

# ---------------------------------------------------------------------------- the core


_profile = functools.lru_cache(load_profile)
_structure = functools.lru_cache(load_structure)


def _table(profile: str) -> Table:
    return Table(_profile(profile), TableConfig(evaluate=False), _structure)


def _run(profile: str, lines: list[str], *, restore_at_rest: bool) -> tuple[list, int]:
    """Every line through a table and a display's model: what each line gave (its events,
    or its refusal, and the table's state after it); with ``restore_at_rest``, the table and
    the model are replaced at every rest by new ones restored from their snapshot."""
    table, model = _table(profile), DisplayModel()
    seen, restores = [], 0
    for t, text in enumerate(lines):
        try:
            events = table.handle(parse_input(json.loads(text)))
        except TableUsageError as exc:
            seen.append(("refused", str(exc)))
            continue
        for event in events:
            model.update(event)
        seen.append(([event.to_json() for event in events], table.state()))
        if table.at_rest:
            seen.append(model)  # (copied: the model changes in place)
            seen[-1] = dataclasses.replace(model, status=dataclasses.replace(model.status))
        if restore_at_rest and table.at_rest:
            data = decode(encode(snapshot(table, model, float(t))))  # as stored
            table, model = _table(profile), DisplayModel()
            assert restore(data, table, model) == (float(t), [])
            assert snapshot(table, model, float(t)) == data  # and read back whole
            restores += 1
    seen.append(snapshot(table, model, 0.0) if table.at_rest else table.state())
    return seen, restores


def test_every_recorded_scenario_dealt_through_snapshots_is_the_scenario_dealt_whole():
    """The recorded scenarios (tests/scenarios: a SPEC row each) under every profile (the
    behaviour cases of tests/behaviour.py), the table restored from its snapshot at every
    rest: the same events, states and screens. (Generated sessions: the next test.)"""
    restores = 0
    for name, profile, lines in cases():
        if not name.startswith("scenario/"):
            continue
        whole, _ = _run(profile, lines, restore_at_rest=False)
        through, count = _run(profile, lines, restore_at_rest=True)
        assert through == whole, name
        restores += count
    assert restores > 300


# Between hands, what a session's script does not do: the floor, the clock, the shoe, a deck
# check, dealer's choice taps, a shot clock called, tags enrolled by a setup line.
_BETWEEN = [
    [{"type": "hand_for_hand", "state": "on"}], [{"type": "hand_for_hand", "state": "release"}],
    [{"type": "hand_for_hand", "state": "off"}], [{"type": "clock", "action": "pause"}],
    [{"type": "clock", "action": "resume"}], [{"type": "clock", "action": "stop"}],
    [{"type": "clock", "structure": "tda-2024"}],
    [{"type": "clock", "action": "sync", "structure": "tda-2024", "elapsed": 2400.0,
      "running": True}],
    [{"type": "clock", "action": "sync", "structure": "tda-2024", "elapsed": 7150.0,
      "running": False}],
    [{"type": "button", "gesture": "hold"}], [{"type": "button", "gesture": "long_hold"}],
    [{"type": "button", "gesture": "tap"}], [{"type": "dealer", "dealer": "D9"}],
    [{"type": "shoe", "state": "lost"}], [{"type": "shoe", "state": "ok"}],
    [{"type": "deck_check", "action": "start", "deck": "R1"}, {"type": "card", "card": "As"},
     {"type": "card", "card": "Kd"}, {"type": "deck_check", "action": "finish"}],
    [{"type": "setup", "tags": {"04A1B2C3": "R1:Qh"}}], [{"type": "card", "tag": "04A1B2C3"}],
    [{"type": "card", "card": "2c"}], [{"type": "deck_out"}],
]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), profile=st.sampled_from(["tda-2024", "dealers-choice",
                                                             "corner-pocket", "roberts-rules"]),
       extras=st.lists(st.tuples(st.integers(0, 11), st.sampled_from(range(len(_BETWEEN)))),
                       max_size=10))
def test_a_table_restored_at_every_rest_deals_on_as_the_table_itself(seed, profile, extras):
    lines, _ = session(random.Random(seed), _profile(profile), hands=10, game="mixed",
                       irregularity_rate=0.4, clock="tda-2024", brisk=True,
                       dealers=("D1", "D2"), dealer_every=3)
    starts = [i for i, line in enumerate(lines) if line["type"] == "deck_in"]
    for hand, which in sorted(extras, reverse=True):  # before that hand's deck
        at = starts[min(hand, len(starts) - 1)]
        t = float(lines[at]["t"]) - 0.5
        lines[at:at] = [{**line, "t": t} for line in _BETWEEN[which]]
    text = [json.dumps(line) for line in lines]
    whole, _ = _run(profile, text, restore_at_rest=False)
    through, restores = _run(profile, text, restore_at_rest=True)
    assert through == whole and restores > 0


def test_every_attribute_of_what_a_snapshot_covers_is_in_it_or_the_configuration():
    """A new attribute of the table (or of a part of it) must be put in the snapshot (and its
    version raised, with a reader for the old one) or said to be configuration here."""
    table = Table(load_profile("tda-2024"))
    covered = {
        # snapshotted
        "now", "game", "seats", "setup_button", "hand", "next_number", "last_positions",
        "last_outcome", "redeals", "setup_tags", "last_deck", "shift", "clock",
        "clock_source", "shot", "shoe_state", "_rereads", "choice", "waiting", "betting",
        "hand_for_hand", "seating_version",
        # the daemon's, from its configuration
        "profile", "config", "structure_loader", "registry",
        # only while a hand is on or a deck check runs (Table.at_rest)
        "pending_setup", "pending_seats", "pending_seating_version", "deck_check",
    }
    assert set(vars(table)) == covered
    assert set(vars(BlindClock(load_structure("tda-2024"), 0.0))) == {
        "structure", "started_t", "elapsed_before", "running_since", "index",
        "warned_index", "stopped", "_bounds"}  # (_bounds: the structure's)
    assert set(vars(DealerShift())) == {"dealer", "since", "hands"}
    assert set(vars(ShotClockTimer())) == {"running"}
    assert {f.name for f in dataclasses.fields(RunningShot)} == {
        "started", "seconds", "countdown", "countdown_sent"}
    assert set(vars(DealersChoice())) == {"declared", "hand_declared"}
    assert set(vars(HandForHandState())) == {"state"}
    assert set(vars(Rereads())) == {"window", "_last"}  # (window: the configuration's)
    assert {f.name for f in dataclasses.fields(DisplayModel)} == {
        "alert_seconds", "announcement_seconds", "alert_lines",  # the daemon's
        "level", "on_break", "alert", "shot", "deck_check", "deck_check_until",
        "announcement", "hand_for_hand", "game", "status"}
    assert {f.name for f in dataclasses.fields(Status)} == {"hand", "shoe", "hub", "dealer"}


def _a_snapshot() -> dict:
    lines, _ = session(random.Random(5), load_profile("tda-2024"), hands=3, clock="tda-2024")
    table, model = _table("tda-2024"), DisplayModel()
    for line in lines:
        for event in table.handle(parse_input(line)):
            model.update(event)
    assert table.at_rest
    return decode(encode(snapshot(table, model, 99.0)))


@pytest.mark.parametrize(("change", "said"), [
    (lambda s: s.update(version=3), "version 3: this table's software reads versions 1, 2"),
    (lambda s: s["core"].update(seating_version=-1), "core.seating_version: a whole number"),
    (lambda s: s.update(version="1"), "version '1'"),
    (lambda s: s["core"].pop("clock"), "core: missing clock"),
    (lambda s: s["core"].update(extra=1), "core: unknown extra"),
    (lambda s: s["core"].update(next_number=0), "core.next_number: a whole number from 1"),
    (lambda s: s["core"]["clock"].update(index="3"), "core.clock.index: a whole number"),
    (lambda s: s["core"].update(seats=[1, 1, 2]), "core.seats: seats each named once"),
    (lambda s: s["core"].update(game="chess"), "core.game: one of holdem"),
    (lambda s: s["core"]["shift"].update(since=True), "core.shift.since: a finite number"),
    (lambda s: s["screen"].update(level={"type": "card"}), "screen.level"),
    (lambda s: s["core"].update(setup_tags={"04": "nonsense"}), "CardError"),
    (lambda s: s.update(core=[]), "core: an object was expected, not list"),
])
def test_a_snapshot_is_read_strictly_and_what_is_wrong_is_named(change, said):
    data = _a_snapshot()
    assert restore(data, _table("tda-2024"), DisplayModel())[0] == 99.0
    change(data)
    with pytest.raises(SnapshotError) as caught:
        restore(data, _table("tda-2024"), DisplayModel())
    assert said in str(caught.value)


def test_a_version_1_snapshot_is_read_with_no_seating_of_the_hubs():
    """A table upgraded reads its version 1 snapshot (written before the hub numbered its
    seatings): it holds none of the hub's, so the hub sends its seating again."""
    data = _a_snapshot()
    assert data["version"] == 2 and data["core"]["seating_version"] == 0
    data["core"]["seating_version"] = 7
    table = _table("tda-2024")
    restore(data, table, DisplayModel())
    assert table.seating_version == 7
    data["version"] = 1
    del data["core"]["seating_version"]
    table = _table("tda-2024")
    restore(data, table, DisplayModel())
    assert table.seating_version == 0 and table.seats is not None


def test_a_structure_gone_since_the_snapshot_leaves_the_table_without_its_clock():
    data = _a_snapshot()
    data["core"]["clock"]["structure"] = "gone-since"
    table = _table("tda-2024")
    _, notes = restore(data, table, DisplayModel())
    assert table.clock is None and "'gone-since' cannot be loaded" in notes[0]


# ---------------------------------------------------------------------------- the daemon


@pytest.fixture(scope="module")
def memory(tmp_path_factory):
    """Where this module's outboxes go: the fsync of every commit is not what is tested, so
    in memory (tmpfs) where there is one."""
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        yield tmp_path_factory.mktemp("outboxes")
        return
    directory = Path(tempfile.mkdtemp(dir=shm, prefix="pkr-snapshot-"))
    try:
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def fast(memory, request):
    directory = memory / request.node.name.replace("[", "-").replace("]", "")
    directory.mkdir()
    return directory


class _Clock:
    """The daemon's monotonic clock, the same in every daemon of a test."""

    def __call__(self) -> float:
        return 500.0


def _daemon(directory, every: int) -> Daemon:
    config = config_from_data({
        "table": {"venue": "v", "id": "t1", "seats": [1, 2, 3, 5, 8], "button": 3},
        "shoe": {"backend": "none"}, "button": {"backend": "none"},
        "display": {"backend": "none"}, "buzzer": {"backend": "none"},
        "mqtt": {"enabled": False}, "clock": {"structure": "tda-2024"},
        "storage": {"data_dir": str(directory)}}, "test")
    daemon = Daemon(config, out=io.StringIO(), clock=_Clock())
    daemon.snapshot_every = every
    daemon.start()
    daemon.table.config.evaluate = False  # (pokerkit's hand ranks: no part of the state)
    return daemon


def _deal(daemon: Daemon, lines: list[dict]) -> list[list[dict]]:
    return [[event.to_json() for event in daemon.feed(parse_input(line))] for line in lines]


def _state(daemon: Daemon) -> tuple:
    table = daemon.table
    return (snapshot(table, daemon.screen.model, daemon.journal_t) if table.at_rest else None,
            daemon.now(), table.state(), daemon.screen.model)


def _session_lines(hands: int, seed: int = 11) -> list[dict]:
    lines, _ = session(random.Random(seed), load_profile("tda-2024"), hands=hands,
                       game="mixed", irregularity_rate=0.3, seats=(1, 2, 3, 5, 8),
                       dealers=("D1", "D2"), dealer_every=5)
    return [{**line, "t": line["t"] + 1000.0} for line in lines[1:]]  # (the setup is the daemon's)


EVERY = 60
HAND = 60  # lines a hand takes at most, in these sessions


def test_a_start_replays_the_journal_after_the_newest_snapshot_however_long_the_history(
        fast):
    """The same hands dealt at two tables, one snapshotting every 150 lines, one never (as
    before): at each restart the first replays fewer than 150 lines and a hand's whatever
    it has dealt, the second its whole history; both are the same table, and deal on the
    same."""
    tmp_path = fast
    lines = _session_lines(45)
    third = len(lines) // 3
    snapshotting, whole = _daemon(tmp_path / "a", EVERY), _daemon(tmp_path / "b", 10**9)
    replayed = []
    try:
        for part in range(3):
            chunk = lines[part * third:(part + 1) * third]
            assert _deal(snapshotting, chunk) == _deal(whole, chunk)
            snapshotting.stop()
            whole.stop()
            snapshotting, whole = _daemon(tmp_path / "a", EVERY), _daemon(tmp_path / "b", 10**9)
            assert _state(snapshotting) == _state(whole)
            assert whole.resumed >= (part + 1) * third  # its whole history
            assert snapshotting.restored is not None and snapshotting.resumed < EVERY + HAND
            replayed.append(snapshotting.resumed)
            kept = len(snapshotting.outbox.journal_lines())
            assert kept < 2 * (EVERY + HAND), kept  # compacted behind the older snapshot
        tail = lines[3 * third:] + _session_lines(3, seed=12)
        assert _deal(snapshotting, tail) == _deal(whole, tail)
        assert _state(snapshotting) == _state(whole)
    finally:
        snapshotting.stop()
        whole.stop()
    assert len(lines) > 10 * EVERY and max(replayed) < EVERY + HAND


def test_a_journal_from_before_snapshots_is_replayed_once(fast):
    """An outbox of an earlier version (every line since the table's first start, no
    snapshot): the first start replays it all, writing snapshots on the way as the dealing
    would have (a start cut short by systemd is taken up from the last), the next replays
    only the lines after the last."""
    tmp_path = fast
    lines = _session_lines(20)
    old = _daemon(tmp_path / "a", 10**9)
    _deal(old, lines)
    old.stop()
    (tmp_path / "b").mkdir()
    shutil.copy(tmp_path / "a" / "t1.db", tmp_path / "b" / "t1.db")
    whole = _daemon(tmp_path / "b", 10**9)
    first = _daemon(tmp_path / "a", EVERY)
    try:
        assert first.restored is None and first.resumed == len(lines) + 2  # (setup, clock)
        assert _state(first) == _state(whole)
        (newest, upto, _, _), (older, behind, _, _) = first.outbox.snapshots()
        assert newest > older and len(lines) + 2 - EVERY - HAND < upto and behind < upto
        assert first.outbox.journal_lines()[0][0] == behind + 1  # compacted as it went
    finally:
        first.stop()
    again = _daemon(tmp_path / "a", EVERY)
    try:
        assert again.restored == upto and again.resumed == len(lines) + 2 - upto
        assert _state(again) == _state(whole)
    finally:
        again.stop()
        whole.stop()


def _spoil_newest(path, how: str) -> None:
    with sqlite3.connect(path) as db:
        newest = db.execute("SELECT MAX(id) FROM snapshot").fetchone()[0]
        if how == "altered":  # a torn write, a bad sector: the digest no longer matches
            db.execute("UPDATE snapshot SET state = replace(state, '\"hands\":', "
                       "'\"hand\":') WHERE id = ?", (newest,))
        else:  # a format this version does not read (a newer one's, after a downgrade)
            text = db.execute("SELECT state FROM snapshot WHERE id = ?", (newest,)).fetchone()[0]
            data = json.loads(text)
            data["version"] = 99
            text = json.dumps(data)
            db.execute("UPDATE snapshot SET state = ?, digest = ? WHERE id = ?",
                       (text, hashlib.sha256(text.encode()).hexdigest(), newest))


@pytest.fixture(scope="module")
def dealt(memory):
    """The same hands dealt at a table that snapshots and at one that never does."""
    directory = memory / "dealt"
    lines = _session_lines(25)
    snapshotting, whole = _daemon(directory / "a", EVERY), _daemon(directory / "b", 10**9)
    try:
        _deal(snapshotting, lines)
        _deal(whole, lines)
    finally:
        snapshotting.stop()
        whole.stop()
    assert len(snapshotting.outbox.snapshots()) == 2
    return directory, lines


def _copy(dealt, fast) -> Path:
    directory, _ = dealt
    for side in ("a", "b"):
        (fast / side).mkdir()
        shutil.copy(directory / side / "t1.db", fast / side / "t1.db")
    return fast


@pytest.mark.parametrize("how", ["altered", "newer"])
def test_a_snapshot_that_cannot_be_restored_falls_back_to_the_one_before(dealt, fast, how):
    tmp_path, lines = _copy(dealt, fast), dealt[1]
    _spoil_newest(tmp_path / "a" / "t1.db", how)
    whole = _daemon(tmp_path / "b", 10**9)
    again = _daemon(tmp_path / "a", EVERY)
    try:
        assert _state(again) == _state(whole)  # nothing lost
        (lost_id, upto, reason), = again.snapshots_lost
        assert again.restored is not None and again.restored < upto
        assert ("digest" if how == "altered" else "version 99") in reason
        said = again.out.getvalue()  # type: ignore[attr-defined]
        assert f"snapshot {lost_id} (of the journal up to line {upto}) could not be " \
               "restored" in said and "nothing is lost" in said
        event = [row[3] for row in again.outbox.rows(0, 10**6)][-1]
        assert event["type"] == "journal.quarantined" and event["line"] == upto
        assert "nothing is lost" in event["reason"]
        assert [q["id"] for q in again.outbox.quarantined_snapshots()] == [lost_id]
        doctor = check_journal(again.config)
        assert doctor.result == WARN and doctor.detail.startswith(
            f"1 snapshot(s) of the table could not be restored and were set aside (newest: "
            f"snapshot {lost_id}")
        assert _deal(again, lines[:40]) == _deal(whole, lines[:40])
    finally:
        again.stop()
        whole.stop()
    once_more = _daemon(tmp_path / "a", EVERY)  # the snapshot set aside is not tried again
    try:
        assert once_more.snapshots_lost == []
    finally:
        once_more.stop()


def test_no_snapshot_left_to_restore_starts_the_table_from_its_configuration(dealt, fast):
    tmp_path = _copy(dealt, fast) / "a"
    with sqlite3.connect(tmp_path / "t1.db") as db:
        db.execute("UPDATE snapshot SET digest = 'x'")
    again = _daemon(tmp_path, EVERY)
    try:
        assert len(again.snapshots_lost) == 2 and again.restored is None
        assert "no snapshot left" in again.out.getvalue()  # type: ignore[attr-defined]
        assert again.table.seats is not None and again.table.clock is not None
        events = _deal(again, _session_lines(2, seed=13))  # it deals
        assert any(e["type"] == "hand.ended" for events_ in events for e in events_)
    finally:
        again.stop()
    last = _daemon(tmp_path, EVERY)  # and starts again as it left off
    try:
        assert last.snapshots_lost == [] and last.table.seats is not None
    finally:
        last.stop()


def test_a_card_read_again_just_after_the_snapshot_is_the_same_card_passing():
    """The last read is in the snapshot: the antenna's second read of the hand's last card,
    within the re-read window, is no card (not one read while no hand is on)."""
    lines, _ = session(random.Random(9), _profile("tda-2024"), hands=1)
    table = _table("tda-2024")
    for line in lines:
        table.handle(parse_input(line))
    last = next(line for line in reversed(lines) if line["type"] == "card")
    table.handle(parse_input({"type": "button", "gesture": "double_tap",
                              "t": last["t"] + 0.05}))
    assert table.at_rest
    restored = _table("tda-2024")
    restore(decode(encode(snapshot(table, DisplayModel(), 0.0))), restored, DisplayModel())
    again = {**last, "t": last["t"] + 0.2}
    assert table.handle(parse_input(again)) == restored.handle(parse_input(again)) == []
