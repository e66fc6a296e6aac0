"""The shoe firmware's heap on MicroPython (its WebAssembly port, the modules as mpy-cross
compiles them for a board), with the queue full: 128 unacknowledged card frames of the
longest size (a 10-byte UID and a text cut to the frame's 240-byte payload), and what one
poll allocates while it retransmits that queue; and what reading a card's label allocates
(ndef_label.read_label, its READs answered from pages made beforehand), for the tag a phone
leaves (an NTAG216, its label then a 674-byte vCard) and for the longest a label is read (a
text past 512 bytes).

    python -m tests.bench.shoe_memory [--json]

The baseline, measured in the same run: the queued frames' own bytes. Target: the peak (the
modules, the full queue and a retransmitting poll) under 64 kB, a quarter of an RP2040's
264 kB of RAM.
"""

from __future__ import annotations

import argparse
import json

from simulators.pn532 import Ntag, ndef_message, text_record, vcard_record
from tests.micropython_vm import MicroPythonVM, available

BUDGET = 64 * 1024
UID = bytes.fromhex("04a1b2c3d4e5f6")
LABEL_TAGS = {  # what a label read allocates, for these tags
    "label_read_phone": Ntag(UID, message=ndef_message(text_record("R1:As"), vcard_record(674)),
                             kind="NTAG216").memory,
    "label_read_longest": Ntag(UID, "R1:" + "x" * 700, kind="NTAG216").memory,
}


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


def measure_heap(vm: MicroPythonVM) -> dict[str, int]:
    """Bytes of MicroPython heap. The WebAssembly port collects garbage only between runs of
    code (it cannot scan its own stack), so each figure is taken across runs, and a poll's is
    everything it allocated (an upper bound: nothing is freed within a run)."""
    vm.run("import gc\ngc.collect()")
    base = int(vm.value("gc.mem_alloc()"))  # type: ignore[arg-type]
    vm.run("import protocol, shoe, pn532, ndef_label")
    modules = int(vm.value("gc.collect() or gc.mem_alloc()")) - base  # type: ignore[arg-type]
    vm.run("p = protocol.ShoeProtocol(1, 'shoe-fw 1.2.0', 'e6613852834a2f1c', 15, 0)\n"
           "p.synced = True\n"
           "for i in range(protocol.QUEUE_LIMIT + 2):\n"
           "    p.card(i, bytes(range(1, 11)), 'x' * 300, False, False)\n"
           "    p.out = bytearray()\n")
    held = int(vm.value("gc.collect() or gc.mem_alloc()"))  # type: ignore[arg-type]
    queue = held - base - modules
    listing = vm.value("[len(p.unacked), max(len(e[1]) for e in p.unacked), "
                       "sum(len(e[1]) for e in p.unacked)]")
    assert isinstance(listing, list)
    frames, frame_bytes, raw = (int(x) for x in listing)
    vm.run("gc.collect()\nB = gc.mem_alloc()\np.last_send_ms = 0\nd = p.poll(1000)\n"
           "S = gc.mem_alloc() - B")
    poll = int(vm.value("S"))  # type: ignore[arg-type]
    return {"modules": modules, "queue": queue, "queued_frames": frames,
            "frame_bytes": frame_bytes, "frames_raw_bytes": raw,
            "poll_while_resending": poll, "peak": modules + queue + poll}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    reason = available()
    if reason is not None:
        print(f"cannot measure: {reason}")
        return 2
    with MicroPythonVM() as vm:
        vm.load_firmware()
        heap = measure_heap(vm)
        for name, memory in LABEL_TAGS.items():
            heap[name] = measure_label_read(vm, memory)
    peak = heap["peak"]
    figures: dict[str, object] = {
        **heap, "queue_over_raw": round(heap["queue"] / heap["frames_raw_bytes"], 2),
        "peak_over_budget": round(peak / BUDGET, 2)}
    if args.json:
        print(json.dumps(figures))
        return 0
    print(f"shoe firmware heap on MicroPython, {figures['queued_frames']} frames of "
          f"{figures['frame_bytes']} bytes queued:")
    print(f"  modules {figures['modules']:,} B, queue {figures['queue']:,} B "
          f"({figures['queue_over_raw']}x its frames' {figures['frames_raw_bytes']:,} bytes), "
          f"a retransmitting poll {figures['poll_while_resending']:,} B")
    print(f"  peak {peak:,} B = {figures['peak_over_budget']} of the 64 kB budget")
    print(f"  a label read: {figures['label_read_phone']:,} B (an NTAG216, its label then a "
          f"674-byte vCard), {figures['label_read_longest']:,} B (a text past 512 bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
