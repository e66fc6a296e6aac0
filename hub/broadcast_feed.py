"""What the broadcast feed may show, and when: the security delay, enforced here at the hub on
the recorder's stored, timestamped events, whatever the client asks.

The feed's time is the hub's clock less the delay (``feed_time``): no event the hub's clock
puts after it leaves on the broadcast route (each incarnation's events are shown up to the
first one after it, by seq: a later event with an earlier time waits with it). A client may
ask for an earlier time (``at``: a replay of any earlier hand), never a later one. And the
delay is never less than the end of the hand in play: a deal that has not ended by now (its
end, or the next deal's start, not stored) is not shown at all, however long the delay (a
long hand waits for its end). Only the deals a table dealt while the floor featured it are
shown (a table featured later does not give away its earlier hands).
"""

from __future__ import annotations

from typing import Any

from hub.broadcast import deal_id, deals, hands
from hub.storage import Storage

DELAY_SETTING = "broadcast_delay_s"
DEFAULT_DELAY_S = 30 * 60
MAX_DELAY_S = 24 * 3600
EVENTS_PER_HAND = 80  # a nine-seat hand is about 30 of the feed's events, an irregular one more


def delay_seconds(db: Storage) -> int:
    kept = db.setting(DELAY_SETTING)
    return DEFAULT_DELAY_S if kept is None else int(kept)


def featured_now(db: Storage) -> dict[str, dict[str, Any]]:
    """The tables featured now: since when, and by whom."""
    return {p["table"]: p for p in db.featured_periods() if p["until"] is None}


def _featured_at(periods: list[dict[str, Any]], table: str, ts: int) -> bool:
    return any(p["table"] == table and p["since"] <= ts and (p["until"] is None or
                                                             ts < p["until"])
               for p in periods)


def feed_time(db: Storage, now_ms: int) -> int:
    return now_ms - delay_seconds(db) * 1000


def overview(db: Storage, now_ms: int) -> dict[str, Any]:
    featured = featured_now(db)
    return {"delay_seconds": delay_seconds(db), "feed_time": feed_time(db, now_ms),
            "tables": [{"table": t, "since": p["since"]} for t, p in sorted(featured.items())]}


def table_feed(db: Storage, table: str, now_ms: int, at_ms: int | None = None,
               count: int = 10) -> dict[str, Any]:
    """The table's last ``count`` hands as of the feed's time (or ``at_ms``, if earlier):
    each deal up to that time, hole cards and all, of the deals dealt while it was featured
    and ended by now."""
    delay = delay_seconds(db)
    latest = now_ms - delay * 1000
    cutoff = latest if at_ms is None else min(at_ms, latest)
    released = db.released(table, cutoff)
    built = deals(db.deal_events(table, released, (count + 2) * EVENTS_PER_HAND))
    periods = db.featured_periods()
    shown = [(epoch, deal) for epoch, deal in built
             if _featured_at(periods, table, deal.started_at)
             and db.deal_over(table, deal.incarnation, deal.seq)]
    numbers = set(sorted({(epoch, deal.hand) for epoch, deal in shown})[-count:])
    shown = [(epoch, deal) for epoch, deal in shown if (epoch, deal.hand) in numbers]
    keys = [(deal.incarnation, deal.seq) for _, deal in shown]
    names = {deal_id(inc, seq): found
             for (inc, seq), found in db.deal_names(table, keys).items()}
    folds = {deal_id(inc, seq): db.deal_folds(table, inc, seq, cutoff) for inc, seq in keys}
    db.commit()  # ends the reading transaction (PostgreSQL keeps one open)
    return {"table": table, "feed_time": cutoff, "delay_seconds": delay,
            "hands": hands(shown, names, folds)}


def visible_deal(db: Storage, table: str, deal: str, now_ms: int) -> dict[str, Any] | None:
    """A deal the feed shows now (its view), or None: what a fold may be tapped on."""
    inc, _, seq = deal.partition(":")
    if not seq.isdigit():
        return None
    cutoff = feed_time(db, now_ms)
    released = db.released(table, cutoff)
    if inc not in released:
        return None
    first_unreleased = released[inc][1]
    if first_unreleased is not None and int(seq) >= first_unreleased:
        return None
    epoch = released[inc][0]
    before = 2**62 if first_unreleased is None else first_unreleased
    for _, built in deals(db.one_deal(table, inc, epoch, int(seq), before)):
        if built.id == deal:
            if not (_featured_at(db.featured_periods(), table, built.started_at)
                    and db.deal_over(table, inc, int(seq))):
                return None
            return built.view({}, {}, with_equity=False)
    return None
