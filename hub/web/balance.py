"""Balancing tables and breaking them, by the house's rule: the floor confirms what the rule
proposes, and the moves are made at once in the hub's seating (each table takes them at its
next hand; a player is seated at the other table once they have left theirs)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from contract.schema import NAME
from hub.service import FloorService
from hub.web.deps import Commanding, Context, on_floor
from hub.web.errors import ERRORS

router = APIRouter(responses=ERRORS, tags=["floor"])


class BalanceMove(BaseModel):
    model_config = ConfigDict(extra="forbid")
    from_table: str = Field(pattern=NAME.pattern)
    from_seat: int = Field(ge=1, le=10)
    to_table: str = Field(pattern=NAME.pattern)
    to_seat: int = Field(ge=1, le=10)


class BalanceConfirm(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: Literal["balance", "break"]
    tables: Annotated[list[Annotated[str, Field(pattern=NAME.pattern)]],
                      Field(min_length=2, max_length=100)] = Field(
        description="the proposal's tables as the dashboard showed them, the one players "
                    "leave first")
    moves: list[BalanceMove] | None = Field(
        default=None, max_length=100,
        description="the moves as the dashboard showed them: refused if the tables call for "
                    "others now")


class BalanceProposal(BaseModel):
    kind: Literal["balance", "break"]
    tables: list[str]
    moves: list[BalanceMove]
    reason: str
    rules: list[str]


class BalancePanel(BaseModel):
    profile: str
    rules: list[dict[str, Any]]  # the house's balancing rules, each with its source
    proposal: BalanceProposal | None
    arriving: list[str]  # tables awaiting moved players: no proposal until they sit
    registering: bool  # late registration runs (the structure closes it at a level): no break
    recent: list[dict[str, Any]]  # the moves made, newest last
    table_size: int  # the house's seats a table (its profile's table_size)
    short_tables: dict[str, int]  # tables with fewer seats (tablectl hub --short-table)
    revision: int  # one more at each change: a page keeps the highest it has seen


@router.post("/api/balance/confirm", response_model=BalancePanel,
             summary="confirm the balancing move or table break the house's rule proposes: "
                     "made at once in the hub's seating, each table taking it at its next hand")
async def balance_confirm(body: BalanceConfirm, user: Commanding,
                          context: Context) -> dict[str, Any]:
    moves = None if body.moves is None else [m.model_dump() for m in body.moves]
    return await on_floor(context, FloorService.confirm_balance, user, body.kind, body.tables,
                          moves)
