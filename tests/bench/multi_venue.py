"""Several venues on the group's cluster (``python -m tests.bench.multi_venue``): a three-node
NATS cluster (Debian's nats-server, ``deploy/cluster``), each venue's hub database with what its
tables dealt, each venue's uplink (``tablectl uplink``, a process), and the central recorder
(``tablectl central``, a process) storing into a PostgreSQL of its own.

The tables' events are the core's own, replayed from dealers' sessions (a few sessions, each
dealt at many tables). Half of each table's events come to its venue's database at once, the
uplinks running (a backlog: what a hub records when its tables' outboxes come back; with
``--cold``, waiting there when the uplinks start, as after the group's link was down); the
other half are recorded while they run, as a hub records tables that deal on.

Faults, mid-stream: the cluster node that the central recorder and some uplinks are connected
to is SIGKILLed (started again 5 s later), and one venue's uplink is SIGKILLed (started again
2 s later).

Figures: the central recorder's ingest (events a second, from the backlog's commit at the
venues, or with ``--cold`` from the uplinks' start, until it holds every event) against two
floors measured in the same run: the engine's bare rate on the same cluster (a bare nats-py
publisher in a venue's account, 64 messages in flight, each answered at once by a bare
subscriber in the centre's account on another node: no database, no checks; timed once a
probe has been answered, the subscriber's interest known on the publisher's node), with one
envelope a message (what a table sends live) and with the uplink's batches of 100; and the
central database's own (the same rows inserted by one statement a batch and committed, by the
recorder's storage class, with nothing else running). The checker: every event of every
venue's database once at the centre, equal to the venue's, under its own venue.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import random
import secrets
import signal
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from contract.envelope import LEGACY_INCARNATION, Stream, envelope, incarnation_of
from contract.wire import encode
from group.centre import GroupStorage
from harness.nats_cluster import NatsCluster, Node
from houses.loaders import load_profile
from hub.storage import open_storage
from simulators.dealer_script import session
from tablectl.bench import replay_lines

SESSIONS = 4  # distinct dealers' sessions, each dealt at a quarter of the tables


def table_events(hands: int, seed: int) -> list[list[dict[str, Any]]]:
    """The core's events for a few dealers' sessions of ``hands`` hands."""
    rng = random.Random(seed)
    dealt = []
    for _ in range(SESSIONS):
        lines, _ = session(random.Random(rng.random()), load_profile("tda-2024"), hands=hands,
                           irregularity_rate=0.1)
        dealt.append(replay_lines(lines))
    return dealt


def venue_names(count: int) -> list[str]:
    return [f"v{i}" for i in range(1, count + 1)]


def tables_of(venues: list[str], tables: int) -> dict[str, list[str]]:
    """``tables`` tables spread over the venues (the first ones get one more)."""
    spread: dict[str, list[str]] = {v: [] for v in venues}
    for i in range(tables):
        venue = venues[i % len(venues)]
        spread[venue].append(f"t{len(spread[venue]) + 1}")
    return spread


def _write_private(path: Path, text: str) -> None:
    """A password file as the uplink and the central recorder take it: mode 0600 from its
    creation (they refuse one others may read)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as file:
        file.write(text)


class Group:
    """The running group: the cluster, the central recorder and each venue's uplink."""

    def __init__(self, directory: Path, venues: list[str], central_db: str) -> None:
        self.directory = directory
        self.venues = venues
        self.central_db = central_db
        self.passwords = {v: secrets.token_hex(8) for v in [*venues, "bare"]}
        central_password = secrets.token_hex(8)
        self.cluster = NatsCluster(directory / "cluster", self.passwords, central_password)
        _write_private(directory / "central.password", central_password)
        for venue, password in self.passwords.items():
            _write_private(directory / f"{venue}.password", password)
        self.central: subprocess.Popen[bytes] | None = None
        self.uplinks: dict[str, subprocess.Popen[bytes]] = {}
        self.uplink_boots: dict[str, int] = {}

    def start(self) -> Group:
        self.cluster.start()
        return self

    def hub_db(self, venue: str) -> str:
        return str(self.directory / f"{venue}-hub.db")

    def _cluster_arg(self, first: int) -> str:
        nodes = self.cluster.nodes[first:] + self.cluster.nodes[:first]
        return ",".join(n.address for n in nodes)

    def _tablectl(self, name: str, *args: str) -> subprocess.Popen[bytes]:
        with open(self.directory / f"{name}.log", "ab") as log:  # the child has its own
            return subprocess.Popen([sys.executable, "-m", "tablectl.cli", *args],
                                    stdout=log, stderr=log)

    def start_central(self) -> None:
        """The central recorder, connected first to the first node, and subscribed."""
        self.central = self._tablectl(
            "central", "central", "--db", self.central_db, "--cluster", self._cluster_arg(0),
            "--password-file", str(self.directory / "central.password"),
            "--ca", self.cluster.ca_file)
        deadline = time.monotonic() + 30
        while not self.central_subscribed():
            if self.central.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the central recorder did not subscribe: "
                                   + self.log_tail("central"))
            time.sleep(0.1)

    def central_subscribed(self) -> bool:
        """A node's monitoring port's ``/connz``: the connection named central-recorder holds
        its subscription to the tables' messages."""
        for found in monitoring(self.cluster, "connz?subs=1&limit=1000"):
            for connection in found.get("connections") or []:
                if connection.get("name") == "central-recorder" and any(
                        "private" in s for s in connection.get("subscriptions_list") or []):
                    return True
        return False

    def start_uplink(self, venue: str) -> None:
        first = self.venues.index(venue) % len(self.cluster.nodes)
        self.uplink_boots[venue] = self.uplink_boots.get(venue, 0) + 1
        self.uplinks[venue] = self._tablectl(
            f"uplink-{venue}", "uplink", "--venue", venue, "--db", self.hub_db(venue),
            "--state", str(self.directory / f"{venue}-uplink.db"),
            "--cluster", self._cluster_arg(first),
            "--password-file", str(self.directory / f"{venue}.password"),
            "--ca", self.cluster.ca_file)

    def uplinks_connected(self) -> set[str]:
        """The venues whose uplink is connected and subscribed to its resend requests
        (monitoring's ``/connz``: its connection's name, holding a group.resend
        subscription)."""
        ids = {f"uplink-{venue}": venue for venue in self.uplinks}
        return {ids[c["name"]]
                for found in monitoring(self.cluster, "connz?subs=1&limit=1000")
                for c in found.get("connections") or [] if c.get("name") in ids
                and any("resend" in s for s in c.get("subscriptions_list") or [])}

    def kill_uplink(self, venue: str) -> None:
        process = self.uplinks[venue]
        process.send_signal(signal.SIGKILL)
        process.wait(10)

    def stop_central(self) -> dict[str, Any]:
        """SIGTERM: the recorder commits, acknowledges and prints its counts."""
        assert self.central is not None
        return self._stopped(self.central, "central")

    def stop_uplinks(self) -> dict[str, Any]:
        return {venue: self._stopped(process, f"uplink-{venue}")
                for venue, process in self.uplinks.items()}

    def _stopped(self, process: subprocess.Popen[bytes], name: str) -> dict[str, Any]:
        process.send_signal(signal.SIGTERM)
        process.wait(30)
        for line in reversed(self.log_tail(name, 40).splitlines()):
            if line.startswith("{"):
                return dict(json.loads(line))
        return {}

    def log_tail(self, name: str, lines: int = 8) -> str:
        try:
            text = (self.directory / f"{name}.log").read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self) -> None:
        for process in [*self.uplinks.values(), self.central]:
            if process is not None and process.poll() is None:
                process.send_signal(signal.SIGKILL)
                process.wait(10)
        self.cluster.stop()


# -------------------------------------------------------------------- the engine's bare rate

def bare_rate(cluster: NatsCluster, password: str, central_password: str,
              payloads: list[bytes], window: int) -> float:
    """Messages a second from a bare nats-py publisher in venue ``bare``'s account (``window``
    in flight, as the uplink, through the service the centre's account lends it) on one node,
    each answered at once by a bare subscriber in the centre's account on another: the
    cluster's own cost for these messages and their answers, with nothing of ours around
    them."""
    return asyncio.run(_bare_rate(cluster, password, central_password, payloads, window))


async def _bare_rate(cluster: NatsCluster, password: str, central_password: str,
                     payloads: list[bytes], window: int) -> float:
    import logging

    from group.link import SSL_EOF_NOTICE

    logging.getLogger("asyncio").addFilter(SSL_EOF_NOTICE)
    node = cluster.nodes
    sub = await bare_client(cluster, node[1], "central", central_password, "bare-subscriber")
    pub = await bare_client(cluster, node[0], "venue-bare", password, "bare-publisher")
    try:
        await answer_bare(sub)
        return await publish_bare(pub, payloads, window)
    finally:
        await pub.close()
        await sub.close()


async def bare_client(cluster: NatsCluster, node: Node, user: str, password: str,
                      name: str) -> Any:
    """A bare nats-py client of ``node``, over the group's TLS."""
    import nats

    return await nats.connect(f"tls://{node.address}", user=user, password=password,
                              tls=ssl.create_default_context(cafile=cluster.ca_file),
                              name=name)


BARE_SUBJECTS = "pkr.v1.bare.tables.*.private"


async def answer_bare(sub: Any) -> None:
    """The bare subscriber: each of venue bare's messages answered at once, empty."""
    async def answer(msg: Any) -> None:
        await sub.publish(msg.reply, b"")

    await sub.subscribe(BARE_SUBJECTS, cb=answer)
    await sub.flush()


async def publish_bare(pub: Any, payloads: list[bytes], window: int,
                       timeout: float = 60.0, route_timeout: float = 30.0) -> float:
    """``payloads`` published by ``pub`` with ``window`` unanswered at most, each with a reply
    subject; messages a second until the last is answered. The clock starts once the route
    is proven both ways: core NATS drops what is published before a subscriber's interest
    (on another node) reached the publisher's node, and a flush proves only that the
    publisher's own node has its subscription; so a probe is published again and again until
    one is answered (none in ``route_timeout``: a RuntimeError; nor all of ``payloads``
    answered in ``timeout``)."""
    room = asyncio.Semaphore(window)
    answered = 0
    done, proven = asyncio.Event(), asyncio.Event()

    async def answered_one(msg: Any) -> None:
        nonlocal answered
        if msg.subject.endswith(".probe"):  # (a late answer to an earlier probe too)
            proven.set()
            return
        answered += 1
        room.release()
        if answered == len(payloads):
            done.set()

    inbox = pub.new_inbox()
    await pub.subscribe(inbox + ".*", cb=answered_one)
    await pub.flush()
    deadline = time.monotonic() + route_timeout
    wait = 0.01
    while not proven.is_set():
        if time.monotonic() > deadline:
            raise RuntimeError(f"no probe answered through the cluster in {route_timeout:g} s:"
                               " the bare subscriber's interest never reached the publisher's"
                               " node")
        await pub.publish(BARE_SUBJECTS.replace("*", "probe"), b"{}", reply=inbox + ".probe")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proven.wait(), wait)
        wait = min(2 * wait, 0.5)

    async def timed() -> None:
        for i, payload in enumerate(payloads):
            await room.acquire()
            await pub.publish(BARE_SUBJECTS.replace("*", f"t{i % 40 + 1}"), payload,
                              reply=f"{inbox}.{i}")
        await done.wait()

    start = time.perf_counter()
    try:  # (a lost message holds its place in the window: the wait is on the whole)
        await asyncio.wait_for(timed(), timeout)
    except TimeoutError:
        raise RuntimeError(f"{len(payloads) - answered} of {len(payloads)} messages not "
                           f"answered in {timeout:g} s") from None
    return len(payloads) / (time.perf_counter() - start)


def database_rate(central_db: str, venue: str, batches: list[list[dict[str, Any]]]) -> float:
    """Events a second the central database takes by itself: ``batches`` (each one venue
    table's envelopes, as an uplink's message) inserted by the recorder's storage class, 64
    messages a statement and a commit, on one connection, nothing else running; then deleted."""
    storage = GroupStorage(central_db)
    try:
        messages = [(venue, batch, (b'{"v":1,"batch":[' + b",".join(
            encode(e).encode() for e in batch) + b"]}")) for batch in batches]
        start = time.perf_counter()
        for i in range(0, len(messages), 64):
            storage.insert(messages[i:i + 64])
            storage.commit()
        seconds = time.perf_counter() - start
        storage.execute("DELETE FROM group_events WHERE venue = ?", (venue,))
        storage.commit()
        return sum(len(batch) for batch in batches) / seconds
    finally:
        storage.close()


# -------------------------------------------------------------------- a venue's hub records

def record(storage: Any, venue: str, table: str, events: list[dict[str, Any]],
           first_seq: int, incarnation: str = LEGACY_INCARNATION, since: int = 1) -> None:
    """What a venue hub's recorder does with a table's events (of its ``incarnation``, which
    starts at seq ``since``): the stream kept, rows, then the count."""
    stream = Stream(table, incarnation)
    storage.save_stream(stream, journal=None, follows=None, since_seq=since, epoch=0,
                        first_seen=0)
    for i, event in enumerate(events):
        seq = first_seq + i
        data = envelope(event, venue=venue, table=table, seq=seq, boot=1,
                        ts_ms=1_700_000_000_000 + seq, incarnation=incarnation)
        storage.insert(table, seq, data, encode(data), int(data["ts"]))
    storage.set_upto(stream, first_seq + len(events) - 1)


def check(group: Group, spread: dict[str, list[str]]) -> dict[str, Any]:
    central = GroupStorage(group.central_db)
    problems: list[str] = []
    missing = differing = 0
    try:
        held = central.counts()
        for venue in sorted(held):
            if venue not in spread:
                problems.append(f"the centre holds events of {venue}, which is no venue here")
        for venue, tables in spread.items():
            hub = open_storage(group.hub_db(venue))
            try:
                for table in tables:
                    # An event is (incarnation, seq): a table's incarnations share seqs.
                    there = hub.envelopes(table)
                    here = {_key(e): e for e in central.envelopes(venue, table)}
                    gone = [_key(e) for e in there if _key(e) not in here]
                    missing += len(gone)
                    if gone:
                        problems.append(f"{venue}/{table}: {len(gone)} events never reached "
                                        f"the centre (first {gone[:5]})")
                    unlike = sum(1 for e in there if _key(e) in here and here[_key(e)] != e)
                    if len(here) > len(there):
                        problems.append(f"{venue}/{table}: the centre holds events the venue "
                                        "never recorded")
                    if unlike:
                        differing += unlike
                        problems.append(f"{venue}/{table}: {unlike} events differ")
                    if any(e["venue"] != venue for e in here.values()):
                        problems.append(f"{venue}/{table}: another venue's event")
                for table in held.get(venue, {}):
                    if table not in tables:
                        problems.append(f"{venue}/{table}: at the centre, not at the venue")
            finally:
                hub.close()
        total = central.total()
    finally:
        central.close()
    return {"held": total, "missing": missing, "differing": differing, "problems": problems}


def _key(stored: dict[str, Any]) -> tuple[str, int]:
    return incarnation_of(stored), int(stored["seq"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.bench.multi_venue", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--venues", type=int, default=5)
    parser.add_argument("--tables", type=int, default=200, help="over all the venues")
    parser.add_argument("--hands", type=int, default=20, help="dealt at each table")
    parser.add_argument("--bare-messages", type=int, default=3000,
                        help="one-envelope messages the bare rate is measured with")
    parser.add_argument("--live-seconds", type=float, default=30.0,
                        help="how long the second half of the events takes to come")
    parser.add_argument("--cold", action="store_true",
                        help="the backlog's clock from the uplinks' start, not from its commit "
                             "at the hubs with the uplinks running and connected")
    parser.add_argument("--no-faults", action="store_true",
                        help="no node and no uplink killed")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--central-db", metavar="URL",
                        help="the central PostgreSQL (default: a private one, started here)")
    parser.add_argument("--dir", help="keep the group's files here")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    # SIGTERM ends the bench as Ctrl-C does: its processes and its PostgreSQL go with it.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if args.venues < 2 or args.tables < args.venues:
        parser.error("at least 2 venues and a table for each")
    from harness.postgres import Database

    database = None if args.central_db else Database()
    central_db = args.central_db or (database.url if database else "")
    with tempfile.TemporaryDirectory(prefix="tablectl-bench-group-") as tmp:
        directory = Path(args.dir or tmp)
        directory.mkdir(parents=True, exist_ok=True)
        try:
            figures = _bench(args, directory, central_db)
        finally:
            if database is not None:
                database.drop()
    if args.json:
        print(json.dumps(figures))
    else:
        _print(figures)
    return 0 if not figures["problems"] else 1


def _bench(args: argparse.Namespace, directory: Path, central_db: str) -> dict[str, Any]:
    venues = venue_names(args.venues)
    spread = tables_of(venues, args.tables)
    group = Group(directory, venues, central_db).start()
    dealt = table_events(args.hands, args.seed)
    faults: list[dict[str, Any]] = []
    fault_at: list[tuple[str, float]] = []
    done = threading.Event()
    watching: threading.Thread | None = None
    try:
        # The floors, first: the engine's bare rate (the central recorder is not running
        # yet: nothing of it reaches the centre), and the central database's.
        sample = [encode(envelope(e, venue="bare", table="t1", seq=i + 1, boot=1,
                                  ts_ms=1_700_000_000_000 + i)).encode()
                  for i, e in enumerate(dealt[0] * 4)][:max(200, args.bare_messages)]
        batches = [b'{"v":1,"batch":[' + b",".join(sample[i:i + 100]) + b"]}"
                   for i in range(0, len(sample) - 99, 100)] * 3
        password = group.passwords["bare"]
        central_password = (directory / "central.password").read_text()
        # The faster of two runs each: the first pays for the connections' and the
        # interpreter's warming up, which is no cost of the engine's.
        bare_single = max(bare_rate(group.cluster, password, central_password, sample, 64)
                          for _ in range(2))
        bare_batched = 100 * max(bare_rate(group.cluster, password, central_password,
                                           batches, 64) for _ in range(2))
        floor_batches = [
            [envelope(e, venue="bare", table=f"t{n}", seq=i + 1, boot=1,
                      ts_ms=1_700_000_000_000 + i) for i, e in enumerate(events[:100])]
            for n, events in enumerate(dealt * max(1, args.tables // len(dealt)))]
        database = database_rate(central_db, "bare", floor_batches)

        # Each venue's backlog: the first half of every table's events. Warm (by default),
        # the uplinks run and are connected, as a venue's service does while its link to the
        # group is down, and the backlog is written in a transaction a venue, committed at
        # once when the clock starts: what the bare rate's publisher and subscriber are too
        # (connected before its clock). Cold (--cold), committed before the uplinks start,
        # and the clock counts their five interpreters' start (0.3-0.5 s of a backlog's
        # 1.4-1.7 s on two cores), as the bench did before 2026-12-03's night.
        halves: dict[tuple[str, str], tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {}
        expected = 0
        hubs = {venue: open_storage(group.hub_db(venue)) for venue in venues}
        for hub in hubs.values():
            hub.commit()  # the hub's tables made: an uplink's start writes nothing
        group.start_central()
        samples: list[tuple[float, int]] = []
        watching = threading.Thread(target=_watch, args=(central_db, samples, done),
                                    daemon=True)
        watching.start()
        if not args.cold:
            for venue in venues:
                group.start_uplink(venue)
            deadline = time.monotonic() + 60
            while (missing := set(venues) - group.uplinks_connected()):
                if time.monotonic() > deadline:
                    first = sorted(missing)[0]
                    raise RuntimeError(f"the uplinks of {', '.join(sorted(missing))} did not "
                                       f"connect; {first}'s: "
                                       + group.log_tail(f"uplink-{first}"))
                time.sleep(0.1)
        for venue, tables in spread.items():
            for n, table in enumerate(tables):
                events = dealt[n % SESSIONS]
                halves[venue, table] = (events[:len(events) // 2], events[len(events) // 2:])
                record(hubs[venue], venue, table, halves[venue, table][0], 1)
                expected += len(events)

        # Phase 1, the backlog: how fast the centre takes it in, no fault.
        backlog = sum(len(first) for first, _ in halves.values())

        def commit_backlog() -> None:
            for hub in hubs.values():
                hub.commit()
                hub.close()

        if args.cold:  # committed before the clock, which counts from the uplinks' start
            commit_backlog()
            started = time.monotonic()
            for venue in venues:
                group.start_uplink(venue)
        else:
            started = time.monotonic()
            commit_backlog()
        caught = _first_time(samples, backlog, 600)
        backlog_seconds = (caught or time.monotonic()) - started

        # Phase 2, live: the second half recorded over --live-seconds, as tables deal; a
        # cluster node and then a venue's uplink killed while it comes.
        live_started = time.monotonic()
        last_write: list[float] = []
        feeder = threading.Thread(target=_record_live,
                                  args=(group, spread, halves, args.live_seconds, last_write),
                                  daemon=True)
        feeder.start()
        if not args.no_faults:
            node: Node = group.cluster.nodes[0]  # the central recorder's first node
            _sleep_until(live_started + args.live_seconds / 4)
            group.cluster.kill_node(node)
            fault_at.append((f"cluster node {node.name} SIGKILLed (down 5 s)", time.monotonic()))
            time.sleep(5)
            group.cluster.start_node(node)  # it keeps nothing: nothing to catch up with
            _sleep_until(live_started + args.live_seconds * 2 / 3)
            victim = venues[1]
            group.kill_uplink(victim)
            fault_at.append((f"{victim}'s uplink SIGKILLed (down 2 s)", time.monotonic()))
            time.sleep(2)
            group.start_uplink(victim)
        feeder.join(args.live_seconds + 120)
        recorded = last_write[0] if last_write else time.monotonic()  # the venues' last
        complete = _first_time(samples, expected, 600)
        done.set()
        watching.join(10)
        end = complete or time.monotonic()
        ends = [at for _, at in fault_at[1:]] + [end]
        for (what, at), until in zip(fault_at, ends, strict=False):
            faults.append({"what": what, "at_s": round(at - live_started, 2),
                           "held_then": max([c for t, c in samples if t <= at], default=0),
                           "longest_stall_s": _stalled(samples, at, until)})
        central = group.stop_central()
        uplinks = group.stop_uplinks()
        report = check(group, spread)
        if not complete:
            report["problems"].append(f"the centre held {samples[-1][1] if samples else 0} "
                                      f"of {expected} events when the bench gave up")
    finally:
        # However the bench ends, the watcher drops its trigger (a --central-db is kept).
        done.set()
        if watching is not None:
            watching.join(10)
        group.stop()
    ingest = backlog / backlog_seconds
    return {"venues": args.venues, "tables": args.tables, "hands_per_table": args.hands,
            "events": expected, "backlog_events": backlog,
            "backlog_from": "the uplinks' start" if args.cold else "its commit, uplinks running",
            "backlog_seconds": round(backlog_seconds, 2),
            "ingest_events_per_s": round(ingest),
            "bare_single_events_per_s": round(bare_single),
            "bare_batched_events_per_s": round(bare_batched),
            "ratio_to_bare_single": round(ingest / bare_single, 2),
            "ratio_to_bare_batched": round(ingest / bare_batched, 2),
            "database_events_per_s": round(database),
            "ratio_to_database": round(ingest / database, 2),
            "live_seconds": args.live_seconds,
            "caught_up_after_last_event_s": round(end - recorded, 2),
            "faults": faults, "uplink_boots": group.uplink_boots,
            "central": central, "uplinks": uplinks, **report}


def _record_live(group: Group, spread: dict[str, list[str]],
                 halves: dict[tuple[str, str], tuple[list[Any], list[Any]]],
                 seconds: float, last_write: list[float]) -> None:
    """The second half of every table's events into its venue's database, as a hub records
    tables that deal: a few events a table four times a second, spread over ``seconds``;
    when the last of them was committed, in ``last_write``."""
    hubs = {venue: open_storage(group.hub_db(venue)) for venue in spread}
    longest = max(len(second) for _, second in halves.values())
    step = max(1, math.ceil(longest / (seconds * 4)))
    rounds = math.ceil(longest / step)
    start = time.monotonic()
    try:
        for n in range(rounds):
            _sleep_until(start + seconds * n / rounds)
            offset = n * step
            for venue, tables in spread.items():
                wrote = False
                for table in tables:
                    first, second = halves[venue, table]
                    if chunk := second[offset:offset + step]:
                        record(hubs[venue], venue, table, chunk, len(first) + offset + 1)
                        wrote = True
                hubs[venue].commit()
                if wrote:
                    last_write[:] = [time.monotonic()]
    finally:
        for hub in hubs.values():
            hub.close()


class HeldCount:
    """How many events the centre holds, asked ten times a second without scanning the table
    each time: a ``COUNT(*)`` of the whole table (20 ms of a parallel scan at 110,000 rows)
    took the processes under test a quarter of a core by the end of a backlog. On PostgreSQL
    the bench adds, for its run, a statement trigger that adds each INSERT's new rows (its
    transition table: ON CONFLICT's skipped rows are not in it) to a count of the connection's
    own (its server process's row: the recorder's two writers never wait on each other's),
    committed with them; it is dropped at the end. Another database: ``COUNT(*)``."""

    def __init__(self, storage: GroupStorage) -> None:
        self.storage = storage
        self.counted = storage.p == "%s"
        if self.counted:
            for statement in (
                    "DROP TABLE IF EXISTS bench_held",  # a run cut short left its own
                    "CREATE TABLE bench_held (pid INTEGER PRIMARY KEY,"
                    " n BIGINT NOT NULL)",
                    "CREATE OR REPLACE FUNCTION bench_count_held() RETURNS trigger"
                    " LANGUAGE plpgsql AS $$ BEGIN INSERT INTO bench_held"
                    " SELECT pg_backend_pid(), COUNT(*) FROM inserted ON CONFLICT (pid)"
                    " DO UPDATE SET n = bench_held.n + excluded.n; RETURN NULL; END $$",
                    # (the trigger locks the table against inserts: the count starts exact)
                    "CREATE OR REPLACE TRIGGER bench_held AFTER INSERT ON group_events"
                    " REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT"
                    " EXECUTE FUNCTION bench_count_held()",
                    "DELETE FROM bench_held",
                    "INSERT INTO bench_held SELECT 0, COUNT(*) FROM group_events"):
                storage.db.execute(statement)
            storage.commit()

    def __call__(self) -> int:
        if not self.counted:
            return self.storage.total()
        return int(self.storage.execute("SELECT SUM(n) FROM bench_held").fetchone()[0])

    def close(self) -> None:
        if self.counted:
            self.storage.db.execute("DROP TRIGGER IF EXISTS bench_held ON group_events")
            self.storage.db.execute("DROP FUNCTION IF EXISTS bench_count_held()")
            self.storage.db.execute("DROP TABLE IF EXISTS bench_held")
            self.storage.commit()


def _watch(central_db: str, samples: list[tuple[float, int]], done: threading.Event) -> None:
    """What the centre holds, every 0.1 s, until ``done``."""
    storage = GroupStorage(central_db)
    held = HeldCount(storage)
    try:
        while not done.wait(0.1):
            samples.append((time.monotonic(), held()))
            storage.commit()  # end the read: the next one sees the recorder's new commits
    finally:
        try:
            storage.db.rollback()  # a read cut short leaves no transaction the DROPs wait on
            held.close()
        finally:
            storage.close()


def _first_time(samples: list[tuple[float, int]], count: int, timeout: float) -> float | None:
    """When the centre first held ``count`` events (waiting up to ``timeout``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for t, held in samples:
            if held >= count:
                return t
        time.sleep(0.05)
    return None


def _sleep_until(moment: float) -> None:
    time.sleep(max(0.0, moment - time.monotonic()))


def monitoring(cluster: NatsCluster, query: str, but: Node | None = None,
               ) -> Iterator[dict[str, Any]]:
    """What each live node's monitoring port answers to ``query`` (nodes that do not answer
    are passed over)."""
    for node in cluster.nodes:
        if node is but or not node.alive:
            continue
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{node.monitor_port}/{query}",
                                        timeout=2) as answer:
                yield dict(json.load(answer))
        except OSError:
            continue


def _stalled(samples: list[tuple[float, int]], at: float, until: float) -> float:
    """The longest the centre went without storing anything between a fault and ``until``."""
    longest = 0.0
    last_change = at
    previous = max([c for t, c in samples if t <= at], default=0)
    for t, count in samples:
        if t <= at or t > until:
            continue
        if count > previous:
            longest = max(longest, t - last_change)
            last_change, previous = t, count
    return round(max(longest, min(until, samples[-1][0]) - last_change), 2)


def _print(figures: dict[str, Any]) -> None:
    print(f"{figures['venues']} venues, {figures['tables']} tables, {figures['events']} events "
          f"({figures['hands_per_table']} hands a table)")
    print(f"  backlog of {figures['backlog_events']} events held after "
          f"{figures['backlog_seconds']} s from {figures['backlog_from']}: "
          f"ingest {figures['ingest_events_per_s']} events/s; "
          "the engine's bare rate "
          f"{figures['bare_single_events_per_s']} events/s one to a message "
          f"(x{figures['ratio_to_bare_single']}), {figures['bare_batched_events_per_s']} "
          f"events/s in batches of 100 (x{figures['ratio_to_bare_batched']}); the central "
          f"database by itself {figures['database_events_per_s']} events/s "
          f"(x{figures['ratio_to_database']})")
    print(f"  live: the rest over {figures['live_seconds']:g} s; the centre held everything "
          f"{figures['caught_up_after_last_event_s']} s after the venues recorded the last")
    for fault in figures["faults"]:
        print(f"  {fault['what']} at {fault['at_s']} s ({fault['held_then']} events held): the "
              f"centre stored nothing for {fault['longest_stall_s']} s at most after it")
    central = figures["central"]
    print(f"  central recorder: {central.get('stored')} stored, {central.get('duplicates')} "
          f"came twice (not stored twice), {central.get('refused')} refused")
    print(f"  checker: {figures['held']} held, {figures['missing']} missing, "
          f"{figures['differing']} differing; "
          + ("nothing wrong" if not figures["problems"] else "; ".join(figures["problems"])))


if __name__ == "__main__":
    sys.exit(main())
