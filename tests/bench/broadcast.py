"""The broadcast feed's delay accuracy and its equities' time, each against a baseline in the
same run.

    python -m tests.bench.broadcast [--hands 8] [--delay 3] [--every 1] [--json]

A real Mosquitto, the hub (SQLite) and a table's outbox and MQTT link (as the daemon's)
deal ``--hands`` generated hands (and one more) at a featured table, one every ``--every``
seconds, while the overlay's event stream (an overlay link, as OBS opens it) is read: each
hand's lateness is the moment it first comes on the stream with its end, less the moment the
delay allows it (its end's time on the hub's clock plus the delay). The stream carries the
newest hand the delay allows, looked at every second: a hand a later one replaced between
two looks is never on it, and the one more hand stands in for it. Run twice: with no delay
(the baseline: the stream's own latency, its look every second) and with ``--delay``
seconds; a negative lateness beyond the clocks' measured offset would be a hand shown early.
Then the feed's view of each hand at each street built with its equities, against the same
view without them (the baseline), in CPU time.
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import socket
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from hardware.mqtt_link import TableLink
from hardware.outbox import Outbox
from houses.loaders import load_profile
from hub import auth
from hub.broadcast import deals
from hub.service import FloorService
from simulators.broker import Broker
from simulators.dealer_script import session
from tablectl.bench import replay_lines
from tablectl.hub_app import Hub, HubSettings


def _hands(count: int, seed: int) -> list[list[dict[str, Any]]]:
    lines, _ = session(random.Random(seed), load_profile("tda-2024"), hands=count,
                       irregularity_rate=0.0, seats=(1, 2, 4, 5, 7, 9), brisk=True,
                       seat_changes=False, clock="tda-2024")
    events = replay_lines(lines, "tda-2024")
    return [[e for e in events if e.get("hand") == n] for n in range(1, count + 1)]


def _until(condition: Any, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.02)
    return False


def _lateness(hub: Hub, box: Outbox, link: TableLink, hands: list[list[dict[str, Any]]],
              key: str, delay: int, every: float) -> list[float]:
    """Each hand's lateness on the overlay's stream (ms), with the feed's delay ``delay``."""
    host, port = hub.url.split("//")[1].split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=60)
    connection.connect()
    stream_socket = connection.sock  # the response reads it, whatever the connection keeps
    connection.request("GET", "/api/overlay/stream", headers={"X-Overlay-Key": key})
    response = connection.getresponse()
    assert response.status == 200, response.read()
    old: set[str] | None = None  # the hands on the stream's first event: an earlier run's
    # This run's hands: an earlier run's last one, allowed on the feed only once this run's
    # delay has passed since its end, can come on this stream after its first event.
    ours = {hand[0]["hand"] for hand in hands}
    first_seen: dict[str, float] = {}  # deal -> when it came with its end (hub's clock, ms)
    ended: dict[str, int] = {}
    numbers: set[int] = set()  # the hands come on the stream with their end

    def read() -> None:
        nonlocal old
        try:
            for raw in response:
                line = raw.decode()
                if not line.startswith("data: "):
                    continue
                now = time.time() * 1000  # the hub's clock: this machine's
                shown = json.loads(line[6:])["hands"]
                if old is None:
                    old = {hand["deal"] for hand in shown}
                for hand in shown:
                    if hand["ended_at"] is not None and hand["hand"] in ours and \
                            hand["deal"] not in old | set(first_seen):
                        first_seen[hand["deal"]] = now
                        numbers.add(hand["hand"])
                        ended[hand["deal"]] = hand["ended_at"]
        except (OSError, ValueError, AttributeError, http.client.HTTPException):
            pass  # closed

    threading.Thread(target=read, daemon=True).start()
    for index, hand in enumerate(hands):
        if index:
            time.sleep(every)  # at the script's pace, whatever the stream does
        for event in hand:
            box.append(event, int(time.time() * 1000))
        link.notify()
    last = hands[-1][0]["hand"]  # nothing replaces the last hand on the stream
    _until(lambda: len(first_seen) >= len(hands) - 1 or last in numbers, delay + 30)
    # The reading thread waits in recv() holding the response's buffer, which close() needs:
    # shut the socket first, or the close waits for the stream's next keep-alive (15 s).
    stream_socket.shutdown(socket.SHUT_RDWR)
    connection.close()
    counted = sorted(first_seen, key=lambda d: ended[d])[:len(hands) - 1]
    return [first_seen[d] - (ended[d] + delay * 1000) for d in counted]


def _summary(values: list[float]) -> dict[str, Any]:
    ordered = sorted(values)
    return {"hands": len(ordered), "median_ms": round(statistics.median(ordered), 1),
            "p95_ms": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 1),
            "min_ms": round(ordered[0], 1), "max_ms": round(ordered[-1], 1)}


def _equity_time(hands: list[list[dict[str, Any]]]) -> dict[str, Any]:
    """Each hand's view on the feed at each street (pre-flop once every hole card is out, then
    flop, turn, river), in CPU time: with its equities, and without (the baseline)."""
    by_street: dict[str, list[float]] = {}
    baseline: list[float] = []
    for number, hand in enumerate(hands, start=1):
        stored = [(0, {**e, "incarnation": f"{number:032x}", "seq": i, "ts": 1000 * i,
                       "data": {k: v for k, v in e.items() if k != "type"}})
                  for i, e in enumerate(hand, start=1)]
        board = [i for i, (_, e) in enumerate(stored)
                 if e["type"] == "card" and e.get("role") == "board"]
        if len(board) < 5:
            continue  # a hand that ended before the river
        for street, upto in (("preflop", board[0]), ("flop", board[2] + 1),
                             ("turn", board[3] + 1), ("river", board[4] + 1)):
            [(_, deal)] = deals(stored[:upto])
            start = time.process_time()
            deal.view({}, {}, with_equity=False)
            baseline.append((time.process_time() - start) * 1000)
            start = time.process_time()
            deal.view({}, {})
            by_street.setdefault(street, []).append((time.process_time() - start) * 1000)
    return {"hands": len(by_street.get("river", [])),
            "view_ms": round(statistics.median(baseline), 2),
            "with_equity_ms": {street: round(statistics.median(times), 2)
                               for street, times in by_street.items()},
            "worst_with_equity_ms": round(max(max(t) for t in by_street.values()), 2)}


def run(hands: int, delay: int, every: float = 1.0, seed: int = 49) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-broadcast-") as tmp:
        directory = Path(tmp)
        broker = Broker(directory / "mosquitto").start()
        users = directory / "users.toml"
        auth.save_user(users, "studio", "broadcast", "studio-password")
        hub = Hub(HubSettings(venue="bench", db=str(directory / "hub.db"), users=str(users),
                              port=broker.port, http_port=0)).start()
        link = None
        try:
            assert hub.connected.wait(10) and hub.recorder.connected.wait(10)
            box = Outbox(directory / "t1.db")
            link = TableLink(box, venue="bench", table="t1", port=broker.port).start()
            assert _until(lambda: "t1" in hub.floor.tables, 10)
            floor = auth.User("bench", "floor", "")
            studio = auth.User("studio", "broadcast", "")
            hub.call(FloorService.feature, floor, "t1", True)
            key = hub.call(FloorService.make_overlay_link, studio, "t1")[0]["path"][9:]
            dealt = _hands(2 * (hands + 1), seed)
            figures: dict[str, Any] = {}
            for name, seconds, part in (("baseline", 0, dealt[:hands + 1]),
                                        ("delayed", delay, dealt[hands + 1:])):
                hub.call(FloorService.set_broadcast_delay, floor, seconds)
                figures[name] = {"delay_s": seconds,
                                 **_summary(_lateness(hub, box, link, part, key, seconds, every))}
            figures["added_by_delay_median_ms"] = round(
                figures["delayed"]["median_ms"] - figures["baseline"]["median_ms"], 1)
            figures["equity"] = _equity_time(dealt)
            return figures
        finally:
            if link is not None:
                link.stop()
            hub.stop()
            broker.kill()


def report(figures: dict[str, Any]) -> str:
    lines = []
    for name in ("baseline", "delayed"):
        f = figures[name]
        lines.append(f"{name:<9} delay {f['delay_s']:>3} s: {f['hands']} hands, late by "
                     f"median {f['median_ms']} ms, p95 {f['p95_ms']}, min {f['min_ms']}, "
                     f"max {f['max_ms']}")
    lines.append(f"the delay adds {figures['added_by_delay_median_ms']} ms (median)")
    e = figures["equity"]
    streets = ", ".join(f"{k} {v} ms" for k, v in e["with_equity_ms"].items())
    lines.append(f"a hand's view: {e['view_ms']} ms of CPU without equities; with them "
                 f"{streets} (median), worst {e['worst_with_equity_ms']} ms; {e['hands']} hands")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hands", type=int, default=8, help="hands dealt in each run")
    parser.add_argument("--delay", type=int, default=3, help="the feed's delay (seconds)")
    parser.add_argument("--every", type=float, default=1.0,
                        help="seconds between hands (the stream looks every second)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    figures = run(args.hands, args.delay, args.every)
    print(json.dumps(figures) if args.json else report(figures))


if __name__ == "__main__":
    main()
