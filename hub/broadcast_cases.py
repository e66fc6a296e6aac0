"""The floor's use cases of the broadcast feed: the floor features a table (or stops) and sets
the tournament's security delay; the broadcast operator taps a seat's fold; each deal a
featured table starts is given the roster's names of its seats. Each change is kept and in the
floor log. A part of the floor's use cases (hub/service.py), on its one worker thread; what
the feed shows, and when, is hub/broadcast_feed.py's."""

from __future__ import annotations

import json
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
from hub.clock_cases import NotTheRoomKey
from hub.floor_part import FloorPart
from hub.refused import StaffError
from hub.revocable_links import RevocableLinks

if TYPE_CHECKING:
    from hub.auth import User
    from hub.service import FloorService


OVERLAY_LINKS = "overlay_links"  # the hub's setting: {table: {key, by, since}}, JSON
OVERLAY_WITHDRAWN = "overlay_keys_withdrawn"  # the newest first, space-separated
OVERLAY_WITHDRAWN_KEPT = 32


class NotTheOverlayKey(NotTheRoomKey):
    """An overlay page asking with a key that is no overlay link's (a 403)."""


class OverlayLinkWithdrawn(NotTheOverlayKey):
    """An overlay page asking with a link the production withdrew."""


class BroadcastCases(FloorPart):
    def __init__(self, service: FloorService) -> None:
        super().__init__(service)
        self.featured: set[str] = set()  # as the database says (open)
        # The overlay links' keys by table and the keys withdrawn; who made each link and
        # when, by table. Kept in storage (open).
        self.overlay_keys = RevocableLinks(remembered=OVERLAY_WITHDRAWN_KEPT)
        self.overlay_makers: dict[str, dict[str, Any]] = {}

    def open(self) -> None:
        self.featured = set(featured_now(self.db))
        kept: dict[str, dict[str, Any]] = json.loads(self.db.setting(OVERLAY_LINKS) or "{}")
        self.overlay_keys = RevocableLinks(
            {table: link["key"] for table, link in kept.items()},
            RevocableLinks.withdrawn_from(self.db.setting(OVERLAY_WITHDRAWN)),
            OVERLAY_WITHDRAWN_KEPT)
        self.overlay_makers = {table: {k: v for k, v in link.items() if k != "key"}
                               for table, link in kept.items()}

    # ------------------------------------------------------------------------ overlay links

    def overlay_links(self) -> list[dict[str, Any]]:
        """The overlay links made, a table each: the page's path (the key in the fragment,
        never in a server's logs), who made it and when."""
        return [{"table": table, "path": f"/overlay#{key}",
                 "by": self.overlay_makers[table]["by"],
                 "since": self.overlay_makers[table]["since"]}
                for table, key in sorted(self.overlay_keys.live.items())]

    def _keep_overlays(self, keys: RevocableLinks, makers: dict[str, dict[str, Any]]) -> None:
        """The links and the withdrawn keys, in the database first (the floor log's line
        commits them), then in memory: the hub serves a new key only once it is committed,
        so a failed write (the worker then rolls back) leaves the links as the database
        holds them."""
        links = {table: {"key": key, **makers[table]} for table, key in keys.live.items()}
        self.db.set_setting(OVERLAY_LINKS, json.dumps(links, sort_keys=True))
        self.db.set_setting(OVERLAY_WITHDRAWN, keys.withdrawn_setting())

    def make_overlay_link(self, user: User, table: str) -> list[dict[str, Any]]:
        """A production's link for OBS Studio's browser source, showing ``table`` on the
        feed: made by a broadcast login, it reads what that login may read, as long as that
        login may (hub/web/broadcast.py). A table's earlier link is withdrawn (one link a
        table). Logged; the links now."""
        self.service.heard(table)
        if not user.may("broadcast"):  # the web side lets no other role here either
            raise StaffError(f"the role {user.role} may not make an overlay link")
        now = self.now_ms()
        keys = self.overlay_keys.made(table)
        makers = {**self.overlay_makers, table: {"by": user.name, "since": now}}
        self._keep_overlays(keys, makers)
        self.log(now, user.name, "overlay-link/make", {"table": table})  # committed
        self.overlay_keys, self.overlay_makers = keys, makers
        return self.overlay_links()

    def withdraw_overlay_link(self, user: User, table: str) -> list[dict[str, Any]]:
        """The overlay link of ``table`` withdrawn: a page showing it is refused from its next
        look (every second) and blanks. Logged; the links left."""
        if table not in self.overlay_keys.live:
            raise StaffError(f"no overlay link for table {table!r}: nothing to withdraw")
        keys = self.overlay_keys.without(table)
        makers = {t: made for t, made in self.overlay_makers.items() if t != table}
        self._keep_overlays(keys, makers)
        self.log(self.now_ms(), user.name, "overlay-link/withdraw", {"table": table})
        self.overlay_keys, self.overlay_makers = keys, makers
        return self.overlay_links()

    def overlay_of(self, key: str) -> dict[str, Any]:
        """The table and the login of the overlay link ``key``; NotTheOverlayKey (or
        OverlayLinkWithdrawn) when it is none now."""
        table = self.overlay_keys.holder(key)
        if table is not None:
            return {"table": table, "by": self.overlay_makers[table]["by"]}
        if self.overlay_keys.was_withdrawn(key):
            raise OverlayLinkWithdrawn("this overlay link was withdrawn: ask the production "
                                       "for the new one")
        raise NotTheOverlayKey("this is not an overlay link: a broadcast login makes one")

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
