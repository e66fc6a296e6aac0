"""The floor's use cases of the broadcast feed: the floor features a table (or stops) and sets
the tournament's security delay; the broadcast operator taps a seat's fold; each deal a
featured table starts is given the roster's names of its seats. Each change is kept and in the
floor log. A part of the floor's use cases (hub/service.py), on its one worker thread; what
the feed shows, and when, is hub/broadcast_feed.py's."""

from __future__ import annotations

import json
import secrets
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

if TYPE_CHECKING:
    from hub.auth import User
    from hub.service import FloorService


OVERLAY_KEY_BYTES = 18
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
        self.overlays: dict[str, dict[str, Any]] = {}  # by table: key, by, since (stored)
        self._withdrawn_overlays: list[str] = []  # kept in storage

    def open(self) -> None:
        self.featured = set(featured_now(self.db))
        self.overlays = json.loads(self.db.setting(OVERLAY_LINKS) or "{}")
        self._withdrawn_overlays = (self.db.setting(OVERLAY_WITHDRAWN) or "").split()

    # ------------------------------------------------------------------------ overlay links

    def overlay_links(self) -> list[dict[str, Any]]:
        """The overlay links made, a table each: the page's path (the key in the fragment,
        never in a server's logs), who made it and when."""
        return [{"table": table, "path": f"/overlay#{link['key']}", "by": link["by"],
                 "since": link["since"]} for table, link in sorted(self.overlays.items())]

    def _keep_overlays(self, links: dict[str, dict[str, Any]], withdrawn: list[str]) -> None:
        """The links and the withdrawn keys, in the database first (the floor log's line
        commits them): the hub serves a new key only once it is committed, so a failed write
        (the worker then rolls back) leaves the links as the database holds them."""
        self.db.set_setting(OVERLAY_LINKS, json.dumps(links, sort_keys=True))
        self.db.set_setting(OVERLAY_WITHDRAWN, " ".join(withdrawn))

    def make_overlay_link(self, user: User, table: str) -> list[dict[str, Any]]:
        """A production's link for OBS Studio's browser source, showing ``table`` on the
        feed: made by a broadcast login, it reads what that login may read, as long as that
        login may (hub/web/broadcast.py). A table's earlier link is withdrawn (one link a
        table). Logged; the links now."""
        self.service.heard(table)
        if not user.may("broadcast"):  # the web side lets no other role here either
            raise StaffError(f"the role {user.role} may not make an overlay link")
        old = self.overlays.get(table)
        withdrawn = ([old["key"]] if old else []) + self._withdrawn_overlays
        now = self.now_ms()
        links = {**self.overlays, table: {
            "key": secrets.token_urlsafe(OVERLAY_KEY_BYTES), "by": user.name, "since": now}}
        self._keep_overlays(links, withdrawn[:OVERLAY_WITHDRAWN_KEPT])
        self.log(now, user.name, "overlay-link/make", {"table": table})  # committed
        self.overlays, self._withdrawn_overlays = links, withdrawn[:OVERLAY_WITHDRAWN_KEPT]
        return self.overlay_links()

    def withdraw_overlay_link(self, user: User, table: str) -> list[dict[str, Any]]:
        """The overlay link of ``table`` withdrawn: a page showing it is refused from its next
        look (every second) and blanks. Logged; the links left."""
        old = self.overlays.get(table)
        if old is None:
            raise StaffError(f"no overlay link for table {table!r}: nothing to withdraw")
        withdrawn = [old["key"], *self._withdrawn_overlays][:OVERLAY_WITHDRAWN_KEPT]
        links = {t: link for t, link in self.overlays.items() if t != table}
        self._keep_overlays(links, withdrawn)
        self.log(self.now_ms(), user.name, "overlay-link/withdraw", {"table": table})
        self.overlays, self._withdrawn_overlays = links, withdrawn
        return self.overlay_links()

    def overlay_of(self, key: str) -> dict[str, Any]:
        """The table and the login of the overlay link ``key``; NotTheOverlayKey (or
        OverlayLinkWithdrawn) when it is none now."""
        for table, link in self.overlays.items():
            if secrets.compare_digest(key.encode(), link["key"].encode()):
                return {"table": table, "by": link["by"]}
        if any(secrets.compare_digest(key.encode(), old.encode())
               for old in self._withdrawn_overlays):
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
