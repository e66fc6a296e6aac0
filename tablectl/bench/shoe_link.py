"""Shoe link benchmarks: decoding throughput, and read-to-core latency over a pty.

    python -m tablectl.bench.shoe_link [--frames 100000] [--samples 2000] [--json]

1. Frames decoded per second by the host codec (``HostLink``: COBS, CRC, sequence, parse), fed
   in 4 KiB chunks, beside the floor of merely splitting the same bytes at the delimiters; and
   the rate at which pure garbage is skipped. Target: at least 50,000 frames/s.
2. Read-to-core latency: a CARD frame written on the shoe's side of a pty until the table core
   has handled the card in the main thread (pyserial reader thread -> codec -> translator ->
   one queue -> Table.handle), beside the bare pty round trip measured in the same run (the same
   bytes, the same pyserial reader thread and queue, no codec and no core). Target: p99 within
   3x the bare round trip. Samples are spaced 2 ms apart (cards never come closer).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import queue
import random
import sys
import tempfile
import threading
import time
import tty
from pathlib import Path
from typing import Any

from controller.events import Card
from controller.inputs import DeckIn, Setup
from controller.table import Table, TableConfig
from firmware_bridge import messages as m
from firmware_bridge.framing import encode_frame
from firmware_bridge.host import HostLink, ShoeLinkEvent
from hardware.shoe_serial import SerialShoe
from houses.loaders import load_profile, load_structure
from simulators import shoe_frames as payloads
from tablectl.bench import latency_against_floor
from tablectl.shoe_to_core import ShoeTranslator

UID = bytes.fromhex("04a1b2c3d4e5f6")
LABELS = [f"R1:{r}{s}" for r in "AKQJT98765432" for s in "shdc"]
# Cards come at least a tenth of a second apart at a table; samples are spaced 2 ms apart so
# that each one meets an idle link (the previous card's ACK written), as a real card does.
SPACING = 0.002


def decode_throughput(frames: int) -> dict[str, float]:
    hello = encode_frame(m.HELLO, 0, payloads.hello_payload(1, 0, 15, "fw", "bench"))
    stream = bytearray(hello)
    for seq in range(frames):
        stream += encode_frame(m.CARD, seq & 0xFFFF,
                               payloads.card_payload(seq, UID, LABELS[seq % 52]))
    data = bytes(stream)
    chunks = [data[i:i + 4096] for i in range(0, len(data), 4096)]

    start = time.perf_counter()
    pieces = 0
    for chunk in chunks:
        pieces += len(chunk.split(b"\x00"))
    floor_s = time.perf_counter() - start

    link = HostLink()
    start = time.perf_counter()
    delivered = 0
    for chunk in chunks:
        link.receive_data(chunk)
        delivered += len(link.events())
        link.data_to_send()
    codec_s = time.perf_counter() - start
    assert link.stats.delivered == frames, link.stats

    garbage = random.Random(1).randbytes(4 * 1024 * 1024)
    link = HostLink()
    start = time.perf_counter()
    for i in range(0, len(garbage), 4096):
        link.receive_data(garbage[i:i + 4096])
        link.events()
    garbage_s = time.perf_counter() - start
    return {
        "frames": frames,
        "frames_per_s": round(frames / codec_s),
        "floor_split_frames_per_s": round(frames / floor_s),
        "codec_over_floor": round(codec_s / floor_s, 1),
        "garbage_mb_per_s": round(len(garbage) / garbage_s / 1e6, 1),
    }


def _pty(directory: Path) -> tuple[int, str]:
    master, slave = os.openpty()
    tty.setraw(slave)
    path = directory / f"pty-{len(list(directory.iterdir()))}"
    path.symlink_to(os.ttyname(slave))
    return master, str(path)


def _floor_latency(samples: int, directory: Path) -> list[float]:
    import serial

    master, path = _pty(directory)
    port = serial.serial_for_url(path, baudrate=115200, timeout=0.02)
    arrivals: queue.Queue[float] = queue.Queue()
    stop = threading.Event()
    frame = encode_frame(m.CARD, 0, payloads.card_payload(0, UID, "R1:As"))

    def reader() -> None:
        got = 0
        while not stop.is_set():
            data = port.read(port.in_waiting or 1)
            if data and port.in_waiting:
                data += port.read(port.in_waiting)
            got += len(data)
            while got >= len(frame):
                got -= len(frame)
                arrivals.put(time.perf_counter())

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    result = []
    for _ in range(samples):
        time.sleep(SPACING)
        sent = time.perf_counter()
        os.write(master, frame)
        result.append(arrivals.get(timeout=5) - sent)
    stop.set()
    thread.join()
    port.close()
    os.close(master)
    return result


def _pipeline_latency(samples: int, directory: Path) -> list[float]:
    master, path = _pty(directory)
    os.set_blocking(master, False)
    events: queue.Queue[tuple[ShoeLinkEvent, float]] = queue.Queue()
    shoe = SerialShoe(path, lambda e, t: events.put((e, t))).start()
    translator = ShoeTranslator()
    table = Table(load_profile("tda-2024"), TableConfig(evaluate=False), load_structure)
    table.handle(Setup("holdem", tuple(range(1, 11)), 1))
    # Say hello from the "shoe" so the host accepts sequenced frames.
    deadline = time.monotonic() + 5
    while not shoe.connected and time.monotonic() < deadline:
        time.sleep(0.01)
    os.write(master, encode_frame(m.HELLO, 0, payloads.hello_payload(9, 0, 15, "fw", "bench")))
    result = []
    hand_cards = 0
    for i in range(samples):
        if hand_cards == 0:
            table.handle(DeckIn("R1", None))
        label = LABELS[hand_cards]
        frame = encode_frame(m.CARD, i & 0xFFFF, payloads.card_payload(i * 500, UID, label))
        time.sleep(SPACING)
        sent = time.perf_counter()
        os.write(master, frame)
        while True:
            event, t = events.get(timeout=5)
            handled = [table.handle(x) for x in translator.translate(event, t)]
            if any(isinstance(e, Card) for batch in handled for e in batch):
                break
        result.append(time.perf_counter() - sent)
        hand_cards = (hand_cards + 1) % 20
        with contextlib.suppress(BlockingIOError):
            os.read(master, 4096)  # the ACKs
    shoe.stop()
    os.close(master)
    return result


def latency(samples: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        floor = _floor_latency(samples // 2, directory)
        pipeline = _pipeline_latency(samples, directory)
        floor += _floor_latency(samples // 2, directory)

    return {"samples": samples, **latency_against_floor(pipeline, floor)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=100_000)
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result: dict[str, Any] = {"decode": decode_throughput(args.frames),
                              "latency": latency(args.samples)}
    if args.json:
        print(json.dumps(result))
        return 0
    d, lat = result["decode"], result["latency"]
    print(f"decode: {d['frames_per_s']:,} frames/s (floor, splitting at delimiters: "
          f"{d['floor_split_frames_per_s']:,}/s; {d['codec_over_floor']}x); garbage skipped at "
          f"{d['garbage_mb_per_s']} MB/s")
    print(f"read-to-core latency over a pty: p50 {lat['pipeline']['p50_ms']} ms, "
          f"p99 {lat['pipeline']['p99_ms']} ms; bare pty round trip p50 "
          f"{lat['floor']['p50_ms']} ms, p99 {lat['floor']['p99_ms']} ms "
          f"(ratio p50 {lat['p50_ratio']}x, p99 {lat['p99_ratio']}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
