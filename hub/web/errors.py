"""How the dashboard's API says no: every refusal is JSON ``{"error": why}`` with its status.

The floor's domain errors are the use cases' own (hub/service.py and what it calls): each
class is mapped to its answer here, once, so a route never catches them, and an exception
not listed (a bug) is a 500, never mistaken for the client's fault."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from contract.commands import CommandError
from contract.wire import encode
from controller.payouts import PayoutTableError
from hub.balance_desk import BalanceRefused
from hub.chip_cases import ChipCountRefused
from hub.clock_cases import NotTheRoomKey, TvLinkChanged
from hub.payout_cases import PayoutsFrozen
from hub.refused import StaffError
from hub.roster import RosterError
from hub.venue_clock import ClockError

# The staff's mistakes, each said to them as it is: the floor (StaffError), the roster's desk
# (RosterError), the balancing desk (BalanceRefused), the venue clock (ClockError), a floor
# command's fields (CommandError).
STAFF_MISTAKES: tuple[type[Exception], ...] = (StaffError, RosterError, BalanceRefused,
                                               ClockError, CommandError)


class Refused(Exception):
    """A request the web side itself answers with an error: the status and the reason."""

    def __init__(self, status: int, message: str) -> None:
        self.status, self.message = status, message
        super().__init__(message)


class StrictJSONResponse(JSONResponse):
    def render(self, content: Any) -> bytes:
        return encode(content).encode()


class ErrorBody(BaseModel):
    error: str = Field(description="why the request was refused, and what to do")


ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody, "description": text}
    for code, text in ((400, "the request is wrong: the error says how"),
                       (401, "log in first"), (403, "the role may not do this"),
                       (413, "the body is too large"), (415, "send JSON"),
                       (503, "the hub is busy or stopping"))}


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    return StrictJSONResponse({"error": message}, status, headers=headers)


def install(app: FastAPI) -> None:
    async def refused(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, Refused)
        return _error(exc.status, exc.message)

    async def staff_mistake(request: Request, exc: Exception) -> Response:
        return _error(400, str(exc))

    async def not_the_room_key(request: Request, exc: Exception) -> Response:
        return _error(403, str(exc))

    async def tv_link_changed(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, TvLinkChanged)
        return StrictJSONResponse({"error": str(exc), "current": exc.current}, 409)

    async def payout_table_refused(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, PayoutTableError)
        return StrictJSONResponse({"error": str(exc), "problems": exc.problems}, 400)

    async def chip_count_refused(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, ChipCountRefused)
        return StrictJSONResponse({"error": str(exc), "problems": exc.problems}, 400)

    async def payouts_frozen(request: Request, exc: Exception) -> Response:
        return _error(409, str(exc))

    async def floor_busy(request: Request, exc: Exception) -> Response:
        return _error(503, "the hub did not answer in time: try again")

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)
        message = exc.detail if isinstance(exc.detail, str) else "refused"
        if exc.status_code == 404:
            message = f"nothing at {request.url.path}"
        elif exc.status_code == 405:
            message = f"{request.method} is not for {request.url.path}"
        return _error(exc.status_code, message, getattr(exc, "headers", None))  # 405's Allow

    async def invalid(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        parts = []
        for error in exc.errors()[:5]:
            where = ".".join(str(p) for p in error.get("loc", ()) if p != "body")
            parts.append(f"{where or 'body'}: {error.get('msg', 'invalid')}")
        return _error(400, "; ".join(parts))

    app.add_exception_handler(Refused, refused)
    for mistake in STAFF_MISTAKES:
        app.add_exception_handler(mistake, staff_mistake)
    app.add_exception_handler(NotTheRoomKey, not_the_room_key)
    app.add_exception_handler(PayoutTableError, payout_table_refused)
    app.add_exception_handler(PayoutsFrozen, payouts_frozen)
    app.add_exception_handler(ChipCountRefused, chip_count_refused)
    app.add_exception_handler(TvLinkChanged, tv_link_changed)
    # The floor's worker did not answer in time (hub/web/deps.py: on_floor).
    app.add_exception_handler(TimeoutError, floor_busy)
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(RequestValidationError, invalid)
