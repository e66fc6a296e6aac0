"""A table's floor commands (the contract's, contract/commands.py: the body is the command's
fields, the hub adds the transaction) and a bust-out's undo (a seating command)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path

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


@router.post("/api/bustouts/{bustout}/undo",
             summary="give a bust-out's seat back (within two minutes of the table applying "
                     "it): the seating command sent")
async def undo_bustout(bustout: BUSTOUT, user: Commanding, context: Context,
                       body: Empty | None = None) -> dict[str, Any]:
    return await on_floor(context, FloorService.undo_bustout, user, bustout)
