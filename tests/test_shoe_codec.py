"""The shoe protocol: framing, the host's sans-I/O link, and the firmware's end, against the
golden vectors; fed whole and one byte at a time; fuzzed with random and corrupted streams."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firmware_bridge import messages as m
from firmware_bridge.firmware import protocol as fw
from firmware_bridge.framing import (
    Frame,
    FrameDecoder,
    Noise,
    UsageError,
    cobs_decode,
    cobs_encode,
    crc16,
    encode_frame,
)
from firmware_bridge.host import NEED_DATA, HostLink, LinkNoise, Retransmission, ShoeRestarted
from simulators import shoe_frames as payloads

VECTORS = json.loads((Path(__file__).parents[1] / "firmware_bridge" / "vectors.json").read_text())
FRAMES = VECTORS["frames"]
UID = bytes.fromhex("04a1b2c3d4e5f6")


def test_crc_check_value_in_both_implementations():
    assert crc16(b"123456789") == 0x29B1 == fw.crc16(b"123456789")


@pytest.mark.parametrize("vector", FRAMES, ids=[v["name"] for v in FRAMES])
def test_golden_vectors_host_and_firmware_agree(vector):
    payload = bytes.fromhex(vector["payload"])
    wire = bytes.fromhex(vector["wire"])
    assert encode_frame(vector["type"], vector["seq"], payload) == wire
    assert fw.frame(vector["type"], vector["seq"], payload) == wire
    (frame,) = FrameDecoder().feed(wire)
    assert frame == Frame(vector["type"], vector["seq"], payload)


@pytest.mark.parametrize("vector", [v for v in FRAMES if v["type"] < m.ACK],
                         ids=[v["name"] for v in FRAMES if v["type"] < m.ACK])
def test_every_shoe_vector_parses_within_the_payload_limit(vector):
    message = m.parse(vector["type"], vector["seq"], bytes.fromhex(vector["payload"]))
    assert len(bytes.fromhex(vector["payload"])) <= m.MAX_PAYLOAD
    if "cut" in vector["name"]:
        assert message.text_cut and message.text.startswith("R1:As ")
    if "unreadable" in vector["name"]:
        assert message.unreadable and message.uid == b""
    if "lost_cards" in vector["name"]:
        assert message.lost_cards == 12


@given(st.binary(max_size=700))
def test_cobs_round_trip_in_both_implementations(data):
    encoded = cobs_encode(data)
    assert b"\x00" not in encoded
    assert cobs_decode(encoded) == data
    assert fw.cobs_encode(data) == encoded
    assert fw.cobs_decode(encoded) == data


def _stream(count=20, seed=1):
    rng = random.Random(seed)
    sent = []
    wire = bytearray()
    for seq in range(count):
        label = f"R1:{rng.choice('AKQJT98765432')}{rng.choice('shdc')}"
        payload = payloads.card_payload(seq * 400, UID, label, face_up=rng.random() < 0.2)
        sent.append((seq, label))
        wire += encode_frame(m.CARD, seq, payload)
    return sent, bytes(wire)


def _host_with_hello():
    link = HostLink()
    link.receive_data(encode_frame(m.HELLO, 0, payloads.hello_payload(7, 0, 15, "fw", "shoe")))
    assert isinstance(link.next_event(), m.Hello)
    # The answer to the HELLO: the host follows boot 7's numbering from seq 0.
    assert link.data_to_send() == encode_frame(m.HELLO_ACK, 0xFFFF, (7).to_bytes(4, "big"))
    return link


def _cards(link):
    out = []
    while (event := link.next_event()) is not NEED_DATA:
        if isinstance(event, m.CardDrawn):
            out.append((event.seq, event.text))
    return out


@pytest.mark.parametrize("chunk", [None, 1, 3, 7, 64])
def test_fed_whole_or_in_pieces_the_same_cards_come_out(chunk):
    sent, wire = _stream()
    link = _host_with_hello()
    if chunk is None:
        link.receive_data(wire)
    else:
        for i in range(0, len(wire), chunk):
            link.receive_data(wire[i:i + chunk])
    assert _cards(link) == sent
    assert link.data_to_send() == encode_frame(m.ACK, 19)  # one cumulative ACK


def test_garbage_between_frames_is_skipped_and_reported():
    sent, wire = _stream(3)
    frames = [b"\x00" + f + b"\x00" for f in wire.split(b"\x00") if f]
    noisy = b"\xff\xfe" + frames[0] + b"junk\x00\x00\x00" + frames[1] + b"\x05\x05" + frames[2]
    link = _host_with_hello()
    link.receive_data(noisy)
    events = link.events()
    assert [(e.seq, e.text) for e in events if isinstance(e, m.CardDrawn)] == sent
    assert sum(isinstance(e, LinkNoise) for e in events) == 3


def test_retransmission_is_one_card_and_is_acknowledged_again():
    _, wire = _stream(2)
    link = _host_with_hello()
    link.receive_data(wire)
    assert len(_cards(link)) == 2
    link.data_to_send()
    link.receive_data(wire)  # the shoe never got the ACK: sends both again
    events = link.events()
    assert [type(e) for e in events] == [Retransmission, Retransmission]
    assert link.data_to_send() == encode_frame(m.ACK, 1)


def test_a_frame_ahead_of_a_lost_one_waits_for_the_retransmission():
    _sent, wire = _stream(3)
    frames = [b"\x00" + f + b"\x00" for f in wire.split(b"\x00") if f]
    link = _host_with_hello()
    link.receive_data(frames[0] + frames[2])  # frame 1 lost on the line
    assert [s for s, _ in _cards(link)] == [0]
    link.receive_data(frames[1] + frames[2])  # go-back-N retransmission
    assert [s for s, _ in _cards(link)] == [1, 2]


def test_reliable_frames_before_hello_are_not_accepted_and_a_hello_is_asked_for():
    _, wire = _stream(1)
    link = HostLink()
    link.receive_data(wire)
    assert link.next_event() is NEED_DATA
    # No ACK (the numbering is unknown), but a HOST_HELLO: the shoe's HELLO may have been lost.
    assert link.data_to_send() == encode_frame(m.HOST_HELLO, 0, b"\x01")


def test_a_new_boot_id_is_a_restart():
    link = _host_with_hello()
    link.receive_data(encode_frame(m.HELLO, 0, payloads.hello_payload(8, 40, 15, "fw", "shoe")))
    restarted = link.next_event()
    assert isinstance(restarted, ShoeRestarted) and restarted.boot_id == 8
    assert link.expected == 40


def test_same_boot_hello_does_not_rewind():
    _sent, wire = _stream(2)
    link = _host_with_hello()
    link.receive_data(wire)
    _cards(link)
    # The link came back; the shoe still holds seq 1 (its ACK was lost) and says so.
    link.receive_data(encode_frame(m.HELLO, 0, payloads.hello_payload(7, 1, 15, "fw", "shoe")))
    link.receive_data(wire.split(b"\x00")[1] + b"\x00")
    assert _cards(link) == []
    assert link.expected == 2


def test_bad_payload_with_good_crc_is_acknowledged_and_reported():
    link = _host_with_hello()
    link.receive_data(encode_frame(m.CARD, 0, b"\x00\x01"))
    event = link.next_event()
    assert isinstance(event, LinkNoise) and event.reason == "bad_payload"
    assert link.data_to_send() == encode_frame(m.ACK, 0)


def test_usage_errors_are_the_callers():
    with pytest.raises(UsageError):
        encode_frame(m.CARD, 70000)
    with pytest.raises(UsageError):
        encode_frame(m.CARD, 0, bytes(300))
    with pytest.raises(UsageError):
        HostLink().set_mode(5)


@settings(max_examples=300)
@given(st.binary(max_size=2000))
def test_random_bytes_never_raise_and_never_invent_a_card(data):
    link = _host_with_hello()
    for i in range(0, len(data), 17):
        link.receive_data(data[i:i + 17])
    # A card needs a COBS frame with a valid CRC-16, version and the expected seq: noise that
    # got through would show up here.
    assert not [e for e in link.events() if isinstance(e, m.CardDrawn)]
    assert link.stats.delivered == 0


@settings(max_examples=300)
@given(seed=st.integers(0, 2**32), cuts=st.lists(st.integers(0, 10**6), max_size=8),
       flips=st.lists(st.tuples(st.integers(0, 10**6), st.integers(1, 255)), max_size=8),
       garbage=st.lists(st.tuples(st.integers(0, 10**6), st.binary(min_size=1, max_size=40)),
                        max_size=6),
       chunk=st.integers(1, 200))
def test_corrupted_streams_deliver_only_sent_cards_in_order(seed, cuts, flips, garbage, chunk):
    sent, wire = _stream(30, seed % 1000)
    data = bytearray(wire)
    for position, mask in flips:
        data[position % len(data)] ^= mask
    for position, junk in garbage:
        at = position % (len(data) + 1)
        data[at:at] = junk
    for position in sorted({c % len(data) for c in cuts}, reverse=True):
        del data[position:position + 5]
    link = _host_with_hello()
    for i in range(0, len(data), chunk):
        link.receive_data(bytes(data[i:i + chunk]))
    got = _cards(link)
    # Only cards that were sent, each at most once, in the order sent.
    assert all(card in sent for card in got)
    seqs = [s for s, _ in got]
    assert seqs == sorted(set(seqs))
    # Then the shoe retransmits everything unacknowledged, cleanly: every card arrives.
    link.receive_data(wire)
    assert [s for s, _ in got] + [s for s, _ in _cards(link)] == list(range(30))


@settings(max_examples=200)
@given(st.lists(st.sampled_from(FRAMES), min_size=1, max_size=10), st.binary(max_size=50))
def test_every_valid_frame_after_garbage_is_recovered(vectors, junk):
    decoder = FrameDecoder()
    wire = junk + b"\x00" + b"".join(bytes.fromhex(v["wire"]) for v in vectors)
    frames = [x for x in decoder.feed(wire) if isinstance(x, Frame)]
    assert [(f.type, f.seq) for f in frames][-len(vectors):] == [
        (v["type"], v["seq"]) for v in vectors]


def test_an_endless_run_without_delimiter_is_dropped_and_the_decoder_resyncs():
    decoder = FrameDecoder()
    out = decoder.feed(b"\x01" * 5000)
    assert out == [] and decoder.pending == 0
    out = decoder.feed(b"\x01\x01\x00" + bytes.fromhex(FRAMES[0]["wire"]))
    assert isinstance(out[0], Noise) and isinstance(out[-1], Frame)


def test_firmware_retransmits_until_acknowledged_and_answers_commands():
    shoe = fw.ShoeProtocol(99, "fw", "shoe", 15, now_ms=0)
    shoe.card(10, UID, "R1:As", False, False)
    first = shoe.poll(10)
    link = HostLink()
    link.receive_data(first)
    # A new boot holds its messages until the host answers its HELLO.
    assert [type(e) for e in link.events()] == [m.Hello]
    assert shoe.poll(260) == first  # no answer in 250 ms: the HELLO again, and only it
    shoe.receive(link.data_to_send(), 262)  # HELLO_ACK for boot 99
    link.receive_data(shoe.poll(263))
    assert [type(e) for e in link.events()] == [m.CardDrawn]
    assert shoe.poll(400) == b""  # nothing due yet
    again = shoe.poll(600)  # no ACK in 250 ms: resend
    link.receive_data(again)
    assert [type(e) for e in link.events()] == [Retransmission]
    shoe.receive(link.data_to_send(), 610)
    assert shoe.unacked == []
    link.set_mode(m.MODE_DECK_CHECK)
    shoe.receive(link.data_to_send(), 620)
    link.receive_data(shoe.poll(630))
    assert link.events() == [m.ModeChanged(1, 1)]
    shoe.card(700, UID, "R1:Ks", False, False)
    link.receive_data(shoe.poll(700))
    (card,) = [e for e in link.events() if isinstance(e, m.CardDrawn)]
    assert card.deck_check


def test_a_delimiter_turned_into_0x01_does_not_pass_as_a_longer_frame():
    # Found by the fuzz test: COBS then decodes one extra zero byte, and a CRC without final
    # XOR accepts the frame shifted by one byte. The length byte rejects it.
    _sent, wire = _stream(2)
    data = bytearray(wire)
    first_end = data.index(0, 1)  # the delimiter after the first frame
    data[first_end] = 0x01
    link = _host_with_hello()
    link.receive_data(bytes(data))
    events = link.events()
    assert [e.reason for e in events if isinstance(e, LinkNoise)] == ["bad_length"]
    assert not [e for e in events if isinstance(e, m.CardDrawn) and e.seq == 0]
    link.receive_data(wire)  # the retransmission brings card 0, then card 1, in order
    assert [s for s, _ in _cards(link)] == [0, 1]


def test_a_dealer_badge_drawn_through_the_shoe_signs_the_dealer_in():
    from controller.inputs import CardRead, DealerSignIn
    from tablectl.shoe_to_core import ShoeTranslator

    translator = ShoeTranslator()
    badge = m.CardDrawn(1, 1000, bytes.fromhex("04aa"), "dealer:D9", False, False, False)
    card = m.CardDrawn(2, 1500, bytes.fromhex("04bb"), "R1:Kd", True, False, False)
    assert translator.translate(badge, 10.0) == [DealerSignIn("D9", 10.0)]
    read = translator.translate(card, 10.5)[0]
    assert isinstance(read, CardRead) and (read.card, read.deck, read.face) == ("Kd", "R1", "up")


def test_the_shoe_clock_slews_to_a_smaller_delay_instead_of_stepping():
    """The first messages came 300 ms late (a busy host), then one arrives at once: the
    offset moves by at most SLEW a second, so two cards half a second apart on the shoe stay
    half a second apart (give or take 1 %), and the error is gone after 15 s."""
    from tablectl.shoe_to_core import SLEW, ShoeClock

    clock = ShoeClock()
    clock.observe(1000, 101.3)  # HELLO, 300 ms on its way
    first = clock.to_host(2000, 102.3)  # a card, as late
    second = clock.to_host(2500, 102.501)  # the next, at once: 299 ms less delay
    assert 0.5 - 0.5 * SLEW <= second - first <= 0.5
    assert second > 102.5  # still mapped late: corrected gradually
    for ms in range(3000, 20000, 500):  # quick messages for 17 s
        clock.observe(ms, 100.0 + ms / 1000 + 0.001)
    assert abs(clock.to_host(20000, 120.001) - 120.001) < 1e-6


def test_a_pinned_shoe_clock_keeps_its_mapping_through_late_messages_and_a_restart():
    """A shoe whose clock is known to be the host's (the simulated shoe) is mapped by that
    offset alone: a message that comes 300 ms late keeps its moment, and so does the first
    one after the shoe restarted."""
    from tablectl.shoe_to_core import ShoeClock

    clock = ShoeClock()
    clock.pin(100.0)
    assert clock.to_host(1000, 101.3) == 101.0  # sent at 101.0, read at 101.3
    assert clock.to_host(1500, 101.5) == 101.5
    clock.reset()  # the shoe restarted
    assert clock.to_host(2000, 102.4) == 102.0


def _raw_frame(type_: int, seq: int, payload: bytes) -> bytes:
    """A frame however long, its length byte and CRC in agreement (encode_frame refuses a
    payload over 240 bytes)."""
    body = bytes((1, type_, seq >> 8, seq & 0xFF, len(payload))) + payload
    crc = crc16(body)
    return b"\x00" + cobs_encode(body + bytes((crc >> 8, crc & 0xFF))) + b"\x00"


def test_the_shoe_drops_a_host_frame_longer_than_247_bytes():
    """PROTOCOL.md: a decoded frame longer than 247 bytes is noise, even when its length byte
    and CRC agree; the firmware acted on a HOST_HELLO of 257 bytes (resending everything)."""
    shoe = fw.ShoeProtocol(3, "fw", "shoe", 15, now_ms=0)
    shoe.poll(0)
    for size in (241, 250, 255):
        shoe.receive(_raw_frame(m.HOST_HELLO, 0, bytes(size)), 1)
        assert shoe.poll(2) == b"", size
    shoe.receive(_raw_frame(m.HOST_HELLO, 0, bytes(240)), 3)  # 247 bytes: a frame
    answered = [f for f in FrameDecoder().feed(shoe.poll(4)) if isinstance(f, Frame)]
    assert [f.type for f in answered] == [m.HELLO]


@given(st.integers(min_value=0, max_value=(1 << 40)))
def test_a_host_clock_shoe_counts_from_its_clocks_last_32_bit_wrap(host_ms):
    """The simulated shoe's clock is the host's milliseconds cut to 32 bits: its zero is the
    last wrap at or before now, one rule for the shoe and for a table that pins it."""
    zero = m.clock_zero_ms(host_ms)
    assert zero % m.MS_WRAP == 0 and zero <= host_ms < zero + m.MS_WRAP
    assert host_ms - zero == host_ms & 0xFFFFFFFF  # what the shoe stamps at host_ms


def test_the_simulated_shoe_and_a_pinned_table_take_the_same_zero(tmp_path):
    from types import SimpleNamespace

    from simulators.shoe import SimulatedShoe
    from tablectl.parts import host_clock_pin

    # The daemon's time the host's: the pin is the zero, but for the moment between the two
    # readings of the clock (a different zero would be 2^32 ms, some 50 days, away).
    wiring = SimpleNamespace(now=time.monotonic)
    shoe = SimulatedShoe(tmp_path / "shoe")
    assert abs(host_clock_pin(wiring) - shoe.clock_offset()) < 60  # type: ignore[arg-type]
