"""The broadcast feed (issue 49): a production's view of the featured tables, hole cards
included, behind the security delay the hub enforces (hub/broadcast_feed.py), for the
``broadcast`` role only, and the operator's fold taps; and the floor's side of it: which
tables are featured, and the delay. The floor's routes are not under /api/broadcast, and no
floor role may reach those that are."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field

from hub.broadcast_feed import MAX_DELAY_S
from hub.service import FloorService
from hub.web.deps import TABLE, Broadcasting, Commanding, Context, Seeing, on_floor
from hub.web.errors import ERRORS

router = APIRouter(responses=ERRORS)
DEAL = r"^[0-9a-f]{32}:[0-9]{1,16}$"


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
