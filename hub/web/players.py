"""What players see of the room: the players' screen (a seating board and the floor's
announcements, behind a viewer link of its own: no login; a supervisor may withdraw it and
make another), the floor's announcements, and the seat cards the floor prints
(hub/players_cases.py)."""

from __future__ import annotations

import time
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Header, Path, Query, Request
from fastapi.responses import RedirectResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from contract.schema import NAME
from hub.players_cases import MAX_ANNOUNCEMENT
from hub.service import FloorService
from hub.web.deps import Commanding, Context, Empty, Seeing, Supervising, on_floor, session_of
from hub.web.errors import ERRORS, ErrorBody
from hub.web.pages import page

router = APIRouter(responses=ERRORS, tags=["players"])


class BoardPlayer(BaseModel):
    name: str
    table: str | None  # None: waiting for a seat
    seat: int | None


class Announcement(BaseModel):
    id: int
    text: str
    ts: int  # when the floor put it up, UTC ms


class StaffAnnouncement(Announcement):
    by: str  # who put it up


class PlayersScreen(BaseModel):
    venue: str
    now: int  # the hub's time, UTC ms
    title: str | None = None  # the structure the clock runs
    on_break: bool = False
    level: int | None = None
    players: list[BoardPlayer]  # the players in the game, by name
    winner: str | None = None  # the tournament is over: the one player left
    announcements: list[Announcement]  # the floor's, the newest first
    clock_announcements: list[str]  # the structure's for this level (colour-ups...)
    next_announcements: list[str]  # the structure's for the next level


class PlayersLink(BaseModel):
    path: str  # "/players#KEY": the key stays in the fragment, never in a server's logs
    generation: int = Field(description="1 for the first link, one more at each withdrawal")


class PlayersLinkRefused(ErrorBody):
    current: PlayersLink = Field(description="the players' link now, left as it is")


class PlayersLinkWithdrawal(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    generation: int = Field(ge=1, le=2**53 - 1,
                            description="the generation of the link withdrawn, as the "
                                        "dashboard showed it: refused (409) if it is no "
                                        "longer the current one")


class NewAnnouncement(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    text: str = Field(min_length=1, max_length=MAX_ANNOUNCEMENT * 4,
                      description=f"what the players read: at most {MAX_ANNOUNCEMENT} "
                                  "characters once its spaces are collapsed")


class SeatCard(BaseModel):
    player_id: int
    name: str
    table: str
    seat: int
    from_table: str | None = None  # a move's card: where the player comes from
    from_seat: int | None = None


class SeatCards(BaseModel):
    venue: str
    title: str | None  # the structure the clock runs
    what: str
    made_at: int  # UTC ms
    cards: list[SeatCard]


ANNOUNCEMENT = Annotated[int, Path(ge=1, le=2**53 - 1, description="an announcement's id")]
CARDS = Literal["draw", "moves", "table", "final", "player"]


@router.get("/players", include_in_schema=False)
def players_page() -> Response:
    # The players' screen: no login, the page asks /api/players-screen with the link's key.
    return page("players.html")


@router.get("/seat-cards", include_in_schema=False)
def seat_cards_page(request: Request, context: Context) -> Response:
    if context.sessions.user(session_of(request), time.monotonic()) is None:
        return RedirectResponse("/login", 303)
    return page("seat-cards.html")


@router.get("/api/players-screen", response_model=PlayersScreen,
            summary="the players' screen: the seating board and announcements (the players' "
                    "link's key, no login)")
async def players_screen(key: Annotated[str, Header(alias="X-Room-Key", min_length=1,
                                                    max_length=100)],
                         context: Context) -> dict[str, Any]:
    return await on_floor(context, FloorService.players_screen, key)


@router.get("/api/players-link", response_model=PlayersLink,
            summary="the players' screen link (for a second screen, and players' phones)")
async def players_link(user: Commanding, context: Context) -> PlayersLink:
    return PlayersLink(**await on_floor(context, FloorService.players_link))


@router.post("/api/players-link/withdraw", response_model=PlayersLink,
             responses={409: {"model": PlayersLinkRefused,
                              "description": "that link was withdrawn already: the current "
                                             "one is left as it is, and said"}},
             summary="withdraw the players' link of the generation named (a supervisor's: "
                     "every screen and phone showing it is refused and says so) and make a "
                     "new one")
async def withdraw_players_link(body: PlayersLinkWithdrawal, user: Supervising,
                                context: Context) -> PlayersLink:
    return PlayersLink(**await on_floor(context, FloorService.withdraw_players_link, user,
                                        body.generation))


@router.get("/api/announcements", response_model=list[StaffAnnouncement],
            summary="the floor's announcements on the players' screen, the newest first")
async def announcements(user: Seeing, context: Context) -> list[dict[str, Any]]:
    return await on_floor(context, FloorService.announcement_list)


@router.post("/api/announcements", response_model=list[StaffAnnouncement],
             summary="put an announcement up on the players' screen (logged)")
async def announce(body: NewAnnouncement, user: Commanding,
                   context: Context) -> list[dict[str, Any]]:
    return await on_floor(context, FloorService.announce, user, body.text)


@router.post("/api/announcements/{announcement}/take-down",
             response_model=list[StaffAnnouncement],
             summary="take an announcement off the players' screen (logged)")
async def take_down(announcement: ANNOUNCEMENT, user: Commanding, context: Context,
                    body: Empty | None = None) -> list[dict[str, Any]]:
    return await on_floor(context, FloorService.take_down, user, announcement)


@router.get("/api/seat-cards", response_model=SeatCards,
            summary="seat cards to print: the draw, the latest moves, a table, the final "
                    "table or one player")
async def seat_cards(user: Seeing, context: Context,
                     what: Annotated[CARDS, Query(description="which cards")] = "draw",
                     table: Annotated[str | None, Query(
                         pattern=NAME.pattern, description="what=table: the table")] = None,
                     player: Annotated[int | None, Query(
                         ge=1, le=2**31 - 1, description="what=player: the player's roster "
                                                         "id")] = None) -> dict[str, Any]:
    return await on_floor(context, FloorService.seat_cards, what, table, player)
