"""Balancing tables and breaking them, by the house's rule: the floor confirms what the rule
proposes (the moves are made as soon as those tables are between hands), or withdraws it."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from contract.schema import NAME
from hub.service import FloorService
from hub.web.deps import Commanding, Context, Empty, on_floor
from hub.web.errors import ERRORS

router = APIRouter(responses=ERRORS, tags=["floor"])


class BalanceConfirm(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: Literal["balance", "break"]
    tables: Annotated[list[Annotated[str, Field(pattern=NAME.pattern)]],
                      Field(min_length=2, max_length=100)] = Field(
        description="the proposal's tables as the dashboard showed them, the one players "
                    "leave first")


class BalanceMove(BaseModel):
    from_table: str
    from_seat: int
    to_table: str
    to_seat: int


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
    waiting_for: list[str]  # tables of the proposal still playing a hand
    confirmed: dict[str, Any] | None  # {by, at} once the floor confirmed
    moving: list[str]  # tables sent a move, until their state shows the new seats
    recent: list[dict[str, Any]]
    table_size: int  # the house's seats a table (its profile's table_size)
    short_tables: dict[str, int]  # tables with fewer seats (tablectl hub --short-table)


@router.post("/api/balance/confirm", response_model=BalancePanel,
             summary="confirm the balancing move or table break the house's rule proposes: "
                     "made when those tables are between hands")
async def balance_confirm(body: BalanceConfirm, user: Commanding,
                          context: Context) -> dict[str, Any]:
    return await on_floor(context, FloorService.confirm_balance, user, body.kind, body.tables)


@router.post("/api/balance/cancel", response_model=BalancePanel,
             summary="withdraw a confirmed move not made yet")
async def balance_cancel(user: Commanding, context: Context,
                         body: Empty | None = None) -> dict[str, Any]:
    return await on_floor(context, FloorService.cancel_balance, user)
