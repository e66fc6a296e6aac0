"""The broadcast feed (issue 49): a production's view of the featured tables, hole cards
included, behind the security delay the hub enforces (hub/broadcast_feed.py), for the
``broadcast`` role only, and the operator's fold taps; and the floor's side of it: which
tables are featured, and the delay. The floor's routes are not under /api/broadcast, and no
floor role may reach those that are."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Annotated, Any

from fastapi import APIRouter, Header, Query, Request
from fastapi.responses import Response, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from contract.schema import NAME
from contract.wire import encode
from hub.broadcast_feed import MAX_DELAY_S
from hub.reports import FeedReader
from hub.service import FloorService
from hub.web.deps import (
    TABLE,
    Broadcasting,
    Commanding,
    Context,
    Seeing,
    WebContext,
    on_floor,
    private_line,
    session_of,
)
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
    level: int | None = Field(description="the level the table dealt it at (the venue "
                                          "clock's)")
    blinds: dict[str, int] | None = Field(description="that level's sb, bb and ante (null: "
                                                      "the table had no clock)")
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


class OverlayTable(BaseModel):
    model_config = ConfigDict(extra="forbid")
    table: str = Field(pattern=NAME.pattern, description="a table id")


class OverlayLink(BaseModel):
    table: str
    path: str = Field(description="/overlay#KEY: the page for OBS Studio's browser source; "
                                  "the key stays in the fragment, never in a server's logs")
    by: str = Field(description="the broadcast login that made it: the link reads what that "
                                "login may, as long as it may")
    since: int


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

    async def allowed() -> str | None:
        now = context.sessions.user(session, time.monotonic(), USERS_FILE_AGE)
        # logged out, expired, another password or role: it ends, saying nothing
        return None if now is not None and now.may("broadcast") else ""

    return _feed_stream(context, streams, user.name, table, allowed)


def _feed_stream(context: WebContext, streams: dict[str, int], account: str, table: str,
                 allowed: Callable[[], Awaitable[str | None]]) -> Response:
    """A table's feed as Server-Sent Events, for as long as ``allowed`` says None (its
    reason otherwise, sent as an ``event: refused`` unless empty, ends it), counted as one of
    ``account``'s streams."""

    async def events() -> AsyncIterator[bytes]:
        streams[account] = streams.get(account, 0) + 1  # counted once it runs
        reader: FeedReader | None = None
        try:
            reader = await asyncio.to_thread(context.reports.feed_reader)
            last: dict[str, Any] | None = None
            quiet = 0.0
            while True:
                if (reason := await allowed()) is not None:
                    if reason:
                        yield b"event: refused\ndata: " + encode({"error": reason}).encode() \
                            + b"\n\n"
                    return
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
            streams[account] -= 1
            if reader is not None:
                reader.close()

    return EventStream(events(), media_type="text/event-stream",
                       headers={"X-Accel-Buffering": "no"})


# ---------------------------------------------------------------------------- the overlay

@router.get("/api/broadcast/overlay-links", response_model=list[OverlayLink],
            tags=["broadcast"], summary="the overlay links made for OBS Studio, a table each")
async def overlay_links(user: Broadcasting, context: Context) -> list[dict[str, Any]]:
    return await on_floor(context, FloorService.overlay_links)


@router.post("/api/broadcast/overlay-links", response_model=list[OverlayLink],
             tags=["broadcast"],
             summary="make the overlay link of a table (its earlier one, if any, withdrawn)")
async def make_overlay_link(body: OverlayTable, user: Broadcasting,
                            context: Context) -> list[dict[str, Any]]:
    return await on_floor(context, FloorService.make_overlay_link, user, body.table)


@router.post("/api/broadcast/overlay-links/withdraw", response_model=list[OverlayLink],
             tags=["broadcast"],
             summary="withdraw a table's overlay link: a page showing it blanks at its next "
                     "look")
async def withdraw_overlay_link(body: OverlayTable, user: Broadcasting,
                                context: Context) -> list[dict[str, Any]]:
    return await on_floor(context, FloorService.withdraw_overlay_link, user, body.table)


@router.get("/api/overlay/stream", tags=["broadcast"], response_class=StreamingResponse,
            responses={200: {"content": {"text/event-stream": {}},
                             "description": "event: feed, as the broadcast stream of the "
                                            "link's table; event: refused (the link withdrawn, "
                                            "its login no longer a broadcast one), then the "
                                            "end"}},
            summary="the overlay page's stream: an overlay link's key, no session; over "
                    "HTTPS or to the hub's own machine only")
async def overlay_stream(request: Request, context: Context,
                         key: Annotated[str, Header(alias="X-Overlay-Key", min_length=1,
                                                    max_length=100)]) -> Response:
    if not private_line(request):
        raise Refused(403, "the overlay carries hole cards: it is served over HTTPS only "
                           "(start the hub with --web-cert and --web-key)")
    link = await on_floor(context, FloorService.overlay_of, key)  # 403 when it is none

    async def allowed() -> str | None:
        try:
            now = await on_floor(context, FloorService.overlay_of, key)
        except PermissionError as exc:  # withdrawn, or another made in its place
            return str(exc)
        maker = context.sessions.users.get(now["by"])
        if maker is None or not maker.may("broadcast"):
            return (f"the login {now['by']} that made this overlay link may no longer read "
                    "the broadcast feed: a broadcast login makes a new link")
        return None

    if (reason := await allowed()) is not None:
        raise Refused(403, reason)
    streams: dict[str, int] = request.app.state.feed_streams
    counted = f"overlay {link['table']}"
    if streams.get(counted, 0) >= MAX_FEED_STREAMS:
        raise Refused(429, f"at most {MAX_FEED_STREAMS} overlays a table: close one")
    return _feed_stream(context, streams, counted, link["table"], allowed)
