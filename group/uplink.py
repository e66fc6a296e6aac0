"""A venue's uplink to the group: what the venue's hub recorded, table by table and in order,
sent through the group's cluster (``deploy/cluster``) to the central recorder (``group.centre``).

It reads the hub's database, not the venue's broker: the hub's recorder is where every event
is complete (it asks tables for what it missed), so the uplink forwards exactly that, however
long the venue was cut off from the group, and a restart of the venue's broker, of the hub or
of the uplink loses nothing. It sends a table's events only up to what the recorder has
committed without a gap, as backlog batches (``EnvelopeBatch``: up to 100 envelopes a
message), over NATS (``group.link``), each message with a reply subject of its own
(``<inbox>.<number>``). It counts each of a table's incarnations apart (a stream: a table
re-installed or restored from a backup makes seqs its older incarnations made too; an
incarnation's start at seq 1 or later is its own, not a gap). The central recorder answers
once the rows are committed; only then does the uplink move its count for the stream, kept in
a small SQLite file of its own (``--state``, ``store.uplink_state``). What is not answered in
time, or was in flight when the connection dropped, is sent again from that count, and after a
crash everything after it: the central recorder keeps an event once however often it comes.

Every ``report_seconds`` the uplink also reports its counts to the central recorder, which
asks it to send again the streams it is behind on (``group.gaps``): a central database restored
from a backup older than the counts gets back what it lost. The uplink moves such a stream's
count back to what the centre holds and sends from there, once none of its messages for the
stream is in flight.

What to send and when is ``contract.delivery.UplinkSender`` (pure); this is its NATS and
database shell.
"""

from __future__ import annotations

import logging
import secrets
import sqlite3
import time
from collections.abc import Sequence

from contract import topics
from contract.delivery import UplinkSender, UplinkStats
from contract.envelope import LEGACY_INCARNATION, Stream
from contract.schema import ContractError, receive
from contract.wire import encode
from contract.worker import Connected, Disconnected, Received
from group.link import GroupEndpoint, NatsWorker, subject
from hub.storage import Storage, open_storage
from store import uplink_state

log = logging.getLogger("tablectl.uplink")


class Uplink(NatsWorker):
    worker_name = "uplink"
    turn_seconds = 0.05
    poll_seconds = 0.2  # how often the hub's database is asked what is new
    window = 64  # messages in flight to the central recorder
    per_table = 4  # of them for one table (a venue's tables share the link)
    report_seconds = 2.0  # how often the counts go to the central recorder

    def __init__(self, venue: str, db: str, state: str, endpoint: GroupEndpoint) -> None:
        super().__init__(endpoint)
        self.venue = venue
        self.db_path = db
        self.state_path = state
        self.sender: UplinkSender[Stream] = UplinkSender(
            window=self.window, per_table=self.per_table, report_seconds=self.report_seconds)
        self.stats: UplinkStats = self.sender.stats
        self._hub: Storage | None = None
        self._state: sqlite3.Connection | None = None
        # The central recorder's answers come to <inbox>.<the sender's message number>: a
        # subject of this process's own, so no answer of an earlier run is taken for one now.
        self.inbox = f"_INBOX.uplink-{venue}-{secrets.token_hex(8)}"
        self._resend = subject(topics.group_resend(venue))
        self._uptos: dict[Stream, int] = {}
        self._starts: dict[Stream, int] = {}
        self._last_poll = 0.0
        self._bad_requests = 0

    @property
    def connected(self) -> bool:
        return self.sender.connected

    def subscriptions(self) -> Sequence[str]:
        return (self.inbox + ".*", self._resend)

    def setup(self) -> None:
        self._hub = open_storage(self.db_path)
        self._state = uplink_state.open_state(self.state_path)
        self.sender.load(*uplink_state.load(self._state))

    def handle(self, item: object) -> None:
        match item:
            case Connected(refused=False, reason=reason):
                self.sender.connect()
                log.info("%s (the group's cluster)", reason)
            case Connected(refused=True, reason=reason):
                log.error("the group's cluster refused venue %s's uplink: %s (check its user "
                          "and password)", self.venue, reason)
            case Disconnected(reason=reason):
                self.sender.disconnect()
                log.warning("lost the group's cluster (%s): connecting to the next node; "
                            "what was in flight is sent again", reason)
            case Received(topic=topic) if topic.startswith(self.inbox + "."):
                number = topic[len(self.inbox) + 1:]
                if number.isascii() and number.isdigit():  # (int() takes '²' too)
                    self._answered(int(number), item.payload)
            case Received(topic=topic) if topic == self._resend:
                self._send_again(item)

    def _answered(self, number: int, payload: bytes) -> None:
        """The central recorder's answer: empty once it stored the message; a
        ``GroupRefusal`` when the contract did not let it (its table is parked)."""
        if not payload:
            self.sender.puback(number, time.monotonic())
            return
        try:
            why = receive("GroupRefusal", payload)["refused"]
        except ContractError as exc:  # neither: the message goes again when it expires
            self._bad_requests += 1
            if self._bad_requests == 1:
                log.warning("an answer from the group that is neither empty nor a refusal: %s",
                            exc)
            return
        stream = self.sender.refuse(number, why)
        if stream is not None:
            log.error("the central recorder refused venue %s's table %s%s from seq %d: %s. The "
                      "uplink sends nothing more of it until it is started again: mend the "
                      "cause (a venue's software ahead of the centre's contract, or venue.id "
                      "not the hub's) and restart it", self.venue, stream[0], _of(stream),
                      self.sender.sent.get(stream, 0) + 1, why)

    def _send_again(self, item: Received) -> None:
        """The central recorder lacks some streams' events from a seq on: send them again
        (a stream with messages still in flight is left for the recorder's next request)."""
        try:
            request = receive("ResendRequest", item.payload)
        except ContractError as exc:
            self._bad_requests += 1
            if self._bad_requests == 1:
                log.warning("refused a resend request from the group: %s", exc)
            return
        asked: dict[Stream, int] = {  # (an earlier centre names tables: the legacy ones)
            Stream(table, LEGACY_INCARNATION): upto
            for table, upto in request.get("tables", {}).items()}
        asked.update({Stream(s["table"], s["incarnation"]): s["upto"]
                      for s in request.get("streams", [])})
        again = self.sender.resend(asked)
        if again:
            log.warning("the central recorder lacks what it answered (its database restored?): "
                        "sending again %s", ", ".join(
                            f"{stream[0]}{_of(stream)} from {upto + 1} ({count} events)"
                            for stream, upto, count in again[:10]))

    def turn(self) -> None:
        assert self._hub is not None and self._state is not None
        now = time.monotonic()
        if now - self._last_poll >= self.poll_seconds:
            self._last_poll = now
            spans = self._hub.uplink_streams()
            self._uptos = {stream: upto for stream, (_, upto) in spans.items()}
            self._starts = {stream: since for stream, (since, _) in spans.items()}
            self._hub.commit()  # end the read: the recorder's next commits are seen
            if self.sender.dirty:
                self._save_counts()
        expired = self.sender.expire(now)
        if expired:
            log.warning("no answer from the central recorder within %.1f s: sending again "
                        "%s", self.sender.answer_timeout,
                        ", ".join(stream[0] + _of(stream) for stream in expired[:10]))
        if self.connected:
            self._send(now)
            # The counts, to the central recorder (unanswered: the next report comes soon).
            for report in self.sender.reports(now):
                self.publish(subject(topics.uplink_counts(self.venue)), encode(report))

    def _send(self, now: float) -> None:
        assert self._hub is not None
        messages, gaps = self.sender.pump(self._uptos, self._hub.raw_envelopes,
                                          self._hub.first_seq_from, now, self._starts)
        for stream, first, last in gaps:
            # Said once (the state keeps it): the venue's hub no longer holds them.
            log.error("the hub's database no longer holds %s's events %d-%d%s, which the "
                      "group's centre never had: they are lost to the group (deleted before "
                      "the uplink sent them: retention while the uplink was not running or "
                      "had no state file, or by hand). Sending on from %d; the centre is told "
                      "(gone)", stream[0], first, last, _of(stream), last + 1)
            self._save_counts()
        for message in messages:
            self.publish(subject(topics.table(self.venue, message.table, "private")),
                         message.payload, reply=f"{self.inbox}.{message.number}")

    def _save_counts(self) -> None:
        assert self._state is not None
        uplink_state.save(self._state, self.sender.unsaved())
        self._state.commit()
        self.sender.saved()

    def finish(self) -> None:
        assert self._hub is not None and self._state is not None
        self._save_counts()
        self._state.close()
        self._hub.close()


def _of(stream: Stream) -> str:
    """Which of a table's incarnations, in a log line ("" for the legacy one's)."""
    return "" if stream[1] == LEGACY_INCARNATION else f" (incarnation {stream[1][:8]})"
