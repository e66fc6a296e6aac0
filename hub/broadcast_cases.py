"""The floor's use cases of the broadcast feed: the floor features a table (or stops) and sets
the tournament's security delay; the broadcast operator taps a seat's fold; each deal a
featured table starts is given the roster's names of its seats. Each change is kept and in the
floor log. A part of the floor's use cases (hub/service.py), on its one worker thread; what
the feed shows, and when, is hub/broadcast_feed.py's."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from contract.envelope import incarnation_of
from hub.broadcast_feed import (
    DELAY_SETTING,
    MAX_DELAY_S,
    delay_seconds,
    featured_now,
    feed_time,
    visible_deal,
)
from hub.floor_part import FloorPart
from hub.refused import StaffError

if TYPE_CHECKING:
    from hub.auth import User
    from hub.service import FloorService


class BroadcastCases(FloorPart):
    def __init__(self, service: FloorService) -> None:
        super().__init__(service)
        self.featured: set[str] = set()  # as the database says (open)

    def open(self) -> None:
        self.featured = set(featured_now(self.db))

    def settings(self) -> dict[str, Any]:
        """The featured tables (since when, by whom) and the delay: the floor's view."""
        featured = featured_now(self.db)
        delay = delay_seconds(self.db)
        self.db.commit()
        return {"delay_seconds": delay,
                "tables": [{"table": t, "since": p["since"], "by": p["by"]}
                           for t, p in sorted(featured.items())]}

    def feature(self, user: User, table: str, featured: bool) -> dict[str, Any]:
        """Feature a table on the broadcast feed (its deals from now on), or stop."""
        self.service.heard(table)
        if featured == (table in self.featured):
            return self.settings()  # as it was: nothing to log
        now = self.now_ms()
        self.db.feature(table, featured, now, user.name)
        (self.featured.add if featured else self.featured.discard)(table)
        self.log(now, user.name, "broadcast/feature", {"table": table, "featured": featured})
        return self.settings()

    def set_delay(self, user: User, seconds: int) -> dict[str, Any]:
        """The tournament's security delay (seconds; never less than the end of the hand in
        play, whatever it is: hub/broadcast_feed.py)."""
        if isinstance(seconds, bool) or not isinstance(seconds, int) or \
                not 0 <= seconds <= MAX_DELAY_S:
            raise StaffError(f"seconds: a delay from 0 to {MAX_DELAY_S} (a day)")
        self.db.set_setting(DELAY_SETTING, str(seconds))
        self.log(self.now_ms(), user.name, "broadcast/delay", {"seconds": seconds})
        return self.settings()

    def fold(self, user: User, table: str, deal: str, seat: int, folded: bool,
             at_ms: int | None = None) -> dict[str, Any]:
        """The broadcast operator's tap: ``seat`` folded (or, tapped again, did not) in a deal
        the feed shows now, at the feed's time ``at_ms`` (the moment of the replay the
        operator watched; at most the feed's time now)."""
        now = self.now_ms()
        shown = visible_deal(self.db, table, deal, now)
        if shown is None:
            self.db.commit()
            raise StaffError(f"deal {deal} of table {table} is not on the feed now: tap a fold "
                             "on a deal the feed shows")
        if seat not in [s["seat"] for s in shown["seats"]]:
            self.db.commit()
            raise StaffError(f"seat {seat} was not dealt in deal {deal}")
        latest = feed_time(self.db, now)
        at = latest if at_ms is None else max(shown["started_at"], min(at_ms, latest))
        inc, _, seq = deal.partition(":")
        self.db.save_fold(table, inc, int(seq), seat, folded, at, now, user.name)
        self.log(now, user.name, "broadcast/fold", {"table": table, "hand": shown["hand"],
                                                    "seat": seat, "folded": folded})
        return {"table": table, "deal": deal, "seat": seat, "folded": folded, "at": at}

    def on_recorded(self, table: str, envelopes: list[dict[str, Any]]) -> None:
        """A featured table's deal started: the roster's names of its seats, kept with it (a
        deal replayed from a table's backlog gets none: the roster may have changed since)."""
        if table not in self.featured:
            return
        for stored in envelopes:
            if stored.get("type") != "hand.started" or stored.get("historical"):
                continue
            seats = set((stored.get("data") or {}).get("seats") or ())
            names = {str(p.seat): p.name for p in self.floor.roster.players.values()
                     if p.table == table and p.seat in seats and p.out_at is None}
            self.db.save_deal_names(table, incarnation_of(stored), int(stored["seq"]), names,
                                    self.now_ms())
        self.db.commit()
