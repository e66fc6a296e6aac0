"""A table's floor commands (the contract's, contract/commands.py: the body is the command's
fields, the hub adds the transaction; a seating is a change of the hub's seating, sent with
its version), a bust-out and its undo (changes of the hub's seating, hub/seating.py)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path
from pydantic import BaseModel, ConfigDict, Field

from contract.commands import command_from_fields, command_kind
from hub.service import FloorService
from hub.web.deps import BUSTOUT, COMMAND_FIELDS, TABLE, Commanding, Context, Empty, on_floor
from hub.web.errors import ERRORS

router = APIRouter(responses=ERRORS, tags=["tables"])


@router.post("/api/tables/{table}/cmd/{name}",
             summary="a table command (seating, deck-check, replay, status, hand-for-hand, "
                     "clock), checked as the table will")
async def table_command(table: TABLE, name: Annotated[str, Path(pattern=r"^[a-z-]{1,32}$")],
                        body: COMMAND_FIELDS, user: Commanding,
                        context: Context) -> dict[str, Any]:
    command = command_from_fields(command_kind(name), body)
    return await on_floor(context, FloorService.table_command, user, table, command)


class Bust(BaseModel):
    model_config = ConfigDict(extra="forbid")
    seat: int = Field(ge=1, le=10, description="the seat whose player is out")


@router.post("/api/tables/{table}/bust",
             summary="the player in a seat is out: the seat leaves the hub's seating at once "
                     "(the table deals without it from its next hand); the bust-out")
async def bust(table: TABLE, body: Bust, user: Commanding, context: Context) -> dict[str, Any]:
    return await on_floor(context, FloorService.bust, user, table, body.seat)


@router.post("/api/bustouts/{bustout}/undo",
             summary="give a bust-out's seat back (within two minutes of it): the player "
                     "is in again; the bust-out, undone")
async def undo_bustout(bustout: BUSTOUT, user: Commanding, context: Context,
                       body: Empty | None = None) -> dict[str, Any]:
    return await on_floor(context, FloorService.undo_bustout, user, bustout)
