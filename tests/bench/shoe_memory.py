"""The shoe firmware's heap on MicroPython, the whole firmware as it boots and runs with its
queue full and sent again.

The interpreter is MicroPython's WebAssembly port, every module compiled by mpy-cross as it
is copied to a board, on the fake board (tests/micropython/board.py): the firmware booted as
main.py boots it, its queue then filled with 128 unacknowledged card frames of the longest
size (a 10-byte UID and a text cut to the frame's 240-byte payload), and the turns of its loop
while a host that stopped acknowledging is sent the queue again, then while a card with the
longest label is read. Also what reading a card's label allocates (ndef_label.read_label, its
READs answered from pages made beforehand), for the tag a phone leaves (an NTAG216, its label
then a 674-byte vCard) and for the longest a label is read (a text past 512 bytes).

    python -m tests.bench.shoe_memory [--json]

It counts with gc.mem_alloc(), the interpreter's own count of its heap. What is held: the count
after a collection, read by the same code before and after each step (the modules imported as
main.py imports them, the firmware built and its link up, the queue filled); the baseline is
the heap before the firmware's first import, in the same run. The fake board's own objects
(pins, buses and watchdog, static on rp2; the poll objects) are made before it, and the port's
poll objects are measured with its own select module and added. What a turn allocates: the
count before and after Firmware.turn() within one run (the port collects nothing within a run:
all of it, garbage included), less what the fake board allocated while the firmware called it
(board.meter: the calls to the test's world, the USB port's bytes). Target: the peak (all that
is held, the largest turn while the queue is sent again, and the longest label, alive while its
frame is made) under 64 kB, a quarter of an RP2040's 264 kB of RAM.
"""

from __future__ import annotations

import argparse
import json

from firmware_bridge.host import HostLink
from simulators.pn532 import (
    Ntag,
    SimulatedPN532,
    SimulatedPN532I2C,
    ndef_message,
    text_record,
    vcard_record,
)
from tests.micropython_vm import MicroPythonVM, available

BUDGET = 64 * 1024
QUEUED = 128  # protocol.QUEUE_LIMIT
START_MS = 20_000  # the board's uptime at boot (its microseconds stay small integers)
UID = bytes.fromhex("04a1b2c3d4e5f6")
LONGEST_LABEL = Ntag(UID, "R1:" + "x" * 700, kind="NTAG216")  # read as far as 512 bytes
LABEL_TAGS = {  # what a label read allocates, for these tags
    "label_read_phone": Ntag(UID, message=ndef_message(text_record("R1:As"), vcard_record(674)),
                             kind="NTAG216").memory,
    "label_read_longest": LONGEST_LABEL.memory,
}
HANDSHAKE_TURNS = 60  # turns (2 ms each) for the HELLO exchange
IDLE_TURNS = 20  # then nothing to do
# Once the queue is full: sent again from 250 ms on, 64 bytes a turn; over a second, so that the
# heartbeat and the reader's listen, sent again each second, come in it too
RESENDING_TURNS = 600
CARD_TURNS = 60  # then a card with the longest label read meanwhile
# The interpreter's heap while measuring: room for a run of 100 turns (the port collects
# nothing within a run; 256 KiB is too little), and not much more, because gc.mem_alloc, called
# around every call of the fake board, counts every block of the heap: unbounded (a megabyte
# and more) a turn took 26 ms, with 4 MiB more, with 512 KiB the whole bench 8.5 s instead of
# 17. What is counted is the same whatever the bound.
MEASURING_HEAP = 512 * 1024


def measure_label_read(vm: MicroPythonVM, memory: bytes) -> int:
    """Bytes read_label allocates (all of it: the port collects between runs only)."""
    vm.write("/data/tag.bin", memory)
    vm.run("import gc, ndef_label\nM = open('/data/tag.bin', 'rb').read()\n"
           "P = [(M + M[:16])[p * 4:p * 4 + 16] for p in range(len(M) // 4)]\n"
           "def read16(page):\n    return P[page]\n"
           "A = B = L = None")  # the globals made first: their dict does not grow below
    vm.run("gc.collect()\nB = gc.mem_alloc()\nL = ndef_label.read_label(read16)\n"
           "A = gc.mem_alloc() - B")
    vm.run("M = P = L = None")
    return int(vm.value("A"))  # type: ignore[arg-type]


class World:
    """What the fake board's calls meet: the simulated PN532 on its bus, and the host's end
    of the USB serial link, which reads everything and, once the link is up, is heard no
    more (its acknowledgements lost): the queue stays full and is sent again and again."""

    def __init__(self) -> None:
        self.ms = 0.0
        self.chip = SimulatedPN532(lambda: self.ms)
        self.bus = SimulatedPN532I2C(self.chip)
        self.host = HostLink()
        self.host.request_hello()
        self.heard = True
        self.script: list[tuple[float, Ntag | None]] = []  # (ms, card presented or removed)
        self.sent = 0  # bytes the shoe wrote

    def __call__(self, text: str) -> str:
        message = json.loads(text)
        self.ms = message["us"] / 1000.0
        op = message["op"]
        if op in ("i2c_write", "i2c_read"):
            try:
                if op == "i2c_write":
                    self.bus.writeto(message["address"], bytes.fromhex(message["data"]))
                    return ""
                return self.bus.readfrom(message["address"], message["count"]).hex()
            except OSError as exc:
                return str(exc.errno) if op == "i2c_write" else f"E{exc.errno}"
        if op == "pin":
            if message["pin"] == 6:
                self.chip.rstpdn(message["level"])
            return ""
        out = bytes.fromhex(message["out"])
        self.sent += len(out)
        self.host.receive_data(out)
        self.host.events()
        while self.script and self.script[0][0] <= self.ms:
            card = self.script.pop(0)[1]
            if card is None:
                self.chip.remove()
            else:
                self.chip.present(card)
        data = self.host.data_to_send()
        return json.dumps({"in": data.hex() if self.heard else "", "pins": {"16": 0}})


def _held(vm: MicroPythonVM) -> int:
    """What the heap holds after a collection (the same code each time: a run's own compiled
    code is on the heap while it runs)."""
    vm.run("gc.collect()")
    return int(vm.value("gc.mem_alloc()"))  # type: ignore[arg-type]


def _turns(vm: MicroPythonVM, world: World, turns: int) -> list[int]:
    """What each turn of the loop allocated, the fake board's allocations taken off; main()'s
    2 ms sleep between turns (the world's turn) is not the firmware's and not counted."""
    out = vm.run(
        "import board\n"
        "board.Meter.running = True\n"
        f"for _ in range({turns}):\n"
        "    S = board.meter.spent\n"
        "    B = gc.mem_alloc()\n"
        "    fw.turn()\n"
        "    A = gc.mem_alloc() - B - (board.meter.spent - S)\n"
        "    board.world.turn(2)\n"
        "    print(A)\n"
        "board.Meter.running = False\n"
        "gc.collect()", host=world)
    return [int(line) for line in out.split()]


def measure_firmware(vm: MicroPythonVM) -> dict[str, int]:
    """The whole firmware's heap, in bytes (see the module's docstring)."""
    world = World()
    # The port's poll objects (the fake board's are made ahead): its own select module's
    vm.run("import gc, sys, select\nP = A = B = S = i = now = _ = None\nB = gc.mem_alloc()\n"
           "P = select.poll()\nP.register(sys.stdin, select.POLLIN)\nA = gc.mem_alloc() - B")
    polls = 2 * int(vm.value("A"))  # type: ignore[arg-type]
    vm.run("P = None\nimport board\nmain = shoe_main = fw = None\n"
           f"board.install({START_MS})")
    base = _held(vm)
    vm.run("import main, shoe_main")  # main.py and what it imports, as the board boots
    modules = _held(vm) - base
    vm.run("fw = shoe_main.Firmware()\nboard.firmware = fw", host=world)
    _turns(vm, world, HANDSHAKE_TURNS)
    assert vm.value("fw.protocol.synced") is True, "the host did not answer the shoe's HELLO"
    quiet = _turns(vm, world, IDLE_TURNS)
    firmware = _held(vm) - base - modules + polls  # booted, the link up
    world.heard = False
    before = _held(vm)
    for first in range(0, QUEUED, 8):  # a few a run: the port collects between runs only
        vm.run("now = fw.clock.now()\n"
               f"for i in range({first}, {first + 8}):\n"
               "    fw.protocol.card(now, bytes(range(1, 11)), 'x' * 300, False, False)\n"
               "now = None")
    queue = _held(vm) - before
    listing = vm.value("[len(fw.protocol.unacked), max(len(e[1]) for e in fw.protocol.unacked),"
                       " sum(len(e[1]) for e in fw.protocol.unacked)]")
    assert isinstance(listing, list)
    frames, frame_bytes, raw = (int(x) for x in listing)
    sent = world.sent
    turns: list[int] = []
    for _ in range(RESENDING_TURNS // 100):
        turns += _turns(vm, world, 100)
    usual = max(set(turns), key=turns.count)
    resent = world.sent - sent
    seq = vm.value("fw.protocol.next_seq")
    world.script = [(world.ms + 10, LONGEST_LABEL), (world.ms + 90, None)]
    card = _turns(vm, world, CARD_TURNS)
    assert vm.value("fw.protocol.next_seq") == seq + 1, (  # type: ignore[operator]
        "the card was not read", seq, vm.value("fw.protocol.unacked[-1]"))
    return {"modules": modules, "firmware": firmware, "queue": queue,
            "queued_frames": frames, "frame_bytes": frame_bytes, "frames_raw_bytes": raw,
            "turn_usual": usual, "turn_most": max(quiet + turns), "bytes_resent": resent,
            "card_turn": max(card), "held": modules + firmware + queue}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    reason = available()
    if reason is not None:
        print(f"cannot measure: {reason}")
        return 2
    with MicroPythonVM(heap=MEASURING_HEAP) as vm:
        vm.load_firmware()
        heap = measure_firmware(vm)
        for name, memory in LABEL_TAGS.items():
            heap[name] = measure_label_read(vm, memory)
    # At the peak: all that is held, the turn that allocates most while the queue is sent
    # again, and the longest label, alive while its frame is made.
    peak = heap["peak"] = heap["held"] + heap["turn_most"] + heap["label_read_longest"]
    figures: dict[str, object] = {**heap, "peak_over_budget": round(peak / BUDGET, 2)}
    if args.json:
        print(json.dumps(figures))
        return 0
    print(f"shoe firmware heap on MicroPython (mpy-cross), {heap['queued_frames']} frames of "
          f"{heap['frame_bytes']} bytes queued ({heap['frames_raw_bytes']:,} bytes):")
    print(f"  held {heap['held']:,} B: modules {heap['modules']:,} B, the firmware's objects "
          f"{heap['firmware']:,} B (the queue's ring among them), the queue filled "
          f"{heap['queue']:,} B more")
    print(f"  a turn of the loop: {heap['turn_usual']:,} B most often, {heap['turn_most']:,} B at "
          f"most while the queue is sent again ({heap['bytes_resent']:,} bytes written), "
          f"{heap['card_turn']:,} B reading the longest label (the driver's READs, collectable)")
    print(f"  a label read: {heap['label_read_phone']:,} B (an NTAG216, its label then a "
          f"674-byte vCard), {heap['label_read_longest']:,} B (a text past 512 bytes)")
    print(f"  peak {peak:,} B (held, the largest turn, the longest label) = "
          f"{figures['peak_over_budget']} of the 64 kB budget")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
