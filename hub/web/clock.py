"""The venue clock: its actions (the contract's ``HubClockCommand``, as ``tablectl clock``),
the structures it can start, hand-for-hand's release, and the room's TV page (a viewer link's
key, no login; the floor may withdraw the link and make another)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Header
from pydantic import BaseModel, ConfigDict, Field

from contract.commands import HubClockCommand, command_from_fields
from hub.clock_cases import structure_choices
from hub.service import FloorService
from hub.web.deps import COMMAND_FIELDS, Clocking, Context, Empty, Seeing, on_floor
from hub.web.errors import ERRORS, ErrorBody

router = APIRouter(responses=ERRORS, tags=["clock"])


class Blinds(BaseModel):
    level: int | None
    sb: int
    bb: int
    ante: int
    minutes: float


class PayJump(BaseModel):
    players_left: int  # at this many players left the next one out wins ``prize``
    prize: int


class LastPaid(BaseModel):
    player: str | None
    place: int | None
    prize: int


class RoomChipLeader(BaseModel):
    name: str
    chips: int


class RoomClock(BaseModel):
    venue: str
    now: int  # the hub's time, UTC ms: the page counts down from it
    structure: str | None
    title: str | None = None
    running: bool
    on_break: bool = False
    remaining: float | None = None  # seconds left in the level or break
    current: Blinds | None = None
    next: Blinds | None = None
    break_in: float | None = None  # seconds to the next break
    announcements: list[str] = []
    next_announcements: list[str] = []
    tables: int
    players: int  # seated at the tables in play
    # With a roster: who entered, who is left, and the figures the structure gives.
    entrants: int | None = None
    entries: int | None = None  # buy-ins and re-entries
    add_ons: int | None = None
    players_left: int | None = None
    winner: str | None = None  # the tournament is over: the one player left
    average_stack: int | None = None  # see average_from
    average_from: Literal["starting stacks", "counts"] | None = Field(
        None, description="starting stacks: (starting stack x entries + add-on chips) / left; "
                          "counts: the counted players' own average (hub/chip_cases.py)")
    counted: int | None = None  # players left with a chip count
    counted_at: int | None = None  # the latest count, UTC ms
    chip_leader: RoomChipLeader | None = None
    # With a buy-in, the tournament's payout table's figures (hub/payout_cases.py).
    prize_pool: int | None = None  # buy-ins and add-ons paid, less the fee, in ``currency``
    currency: str = ""
    payouts: list[int] = []  # the prize of each place paid, first place first
    places_paid: int | None = None
    in_the_money: bool = False  # every player left wins a prize
    next_pay_jump: PayJump | None = None
    last_paid: LastPaid | None = None  # the last bust-out in the money
    payouts_frozen: bool = False  # registration closed: the figures no longer move
    deal: bool = False  # a deal was recorded at the final table (the results say who won what)


class TvLink(BaseModel):
    path: str  # "/tv#KEY": the key stays in the fragment, never in a server's logs
    generation: int = Field(description="1 for the first link, one more at each withdrawal: "
                                        "a dashboard shows the highest it has seen")


class TvLinkRefused(ErrorBody):
    current: TvLink = Field(description="the TV link now, left as it is")


class TvLinkWithdrawal(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    generation: int = Field(ge=1, le=2**53 - 1,
                            description="the generation of the link withdrawn, as the "
                                        "dashboard showed it: refused (409) if it is no "
                                        "longer the current one")


class StructureChoice(BaseModel):
    name: str
    title: str | None = None
    levels: int | None = None
    first: str | None = None  # the first level's blinds, "100/200"
    minutes: int | None = None  # the first level's length
    problem: str | None = None  # a house file that does not load: why


class Released(BaseModel):
    released: list[str]


@router.get("/api/tv", response_model=RoomClock,
            summary="the room clock for a TV: the viewer link's key, no login")
async def room_clock(key: Annotated[str, Header(alias="X-Room-Key", min_length=1,
                                                max_length=100)],
                     context: Context) -> dict[str, Any]:
    return await on_floor(context, FloorService.room_clock, key)


@router.get("/api/tv-link", response_model=TvLink,
            summary="the room clock page's viewer link (for the floor to open on a TV)")
async def tv_link(user: Clocking, context: Context) -> TvLink:
    return TvLink(**await on_floor(context, FloorService.tv_link))


@router.post("/api/tv-link/withdraw", response_model=TvLink,
             responses={409: {"model": TvLinkRefused,
                              "description": "that link was withdrawn already: the current "
                                             "one is left as it is, and said"}},
             summary="withdraw the TV link of the generation named (a TV showing it is "
                     "refused from its next question, and says so) and make a new one")
async def withdraw_tv_link(body: TvLinkWithdrawal, user: Clocking,
                           context: Context) -> TvLink:
    return TvLink(**await on_floor(context, FloorService.withdraw_tv_link, user,
                                   body.generation))


@router.get("/api/structures", response_model=list[StructureChoice],
            summary="the structures the venue clock can start")
def structures(user: Seeing, context: Context) -> list[dict[str, Any]]:
    return structure_choices(context.settings.structures)


@router.post("/api/clock", summary="the venue clock's actions, as tablectl clock")
async def clock_action(body: COMMAND_FIELDS, user: Clocking,
                       context: Context) -> dict[str, Any]:
    command = command_from_fields(HubClockCommand, body)
    return await on_floor(context, FloorService.clock_action, user, command)


@router.post("/api/hand-for-hand/release", response_model=Released,
             summary="release the next hand (refused while a table plays)")
async def release(user: Clocking, context: Context, body: Empty | None = None) -> Released:
    return Released(released=await on_floor(context, FloorService.release_hand, user))
