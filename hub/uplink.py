"""A venue's uplink to the group: what the venue's hub recorded, table by table and in order,
published to the group's clustered broker (``deploy/cluster``) for the central recorder
(``hub.group``).

It reads the hub's database, not the venue's broker: the hub's recorder is where every event
is complete (it asks tables for what it missed), so the uplink forwards exactly that, however
long the venue was cut off from the group, and a restart of the venue's broker, of the hub or
of the uplink loses nothing. It sends a table's events only up to what the recorder has
committed without a gap, as backlog batches (``EnvelopeBatch``: up to 100 envelopes a
message), over MQTT 3.1.1 with a persistent session and QoS 1. The cluster acknowledges a
message once its replicated stream holds it; only then does the uplink move its count for the
table, kept in a small SQLite file of its own (``--state``). After a crash it sends again from
that count: the central recorder keeps an event once however often it comes.

The cluster's acknowledgement says the venue's own account holds the message, not yet the
centre's (``deploy/cluster/accounts.conf``). So every ``report_seconds`` the uplink reports its
counts to the central recorder, which asks it to send again the tables it is behind on
(``hub.gaps``): the uplink moves such a table's count back to what the centre holds and sends
from there, once none of its messages for the table is in flight.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections import deque
from dataclasses import dataclass

from contract import topics
from contract.mqtt import Connected, Disconnected, Endpoint, MqttWorker, Published, Received
from contract.schema import ContractError, receive
from contract.wire import encode
from hub.storage import Storage, open_storage

log = logging.getLogger("tablectl.uplink")

BATCH_EVENTS = 100  # the contract's EnvelopeBatch maxItems
BATCH_BYTES = 120_000  # the contract's EnvelopeBatch: at most 128 kB, with room for the wrapper
COUNTS_PER_MESSAGE = 500  # the contract's UplinkCounts: tables a message


@dataclass
class InFlight:
    last_seq: int
    mid: int
    done: bool = False


@dataclass
class UplinkStats:
    messages: int = 0
    events: int = 0
    acknowledged: int = 0  # events the cluster holds
    sent_again: int = 0  # events the central recorder asked for again


class Uplink(MqttWorker):
    worker_name = "uplink"
    turn_seconds = 0.05
    poll_seconds = 0.2  # how often the hub's database is asked what is new
    window = 64  # messages in flight to the cluster
    per_table = 4  # of them for one table (a venue's tables share the link)
    report_seconds = 2.0  # how often the counts go to the central recorder

    def __init__(self, venue: str, db: str, state: str, endpoint: Endpoint) -> None:
        super().__init__(endpoint)
        self.venue = venue
        self.db_path = db
        self.state_path = state
        self.stats = UplinkStats()
        self.connected = False
        self._hub: Storage | None = None
        self._state: sqlite3.Connection | None = None
        self.sent: dict[str, int] = {}  # per table: held by the cluster, without a gap
        self._queued: dict[str, int] = {}  # per table: the last seq handed to paho
        self._flight: dict[str, deque[InFlight]] = {}
        self._by_mid: dict[int, str] = {}
        self._uptos: dict[str, int] = {}
        self._last_poll = 0.0
        self._dirty = False
        self._missing: set[tuple[str, int]] = set()  # gaps in the hub's database, logged
        self._last_report = -float("inf")
        self._bad_requests = 0

    def configure(self, client: object) -> None:
        client.max_inflight_messages_set(self.window)  # type: ignore[attr-defined]

    def setup(self) -> None:
        self._hub = open_storage(self.db_path)
        self._state = sqlite3.connect(self.state_path)
        self._state.execute("CREATE TABLE IF NOT EXISTS sent (tbl TEXT PRIMARY KEY,"
                            " upto INTEGER NOT NULL)")
        self._state.commit()
        self.sent = {str(t): int(u) for t, u in self._state.execute("SELECT tbl, upto FROM sent")}
        self._queued = dict(self.sent)

    def handle(self, item: object) -> None:
        match item:
            case Connected(refused=False, session_present=present):
                self.connected = True
                self._last_report = -float("inf")  # at once: a new session may have lost some
                log.info("connected to the group's cluster (session %s)",
                         "kept" if present else "new")
                self.client.subscribe(topics.group_resend(self.venue), qos=0)
            case Connected(refused=True, reason=reason):
                log.error("the group's cluster refused venue %s's uplink: %s (check its user "
                          "and password)", self.venue, reason)
            case Disconnected(reason=reason):
                self.connected = False
                log.warning("lost the group's cluster (%s): connecting to the next node; "
                            "what was in flight is sent again", reason)
            case Published(mid=mid):
                self._held(mid)
            case Received(topic=topic) if topic == topics.group_resend(self.venue):
                self._send_again(item)

    def _send_again(self, item: Received) -> None:
        """The central recorder lacks some tables' events from a seq on: send them again
        (a table with messages still in flight is left for the recorder's next request)."""
        try:
            asked = receive("ResendRequest", item.payload)["tables"]
        except ContractError as exc:
            self._bad_requests += 1
            if self._bad_requests == 1:
                log.warning("refused a resend request from the group: %s", exc)
            return
        again: list[str] = []
        for table, upto in sorted(asked.items()):
            count = self.sent.get(table, 0)
            if upto >= count or self._flight.get(table):
                continue
            self.stats.sent_again += count - upto
            self.stats.acknowledged -= count - upto
            self.sent[table] = self._queued[table] = upto
            self._dirty = True
            again.append(f"{table} from {upto + 1} ({count - upto} events)")
        if again:
            log.warning("the central recorder lacks what the cluster acknowledged: sending "
                        "again %s", ", ".join(again[:10]))

    def _held(self, mid: int) -> None:
        table = self._by_mid.pop(mid, None)
        if table is None:
            return
        flight = self._flight[table]
        for entry in flight:
            if entry.mid == mid:
                entry.done = True
        while flight and flight[0].done:
            entry = flight.popleft()
            self.stats.acknowledged += entry.last_seq - self.sent.get(table, 0)
            self.sent[table] = entry.last_seq
            self._dirty = True

    def turn(self) -> None:
        assert self._hub is not None and self._state is not None
        now = time.monotonic()
        if now - self._last_poll >= self.poll_seconds:
            self._last_poll = now
            self._uptos = self._hub.uptos()
            self._hub.commit()  # end the read: the recorder's next commits are seen
            if self._dirty:
                self._save_counts()
        if self.connected:
            self._send()
            if now - self._last_report >= self.report_seconds:
                self._last_report = now
                self._report()

    def _report(self) -> None:
        """The counts, to the central recorder (QoS 0: the next report comes soon)."""
        counts = sorted((t, n) for t, n in self.sent.items() if n > 0)
        for i in range(0, len(counts), COUNTS_PER_MESSAGE):
            self.client.publish(topics.uplink_counts(self.venue), encode(
                {"v": 1, "tables": dict(counts[i:i + COUNTS_PER_MESSAGE])}), qos=0)

    def _send(self) -> None:
        assert self._hub is not None
        for table, upto in sorted(self._uptos.items()):
            flight = self._flight.setdefault(table, deque())
            while (len(self._by_mid) < self.window and len(flight) < self.per_table
                   and self._queued.get(table, 0) < upto):
                first = self._queued.get(table, 0) + 1
                rows = self._hub.raw_envelopes(table, first,
                                               min(upto, first + BATCH_EVENTS - 1))
                if not rows or rows[0][0] != first:
                    if (table, first) not in self._missing:  # said once, not every turn
                        self._missing.add((table, first))
                        log.error("the hub's database lacks %s's event %d it counted as "
                                  "recorded: the uplink waits for it", table, first)
                    break
                chosen: list[tuple[int, str]] = []
                size = 0
                for seq, raw in rows:
                    if chosen and (seq != chosen[-1][0] + 1 or size + len(raw) > BATCH_BYTES):
                        break
                    chosen.append((seq, raw))
                    size += len(raw) + 1
                payload = (chosen[0][1] if len(chosen) == 1
                           else '{"v":1,"batch":[' + ",".join(r for _, r in chosen) + "]}")
                info = self.client.publish(topics.table(self.venue, table, "private"),
                                           payload, qos=1)
                last = chosen[-1][0]
                flight.append(InFlight(last, info.mid))
                self._by_mid[info.mid] = table
                self._queued[table] = last
                self.stats.messages += 1
                self.stats.events += len(chosen)

    def _save_counts(self) -> None:
        assert self._state is not None
        self._state.executemany("INSERT INTO sent VALUES (?, ?) ON CONFLICT (tbl) DO UPDATE "
                                "SET upto = excluded.upto", sorted(self.sent.items()))
        self._state.commit()
        self._dirty = False

    def finish(self) -> None:
        assert self._hub is not None and self._state is not None
        self._save_counts()
        self._state.close()
        self._hub.close()
