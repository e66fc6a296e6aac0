"""The shoe firmware's reader (firmware_bridge/firmware/pn532.py, ndef_label.py) against the
simulated PN532 on I2C, with the tags that exist: labels as phones and encoders write them, a
factory NTAG213, phones and bank cards, torn writes, a chip slow to wake or to answer, a read
that fails as the card slides out, and a board clock that wraps at 2**30."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from firmware_bridge import messages as m
from firmware_bridge.firmware import ndef_label
from firmware_bridge.firmware import protocol as fw
from firmware_bridge.firmware.pn532 import LISTEN_MS, PN532Error
from firmware_bridge.firmware.shoe import FAULT_READER, Shoe
from firmware_bridge.host import HostLink
from simulators import shoe_frames as payloads
from simulators.pn532 import (
    LOCK_CONTROL_NTAG213,
    IsoDepCard,
    MifareClassic,
    Ntag,
    Type2Tag,
    chunked_record,
    control_range,
    lock_control_tlv,
    memory_control_tlv,
    ndef_message,
    ndef_record,
    text_payload,
    text_record,
    tlv_area,
    uri_record,
    vcard_record,
)
from tests.micropython import sessions
from tests.pn532_rig import PERIOD, ReaderRig, nfcpy_label

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
    message = ndef_message(uri_record("https://x.org"), text_record("R1:As", utf16="le"))
    for cut in range(0, len(message) + 1):
        for length in (cut, len(message)):  # the message cut, and its TLV still saying all
            data = bytes((0x03, length)) + message[:cut] + b"\xfe"
            assert isinstance(label_of(Ntag(UID, data=data)), str)
    assert label_of(Ntag(UID, data=bytes.fromhex("0303190100fe"))) == ""


# -- what phones leave around the label (issue 46, item 2) ------------------------------------
# Each tag is laid out as the NFC Forum's Type 2 Tag and NDEF specifications say
# (simulators/pn532.py: tlv_area, ndef_record, chunked_record, not the firmware's code), and
# read by the shoe's reader on the simulated PN532 and by nfcpy's own Type 2 Tag code.

def test_a_text_record_followed_by_a_674_byte_vcard_on_an_ntag216():
    """The issue's tag: the label, and after it a contact as a phone shares it. The message
    (702 bytes) is more than the 512 the reader took whole: it read as "no label". Now the
    Text record is read and nothing after it: two READs (the CC's, which holds the TLV, and
    one for the record)."""
    message = ndef_message(text_record("R1:As"), vcard_record(674))
    tag = Ntag(UID, message=message, kind="NTAG216")
    rig = ReaderRig()
    assert rig.read(tag) == (UID, "R1:As")
    assert rig.pages_read() == [3, 7]  # bytes 12-27 and 28-43: the Text record ends at 31
    assert nfcpy_label(tag) == "R1:As"


def test_the_text_record_after_a_674_byte_vcard_reads_none_of_the_vcard():
    vcard = ndef_record(*vcard_record(674), last=False)
    message = vcard + ndef_record(*text_record("R1:Kd"), first=False)
    tag = Ntag(UID, message=message, kind="NTAG216")
    rig = ReaderRig()
    assert rig.read(tag) == (UID, "R1:Kd")
    payload = range(20 + len(vcard) - 674, 20 + len(vcard))  # TLV 03 FF xx xx at 16
    # No READ for a page of the vCard's payload (a READ asks for the page of the byte the
    # walk needs, and gives it and the next three): the CC's, and the Text record's.
    assert rig.pages_read() == [3, (payload.stop >> 2)]
    assert nfcpy_label(tag) == "R1:Kd"


VCARD = vcard_record(300)
AROUND = [  # (what, the message, its label)
    ("a vCard, then the label", ndef_message(VCARD, text_record("R1:2d")), "R1:2d"),
    ("a URI and an empty record first",
     ndef_message(uri_record("https://example.org/x"), (0, b"", b""), text_record("R1:3d")),
     "R1:3d"),
    ("an external type and an unknown one",
     ndef_message((4, b"example.com:deck", bytes(40)), (5, b"", bytes(300)),
                  text_record("R1:4d")), "R1:4d"),
    ("records with IDs, the label's too",
     ndef_record(2, b"text/plain", b"x" * 20, record_id=b"note", last=False)
     + ndef_record(1, b"T", text_payload("R1:5d"), record_id=b"#label", first=False),
     "R1:5d"),
    ("the label in a long record (four-byte payload length)",
     ndef_record(1, b"T", text_payload("R1:6d"), short=False), "R1:6d"),
    ("a vCard in chunks, then the label",
     chunked_record(*vcard_record(400), [100, 1, 0], last=False)
     + ndef_record(*text_record("R1:7d"), first=False), "R1:7d"),
    ("a Text record of another language after one in UTF-16",
     ndef_message(text_record("R1:8d", "fr-CA", utf16="be"), text_record("R1:9d")), "R1:8d"),
    ("no Text record: a URI and a vCard", ndef_message(uri_record("https://x.org"), VCARD), ""),
    ("a Smart Poster's title is not the label",
     ndef_message((1, b"Sp", ndef_message(uri_record("https://x.org"), text_record("R1:Ah")))),
     ""),
]


@pytest.mark.parametrize("what, message, label", AROUND, ids=[a[0] for a in AROUND])
def test_the_first_text_record_whatever_comes_around_it(what, message, label):
    tag = Ntag(UID, message=message, kind="NTAG216")
    assert label_of(tag) == label
    assert nfcpy_label(tag) == label  # the reference agrees


def test_a_text_record_in_chunks_is_its_chunks_end_to_end():
    """NDEF's record chunks: the Text record's payload is its chunks' (even one of none), the
    header's bytes between them not. (ndeflib does not join chunks: nfcpy gives the first
    chunk's text alone, here "", where the specification's record is all of them.)"""
    for sizes in ([1, 2, 0], [0, 3, 4], [8]):
        payload = text_payload("R1:Tc \u00e9\U0001F0A1")
        message = (ndef_record(*uri_record("https://x.org"), last=False)
                   + chunked_record(1, b"T", payload, sizes, first=False))
        assert label_of(Ntag(UID, message=message)) == "R1:Tc \u00e9\U0001F0A1", sizes
    # a chunked record broken off, or chunks with ME before their last: no label
    broken = chunked_record(1, b"T", text_payload("R1:As"), [3])
    assert label_of(Ntag(UID, message=broken[:-9] + ndef_record(*text_record("R1:As")))) == ""
    early_end = bytearray(broken)
    early_end[0] |= 0x40  # ME with CF
    assert label_of(Ntag(UID, message=bytes(early_end))) == ""


@pytest.mark.parametrize("filler", [0x00, 0xFF])
def test_a_memory_control_tlvs_reserved_bytes_are_not_read_into_the_label(filler):
    """Issue 46: 16 reserved bytes (Memory Control TLV 02 03 81 10 02: page 8, byte 1, 4-byte
    pages) fall inside the label; the writer stepped over them, so does the reader. (Read
    as the message's, they gave "R1:" and NULs.)"""
    control = memory_control_tlv(33, 16)
    assert control == bytes.fromhex("0203811002")
    data = tlv_area(ndef_message(text_record("R1:Kd")), memory_control=control, filler=filler)
    assert data[33 - 16:49 - 16] == bytes((filler,)) * 16  # in the middle of "R1:Kd"
    tag = Ntag(UID, data=data)
    assert label_of(tag) == "R1:Kd"
    assert nfcpy_label(tag) == "R1:Kd"


def test_lock_bytes_and_reserved_bytes_in_the_message_are_stepped_over():
    """A Lock Control TLV whose lock bytes lie in the data area (2 bytes for 16 lock bits:
    nfcpy's get_lock_byte_range), a Memory Control TLV's reserved area across the record's
    header, and the factory NTAG213's Lock Control (its lock bytes just past its data area):
    wherever they fall in the message, the label reads as written."""
    for lock_at, reserved_at, size in ((40, 26, 3), (48, 27, 40), (31, 64, 16)):
        lock = lock_control_tlv(lock_at, 16)
        reserved = memory_control_tlv(reserved_at, size, page_exponent=3)
        assert len(control_range(lock)) == 2 and len(control_range(reserved)) == size
        message = ndef_message(uri_record("https://example.org/deck/R1"),
                               text_record("R1:Qs \u00c9t\u00e9"))
        tag = Ntag(UID, data=tlv_area(message, lock_control=LOCK_CONTROL_NTAG213 + lock,
                                      memory_control=reserved, filler=0x54))
        assert label_of(tag) == "R1:Qs \u00c9t\u00e9", (lock_at, reserved_at)
        assert nfcpy_label(tag) == "R1:Qs \u00c9t\u00e9"


def test_reserved_bytes_on_the_tlvs_own_length_are_stepped_over_too():
    """The specification takes the control areas out of the data area, not only out of a
    TLV's value: Android's libnfc-nci skips them "while searching for TLV" too. (nfcpy reads
    a TLV's length where it lies, so it reads this tag otherwise.)"""
    data = tlv_area(ndef_message(text_record("R1:Jh")), memory_control=memory_control_tlv(22, 4))
    assert data[21 - 16] == 0x03 and data[26 - 16] == len(ndef_message(text_record("R1:Jh")))
    assert label_of(Ntag(UID, data=data)) == "R1:Jh"


def test_the_message_is_bounded_by_the_tags_data_area_and_nothing_else():
    """An NTAG216's whole data area is a message: a label after 850 bytes of other records is
    read; a TLV or a record that claims more than the area holds is no label."""
    message = ndef_message(VCARD, vcard_record(523), text_record("R1:Ac"))
    data = tlv_area(message)
    assert len(data) == 872  # the data area to its last byte (03 FF xx xx ... FE)
    assert label_of(Ntag(UID, data=data, kind="NTAG216")) == "R1:Ac"
    too_long = bytearray(data)
    too_long[2:4] = (len(message) + 2).to_bytes(2, "big")  # to byte 888: past 887
    assert label_of(Ntag(UID, data=bytes(too_long), kind="NTAG216")) == ""
    text = ndef_record(1, b"T", text_payload("R1:Ac"))
    past = text[:2] + bytes((text[2] + 1,)) + text[3:]  # a payload one byte past the message
    assert label_of(Ntag(UID, data=tlv_area(past))) == ""
    many = b"".join(memory_control_tlv(200 + 8 * i, 2, page_exponent=4) for i in range(5))
    assert label_of(Ntag(UID, data=tlv_area(ndef_message(text_record("R1:Ac")),
                                            memory_control=many))) == ""  # 5 control areas


MIXED = "R1:" + "".join(("a", "\u00e9", "\u20ac", "\U0001F0A1")[i % 4] for i in range(330))


@pytest.mark.parametrize("text, utf16", [(MIXED, None), (MIXED, "be"), (MIXED, "le"),
                                         ("R1:" + "\u4e2d" * 250, "be")])
def test_a_text_longer_than_a_frame_is_read_as_far_as_the_frame_needs(text, utf16):
    """A label past TEXT_BYTES (512) is read that far, and kept as 512 bytes of UTF-8 at
    most, cut at a character: the CARD frame, which carries 233 bytes at most, is byte for
    byte the one the whole text makes (cut, and flagged cut); the READs stop there."""
    tag = Ntag(UID, message=ndef_message(text_record(text, utf16=utf16)), kind="NTAG216")
    rig = ReaderRig()
    label = rig.read(tag)[1]
    assert label is not None and text.startswith(label) and len(label) < len(text)
    assert len(label.encode()) <= ndef_label.TEXT_BYTES
    # TLV 03 FF xx xx at 16 (or 03 xx at 16 for a message under 255 bytes), the record's
    # header and type, its status and "en": the text, read to its 512th byte and no further
    start = 16 + (4 if len(tag.memory[16:].rstrip(b"\0")) > 256 else 2) + 7 + 3
    last = start + min(ndef_label.TEXT_BYTES, len(text.encode("utf-16-be")) + 2) - 1
    assert 4 * max(rig.pages_read()) <= last < 4 * max(rig.pages_read()) + 16  # its READ
    for uid in (bytes(4), UID, bytes(10)):
        whole = fw.ShoeProtocol(1, "fw", "shoe", 15, 0)
        read = fw.ShoeProtocol(1, "fw", "shoe", 15, 0)
        whole.card(5, uid, text, False, False)
        read.card(5, uid, label, False, False)
        assert read.unacked[-1][1] == whole.unacked[-1][1]


LABELS = st.one_of(st.text(max_size=40), st.text(st.characters(codec="utf-8"), max_size=8))
OTHER = st.one_of(  # records that are not a label, as ndeflib takes them (their TNF's rules)
    st.builds(lambda n: vcard_record(n), st.integers(80, 700)),
    st.builds(lambda p: (4, b"example.com:card", p), st.binary(max_size=300)),
    st.builds(lambda p: (5, b"", p), st.binary(max_size=300)),
    st.just((0, b"", b"")),
    st.builds(lambda u: uri_record("https://example.org/" + u), st.text("abc/", max_size=20)),
)


@st.composite
def tags_around_a_label(draw):
    """A tag as a writer lays it out: records around a label (or none), the label in UTF-8 or
    UTF-16 with its mark, records long and short, with and without IDs, control TLVs whose
    areas fall anywhere past the NDEF TLV's own length bytes."""
    records = draw(st.lists(OTHER, max_size=4))
    label = draw(LABELS)
    if draw(st.booleans()):
        records.insert(draw(st.integers(0, len(records))),
                       text_record(label, draw(st.sampled_from(["en", "de", "zh-Hant"])),
                                   utf16=draw(st.sampled_from([None, "be", "le"]))))
    else:
        label = ""
    message = b""
    for i, (tnf, kind, payload) in enumerate(records):
        message += ndef_record(tnf, kind, payload, first=i == 0, last=i == len(records) - 1,
                               short=None if len(payload) > 255 else draw(st.booleans()) or None,
                               record_id=b"" if tnf == 0 else draw(st.sampled_from([b"", b"i"])))
    controls = b""
    for _ in range(draw(st.integers(0, 3))):
        exponent = draw(st.integers(2, 5))
        at = draw(st.integers(16 + 15 + 4, min(15 * 2**exponent + 15, 800)))
        page = at >> exponent
        at = (page << exponent) + min(at - (page << exponent), 15)  # one a TLV can say
        if draw(st.booleans()):
            controls += memory_control_tlv(at, draw(st.integers(1, 40)), page_exponent=exponent)
        else:
            controls += lock_control_tlv(at, draw(st.integers(1, 64)), page_exponent=exponent)
    data = tlv_area(message or None, memory_control=controls, filler=draw(st.integers(0, 255)))
    assume(len(data) <= 872)
    return Ntag(UID, data=data, kind="NTAG216"), label


@settings(max_examples=300, deadline=None)
@given(tags_around_a_label())
def test_whatever_is_around_the_label_the_reader_and_nfcpy_agree(case):
    tag, label = case
    assert sessions.label_of(tag.memory) == label
    assert nfcpy_label(tag) == label


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
