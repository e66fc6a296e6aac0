"""Chip counts: a table's stacks entered by the floor (at a break, at the final table), each
player's latest count with its M at the level in play, the average stack and the chip leader.
hub/chip_cases.py."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from hub.service import FloorService
from hub.web.deps import TABLE, Commanding, Context, Seeing, on_floor
from hub.web.errors import ERRORS, ErrorBody

router = APIRouter(responses=ERRORS, tags=["chips"])


class Count(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    player: int = Field(ge=1, le=2**31 - 1, description="a roster player's id, seated at the "
                                                        "table")
    chips: int = Field(ge=0, le=2**53 - 1, description="the stack counted")


class TableCounts(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    stacks: list[Count] = Field(min_length=1, max_length=12,
                                description="the table's players counted (each once)")


class Blinds(BaseModel):
    level: int
    sb: int
    bb: int
    ante: int = Field(description="a big-blind ante: once per orbit in M")


class PlayerStack(BaseModel):
    player: int
    name: str
    table: str | None
    seat: int | None
    chips: int | None = Field(description="the latest count (None: not counted)")
    at: int | None = Field(description="when it was counted (UTC ms)")
    by: str | None = Field(description="who entered it")
    m: float | None = Field(description="the stack over one orbit: sb + bb + ante at the "
                                        "level in play (None: no count, or no level)")


class ChipLeader(BaseModel):
    player: int
    name: str
    chips: int
    at: int  # UTC ms


class ChipCounts(BaseModel):
    blinds: Blinds | None = Field(description="the level in play (None: no structure)")
    players: list[PlayerStack] = Field(description="every player still playing")
    # Without a count of a player still playing, none of these:
    average_stack: int | None = Field(None, description="the counted players' own average "
                                                        "(the uncounted left out)")
    average_from: Literal["counts"] | None = None
    counted: int | None = Field(None, description="players still playing with a count")
    players_left: int | None = None
    counted_at: int | None = Field(None, description="the latest count (UTC ms)")
    chip_leader: ChipLeader | None = None


class CountsRefused(ErrorBody):
    problems: list[str] = Field([], description="every problem of the counts, each naming "
                                                "its player")


@router.get("/api/chips", response_model=ChipCounts,
            summary="every player's latest chip count with its M, the average and the leader")
async def chip_counts(user: Seeing, context: Context) -> dict[str, Any]:
    return await on_floor(context, FloorService.chip_counts)


@router.post("/api/chips/{table}", response_model=ChipCounts,
             responses={400: {"model": CountsRefused,
                              "description": "counts that cannot be taken: every problem"}},
             summary="a table's chip counts entered by the floor (the time and who counted "
                     "kept; in the floor log)")
async def count_chips(table: TABLE, body: TableCounts, user: Commanding,
                      context: Context) -> dict[str, Any]:
    return await on_floor(context, FloorService.count_chips, user, table,
                          [(s.player, s.chips) for s in body.stacks])
