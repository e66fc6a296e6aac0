"""The floor: its state and live stream, the alerts (acknowledged, re-opened), the floor log,
a table's last hands, and the badge-to-name list of the venue's dealers."""

from __future__ import annotations

import asyncio
import time
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import Response, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from hub.alerts import Alert
from hub.service import FloorService
from hub.web.deps import (
    TABLE,
    Acknowledging,
    Commanding,
    Context,
    Empty,
    Seeing,
    Streams,
    on_floor,
    session_of,
)
from hub.web.errors import ERRORS
from hub.web.streams import USERS_FILE_AGE, EventStream, events

router = APIRouter(responses=ERRORS)
ALERT = Annotated[int, Path(ge=1, le=2**53 - 1)]


class History(BaseModel):
    table: str
    private: bool
    hands: list[dict[str, Any]]


class LogLine(BaseModel):
    ts: int
    user: str
    action: str
    detail: dict[str, Any]


class ShownAlerts(BaseModel):
    """The alerts a table's group showed when "Acknowledge all" was tapped: only those are
    acknowledged (one raised since stays open). Without a body (a script), every open one."""

    model_config = ConfigDict(extra="forbid")
    alerts: list[Annotated[int, Field(ge=1, le=2**53 - 1)]] | None = Field(
        default=None, max_length=1000)


class AcknowledgedAll(BaseModel):
    table: str
    acknowledged: list[int]  # the ids of the alerts the dashboards showed


class DealerName(BaseModel):
    model_config = ConfigDict(extra="forbid")
    badge: str = Field(min_length=1, max_length=64)
    name: str = Field(max_length=40)  # "" takes the name off


@router.get("/api/state", tags=["floor"],
            summary="the floor: tables, alerts, clock, hand-for-hand panel, commands")
async def state(user: Seeing, context: Context) -> dict[str, Any]:
    return await on_floor(context, FloorService.snapshot)


@router.get("/api/stream", tags=["floor"],
            summary="Server-Sent Events: a snapshot, then one update per change",
            response_class=StreamingResponse)
async def stream(request: Request, user: Seeing, context: Context,
                 streams: Streams) -> Response:
    viewer = streams.open(session_of(request) or "", user, asyncio.get_running_loop())
    floor = context.floor

    def unsubscribe() -> None:  # on the floor's worker, in its turn: nothing waits for it
        floor.submit(FloorService.unsubscribe, viewer.offer)

    try:
        snapshot = await on_floor(context, FloorService.subscribe, viewer.offer)
    except BaseException:
        # Given up on (a timeout, the client gone): the subscription may have been made all
        # the same, and nothing else would ever end it. Queued after it, so it runs after.
        unsubscribe()
        streams.close(viewer)
        raise

    def drop() -> None:
        unsubscribe()
        streams.close(viewer)

    viewer.on_drop = drop
    sessions = context.sessions
    return EventStream(
        events(viewer, snapshot, streams=streams, unsubscribe=unsubscribe,
               session_user=lambda session: sessions.user(session, time.monotonic(),
                                                          USERS_FILE_AGE)),
        media_type="text/event-stream", headers={"X-Accel-Buffering": "no"})


@router.get("/api/tables/{table}/hands", response_model=History, tags=["floor"],
            summary="the table's last hands (hole cards for a supervisor)")
def hands(table: TABLE, user: Seeing, context: Context,
          n: Annotated[int, Query(ge=1, le=200)] = 20) -> History:
    return History(table=table, private=user.may("private"),
                   hands=context.reports.hand_history(user, table, n))


@router.get("/api/log", response_model=list[LogLine], tags=["floor"],
            summary="the floor log: who acknowledged, commanded or changed what")
async def floor_log(user: Commanding, context: Context) -> list[dict[str, Any]]:
    return await on_floor(context, FloorService.floor_log)


@router.post("/api/alerts/{alert}/ack", response_model=Alert, tags=["floor"],
             summary="acknowledge an alert")
async def ack(alert: ALERT, user: Acknowledging, context: Context,
              body: Empty | None = None) -> dict[str, Any]:
    return await on_floor(context, FloorService.acknowledge, user, alert)


@router.post("/api/alerts/{alert}/reopen", response_model=Alert, tags=["floor"],
             summary="open an acknowledged alert again (acknowledged by mistake)")
async def reopen(alert: ALERT, user: Acknowledging, context: Context,
                 body: Empty | None = None) -> dict[str, Any]:
    return await on_floor(context, FloorService.reopen, user, alert)


@router.post("/api/tables/{table}/alerts/ack", response_model=AcknowledgedAll, tags=["floor"],
             summary="acknowledge every open alert of a table")
async def ack_table(table: TABLE, user: Acknowledging, context: Context,
                    body: ShownAlerts | None = None) -> AcknowledgedAll:
    shown = body.alerts if body is not None else None
    acknowledged = await on_floor(context, FloorService.acknowledge_table, user, table, shown)
    return AcknowledgedAll(table=table, acknowledged=acknowledged)


@router.get("/api/dealers", tags=["dealers"],
            summary="the badge-to-name list of the venue's dealers")
async def dealers(user: Seeing, context: Context) -> dict[str, str]:
    return await on_floor(context, FloorService.dealers)


@router.post("/api/dealers", tags=["dealers"],
             summary="name a dealer's badge (an empty name takes it off): the list")
async def dealers_name(body: DealerName, user: Commanding, context: Context) -> dict[str, str]:
    return await on_floor(context, FloorService.name_dealer, user, body.badge, body.name)
