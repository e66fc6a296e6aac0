"""What every route depends on (FastAPI's ``Depends``): the hub's parts the web side is given
(``WebContext``), the session's staff member with a permission, and ``on_floor``, the one way
a route reaches the floor's state: a use case queued on the floor's worker, awaited."""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Concatenate, ParamSpec, TypeVar

from fastapi import Body, Depends, Path, Query, Request
from pydantic import BaseModel, ConfigDict

from contract.schema import NAME
from contract.topics import HUB_ANSWER_SECONDS
from hub.auth import Sessions, User
from hub.calls import use_case_name
from hub.reports import Reports
from hub.service import FloorService, OnFloor
from hub.settings import HubSettings
from hub.web.errors import Refused
from hub.web.streams import StreamRegistry

log = logging.getLogger("tablectl.hub")
COOKIE = "pkr_session"
FLOOR_TIMEOUT = HUB_ANSWER_SECONDS  # seconds a request waits for the floor's worker: then 503
P = ParamSpec("P")
T = TypeVar("T")


@dataclass
class WebContext:
    """The hub's parts the dashboard uses (tablectl/hub_app.py builds them)."""

    floor: OnFloor
    reports: Reports
    sessions: Sessions
    settings: HubSettings


def web_context(request: Request) -> WebContext:
    context: WebContext = request.app.state.context
    return context


Context = Annotated[WebContext, Depends(web_context)]


def stream_registry(request: Request) -> StreamRegistry:
    registry: StreamRegistry = request.app.state.streams
    return registry


Streams = Annotated[StreamRegistry, Depends(stream_registry)]


async def on_floor(context: WebContext,
                   use_case: Callable[Concatenate[FloorService, P], T],
                   *args: P.args, **kwargs: P.kwargs) -> T:
    """``use_case`` run on the floor's worker, awaited without holding a thread;
    TimeoutError (a 503) if the floor does not answer within FLOOR_TIMEOUT (the use case is
    then not run late, if it has not started)."""
    future = context.floor.submit(use_case, *args, **kwargs)
    try:
        return await asyncio.wait_for(asyncio.wrap_future(future), FLOOR_TIMEOUT)
    except TimeoutError:
        # The staff see "try again"; the log says what held the floor up, for whoever
        # looks into a slow hub.
        log.warning("%s waited %g s for the floor in vain: %s", use_case_name(use_case),
                    FLOOR_TIMEOUT, context.floor.busy())
        raise


def session_of(request: Request) -> str | None:
    return request.cookies.get(COOKIE)


def _staff(permission: str | None) -> Any:
    def check(request: Request, context: Context) -> User:
        user = context.sessions.user(session_of(request), time.monotonic())
        if user is None:
            raise Refused(401, "log in first")
        if permission is not None and not user.may(permission):
            raise Refused(403, f"the role {user.role} may not {permission}")
        if permission == "broadcast" and not private_line(request):
            raise Refused(403, "the broadcast feed carries hole cards: it is served over "
                               "HTTPS only (start the hub with --web-cert and --web-key)")
        return user
    return Depends(check)


def private_line(request: Request) -> bool:
    """Whether hole cards may go to this client: over HTTPS, or to this machine itself."""
    if request.url.scheme == "https":
        return True
    try:
        return ipaddress.ip_address(request.client.host if request.client else "").is_loopback
    except ValueError:
        return False


# The session's staff member, allowed to (hub/auth.py's ROLES): see the floor, send commands
# and change the roster, run the venue clock, acknowledge alerts, set the payout table; a
# supervisor's own.
Seeing = Annotated[User, _staff("see")]
Commanding = Annotated[User, _staff("command")]
Clocking = Annotated[User, _staff("clock")]
Acknowledging = Annotated[User, _staff("acknowledge")]
Supervising = Annotated[User, _staff("private")]  # the supervisor's role alone has it
Paying = Annotated[User, _staff("payouts")]
# A production's login (the broadcast role, and no other): the broadcast feed.
Broadcasting = Annotated[User, _staff("broadcast")]
LoggedIn = Annotated[User, _staff(None)]  # whoever it is (who am I)


# ---------------------------------------------------------------------------- shared shapes

class Empty(BaseModel):  # the body of a call that needs none: nothing, or {}
    model_config = ConfigDict(extra="forbid")


TABLE = Annotated[str, Path(pattern=NAME.pattern, description="a table id")]
PLAYER = Annotated[int, Path(ge=1, le=2**31 - 1, description="a roster player's id")]
BUSTOUT = Annotated[str, Path(pattern=NAME.pattern[:-1] + r":\d{1,2}:\d{1,16}$",
                              description="a bust-out: table:seat:when (ms)")]
PERIOD_FROM = Annotated[int | None, Query(alias="from", ge=0, le=2**53 - 1,
                                          description="UTC ms; default: 12 h before the end")]
PERIOD_TO = Annotated[int | None, Query(ge=0, le=2**53 - 1, description="UTC ms; default: now")]
# A floor command's fields, parsed by the contract (contract/commands.py): their schema in the
# OpenAPI document is the contract's (hub/web/app.py: document).
COMMAND_FIELDS = Annotated[dict[str, Any], Body()]
