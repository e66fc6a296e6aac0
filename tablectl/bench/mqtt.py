"""Reporting benchmarks against a real Mosquitto started here (``tablectl bench latency|outage``).

latency: a CARD frame written on the shoe's side of a pty until the public event reaches an
MQTT subscriber through the broker (pyserial -> codec -> core -> SQLite FULL commit -> paho QoS 1
-> Mosquitto -> subscriber), over at least 2,000 cards; beside the floor measured in the same
run: a bare pty hop + one SQLite FULL commit + one bare paho QoS 1 publish-to-deliver.
Targets: pipeline p50 within 3x the floor's, p99 within 5x.

outage: N events produced while the broker is down, then the broker back: how many reach the
recorder, duplicates, gaps, the replay rate, beside a bare paho QoS 1 burst through the same
broker. Targets: delivered = events, no duplicates or gaps, replay at least half the bare rate.
The backlog goes up to 50 events a message (``EnvelopeBatch`` in the AsyncAPI document).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import queue
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from controller.events import Event
from controller.inputs import DeckIn, Setup
from controller.table import Table, TableConfig
from firmware_bridge import messages as m
from firmware_bridge.framing import encode_frame
from hardware.mqtt_link import TableLink
from hardware.outbox import Outbox
from hardware.shoe_serial import SerialShoe
from houses.loaders import load_profile, load_structure
from simulators import shoe_frames as payloads
from simulators.broker import Broker
from tablectl.bench import latency_against_floor
from tablectl.bench.shoe_link import LABELS, SPACING, UID, _floor_latency, _pty
from tablectl.shoe_to_core import ShoeTranslator

VENUE = "bench"


def _client(port: int, on_message: Any = None, inflight: int | None = None,
            subscribe: str | None = None) -> Any:
    """A paho client, connected (the broker's CONNACK received) and, given a topic, subscribed
    to it at QoS 1 (its SUBACK received): ready for the first sample."""
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    client = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
    if on_message is not None:
        client.on_message = on_message
    if inflight is not None:
        client.max_inflight_messages_set(inflight)
    connected, subscribed = threading.Event(), threading.Event()
    client.on_connect = lambda *_: connected.set()
    client.on_subscribe = lambda *_: subscribed.set()
    client.connect("127.0.0.1", port)
    client.loop_start()
    if not connected.wait(10):
        raise RuntimeError(f"no CONNACK from the broker on port {port}")
    if subscribe is not None:
        client.subscribe(subscribe, qos=1)
        if not subscribed.wait(10):
            raise RuntimeError(f"no SUBACK from the broker for {subscribe}")
    return client


def _close(*clients: Any) -> None:
    """Disconnect, then stop the network thread: stopped first, the thread would finish its
    wait for the socket (up to a second) before it saw the stop."""
    for client in clients:
        client.disconnect()
        client.loop_stop()


def _bare_publish_latency(port: int, samples: int) -> list[float]:
    arrivals: queue.Queue[float] = queue.Queue()
    subscriber = _client(port, lambda c, u, msg: arrivals.put(time.perf_counter()),
                         subscribe="bench/bare")
    publisher = _client(port)
    result = []
    for i in range(samples):
        time.sleep(SPACING)
        start = time.perf_counter()
        publisher.publish("bench/bare", json.dumps({"n": i}), qos=1)
        result.append(arrivals.get(timeout=10) - start)
    _close(subscriber, publisher)
    return result


def _commit_latency(directory: Path, samples: int) -> list[float]:
    db = sqlite3.connect(directory / "floor.db", isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute("CREATE TABLE t (seq INTEGER PRIMARY KEY, event TEXT)")
    result = []
    for i in range(samples):
        start = time.perf_counter()
        with db:
            db.execute("INSERT INTO t VALUES (?, ?)", (i, '{"type":"card"}'))
        result.append(time.perf_counter() - start)
    db.close()
    return result


def latency(cards: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        broker = Broker(directory / "broker").start()
        try:
            pty_hop = _floor_latency(cards, directory)
            commits = _commit_latency(directory, cards)
            publish = _bare_publish_latency(broker.port, cards)
            floor = [a + b + c for a, b, c in zip(pty_hop, commits, publish, strict=True)]
            pipeline = _pipeline(directory, broker.port, cards)
        finally:
            broker.kill()
    return {**latency_against_floor(pipeline, floor), "events": len(pipeline)}


def _pipeline(directory: Path, port: int, cards: int) -> list[float]:
    master, path = _pty(directory)
    os.set_blocking(master, False)
    shoe_events: queue.Queue[Any] = queue.Queue()
    shoe = SerialShoe(path, lambda e, t: shoe_events.put((e, t))).start()
    outbox = Outbox(directory / "outbox.db")
    link = TableLink(outbox, venue=VENUE, table="b1", port=port).start()
    arrivals: dict[int, float] = {}
    got = threading.Condition()

    def on_message(client: Any, userdata: Any, msg: Any) -> None:
        body = json.loads(msg.payload)
        if body["type"] == "card":
            with got:
                arrivals[int(body["data"]["n"]) + 1000 * int(body["hand"])] = time.perf_counter()
                got.notify_all()

    subscriber = _client(port, on_message, subscribe=f"pkr/v1/{VENUE}/tables/b1/events")
    translator = ShoeTranslator()
    table = Table(load_profile("tda-2024"), TableConfig(evaluate=False), load_structure)
    table.handle(Setup("holdem", tuple(range(1, 11)), 1))
    deadline = time.monotonic() + 10
    while not (shoe.connected and link.connected) and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.3)
    os.write(master, encode_frame(m.HELLO, 0, payloads.hello_payload(9, 0, 15, "fw", "bench")))

    def emit(events: list[Event]) -> None:
        for event in events:
            outbox.append(event.to_json(), int(time.time() * 1000))
        link.notify()

    result = []
    hand_cards = 0
    for i in range(cards):
        if hand_cards == 0:
            emit(table.handle(DeckIn("R1", None)))
        label = LABELS[hand_cards]
        frame = encode_frame(m.CARD, i & 0xFFFF, payloads.card_payload(i * 500, UID, label))
        time.sleep(SPACING)
        key = hand_cards + 1 + 1000 * (table.hand.number if table.hand else 0)
        sent = time.perf_counter()
        os.write(master, frame)
        while True:
            event, t = shoe_events.get(timeout=10)
            for item in translator.translate(event, t):
                emitted = table.handle(item)
                emit(emitted)
            if isinstance(event, m.CardDrawn):
                break
        with got:
            got.wait_for(functools.partial(arrivals.__contains__, key), timeout=10)
        result.append(arrivals[key] - sent)
        hand_cards = (hand_cards + 1) % 20
        with contextlib.suppress(BlockingIOError):
            os.read(master, 4096)
    _close(subscriber)
    link.stop()
    shoe.stop()
    os.close(master)
    return result


def outage(events: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        broker = Broker(directory / "broker").start()
        try:
            bare_rate = _bare_burst_rate(broker.port, events)
            # The recorder runs in a process of its own, as on the hub.
            db_path = directory / "recorder.db"
            recorder = subprocess.Popen(
                [sys.executable, "-m", "tablectl.cli", "recorder", "--venue", VENUE,
                 "--port", str(broker.port), "--db", str(db_path), "--client-id", "rec-bench"],
                stderr=subprocess.PIPE, text=True)
            recorder.stderr.readline() if recorder.stderr else None  # it is up
            outbox = Outbox(directory / "outbox.db")
            link = TableLink(outbox, venue=VENUE, table="o1", port=broker.port,
                             max_inflight=16).start()
            deadline = time.monotonic() + 10
            while not link.connected and time.monotonic() < deadline:
                time.sleep(0.01)
            broker.kill()
            while link.connected and time.monotonic() < deadline + 20:
                time.sleep(0.01)
            for i in range(events):
                outbox.append({"type": "card", "hand": i // 20 + 1, "n": i % 20 + 1,
                               "card": "As", "role": "board", "street": "flop", "t": float(i)},
                              int(time.time() * 1000))
            broker.start()
            start = time.perf_counter()
            link.notify()
            while _recorded_upto(db_path, "o1") < events and time.perf_counter() - start < 300:
                time.sleep(0.01)
            replay_s = time.perf_counter() - start
            link.stop()
            recorder.terminate()
            _, summary = recorder.communicate(timeout=30)
            recorded = json.loads(summary.strip().splitlines()[-1])
            # Redelivered: events the recorder was sent again and stored once (paho sends its
            # messages in flight again after a reconnect, a replay request overlaps the
            # backlog); duplicates: events stored twice (none: (table, incarnation, seq) is
            # the key).
            redelivered, replay_requests = recorded["duplicates"], recorded["replay_requests"]
            with sqlite3.connect(db_path) as db:
                seqs = [row[0] for row in db.execute(
                    "SELECT seq FROM events WHERE tbl = 'o1' ORDER BY seq")]
        finally:
            broker.kill()
    expected = set(range(1, events + 1))
    return {"events": events, "delivered": len(set(seqs) & expected),
            "duplicates": len(seqs) - len(set(seqs)), "redelivered": redelivered,
            "replay_requests": replay_requests,
            "gaps": len(expected - set(seqs)),
            "replay_rate_eps": round(events / replay_s), "bare_rate_eps": round(bare_rate),
            "replay_over_bare": round(events / replay_s / bare_rate, 2)}


def _recorded_upto(db_path: Path, table: str) -> int:
    try:
        with sqlite3.connect(db_path, timeout=1) as db:
            # The bench's one table has one incarnation (one start of its outbox).
            row = db.execute("SELECT MAX(upto) FROM streams WHERE tbl = ?", (table,)).fetchone()
    except sqlite3.OperationalError:
        return 0
    return int(row[0]) if row and row[0] is not None else 0


def _bare_burst_rate(port: int, count: int) -> float:
    done = threading.Event()
    received = [0]

    def on_message(client: Any, userdata: Any, msg: Any) -> None:
        received[0] += 1
        if received[0] == count:
            done.set()

    subscriber = _client(port, on_message, subscribe="bench/burst")
    publisher = _client(port, inflight=100)
    payload = json.dumps({"v": 1, "type": "card", "data": {"card": "As"}})
    start = time.perf_counter()
    for _ in range(count):
        publisher.publish("bench/burst", payload, qos=1)
    done.wait(300)
    elapsed = time.perf_counter() - start
    _close(subscriber, publisher)
    return count / elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tablectl bench", description=__doc__.splitlines()[0])
    parser.add_argument("which", choices=("latency", "outage"))
    parser.add_argument("--cards", type=int, default=2000)
    parser.add_argument("--events", type=int, default=10000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = latency(args.cards) if args.which == "latency" else outage(args.events)
    if args.json:
        print(json.dumps(result))
    elif args.which == "latency":
        p, f = result["pipeline"], result["floor"]
        print(f"shoe frame to MQTT subscriber over {result['events']} cards: p50 {p['p50_ms']} ms,"
              f" p99 {p['p99_ms']} ms; floor (pty hop + FULL commit + bare QoS 1 publish) p50 "
              f"{f['p50_ms']} ms, p99 {f['p99_ms']} ms (ratio p50 {result['p50_ratio']}x, "
              f"p99 {result['p99_ratio']}x)")
    else:
        print(f"{result['events']} events made during an outage: {result['delivered']} delivered, "
              f"{result['duplicates']} stored twice ({result['redelivered']} sent again and "
              f"stored once), {result['gaps']} gaps; replay "
              f"{result['replay_rate_eps']} events/s against a bare QoS 1 burst of "
              f"{result['bare_rate_eps']}/s ({result['replay_over_bare']}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
