"""The tournament's roster at the desk: entrants, re-entries and add-ons (taken back when
tapped by mistake), the seat draws (each table sent its seating), the finishing order."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field

from contract.schema import NAME
from hub.service import FloorService
from hub.web.deps import PLAYER, Commanding, Context, Empty, Seeing, on_floor
from hub.web.errors import ERRORS

router = APIRouter(responses=ERRORS, tags=["roster"])


class NewPlayer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=40)


class RosterCsv(BaseModel):
    model_config = ConfigDict(extra="forbid")
    csv: str = Field(max_length=200_000)


class TakeBack(BaseModel):
    model_config = ConfigDict(extra="forbid")
    what: Literal["re-entry", "add-on"]


class FinalTable(BaseModel):
    model_config = ConfigDict(extra="forbid")
    table: str = Field(pattern=NAME.pattern)


class RosterPlayer(BaseModel):
    id: int
    name: str
    registered_at: int
    entries: int
    add_ons: int
    table: str | None
    seat: int | None
    out_at: int | None
    out_hand: int | None
    last_out_at: int | None = None  # the bust-out a re-entry followed
    last_out_hand: int | None = None
    place: int | None  # the finishing place once out
    seated_hand: int | None = None  # their table's hand when a draw seated them
    no_show_at: int | None = None  # removed as a no-show (never played)
    refund: str | None = None  # a no-show's refund ("$50")
    reentries_left: int | None = None  # max_reentries less those made (None: no limit)


class RosterAlternate(BaseModel):
    position: int  # 1: the first seated when a seat opens
    name: str
    added_at: int


class RosterView(BaseModel):
    players: list[RosterPlayer]
    entrants: int
    entries: int  # every buy-in taken, a no-show's refunded one too
    paid_entries: int = 0  # the entries the prize pool counts: without the no-shows'
    no_shows: int = 0
    add_ons: int
    left: int
    waiting: int  # in the game without a seat: the next draw seats them
    max_reentries: int | None = None  # the structure that runs says (None: no limit)
    alternates: list[RosterAlternate] = []  # waiting while the field is full, in order
    alternates_closed: str | None = None  # why the list is closed (registration is)
    winner: str | None = None  # the one player left of two or more: the tournament is over
    ignored_columns: list[str] | None = None  # an import's columns the roster does not read


@router.get("/api/roster", response_model=RosterView,
            summary="the tournament's entrants: seats, entries, add-ons, finishing places")
async def roster(user: Seeing, context: Context) -> dict[str, Any]:
    return await on_floor(context, FloorService.roster)


@router.post("/api/roster/players", response_model=RosterView,
             summary="enter a player at the desk (waits for a drawn seat)")
async def roster_add(body: NewPlayer, user: Commanding, context: Context) -> dict[str, Any]:
    return await on_floor(context, FloorService.add_player, user, body.name)


@router.post("/api/roster/import", response_model=RosterView,
             summary="entrants from a CSV (a name column; entries and add_ons optional, "
                     "other columns ignored and named): all or none")
async def roster_import(body: RosterCsv, user: Commanding, context: Context) -> dict[str, Any]:
    return await on_floor(context, FloorService.import_players, user, body.csv)


@router.post("/api/roster/players/{player}/remove", response_model=RosterView,
             summary="an entrant entered by mistake removed before they played (a drawn seat "
                     "freed, no bust-out)")
async def roster_remove(player: PLAYER, user: Commanding, context: Context,
                        body: Empty | None = None) -> dict[str, Any]:
    return await on_floor(context, FloorService.remove_entrant, user, player)


@router.post("/api/roster/alternates", response_model=RosterView,
             summary="an alternate, last in the list, while the field is full (no free seat "
                     "at the tables in play): entered and seated where a seat opens (a "
                     "bust-out, a no-show) during registration")
async def roster_alternate(body: NewPlayer, user: Commanding,
                           context: Context) -> dict[str, Any]:
    return await on_floor(context, FloorService.add_alternate, user, body.name)


@router.post("/api/roster/alternates/{position}/remove", response_model=RosterView,
             summary="an alternate who has gone off the list (the others move up)")
async def roster_alternate_drop(position: Annotated[int, Path(ge=1, le=2000)],
                                user: Commanding, context: Context,
                                body: Empty | None = None) -> dict[str, Any]:
    return await on_floor(context, FloorService.drop_alternate, user, position)


@router.post("/api/roster/players/{player}/no-show", response_model=RosterView,
             summary="an entrant who never came removed, the structure's buy-in refunded: "
                     "their line kept as a no-show, a drawn seat freed; refused once they "
                     "have played")
async def roster_no_show(player: PLAYER, user: Commanding, context: Context,
                         body: Empty | None = None) -> dict[str, Any]:
    return await on_floor(context, FloorService.no_show, user, player)


@router.post("/api/roster/players/{player}/re-entry", response_model=RosterView,
             summary="a player out buys in again (waits for a drawn seat)")
async def roster_reentry(player: PLAYER, user: Commanding, context: Context,
                         body: Empty | None = None) -> dict[str, Any]:
    return await on_floor(context, FloorService.reentry, user, player)


@router.post("/api/roster/players/{player}/add-on", response_model=RosterView,
             summary="an add-on for a player in the game (the structure's limit)")
async def roster_add_on(player: PLAYER, user: Commanding, context: Context,
                        body: Empty | None = None) -> dict[str, Any]:
    return await on_floor(context, FloorService.add_on, user, player)


@router.post("/api/roster/players/{player}/take-back", response_model=RosterView,
             summary="take back a re-entry (while the player waits for a seat) or an add-on")
async def roster_take_back(player: PLAYER, body: TakeBack, user: Commanding,
                           context: Context) -> dict[str, Any]:
    return await on_floor(context, FloorService.take_back, user, player, body.what)


@router.post("/api/roster/draw",
             summary="draw seats for every player waiting, at tables online and not broken: "
                     "in the hub's seating at once, each table seats them at its next hand")
async def roster_draw(user: Commanding, context: Context,
                      body: Empty | None = None) -> dict[str, Any]:
    return await on_floor(context, FloorService.draw_seats, user)


@router.post("/api/roster/final-table",
             summary="the final table: every player left draws a seat there (seeds 001, "
                     "002); each player joins it after their hand at their table")
async def roster_final(body: FinalTable, user: Commanding, context: Context) -> dict[str, Any]:
    return await on_floor(context, FloorService.final_table_draw, user, body.table)


@router.post("/api/roster/clear", response_model=RosterView,
             summary="a new tournament: the roster emptied")
async def roster_clear(user: Commanding, context: Context,
                       body: Empty | None = None) -> dict[str, Any]:
    return await on_floor(context, FloorService.clear_roster, user)


@router.get("/api/roster/finishing.csv", responses={200: {"content": {"text/csv": {}},
                                                          "description": "one row a place"}},
            response_class=Response,
            summary="the finishing order as CSV (place, name, entries, add-ons, when out)")
async def roster_csv(user: Seeing, context: Context) -> Response:
    return Response(await on_floor(context, FloorService.finishing_csv),
                    media_type="text/csv; charset=utf-8",
                    headers={"Content-Disposition":
                             f'attachment; filename="finishing-{context.settings.venue}.csv"'})
