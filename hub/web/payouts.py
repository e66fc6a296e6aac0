"""The tournament's prize money: its figures (pool, places paid, prizes, next pay jump, in the
money, frozen), the payout table a supervisor chooses or edits, the results (JSON, CSV), and a
deal at the final table (worked out, then recorded when accepted). hub/payout_cases.py."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field

from hub.service import FloorService
from hub.web.deps import Commanding, Context, Empty, Paying, Seeing, on_floor
from hub.web.errors import ERRORS, ErrorBody

router = APIRouter(responses=ERRORS, tags=["payouts"])

WHOLE = Annotated[int, Field(ge=0, le=2**53 - 1)]


class PayJump(BaseModel):
    players_left: int = Field(description="at this many players left the next one out wins "
                                          "more")
    prize: int


class LastPaid(BaseModel):
    player: str | None
    place: int | None
    prize: int


class Frozen(BaseModel):
    at: int  # UTC ms
    why: str


class DealShareKept(BaseModel):
    player: int
    name: str
    stack: int
    amount: int


class DealKept(BaseModel):
    method: Literal["chip-chop", "icm"]
    at: int
    by: str
    total: int
    currency: str
    shares: list[DealShareKept]


class Closed(BaseModel):
    by: str
    at: int  # UTC ms


class PayoutFigures(BaseModel):
    table: str = Field(description="the tournament's payout table")
    title: str
    edited: bool = Field(description="a supervisor's edit, not a file's table")
    registration_closed: Closed | None = Field(
        None, description="the floor closed registration (no entry or re-entry since)")
    frozen: Frozen | None = Field(description="registration closed: the figures were stored "
                                              "and no longer move")
    deal: DealKept | None = None
    problem: str | None = None  # figures that cannot be worked out (a fee over the buy-in)
    # Without a roster or a structure with a buy-in, none of these:
    currency: str | None = None
    entries: int | None = None  # first entries and re-entries
    add_ons: int | None = None
    gross: int | None = None  # what the entries and add-ons paid
    fee: int | None = None  # the house's, taken out first
    prize_pool: int | None = None
    prizes: list[int] | None = None  # by place, first place first
    places_paid: int | None = None
    players_left: int | None = None
    in_the_money: bool | None = None
    next_pay_jump: PayJump | None = None
    last_paid: LastPaid | None = None  # the last bust-out in the money


class PayoutTables(BaseModel):
    builtin: list[str]
    table: str
    edited: bool
    data: dict[str, Any] = Field(description="the tournament's table as data "
                                             "(houses/payouts/*.toml's keys), to edit")
    figures: PayoutFigures


class PayoutTableChoice(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str | None = Field(None, min_length=1, max_length=40,
                             pattern=r"^[A-Za-z0-9][A-Za-z0-9 _.-]*$",
                             description="a built-in table's name, or the name of the "
                                         "edited table sent as ``table``")
    table: dict[str, Any] | None = Field(
        None, description="a payout table as data: title, source, quote, note, unit, fee "
                          "{per_entry, per_add_on, percent}, paid [{from_entries, shares}] "
                          "(docs/profiles.md); every problem is listed")
    refreeze: bool = Field(False, description="the figures are frozen: work them out again "
                                              "from the roster as it is now and freeze them "
                                              "again (refused once a place is paid or a deal "
                                              "recorded)")


class TableRefused(ErrorBody):
    problems: list[str] = Field([], description="every problem of a table that cannot be "
                                                "used, each naming its key (none for another "
                                                "refusal)")


class ResultRow(BaseModel):
    place: int | None = Field(description="None: in an accepted deal, still playing")
    name: str
    player: int
    prize: int
    dealt: bool = Field(description="what the deal gave the player, not the place's prize")


class Results(BaseModel):
    venue: str
    currency: str
    prize_pool: int | None
    places_paid: int | None
    winner: str | None
    frozen: bool
    deal: DealKept | None
    places: list[ResultRow]


class Stack(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    player: int = Field(ge=1, le=2**31 - 1, description="a roster player's id")
    chips: int = Field(ge=1, le=2**53 - 1)


class DealStacks(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    stacks: list[Stack] = Field(min_length=2, max_length=10,
                                description="every player left, with the stack counted")


class DealAccepted(DealStacks):
    method: Literal["chip-chop", "icm"]


class DealShare(BaseModel):
    player: int
    name: str
    stack: int
    chip_chop: int
    icm: int


class DealView(BaseModel):
    prizes: list[int]  # places 1 to n, split among the n players left
    total: int
    currency: str
    shares: list[DealShare]


def _stacks(body: DealStacks) -> list[tuple[int, int]]:
    return [(s.player, s.chips) for s in body.stacks]


@router.get("/api/payouts", response_model=PayoutFigures,
            summary="the prize money: pool, places paid, prizes, next pay jump, in the money")
async def payouts(user: Seeing, context: Context) -> dict[str, Any]:
    return await on_floor(context, FloorService.payout_figures)


@router.get("/api/payouts/table", response_model=PayoutTables,
            summary="the tournament's payout table as data, and the built-in ones")
async def payout_table(user: Seeing, context: Context) -> dict[str, Any]:
    return await on_floor(context, FloorService.payout_tables)


@router.post("/api/payouts/table", response_model=PayoutTables,
             responses={400: {"model": TableRefused,
                              "description": "a table that cannot be used: every problem"},
                        409: {"model": ErrorBody,
                              "description": "the figures are frozen (send refreeze), or a "
                                             "place is paid already"}},
             summary="a supervisor chooses a built-in payout table or sends one edited (in "
                     "the floor log)")
async def set_payout_table(body: PayoutTableChoice, user: Paying,
                           context: Context) -> dict[str, Any]:
    return await on_floor(context, FloorService.set_payout_table, user, body.name,
                          body.table, body.refreeze)


@router.post("/api/payouts/close-registration", response_model=PayoutFigures,
             summary="the floor closes registration (no more entries or re-entries; for a "
                     "structure that leaves it to the floor): the payouts frozen")
async def close_registration(user: Commanding, context: Context,
                             body: Empty | None = None) -> dict[str, Any]:
    return await on_floor(context, FloorService.close_registration, user)


@router.get("/api/payouts/results", response_model=Results,
            summary="every place with its player and prize, the winner first")
async def results(user: Seeing, context: Context) -> dict[str, Any]:
    return await on_floor(context, FloorService.results)


@router.get("/api/payouts/results.csv", responses={200: {"content": {"text/csv": {}},
                                                         "description": "one row a place"}},
            response_class=Response,
            summary="the results as CSV (place, name, prize, currency, dealt)")
async def results_csv(user: Seeing, context: Context) -> Response:
    return Response(await on_floor(context, FloorService.results_csv),
                    media_type="text/csv; charset=utf-8",
                    headers={"Content-Disposition":
                             f'attachment; filename="results-{context.settings.venue}.csv"'})


@router.post("/api/payouts/deal", response_model=DealView,
             summary="a deal among every player left by their stacks: chip chop and ICM side "
                     "by side (nothing recorded)")
async def deal(body: DealStacks, user: Commanding, context: Context) -> dict[str, Any]:
    return await on_floor(context, FloorService.preview_deal, _stacks(body))


@router.post("/api/payouts/deal/accept", response_model=Results,
             summary="the deal the players accepted, recorded (floor log; the results show "
                     "the dealt amounts)")
async def accept_deal(body: DealAccepted, user: Commanding, context: Context) -> dict[str, Any]:
    return await on_floor(context, FloorService.accept_deal, user, _stacks(body), body.method)
