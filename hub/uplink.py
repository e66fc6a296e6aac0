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

What to send and when is ``contract.delivery.UplinkSender`` (pure); this is its MQTT and
database shell.
"""

from __future__ import annotations

import logging
import sqlite3
import time

from contract import topics
from contract.delivery import UplinkSender, UplinkStats
from contract.mqtt import (
    BrokerClient,
    Connected,
    Disconnected,
    Endpoint,
    MqttWorker,
    Published,
    Received,
)
from contract.schema import ContractError, receive
from contract.wire import encode
from hub.storage import Storage, open_storage

log = logging.getLogger("tablectl.uplink")


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
        self.sender = UplinkSender(window=self.window, per_table=self.per_table,
                                   report_seconds=self.report_seconds)
        self.stats: UplinkStats = self.sender.stats
        self._hub: Storage | None = None
        self._state: sqlite3.Connection | None = None
        # paho's mid -> the sender's message number (kept across a reconnect: paho sends what
        # was in flight again under the same mid)
        self._numbers: dict[int, int] = {}
        self._uptos: dict[str, int] = {}
        self._last_poll = 0.0
        self._bad_requests = 0

    @property
    def connected(self) -> bool:
        return self.sender.connected

    def configure(self, client: BrokerClient) -> None:
        client.max_inflight_messages_set(self.window)

    def setup(self) -> None:
        self._hub = open_storage(self.db_path)
        self._state = sqlite3.connect(self.state_path)
        self._state.execute("CREATE TABLE IF NOT EXISTS sent (tbl TEXT PRIMARY KEY,"
                            " upto INTEGER NOT NULL)")
        self._state.commit()
        self.sender.load({str(t): int(u)
                          for t, u in self._state.execute("SELECT tbl, upto FROM sent")})

    def handle(self, item: object) -> None:
        match item:
            case Connected(refused=False, session_present=present):
                self.sender.connect()
                log.info("connected to the group's cluster (session %s)",
                         "kept" if present else "new")
                self.client.subscribe(topics.group_resend(self.venue), qos=0)
            case Connected(refused=True, reason=reason):
                log.error("the group's cluster refused venue %s's uplink: %s (check its user "
                          "and password)", self.venue, reason)
            case Disconnected(reason=reason):
                self.sender.disconnect()
                log.warning("lost the group's cluster (%s): connecting to the next node; "
                            "what was in flight is sent again", reason)
            case Published(mid=mid):
                number = self._numbers.pop(mid, None)
                if number is not None:
                    self.sender.puback(number)
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
        again = self.sender.resend(asked)
        if again:
            log.warning("the central recorder lacks what the cluster acknowledged: sending "
                        "again %s", ", ".join(f"{table} from {upto + 1} ({count} events)"
                                               for table, upto, count in again[:10]))

    def turn(self) -> None:
        assert self._hub is not None and self._state is not None
        now = time.monotonic()
        if now - self._last_poll >= self.poll_seconds:
            self._last_poll = now
            self._uptos = self._hub.uptos()
            self._hub.commit()  # end the read: the recorder's next commits are seen
            if self.sender.dirty:
                self._save_counts()
        if self.connected:
            self._send()
            # The counts, to the central recorder (QoS 0: the next report comes soon).
            for report in self.sender.reports(now):
                self.client.publish(topics.uplink_counts(self.venue), encode(report), qos=0)

    def _send(self) -> None:
        assert self._hub is not None
        messages, lacking = self.sender.pump(self._uptos, self._hub.raw_envelopes)
        for table, first in lacking:
            log.error("the hub's database lacks %s's event %d it counted as recorded: the "
                      "uplink waits for it", table, first)
        for message in messages:
            info = self.client.publish(topics.table(self.venue, message.table, "private"),
                                       message.payload, qos=1)
            self._numbers[info.mid] = message.number

    def _save_counts(self) -> None:
        assert self._state is not None
        self._state.executemany("INSERT INTO sent VALUES (?, ?) ON CONFLICT (tbl) DO UPDATE "
                                "SET upto = excluded.upto", sorted(self.sender.sent.items()))
        self._state.commit()
        self.sender.saved()

    def finish(self) -> None:
        assert self._hub is not None and self._state is not None
        self._save_counts()
        self._state.close()
        self._hub.close()
