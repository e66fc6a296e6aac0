"""The broadcast feed (issue 49): a production's view of the featured tables, hole cards
included, behind the security delay the hub enforces (hub/broadcast_feed.py), for the
``broadcast`` role only, and the operator's fold taps; and the floor's side of it: which
tables are featured, and the delay. The floor's routes are not under /api/broadcast, and no
floor role may reach those that are."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from contract.wire import encode
from hub.broadcast_feed import MAX_DELAY_S
from hub.reports import FeedReader
from hub.service import FloorService
from hub.web.deps import TABLE, Broadcasting, Commanding, Context, Seeing, on_floor, session_of
from hub.web.errors import ERRORS, Refused
from hub.web.streams import HEARTBEAT, USERS_FILE_AGE, EventStream

router = APIRouter(responses=ERRORS)
DEAL = r"^[0-9a-f]{32}:[0-9]{1,16}$"
# The graphics systems' stream: the feed looked at this often (seconds: the feed's time moves
# on with the hub's clock, and a hand comes on it when its time has come, not when a table
# sends it), and at most this many streams an account.
FEED_TICK = 1.0
MAX_FEED_STREAMS = 4


class Featuring(BaseModel):
    model_config = ConfigDict(extra="forbid")
    featured: bool = Field(description="true: on the broadcast feed from now on; false: off")


class Delay(BaseModel):
    model_config = ConfigDict(extra="forbid")
    seconds: int = Field(ge=0, le=MAX_DELAY_S,
                         description="the security delay (never less than the end of the "
                                     "hand in play, whatever is set)")


class FeaturedTable(BaseModel):
    table: str
    since: int
    by: str


class BroadcastSettings(BaseModel):
    delay_seconds: int
    tables: list[FeaturedTable]


class FeedTable(BaseModel):
    table: str
    since: int


class FeedOverview(BaseModel):
    delay_seconds: int
    feed_time: int = Field(description="the hub's clock less the delay (UTC ms): nothing "
                                       "newer is on the feed")
    tables: list[FeedTable]


class FeedSeat(BaseModel):
    seat: int
    player: str | None = Field(description="the roster's name at the deal's start")
    cards: list[str | None] = Field(description="as dealt so far; null: a card the shoe "
                                                "could not read")
    status: str = Field(description="dealt, corrected, uncertain or void")
    why: list[str]
    folded: bool = Field(description="as the broadcast operator tapped it")
    equity: dict[str, float] | None = Field(
        description="a live seat's win, tie and pot share (equity) at the street the board "
                    "is at, and its std_error; Hi/Lo: low_win, low_tie, scoop "
                    "(controller/equity.py)")


class FeedDeal(BaseModel):
    deal: str = Field(description="the deal's name (a fold names it)")
    hand: int
    redeal: int
    game: str | None
    button: int | None
    started_at: int
    ended_at: int | None = Field(description="null: still being dealt at the feed's time")
    outcome: str | None
    seats: list[FeedSeat]
    board: list[str | None]
    board_status: str
    board_why: list[str]
    irregularities: list[dict[str, Any]]
    showdown: dict[str, Any] | None
    equity: dict[str, Any] | None = Field(description="the street, exact or sampled, the "
                                                      "runouts, the largest standard error")
    equity_why: str | None = Field(description="why no seat has an equity")


class FeedHand(FeedDeal):
    voided: list[FeedDeal] = Field(description="the deals a misdeal voided before this one")


class TableFeed(BaseModel):
    table: str
    feed_time: int
    delay_seconds: int
    hands: list[FeedHand]


class Fold(BaseModel):
    model_config = ConfigDict(extra="forbid")
    deal: str = Field(pattern=DEAL, description="the deal, as the feed names it")
    seat: int = Field(ge=1, le=10)
    folded: bool = True
    at: int | None = Field(default=None, ge=0, le=2**53 - 1,
                           description="the feed's time the operator watched (UTC ms; at "
                                       "most the feed's time now, its default)")


class Folded(BaseModel):
    table: str
    deal: str
    seat: int
    folded: bool
    at: int


# ---------------------------------------------------------------------------- the floor's

@router.get("/api/featured", response_model=BroadcastSettings, tags=["broadcast"],
            summary="the tables featured on the broadcast feed, and its security delay")
async def featured(user: Seeing, context: Context) -> dict[str, Any]:
    return await on_floor(context, FloorService.broadcast_settings)


@router.post("/api/featured/tables/{table}", response_model=BroadcastSettings,
             tags=["broadcast"],
             summary="feature a table on the broadcast feed (its deals from now on), or stop")
async def feature(table: TABLE, body: Featuring, user: Commanding,
                  context: Context) -> dict[str, Any]:
    return await on_floor(context, FloorService.feature, user, table, body.featured)


@router.post("/api/featured/delay", response_model=BroadcastSettings, tags=["broadcast"],
             summary="the tournament's security delay on the broadcast feed")
async def delay(body: Delay, user: Commanding, context: Context) -> dict[str, Any]:
    return await on_floor(context, FloorService.set_broadcast_delay, user, body.seconds)


# ---------------------------------------------------------------------------- the production's

@router.get("/api/broadcast", response_model=FeedOverview, tags=["broadcast"],
            summary="the broadcast feed: its delay, its time now, the featured tables")
def feed(user: Broadcasting, context: Context) -> dict[str, Any]:
    return context.reports.broadcast_overview()


@router.get("/api/broadcast/tables/{table}", response_model=TableFeed, tags=["broadcast"],
            summary="a featured table's last hands, hole cards and all, as of the feed's time "
                    "(or an earlier one: a replay)")
def feed_table(table: TABLE, user: Broadcasting, context: Context,
               at: Annotated[int | None, Query(ge=0, le=2**53 - 1,
                                               description="UTC ms; later than the feed's "
                                                           "time is the feed's time")] = None,
               n: Annotated[int, Query(ge=1, le=50)] = 10) -> dict[str, Any]:
    return context.reports.broadcast_table(table, at, n)


@router.post("/api/broadcast/tables/{table}/folds", response_model=Folded, tags=["broadcast"],
             summary="the operator's tap: a seat folded (or, folded false, did not) in a "
                     "deal the feed shows")
async def fold(table: TABLE, body: Fold, user: Broadcasting,
               context: Context) -> dict[str, Any]:
    return await on_floor(context, FloorService.fold, user, table, body.deal, body.seat,
                          body.folded, body.at)


@router.get("/api/broadcast/tables/{table}/stream", tags=["broadcast"],
            response_class=StreamingResponse,
            responses={200: {"content": {"text/event-stream": {}},
                             "description": "event: feed, data: the table's feed of its newest "
                                            "hand (as GET /api/broadcast/tables/{table}?n=1), "
                                            "at once and at each change"}},
            summary="Server-Sent Events for graphics systems: a featured table's hand on the "
                    "feed, with each live seat's equity, at each change")
async def feed_stream(request: Request, table: TABLE, user: Broadcasting,
                      context: Context) -> Response:
    streams: dict[str, int] = request.app.state.feed_streams  # open ones, by account
    if streams.get(user.name, 0) >= MAX_FEED_STREAMS:
        raise Refused(429, f"at most {MAX_FEED_STREAMS} feed streams an account: close one")
    session = session_of(request)

    async def events() -> AsyncIterator[bytes]:
        streams[user.name] = streams.get(user.name, 0) + 1  # counted once it runs
        reader: FeedReader | None = None
        try:
            reader = await asyncio.to_thread(context.reports.feed_reader)
            last: dict[str, Any] | None = None
            quiet = 0.0
            while True:
                now = context.sessions.user(session, time.monotonic(), USERS_FILE_AGE)
                if now is None or not now.may("broadcast"):
                    return  # logged out, expired, another password or role: it ends
                feed = await asyncio.to_thread(reader.table, table)  # its own connection
                shown = {k: v for k, v in feed.items() if k != "feed_time"}
                if shown != last:
                    last, quiet = shown, 0.0
                    yield b"event: feed\ndata: " + encode(feed).encode() + b"\n\n"
                elif (quiet := quiet + FEED_TICK) >= HEARTBEAT:
                    quiet = 0.0
                    yield b": keep-alive\n\n"
                await asyncio.sleep(FEED_TICK)
        finally:
            streams[user.name] -= 1
            if reader is not None:
                reader.close()

    return EventStream(events(), media_type="text/event-stream",
                       headers={"X-Accel-Buffering": "no"})
