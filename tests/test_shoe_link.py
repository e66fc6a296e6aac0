"""Hardware in the loop: the simulated shoe (the firmware's own code) on a pty, the serial
transport (pyserial), the host codec and the table core, dealing full hands."""

from __future__ import annotations

import contextlib
import random
import time

import pytest

from controller.inputs import CardRead
from firmware_bridge.messages import CardDrawn
from houses.loaders import load_profile
from simulators.dealer_script import ScriptedDealer
from tablectl.sim_table import SimulatedTable
from tests.conftest import of_type, run

SCALE = 0.025  # the script's seconds, played 40 times faster


class Rig(SimulatedTable):
    """Shoe on a pty -> SerialShoe -> translator -> the daemon's Table; other lines go
    straight onto the daemon's queue."""

    def __init__(self, directory, profile="tda-2024", scale=SCALE):
        super().__init__(directory, profile, scale=scale)


@pytest.fixture
def rig(tmp_path):
    rigs = []

    def make(**kwargs):
        directory = tmp_path / f"rig{len(rigs) + 1}"  # each its own shoe and outbox
        directory.mkdir()
        r = Rig(directory, **kwargs)
        rigs.append(r)
        return r

    yield make
    for r in rigs:
        r.close()


def _records(events):
    return [{k: e[k] for k in ("hand", "outcome", "hole", "board", "burns", "scrap", "out")}
            for e in of_type(events, "hand.ended")]


def _rulings(events):
    return [(e["hand"], e["action"], e.get("reason")) for e in of_type(events, "ruling")]


@pytest.mark.slow
@pytest.mark.parametrize("profile,injections", [
    ("tda-2024", ("exposed_later", "boxed", "premature_turn", "fourth_flop", "missing_burn")),
    ("roberts-rules", ("extra_card", "premature_turn", "joker", "unknown_tag", "duplicate")),
    ("lppl", ("exposed_first", "premature_flop", "shoe_fault", "boxed_two")),
])
def test_full_hands_through_the_pty_match_the_replay(rig, profile, injections):
    # One injected irregularity per hand, in the order given, then a clean hand; a brisk
    # dealer (short betting rounds) so that the test plays in seconds.
    dealer = ScriptedDealer(random.Random(5), load_profile(profile), seats=(1, 3, 4, 7, 9),
                            button=4, pauses=(1.0, 2.5), between_hands=(2.0, 4.0))
    script = [dealer.setup_line()]
    for injection in (*injections, None):
        dealer.play_hand(injection)
    dealer.finish()
    script += dealer.lines
    expected = run(script, profile)
    r = rig(profile=profile)
    got = r.play(script)
    assert _records(got) == _records(expected)
    assert _rulings(got) == _rulings(expected)
    assert r.serial.link.stats.noise == {}


def test_a_player_running_late_keeps_the_scripts_moments(rig, monkeypatch):
    # A busy machine stalls the script's player now and then (here: 0.3 s before every
    # twelfth card). The cards it then draws late must still be stamped at their moments:
    # stamped late, one fell after the press that follows it and the core ruled another hand
    # (a premature turn's flop taken out, in loaded runs).
    import simulators.shoe as simulated_shoe

    perform = simulated_shoe.perform
    cards_seen = 0

    def stalling(line, shoe, direct, *, at=None):
        nonlocal cards_seen
        if line["type"] == "card":
            cards_seen += 1
            if cards_seen % 12 == 0:
                time.sleep(0.3)
        perform(line, shoe, direct, at=at)

    monkeypatch.setattr(simulated_shoe, "perform", stalling)
    dealer = ScriptedDealer(random.Random(5), load_profile("roberts-rules"),
                            seats=(1, 3, 4, 7, 9), button=4, pauses=(1.0, 2.5),
                            between_hands=(2.0, 4.0))
    script = [dealer.setup_line()]
    for injection in ("premature_turn", None):
        dealer.play_hand(injection)
    dealer.finish()
    script += dealer.lines
    table = rig(profile="roberts-rules")
    got = table.play(script)
    assert cards_seen >= 24
    drawn = [float(line["t"]) for line in script if line["type"] == "card"]
    stamped = [e["t"] for e in of_type(got, "card")]
    assert len(stamped) == len(drawn)
    late = [(i, round(s - stamped[0], 3), round((d - drawn[0]) * SCALE, 3))
            for i, (d, s) in enumerate(zip(drawn, stamped, strict=True))
            if abs((s - stamped[0]) - (d - drawn[0]) * SCALE) > 0.003]
    # (card, stamped, due), seconds after the first card; and the shoe's own stamps (ms), as
    # the link delivered them (one loaded run once stamped every card at the first's moment)
    shoe_stamps = [(e.seq, e.ms) for e in table.link_events if isinstance(e, CardDrawn)]
    assert late == [], f"{late}; the shoe's: {shoe_stamps}; {table.shoe.describe()}"
    assert _records(got) == _records(run(script, "roberts-rules"))


def test_unplugged_mid_hand_the_hand_record_is_the_same(rig):
    hole = ["As", "Ks", "Qs", "Js", "Ts", "9s", "8s", "7s"]
    board = ["2c", "3c", "4c", "5c", "6c", "7c", "8c", "9c"]

    def script(unplug):
        t = 0.0
        lines = [{"type": "setup", "game": "holdem", "seats": [1, 2, 4, 6], "button": 6},
                 {"type": "deck_in", "deck": "R1", "t": t}]
        for i, card in enumerate(hole):
            t += 0.5
            if unplug and i == 3:
                lines.append({"type": "shoe", "state": "lost", "t": t - 0.2})
            lines.append({"type": "card", "card": card, "t": t})
            if unplug and i == 5:
                lines.append({"type": "shoe", "state": "ok", "t": t + 10})
                t += 10
        for street in ([board[:4]], [board[4:6]], [board[6:]]):
            t += 20
            lines.append({"type": "button", "gesture": "tap", "t": t})
            for card in street[0]:
                t += 0.5
                lines.append({"type": "card", "card": card, "t": t})
        lines.append({"type": "button", "gesture": "double_tap", "t": t + 20})
        return lines

    plugged = rig().play(script(False))
    unplugged_rig = rig()
    unplugged = unplugged_rig.play(script(True))
    assert _records(unplugged) == _records(plugged)
    assert of_type(plugged, "irregularity") == []
    irregularities = of_type(unplugged, "irregularity")
    # reported to the floor, and nothing lost or doubled
    assert [e["kind"] for e in irregularities] == ["shoe_fault"], [
        (e.get("state"), e.get("part"), e.get("detail"), e["t"]) for e in irregularities]
    assert [e["state"] for e in of_type(unplugged, "shoe")][-2:] == ["lost", "ok"]


def test_garbage_and_double_reads_on_the_line(rig):
    r = rig()
    r.shoe.insert_deck()
    for i, card in enumerate(["As", "Ks", "Qs", "Js"]):
        if i == 2:
            r.shoe.send_garbage(b"\x13\x37 line noise \x00\xff\x00")
        r.shoe.draw(f"R1:{card}", reads=4)
        time.sleep(0.02)
    events = r.play([])  # (the table is set up from its configuration)
    cards = [e["card"] for e in of_type(events, "card")]
    assert cards == ["As", "Ks", "Qs", "Js"]
    assert sum(r.serial.link.stats.noise.values()) >= 1


def test_deck_check_mode_is_confirmed_by_the_shoe(rig):
    r = rig()
    r.serial.set_mode(1)
    assert r.pump_until(lambda: r.shoe.protocol.mode == 1, 3)
    r.shoe.draw("R1:As")
    from firmware_bridge import messages as m

    assert r.pump_until(lambda: any(isinstance(e, m.CardDrawn) and e.deck_check
                                     for e in r.link_events), 3)
    assert any(isinstance(e, m.ModeChanged) and e.mode == 1 for e in r.link_events)



STARVED = 0.5  # seconds the venue daemon's serial thread sleeps on the shoe's first message


def test_a_venue_table_starved_at_the_link_s_start_stamps_cards_at_their_moments(
        tmp_path, monkeypatch):
    """The simulated venue's table daemon reaches its simulated shoe (on this machine) over
    the serial backend. Its serial thread starved on a busy machine while the shoe's first
    message waited on the pty (here, deterministically: asleep before taking it in) must not
    shift the cards' times: estimated from that message's delay, every card read later by
    the whole delay, after a press stamped at its moment (issue 47: a hole card after the
    press that closed the betting). The venue's configuration says the shoe's clock is this
    host's: the cards keep the moments they were drawn at."""
    import queue
    import sys

    import serial

    from tablectl.config import load_config
    from tablectl.parts import Wiring, make_reader
    from tablectl.sim_venue import SimTable, SimulatedVenue

    open_port = serial.serial_for_url

    class StarvedPort:
        def __init__(self, port) -> None:
            self.port, self.starved = port, False

        def __getattr__(self, name):
            return getattr(self.port, name)

        def read(self, size=1):
            data = self.port.read(size)
            if data and not self.starved:
                self.starved = True
                time.sleep(STARVED)  # the fault: descheduled with the shoe's hello read
            return data

    monkeypatch.setattr(serial, "serial_for_url", lambda *a, **k: StarvedPort(open_port(*a, **k)))
    venue = SimulatedVenue(tmp_path, tables=1, hands=1, broker="none", quiet=True)
    table = SimTable(venue, 1)  # its shoe on a pty, its configuration as the venue writes it
    table.write_config()
    reads: queue.Queue = queue.Queue()
    reader = make_reader(Wiring(load_config(table.config), reads.put, time.monotonic,
                                sys.stderr, None))  # type: ignore[arg-type]
    assert reader is not None
    try:
        moments, stamped = [], []
        table.shoe.insert_deck()
        for card in ("As", "Ks", "Qs"):
            time.sleep(0.05)
            # The card's moment on the shoe's own clock, held there until it is drawn: a
            # moment read from this host's clock could be behind the shoe's already when
            # this thread is descheduled before the draw (a card 46 ms late, in a loaded run).
            moments.append(table.shoe.hold_here())
            table.shoe.draw(f"R1:{card}", at=moments[-1])
            table.shoe.hold(None)
        deadline = time.monotonic() + 10 + STARVED
        while len(stamped) < len(moments) and time.monotonic() < deadline:
            with contextlib.suppress(queue.Empty):
                read = reads.get(timeout=0.1)
                stamped += [i.t for i in reader.inputs(read.what, read.t)
                            if isinstance(i, CardRead)]
    finally:
        reader.stop()
        table.shoe.stop()
    assert len(stamped) == len(moments)
    late = [round(s - m, 3) for m, s in zip(moments, stamped, strict=True) if abs(s - m) > 0.002]
    assert late == [], late  # seconds each card was stamped after it was drawn


@contextlib.contextmanager
def _heard_over_a_serial_link(shoe, **port):
    """The shoe (not started yet) and a SerialShoe on its pty (opened with ``port``'s
    pyserial settings), yielding what the link hears; both stopped after."""
    import serial

    from hardware.shoe_serial import SerialShoe

    shoe.start()
    heard: list[object] = []
    link = SerialShoe(str(shoe.port), lambda event, _t: heard.append(event),
                      opener=lambda url: serial.serial_for_url(url, timeout=0.1, **port)).start()
    try:
        yield heard
    finally:
        link.stop()
        shoe.stop()


def _cards(heard):
    return [event.text for event in heard if isinstance(event, CardDrawn)]


def test_a_write_whose_deadline_passed_while_its_bytes_went_out_keeps_the_link(tmp_path):
    """pyserial's write timeout counts from the call and is checked after the bytes went out:
    a thread descheduled past it on a busy host raised with everything written, and the
    daemon took a working shoe for lost mid-hand (a floor call no dealer caused, in loaded
    runs of the network venue). Here every write's deadline has passed once its bytes are
    out (a timeout of a microsecond): the link's writes wait on the port, not the clock, and
    every card arrives over the one connection."""
    from firmware_bridge.host import LinkDown, LinkUp
    from simulators.shoe import SimulatedShoe

    shoe = SimulatedShoe(tmp_path / "shoe")
    with _heard_over_a_serial_link(shoe, write_timeout=1e-6) as heard:
        shoe.insert_deck()
        for card in ("As", "Ks", "Qs"):
            shoe.draw(f"R1:{card}")
        assert shoe.idle(10), shoe.describe()  # read, sent and acknowledged: the host wrote
    assert _cards(heard) == ["R1:As", "R1:Ks", "R1:Qs"]
    assert [type(e) for e in heard if isinstance(e, LinkUp | LinkDown)] == [LinkUp], heard


def test_a_port_that_takes_nothing_is_given_up_after_the_stall_and_a_slow_one_is_not():
    """The other side of waiting on the port: a shoe that stopped reading (its pipe full) is
    given up once it has taken nothing for the stall; one that reads slowly gets it all."""
    import os
    import threading

    from hardware.shoe_serial import WriteStalled, write_all

    class Port:  # a pipe's end, as a port: its descriptor
        def __init__(self, fd: int) -> None:
            self.fd = fd

        def fileno(self) -> int:
            return self.fd

    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    try:
        with pytest.raises(WriteStalled):
            write_all(Port(write_end), b"x" * (1 << 20), stall=0.2)  # more than a pipe holds
        os.set_blocking(read_end, False)
        with contextlib.suppress(BlockingIOError):
            while os.read(read_end, 1 << 16):
                pass
        os.set_blocking(read_end, True)
        got = bytearray()

        def slow_reader() -> None:
            while len(got) < 1 << 20:
                time.sleep(0.01)
                got.extend(os.read(read_end, 1 << 16))

        reader = threading.Thread(target=slow_reader)
        reader.start()
        write_all(Port(write_end), b"y" * (1 << 20), stall=5)
        reader.join(10)
        assert bytes(got) == b"y" * (1 << 20)
    finally:
        os.close(read_end)
        os.close(write_end)


def test_a_card_read_twice_as_it_passes_is_one_card_however_late_the_second_read(
        tmp_path, monkeypatch):
    """The antenna reads a card more than once as it passes; the firmware counts it once
    (reads within SAME_CARD_MS). The simulated shoe's thread starved between two reads of one
    card (here: 0.4 s asleep after the first) must not make them two cards (a live deck
    check counted 53 of 52, in a run of the suite)."""
    from simulators.shoe import SimulatedShoe

    shoe = SimulatedShoe(tmp_path / "shoe")
    rest = shoe._rest
    starved: list[bool] = []

    def starving(seconds: float, master: int | None) -> None:
        if shoe._reader.queue and not starved:  # a read of the card still to come
            starved.append(True)
            time.sleep(0.4)
        rest(seconds, master)

    monkeypatch.setattr(shoe, "_rest", starving)
    with _heard_over_a_serial_link(shoe) as heard:
        shoe.insert_deck()
        shoe.draw("R1:As", reads=2)
        shoe.draw("R1:Ks")
        assert shoe.idle(10), shoe.describe()
    assert starved
    assert _cards(heard) == ["R1:As", "R1:Ks"]
