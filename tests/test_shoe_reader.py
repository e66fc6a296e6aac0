"""The shoe firmware's reader (firmware_bridge/firmware/pn532.py, ndef_label.py) against the
simulated PN532 on I2C, with the tags that exist: labels as phones and encoders write them, a
factory NTAG213, phones and bank cards, torn writes, a chip slow to wake or to answer, a read
that fails as the card slides out, and a board clock that wraps at 2**30."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firmware_bridge import messages as m
from firmware_bridge.firmware import ndef_label
from firmware_bridge.firmware import protocol as fw
from firmware_bridge.firmware.pn532 import LISTEN_MS, PN532Error
from firmware_bridge.firmware.shoe import FAULT_READER, Shoe
from firmware_bridge.host import HostLink
from simulators import shoe_frames as payloads
from simulators.pn532 import (
    IsoDepCard,
    MifareClassic,
    Ntag,
    Type2Tag,
    ndef_message,
    text_record,
    tlv_area,
    uri_record,
)
from tests.micropython import sessions
from tests.pn532_rig import PERIOD, ReaderRig

UID = bytes.fromhex("04a1b2c3d4e5f6")


def label_of(card) -> str | None:
    return ReaderRig().read(card)[1]


# -- labels as phones and encoders write them ----------------------------------------------

def test_a_factory_ntag213_keeps_its_lock_control_tlv_before_the_label():
    tag = Ntag(UID, "R1:As", kind="NTAG213")  # 01 03 A0 0C 34 first, as shipped
    assert tag.memory[16:21] == bytes.fromhex("0103a00c34")
    assert label_of(tag) == "R1:As"


def test_a_memory_control_tlv_before_the_label():
    data = tlv_area(ndef_message(text_record("R1:Kd")), memory_control=True)
    assert label_of(Ntag(UID, data=data)) == "R1:Kd"


def test_the_three_byte_tlv_length_form():
    assert label_of(Ntag(UID, "R1:Qh", long_length=True)) == "R1:Qh"
    long_text = "R1:Jc " + "x" * 300  # a message of more than 254 bytes needs the long form
    tag = Ntag(UID, data=tlv_area(ndef_message(text_record(long_text))), kind="NTAG216")
    assert tag.memory[16:18] == b"\x03\xff"
    assert label_of(tag) == long_text


def test_the_text_record_after_a_uri_record():
    message = ndef_message(uri_record("https://example.org/deck/R1"), text_record("R1:7s"))
    assert label_of(Ntag(UID, message=message, kind="NTAG213")) == "R1:7s"


def test_utf16_labels_with_and_without_a_byte_order_mark():
    for order in ("be", "le", "bare"):
        for text in ("R1:Ah", "Dealer \u00c9lo\u00efse \U0001F0A1"):  # a surrogate pair too
            message = ndef_message(text_record(text, utf16=order))
            assert label_of(Ntag(UID, message=message)) == text, order


def test_a_tag_without_a_label_and_a_torn_write_give_no_label_and_raise_nothing():
    assert label_of(Ntag(UID, None, kind="NTAG213")) == ""  # factory: an empty NDEF message
    torn = bytes.fromhex("0303190100fe")  # a record header claiming 0x19 type bytes
    assert label_of(Ntag(UID, data=torn)) == ""
    unformatted = Type2Tag(UID, bytes(180))  # no Capability Container
    assert label_of(unformatted) == ""


def test_cards_of_every_uid_size():
    for uid in (bytes.fromhex("1a2b3c4d"), UID, bytes.fromhex("04a1b2c3d4e5f6a7b8c9")):
        memory = bytes(12) + b"\xe1\x10\x12\x00" + tlv_area(ndef_message(text_record("R2:2c")))
        assert ReaderRig().read(Type2Tag(uid, memory + bytes(160))) == (uid, "R2:2c")


def test_phones_and_bank_cards_are_read_by_their_uid_and_nothing_raises():
    rig = ReaderRig()
    # A bank card's ATS, 19 bytes (its length byte counts itself), and a phone's random UID.
    bank = IsoDepCard(bytes.fromhex("0811a2b3"), bytes([19]) + bytes(range(0x70, 0x82)))
    assert rig.read(bank) == (bank.uid, "")
    phone = IsoDepCard(bytes.fromhex("08c0ffee"), bytes.fromhex("0575338102"))
    assert rig.read(phone) == (phone.uid, "")
    classic = MifareClassic(bytes.fromhex("deadbeef"))
    assert rig.read(classic) == (classic.uid, "")
    # Issue 46: a phone with a 7-byte UID and a 62-byte ATS (its answer past 80 bytes)
    long_ats = IsoDepCard(bytes.fromhex("04c1a2b3c4d5e6"), bytes([62]) + bytes(range(61)))
    assert rig.read(long_ats) == (long_ats.uid, "")
    assert rig.reader.ok()
    assert 0x40 not in rig.chip.commands  # no Type 2 READ was sent to any of them


def test_a_capability_container_of_another_major_version_is_read_as_no_label():
    """Issue 46: mapping version 2.0 (CC byte 1 = 0x20) is not the NDEF this reader knows
    (nfcpy reads it as no NDEF): the tag goes by its UID, though its memory holds a label
    as version 1.0 would."""
    memory = bytearray(Ntag(UID, "R1:As", kind="NTAG213").memory)
    assert sessions.label_of(bytes(memory)) == "R1:As"
    memory[13] = 0x20
    assert sessions.label_of(bytes(memory)) == ""
    assert label_of(Type2Tag(UID, bytes(memory))) == ""


@settings(max_examples=300, deadline=None)
@given(st.binary(min_size=0, max_size=140), st.booleans())
def test_whatever_a_tag_holds_the_reader_gives_a_label_or_none_and_never_raises(data, magic):
    memory = bytes(12) + (b"\xe1\x10\x12\x00" if magic else data[:4].ljust(4, b"\0")) + data
    rig = ReaderRig()
    uid, label = rig.read(Type2Tag(UID, memory.ljust(180, b"\0")))
    # A label, none (""), or None when the tag's memory cannot be read as its Capability
    # Container says (READs past its last page): the shoe then sends the card as unreadable.
    assert uid == UID and (label is None or isinstance(label, str))
    assert rig.reader.ok()


def test_the_label_parser_never_raises_on_any_message():
    for cut in range(1, 40):
        message = ndef_message(uri_record("https://x.org"), text_record("R1:As", utf16="le"))
        assert isinstance(ndef_label.message_text(message[:cut]), str)
    assert ndef_label.message_text(bytes.fromhex("190100")) == ""


# -- what the reader does with the chip -----------------------------------------------------

class FlakyTag(Ntag):
    """A tag whose first READs go unanswered (it is sliding out of the field)."""

    def __init__(self, uid: bytes, text: str, failures: int) -> None:
        super().__init__(uid, text)
        self.failures = failures

    def respond(self, command: bytes) -> bytes | None:
        if command[:1] == b"\x30" and self.failures:
            self.failures -= 1
            return None
        return super().respond(command)


def test_a_failed_label_read_is_read_again_not_sent_as_no_label():
    rig = ReaderRig()
    rig.chip.present(FlakyTag(UID, "R1:Th", failures=3))
    reads = rig.turns(40)
    assert reads[0] == (UID, None)  # not readable this turn: said so, not "" (no label)
    assert (UID, "R1:Th") in reads  # and read on a later turn while the card is there


def test_a_glitch_on_the_bus_is_not_a_reader_fault():
    rig = ReaderRig()
    rig.turns(1000)  # past the boot
    rig.chip.present(Ntag(UID, "R1:6h"))
    rig.bus.corrupt = 3  # three answers garbled on the wires
    reads = rig.turns(30)
    assert (UID, "R1:6h") in reads and rig.reader.ok()


def _shoe(rig: ReaderRig):
    protocol = fw.ShoeProtocol(1, "fw", "shoe", 15, rig.now())
    protocol.synced = True
    shoe = Shoe(protocol, rig.reader, sessions.Sensor(), sessions.Sensor(), sessions.Sensor(),
                rig.now())
    return shoe, protocol


def _cards(protocol) -> list[m.CardDrawn]:
    link = HostLink()
    link.receive_data(fw.frame(fw.HELLO, 0, payloads.hello_payload(1, 0, 15, "fw", "shoe")))
    for _, frame_bytes, _ in protocol.unacked:
        link.receive_data(frame_bytes)
    return [e for e in link.events() if isinstance(e, m.CardDrawn)]


def _run_shoe(rig, shoe, turns):
    for _ in range(turns):
        rig.clock.sleep_ms(2)
        shoe.turn(rig.now())


def test_a_card_whose_label_is_never_read_goes_out_as_unreadable_with_its_moment():
    rig = ReaderRig()
    shoe, protocol = _shoe(rig)
    _run_shoe(rig, shoe, 5)
    rig.chip.present(FlakyTag(UID, "R1:9d", failures=10**6))
    _run_shoe(rig, shoe, 2)
    assert shoe.held is not None and shoe.held[0] == UID
    first_seen = shoe.held[1]
    _run_shoe(rig, shoe, 3)
    rig.chip.remove()  # it slid out unread
    _run_shoe(rig, shoe, 200)
    (card,) = _cards(protocol)
    assert card.unreadable and card.uid == b"" and card.ms == first_seen
    rig.chip.present(Ntag(bytes.fromhex("04000000000001"), "R1:Td"))  # the next card reads
    _run_shoe(rig, shoe, 10)
    assert [c.text for c in _cards(protocol)] == ["", "R1:Td"]


def test_a_label_read_at_the_second_try_is_one_card_with_its_label():
    rig = ReaderRig()
    shoe, protocol = _shoe(rig)
    _run_shoe(rig, shoe, 5)
    rig.chip.present(FlakyTag(UID, "R1:5s", failures=3))
    _run_shoe(rig, shoe, 60)
    assert [(c.uid, c.text, c.unreadable) for c in _cards(protocol)] == [(UID, "R1:5s", False)]


def test_a_pending_listen_is_aborted_before_anything_else_is_sent():
    rig = ReaderRig()
    rig.turns(int(LISTEN_MS * 3.5 / 2))  # no card for 3.5 s: the listen is renewed three times
    assert rig.chip.aborts >= 3
    assert rig.chip.dropped_by_command == 0  # never a command sent over a pending one
    rig.chip.present(Ntag(UID, "R1:2h"))
    assert (UID, "R1:2h") in rig.turns(5)


def test_a_chip_that_answers_in_30_ms_is_read():
    rig = ReaderRig(answer_ms=30)
    assert rig.read(Ntag(UID, "R1:8c"), turns=60) == (UID, "R1:8c")


def test_reads_across_the_board_clock_wrap():
    """ticks_ms wraps at 2**30: a command sent just before the wrap and answered after it is
    not a time-out. Each start puts another step of a read across the wrap."""
    for before in range(1, 30):
        rig = ReaderRig(start_ms=PERIOD - before, answer_ms=3)
        tag = Ntag(UID, "R1:As")
        assert rig.read(tag) == (UID, "R1:As"), f"{before} ms before the wrap"
        assert rig.reader.ok()


def test_no_fault_at_boot_from_a_chip_slow_to_wake():
    rig = ReaderRig(wake_ms=60)  # its first commands go unanswered
    shoe, protocol = _shoe(rig)
    _run_shoe(rig, shoe, 300)
    assert not [e for e in protocol.unacked if e[2] == fw.FAULT]
    assert rig.reader.ok()
    rig.chip.present(Ntag(UID, "R1:As"))
    _run_shoe(rig, shoe, 10)
    assert [c.text for c in _cards(protocol)] == ["R1:As"]


def test_a_reader_missing_at_boot_is_reported_then_configured_when_it_answers():
    rig = ReaderRig()
    rig.bus.gone = True
    shoe, protocol = _shoe(rig)
    _run_shoe(rig, shoe, 1000)  # 2 s
    assert not rig.reader.ok()
    rig.bus.gone = False  # the cable to the PN532 reseated: it starts again
    rig.chip.power_cycle()
    _run_shoe(rig, shoe, 200)
    faults = [m.parse(fw.FAULT, 0, _payload(e[1])) for e in protocol.unacked if e[2] == fw.FAULT]
    assert [(f.code, f.active) for f in faults] == [(FAULT_READER, True), (FAULT_READER, False)]
    rig.chip.present(Ntag(UID, "R1:Kc"))
    _run_shoe(rig, shoe, 10)
    assert [c.text for c in _cards(protocol)] == ["R1:Kc"]


def test_a_read_of_fewer_than_16_bytes_is_not_a_label():
    class ShortReads(Type2Tag):
        def respond(self, command):
            answer = super().respond(command)
            if answer and command[:1] == b"\x30":
                return answer[:8] + answer[-2:]  # 8 bytes and a CRC
            return answer

    tag = Ntag(UID, "R1:As")
    assert label_of(ShortReads(UID, tag.memory)) is None


def test_an_answer_that_came_as_the_listen_was_renewed_is_dropped_by_the_abort():
    """The status byte said "not ready" and the card's answer came a moment later, as the
    reader renews its listen: aborted first, that answer is dropped, not read as the ACK."""
    rig = ReaderRig()
    rig.turns(1000)  # past the boot: a failure now would be a fault
    rig.clock.ms += LISTEN_MS  # the pending listen is due for renewal
    rig.chip.present(Ntag(UID, "R1:3d"))
    rig.bus.hide_ready = 1  # the answer is there, the status byte read just before it was not
    reads = rig.turns(5)
    assert (UID, "R1:3d") in reads
    assert rig.reader.ok() and rig.chip.aborts >= 1


def _payload(frame_bytes: bytes) -> bytes:
    from firmware_bridge.framing import FrameDecoder

    (frame,) = FrameDecoder().feed(frame_bytes)
    return frame.payload


def test_a_chip_that_never_acknowledges_is_a_pn532_error():
    rig = ReaderRig(wake_ms=10**9)  # asleep for ever
    try:
        rig.pn532.configure()
    except PN532Error as exc:
        assert "ACK" in str(exc)
    else:
        raise AssertionError("configured a chip that never answered")


@pytest.mark.parametrize("chip", ["abort_keeps_ready", "loses_after_abort"])
def test_the_reader_assumes_nothing_the_manual_does_not_say_of_an_abort(chip):
    """What an abort leaves is not in the manual: a chip that keeps an answer it had ready,
    and one that loses the first command after an abort (libnfc issue 167), read every card
    with its label and raise no fault, through renewed listens and answers that come as a
    listen is renewed."""
    rig = ReaderRig(**{chip: True})
    shoe, protocol = _shoe(rig)
    _run_shoe(rig, shoe, 1800)  # 3.6 s without a card: the listen renewed three times
    labels = []
    for i in range(6):
        label = f"R1:{'AKQJT9'[i]}c"
        labels.append(label)
        rig.clock.ms += LISTEN_MS - 5  # the listen is due for renewal as the card comes
        rig.chip.present(Ntag(bytes([4, 1, 1, 1, 1, 1, i]), label))
        rig.bus.hide_ready = 3 * (i % 2)  # and, every other time, its answer missed until then
        _run_shoe(rig, shoe, 30)
        rig.chip.remove()
        _run_shoe(rig, shoe, 200)
    assert rig.chip.aborts >= 3
    assert [c.text for c in _cards(protocol)] == labels
    assert not [e for e in protocol.unacked if e[2] == fw.FAULT]


def test_a_status_poll_the_bus_refuses_is_no_fault_and_blinds_nothing():
    rig = ReaderRig()
    shoe, protocol = _shoe(rig)
    _run_shoe(rig, shoe, 1000)
    rig.bus.refuse = 1  # one transfer refused (a glitch on the wires)
    _run_shoe(rig, shoe, 30)  # 60 ms later a card passes
    rig.chip.present(Ntag(UID, "R1:4d"))
    _run_shoe(rig, shoe, 25)
    rig.chip.remove()
    _run_shoe(rig, shoe, 100)
    assert [c.text for c in _cards(protocol)] == ["R1:4d"]
    assert not [e for e in protocol.unacked if e[2] == fw.FAULT]


def test_a_reader_whose_every_answer_is_garbled_becomes_a_fault_then_recovers():
    rig = ReaderRig()
    rig.turns(1000)
    rig.chip.present(Ntag(UID, "R1:As"))
    rig.bus.corrupt = 10**9
    rig.turns(1000)  # 2 s of nonsense
    assert not rig.reader.ok()
    rig.bus.corrupt = 0
    reads = rig.turns(500)
    assert rig.reader.ok() and (UID, "R1:As") in reads


class _ScriptedReader:
    def __init__(self, reads):
        self.reads = reads  # {turn: read}

    def read(self, now_ms):
        return self.reads.get(now_ms)

    def ok(self):
        return True


def test_a_card_held_unread_and_seen_again_soon_after_is_one_card():
    """Its label unread at 0 ms, the reader blind until 330 ms, then the card read with its
    label: it went out as unreadable at 200 ms, and the later read is the same pass."""
    protocol = fw.ShoeProtocol(1, "fw", "shoe", 15, 0)
    protocol.synced = True
    reader = _ScriptedReader({0: (UID, None), 330: (UID, "R1:As")})
    shoe = Shoe(protocol, reader, sessions.Sensor(), sessions.Sensor(), sessions.Sensor(), 0)
    for now in range(0, 700, 2):
        shoe.turn(now)
    cards = _cards(protocol)
    assert [(c.unreadable, c.ms) for c in cards] == [(True, 0)]


# -- a hung PN532, a stuck bus: recovered (issue 46, item 3) ----------------------------------

def _until(rig: ReaderRig, done, limit_ms: int = 10_000) -> int:
    """Turns of the loop until ``done()``; the board's milliseconds it took."""
    start = rig.clock.ms
    while not done():
        assert rig.clock.ms - start < limit_ms, "not within the deadline"
        rig.turns()
    return int(rig.clock.ms - start)


@pytest.mark.parametrize("fault", ["hang", "jam"])
def test_a_hung_chip_or_a_stuck_bus_is_reported_then_recovered_by_itself(fault):
    """A PN532 whose firmware stops, or a bus a device holds (the board reset mid-read): the
    fault is reported after 500 ms, then the reader clears the bus (nine SCL clocks and a
    STOP), pulses RSTPDN and configures the chip again: the shoe reads cards again, nobody
    touching it."""
    rig = ReaderRig(lines=True)
    assert rig.read(Ntag(UID, "R1:As"), turns=200) == (UID, "R1:As")  # after the boot's reset
    resets = rig.chip.resets  # the boot's own recovery
    rig.turns(900)  # past the boot's grace
    if fault == "hang":
        rig.chip.hang()
    else:
        rig.bus.jam(bits=5)
    _until(rig, lambda: not rig.reader.ok())
    back = _until(rig, rig.reader.ok)
    assert back < 1000, back  # the reset's 20 ms, the chip's 100 ms to start, a configure
    assert rig.chip.resets == resets + 1
    assert rig.bus.clears == (1 if fault == "jam" else 0)
    assert not rig.bus.jammed and not rig.chip.hung
    assert rig.read(Ntag(bytes([4, 2, 2, 2, 2, 2, 2]), "R1:Kd"))[1] == "R1:Kd"


def test_without_its_lines_a_hung_chip_stays_a_fault():
    """What the lines buy: the same hang on a board without RSTPDN wired is never over."""
    rig = ReaderRig()
    rig.read(Ntag(UID, "R1:As"))
    rig.turns(900)
    rig.chip.hang()
    _until(rig, lambda: not rig.reader.ok())
    rig.turns(5000)  # 10 s
    assert not rig.reader.ok()


def test_a_reset_alone_does_not_free_a_bus_left_mid_transfer():
    """The bus clear is needed, not only the reset: with a reset and no clocks, the bus stays
    jammed, and the reader tries again every 2 s without end."""
    rig = ReaderRig(lines=True)
    rig.read(Ntag(UID, "R1:As"), turns=200)
    rig.turns(900)
    assert rig.lines is not None
    rig.lines.clear_bus = lambda: rig.bus  # type: ignore[method-assign]
    rig.bus.jam()
    _until(rig, lambda: not rig.reader.ok())
    first = rig.reader.recoveries
    rig.turns(2500)  # 5 s
    assert not rig.reader.ok() and rig.reader.recoveries >= first + 2


def test_the_boot_clears_the_bus_and_resets_the_chip_a_watchdog_reset_left():
    """A watchdog reset restarts the RP2040 mid-read, not the PN532: the next boot finds the
    bus jammed and the chip in the middle of a listen; the shoe starts reading all the same,
    with no fault."""
    rig = ReaderRig(lines=True)
    rig.bus.jam(bits=3)
    rig.chip.hang()
    assert rig.read(Ntag(UID, "R1:9h"), turns=200) == (UID, "R1:9h")
    assert rig.reader.ok() and rig.bus.clears == 1 and rig.chip.resets == 1
