"""A venue of many tables on one Mosquitto and one hub (``tablectl bench venue``).

Tables are lightweight publishers in processes of their own (so that they do not share the
hub's interpreter): each a paho client that sends its envelopes as a table link does, every
event on ``private`` and its public view on ``events``, QoS 1.

burst: every table sends EVENTS events as fast as it can. The floor is a bare subscriber to
``+/private`` in this process, in the same run and through the same broker: the broker's fan-in
rate. Then the same burst into the hub: the recorder's ingest rate (stored and acknowledged,
every ``(table, seq)`` once) and whether every event reached the floor view.

pace: every table sends one event a second (a busy table sends one every few seconds) while a
member of staff follows the dashboard's event stream: the delay from the event's commit time
at the table to its update reaching the stream, p50 and p99.

Targets: no event lost; recorder ingest at least half the bare fan-in rate; the floor view
holding every event of the burst within 0.5 s of the recorder (both waited for with a
deadline); dashboard update p99 under one second.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from contract.envelope import envelope
from contract.views import public_event
from simulators.broker import Broker
from tablectl.bench import percentile

# The hub (FastAPI and the rest) is imported where it is measured, not here: each table
# process imports this module again (spawned, it runs its ``__main__`` by name), and the
# hub's imports cost each of them a second of CPU at its start.

VENUE = "bench"


def _event(seq: int) -> dict[str, Any]:
    return {"type": "card", "hand": seq // 20 + 1, "n": seq % 20 + 1, "card": "As",
            "deck": "R1", "role": "board", "street": "flop", "t": float(seq)}


def _messages(table: str, seq: int) -> list[tuple[str, bytes]]:
    event = _event(seq)
    ts = int(time.time() * 1000)
    private = envelope(event, venue=VENUE, table=table, seq=seq, boot=1, ts_ms=ts)
    public = public_event(event)
    assert public is not None
    shown = envelope(public, venue=VENUE, table=table, seq=seq, boot=1, ts_ms=ts)
    root = f"pkr/v1/{VENUE}/tables/{table}/"
    return [(root + "private", json.dumps(private).encode()),
            (root + "events", json.dumps(shown).encode())]


def _publisher(port: int, tables: list[str], events: int, first: int, interval: float,
               ready: Any, go: Any, done: Any) -> None:
    """One process of tables: connect (each connection acknowledged by the broker), wait for
    the start, send, say when all is acknowledged by the broker (PUBACK)."""
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    clients = {}
    connected = threading.Semaphore(0)
    for table in tables:
        client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"bench-{table}",
                             protocol=mqtt.MQTTv5)
        client.max_inflight_messages_set(32)
        client.on_connect = lambda *_: connected.release()
        client.connect("127.0.0.1", port, keepalive=60)
        client.loop_start()
        clients[table] = client
    for _ in clients:
        if not connected.acquire(timeout=120):
            return  # the parent's wait for ``ready`` says so
    ready.set()
    go.wait()
    sent = []
    start = time.monotonic()
    for index in range(events):
        seq = first + index
        if interval:
            # Each table a second apart from its last event, the tables spread over it.
            while (delay := start + index * interval - time.monotonic()) > 0:
                time.sleep(min(delay, 0.05))
        for table, client in clients.items():
            for topic, payload in _messages(table, seq):
                sent.append(client.publish(topic, payload, qos=1))
    for info in sent:
        info.wait_for_publish(120)
    done.set()
    for client in clients.values():
        client.disconnect()
        client.loop_stop()


class Tables:
    """Table processes: ``start`` connects them, ``go`` makes them send."""

    def __init__(self, port: int, count: int, events: int, first: int = 1,
                 interval: float = 0.0, processes: int = 2) -> None:
        context = multiprocessing.get_context("spawn")
        names = [f"t{i}" for i in range(1, count + 1)]
        self.go = context.Event()
        self.ready, self.done, self.processes = [], [], []
        for part in range(processes):
            ready, done = context.Event(), context.Event()
            process = context.Process(target=_publisher, args=(
                port, names[part::processes], events, first, interval, ready, self.go, done),
                daemon=True)
            self.ready.append(ready)
            self.done.append(done)
            self.processes.append(process)

    def start(self) -> Tables:
        for process in self.processes:
            process.start()
        for ready in self.ready:
            if not ready.wait(120):
                raise RuntimeError("the table processes did not connect")
        return self

    def send(self) -> float:
        start = time.monotonic()
        self.go.set()
        return start

    def join(self) -> None:
        for done in self.done:
            done.wait(300)
        for process in self.processes:
            process.join(10)


def bare_fan_in(directory: Path, count: int, events: int) -> dict[str, Any]:
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    broker = Broker(directory / "bare").start()
    expected = count * events
    received = [0]
    finished = threading.Event()
    last = [0.0]

    def on_message(c: Any, u: Any, msg: Any) -> None:
        received[0] += 1
        if received[0] >= expected:
            last[0] = time.monotonic()
            finished.set()

    subscriber = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="bare",
                             protocol=mqtt.MQTTv5)
    subscribed = threading.Event()
    subscriber.on_message = on_message
    subscriber.on_subscribe = lambda *_: subscribed.set()
    subscriber.connect("127.0.0.1", broker.port)
    subscriber.subscribe(f"pkr/v1/{VENUE}/tables/+/private", qos=1)
    subscriber.loop_start()
    try:
        if not subscribed.wait(30):
            raise RuntimeError("the floor's subscriber was not subscribed")
        tables = Tables(broker.port, count, events).start()
        start = tables.send()
        finished.wait(300)
        tables.join()
    finally:
        subscriber.disconnect()  # then the thread's stop, which the disconnect wakes
        subscriber.loop_stop()
        broker.kill()
    seconds = (last[0] or time.monotonic()) - start
    return {"received": received[0], "seconds": round(seconds, 3),
            "events_per_s": round(received[0] / seconds, 1)}


def hub_run(directory: Path, count: int, events: int, pace_seconds: float) -> dict[str, Any]:
    from hub import auth
    from simulators.staff import Staff
    from tablectl.hub_app import Hub, HubSettings

    broker = Broker(directory / "hub-broker").start()
    users = directory / "users.toml"
    auth.save_user(users, "bench", "viewer", "bench-password")
    hub = Hub(HubSettings(venue=VENUE, db=str(directory / "hub.db"), users=str(users),
                          port=broker.port, http_port=0)).start()
    hub.recorder.connected.wait(10)
    hub.connected.wait(10)
    names = [f"t{i}" for i in range(1, count + 1)]
    try:
        # burst: the recorder's ingest rate
        tables = Tables(broker.port, count, events).start()
        start = tables.send()

        def floor_view() -> int:  # the events the floor's worker has taken in
            return sum(hub.floor.tables[name].events for name in names
                       if name in hub.floor.tables)

        # Both waited for with one deadline: when the recorder had stored every event, and
        # when the floor view had every one (the dashboard shows what the floor view holds).
        recorded = floor_done = None
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and (recorded is None or floor_done is None):
            now = time.monotonic()
            if recorded is None and all(hub.recorder.upto.get(name, 0) >= events
                                        for name in names):
                recorded = now
            if floor_done is None and floor_view() >= count * events:
                floor_done = now
            time.sleep(0.005)
        seconds = (recorded or time.monotonic()) - start
        tables.join()
        stored = sum(min(hub.recorder.upto.get(name, 0), events) for name in names)
        burst = {"stored": stored, "duplicates": hub.recorder.stats.duplicates,
                 "seconds": round(seconds, 3), "events_per_s": round(stored / seconds, 1),
                 "floor_view_events": floor_view(),
                 # seconds the floor view had every event after the recorder (0: before it)
                 "floor_view_after_recorder_s": round(max(0.0, floor_done - recorded), 3)
                 if recorded is not None and floor_done is not None else None}

        # pace: the dashboard's delay
        staff = Staff(hub.url, "bench", "bench-password").listen()
        already = len(staff.updates)
        per_table = max(2, int(pace_seconds))
        paced = Tables(broker.port, count, per_table, first=events + 1, interval=1.0).start()
        paced.send()
        paced.join()
        end = time.monotonic() + 10
        while time.monotonic() < end and sum(
                1 for u in staff.updates[already:] if u["kind"] == "table") < count * per_table:
            time.sleep(0.05)
        delays = [u["at"] - u["table"]["last_event_ts"] for u in staff.updates[already:]
                  if u["kind"] == "table" and u["table"].get("last_event_ts")]
        staff.close()
        # Lost is what the recorder never stores, not what it had not stored yet: on a
        # crowded machine (a load of 25) the last paced events were still on their way when
        # the dashboard's updates were counted, and were counted lost.
        sent = events + per_table
        end = time.monotonic() + 60
        while time.monotonic() < end and not all(hub.recorder.upto.get(name, 0) >= sent
                                                 for name in names):
            time.sleep(0.05)
        total_stored = sum(hub.recorder.upto.get(name, 0) for name in names)
    finally:
        hub.stop()
        broker.kill()
    return {"burst": burst, "pace": {
        "updates": len(delays), "expected": count * per_table,
        "delay_p50_ms": round(percentile(delays, 50), 1) if delays else None,
        "delay_p99_ms": round(percentile(delays, 99), 1) if delays else None},
        "stored_total": total_stored, "sent_total": count * (events + per_table)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tablectl bench venue", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", type=int, default=200)
    parser.add_argument("--events", type=int, default=50, help="per table in the burst")
    parser.add_argument("--pace-seconds", type=float, default=20.0,
                        help="how long the tables send one event a second")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="tablectl-bench-venue-") as tmp:
        directory = Path(tmp)
        bare = bare_fan_in(directory, args.tables, args.events)
        run = hub_run(directory, args.tables, args.events, args.pace_seconds)
    lost = run["sent_total"] - run["stored_total"]
    figures = {
        "tables": args.tables, "events_per_table": args.events,
        "bare_fan_in": bare, "recorder": run["burst"], "dashboard": run["pace"],
        "lost": lost,
        "ingest_ratio": round(run["burst"]["events_per_s"] / bare["events_per_s"], 2),
        "targets": {
            "no_event_lost": lost == 0 and run["burst"]["duplicates"] == 0,
            "ingest_at_least_half_fan_in":
                run["burst"]["events_per_s"] >= 0.5 * bare["events_per_s"],
            "floor_view_within_half_a_second_of_the_recorder":
                run["burst"]["floor_view_after_recorder_s"] is not None
                and run["burst"]["floor_view_after_recorder_s"] <= 0.5,
            "dashboard_p99_under_1s": (run["pace"]["delay_p99_ms"] or 1e9) < 1000},
    }
    if args.json:
        print(json.dumps(figures))
    else:
        print(f"{args.tables} tables x {args.events} events (burst), then one a second for "
              f"{args.pace_seconds:g} s")
        print(f"  bare fan-in (broker -> one subscriber): {bare['events_per_s']} events/s")
        print(f"  recorder ingest (stored + acknowledged): {run['burst']['events_per_s']} "
              f"events/s = {figures['ingest_ratio']}x the bare fan-in")
        lag = run["burst"]["floor_view_after_recorder_s"]
        print(f"  floor view: {run['burst']['floor_view_events']} events, every one "
              + (f"{lag} s after the recorder had stored them" if lag is not None
                 else "NOT within the deadline"))
        print(f"  dashboard update delay: p50 {run['pace']['delay_p50_ms']} ms, "
              f"p99 {run['pace']['delay_p99_ms']} ms over {run['pace']['updates']} updates")
        print(f"  lost: {lost}; duplicates: {run['burst']['duplicates']}")
        print("  targets: " + ", ".join(f"{k} {'met' if v else 'MISSED'}"
                                        for k, v in figures["targets"].items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
