"""The NFC backend: nfcpy's own PN532 driver against a simulated PN532 on a pty, and the shoe
firmware's PN532 driver against the same chip on a fake I2C bus."""

from __future__ import annotations

import queue
import time

import pytest

from controller.inputs import CardRead, DealerSignIn
from firmware_bridge.firmware.pn532 import PN532, PN532Reader, parse_text_record
from hardware.nfc_reader import NfcReader, ReaderState, TagRead
from simulators.pn532 import (
    Ntag,
    SimulatedPN532,
    SimulatedPN532I2C,
    SimulatedPN532Tty,
    crc_a,
    ndef_text_message,
)
from tablectl.shoe_to_core import tag_read
from tests.conftest import wait_for

UID_A = bytes.fromhex("04a1b2c3d4e5f6")
UID_B = bytes.fromhex("04112233445566")
UID_C = bytes.fromhex("04deadbeef0001")


def test_crc_a_matches_nfcpy():
    from nfc.clf.device import Device

    data = bytearray(b"\x30\x04")
    assert Device.check_crc_a(data + crc_a(bytes(data)))


@pytest.fixture
def reader(tmp_path):
    chip = SimulatedPN532Tty(tmp_path / "nfc").start()
    reads: queue.Queue = queue.Queue()
    nfc = NfcReader(f"pn532:{chip.device}", lambda r, t: reads.put((r, t))).start()
    state, _ = reads.get(timeout=30)
    assert state == ReaderState(True, state.detail) and "PN532" in state.detail
    yield chip, reads
    nfc.stop()
    chip.stop()


def _next_read(reads, timeout=10):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        item, t = reads.get(timeout=end - time.monotonic())
        if isinstance(item, TagRead):
            return item, t
    raise AssertionError("no read")


def test_nfcpy_reads_cards_badges_and_bare_uids(reader):
    chip, reads = reader
    chip.present(Ntag(UID_A, "R1:As"))
    read, t = _next_read(reads)
    assert read == TagRead("04A1B2C3D4E5F6", "R1:As")
    assert tag_read(read.uid, read.text, t) == CardRead("As", "R1", "04A1B2C3D4E5F6",
                                                                 "down", False, t)
    # The card still in the field is not read again. The barrier: the reader has kept
    # talking to the chip (checking on the card) for twenty more commands since.
    talked = len(chip.chip.commands)
    assert wait_for(lambda: len(chip.chip.commands) >= talked + 20, 10)
    assert reads.empty()
    chip.remove()
    chip.present(Ntag(UID_B, None, kind="NTAG213"))  # no NDEF: the UID alone
    read, t = _next_read(reads)
    assert read == TagRead("04112233445566", "")
    assert tag_read(read.uid, read.text, t).tag == "04112233445566"
    chip.remove()
    chip.present(Ntag(UID_C, "dealer:D17", kind="NTAG216"))
    read, t = _next_read(reads)
    assert tag_read(read.uid, read.text, t) == DealerSignIn("D17", t)
    chip.remove()
    chip.present(Ntag(UID_A, "R1:As"))  # the same card again, a new pass: a new read
    assert _next_read(reads)[0].uid == "04A1B2C3D4E5F6"


def test_no_reader_is_reported_and_retried(tmp_path):
    reads: queue.Queue = queue.Queue()
    nfc = NfcReader(f"pn532:{tmp_path / 'absent'}", lambda r, t: reads.put(r),
                    retry_interval=0.05).start()
    state = reads.get(timeout=10)
    nfc.stop()
    assert isinstance(state, ReaderState) and not state.ok and "cannot open" in state.detail


class _Clock:
    def __init__(self):
        self.now = 0

    def ticks(self):
        self.now += 1
        return self.now

    def sleep(self, ms):
        self.now += ms


def test_the_shoe_firmware_driver_reads_the_simulated_chip():
    chip = SimulatedPN532()
    bus = SimulatedPN532I2C(chip)
    clock = _Clock()
    pn532 = PN532(bus, clock.sleep, clock.ticks)
    assert bytes(pn532.firmware_version()) == bytes((0x32, 0x01, 0x06, 0x07))
    pn532.configure()
    reader = PN532Reader(pn532)
    assert reader.read(0) is None and reader.ok()
    chip.present(Ntag(UID_A, "B2:Td"))
    assert reader.read(1) == (UID_A, "B2:Td")
    chip.present(Ntag(UID_B, None))
    assert reader.read(2) == (UID_B, "")
    long_label = "R1:Qh" + " " * 60  # an NDEF message that spans several READs
    chip.present(Ntag(UID_C, long_label))
    assert reader.read(3) == (UID_C, long_label)


def test_text_record_parser():
    assert parse_text_record(ndef_text_message("R1:As")) == "R1:As"
    assert parse_text_record(b"\xd1\x01\x03U\x00ab") == ""  # a URI record is not a label
