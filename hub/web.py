"""The floor dashboard's web side: pages, a JSON API and a Server-Sent Events stream, as a
FastAPI application served by uvicorn in a thread of the hub's process.

Why these: FastAPI types and validates each request body and parameter (a wrong one is a 400
with the reason, never a dropped connection) and writes the OpenAPI document from the same
code (``docs/openapi.json``, served at ``/api/openapi.json``); uvicorn is the ASGI server both
recommend, maintained, and small enough for a Pi. What neither does, done here: a deadline for
receiving a whole request (a slow client is cut, ``DeadlineH11Protocol``), a cap on the body
read whatever the Content-Length says, security headers on every answer (errors too), and
bounded event streams (a viewer that stops reading is dropped, never buffered for).

Every page and call but the login needs a staff session; each call checks the role's
permission (hub/auth.py). Calls that change something are POSTs with a JSON body: with the
session cookie ``SameSite=Strict`` a page of another site can send neither, and a POST whose
``Origin`` is another site (a login form elsewhere, say) is refused. The pages load no
third-party code and the Content-Security-Policy allows only the hub's own files.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import threading
import time
import urllib.parse
from collections.abc import AsyncIterator, Awaitable, Callable
from importlib import resources
from typing import TYPE_CHECKING, Annotated, Any, Literal

import h11
from fastapi import Body, Depends, FastAPI, Header, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse, Response, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException
from uvicorn.protocols.http.h11_impl import H11Protocol

from contract.commands import (
    COMMANDS,
    CommandError,
    HubClockCommand,
    command_from_fields,
    command_kind,
    fields_schema,
)
from contract.schema import NAME
from contract.supervise import start_worker
from contract.wire import WireError, decode, encode
from hub.auth import ROLES, SESSION_SECONDS, LoginRefused
from hub.floor import Alert, StaffError

if TYPE_CHECKING:  # types only: at run time the hub starts the web side, not the reverse
    from hub.auth import User
    from hub.floor import Update
    from hub.service import Hub

log = logging.getLogger("tablectl.web")

COOKIE = "pkr_session"
HEARTBEAT = 15.0  # seconds between keep-alive comments on an idle event stream
MAX_BODY = 16 * 1024
REQUEST_DEADLINE = 10.0  # seconds to receive a whole request, headers and body
KEEP_ALIVE = 5.0  # seconds an idle connection is kept
MAX_CONNECTIONS = 256  # over this, 503
MAX_CONNECTIONS_PER_ADDRESS = 32  # one host's share: a tablet needs a few; a flood, not all
# Not capped per address: the reverse proxy uvicorn trusts (X-Forwarded-For from it only), from
# which, behind a proxy, every client comes; the proxy caps its clients (nginx: limit_conn).
PROXY_ADDRESSES = frozenset({"127.0.0.1"})
MAX_HEADER_BYTES = 16 * 1024
STREAM_QUEUE = 2000  # updates waiting for one viewer before it is dropped
SEND_TIMEOUT = 20.0  # seconds a write to a viewer may wait (its TCP window shut): then dropped
MAX_STREAMS_PER_SESSION = 4
MAX_STREAMS_PER_ACCOUNT = 8  # however many times one account logs in
MAX_STREAMS = 200
STAFF_STREAMS = 40  # of MAX_STREAMS, kept for the floor and supervisors: viewers never take them
SESSION_CHECK = 2.0  # seconds: a stream ends this soon after its session ended
STATIC = {"dashboard.js": "text/javascript", "dashboard.css": "text/css",
          "dashboard.html": "text/html", "login.html": "text/html",
          "tv.html": "text/html", "tv.js": "text/javascript", "tv.css": "text/css",
          "chart.umd.min.js": "text/javascript"}  # vendored: hub/static/VENDORED.md
HSTS = b"max-age=31536000"  # sent over HTTPS only (RFC 6797)
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; "
                               "frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    # same-origin, not no-referrer: with no-referrer a browser sends "Origin: null" on POSTs
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}


def _static(name: str) -> bytes:
    return resources.files("hub").joinpath("static", name).read_bytes()


class Refused(Exception):
    """A request the hub answers with an error: the status and the reason, as JSON."""

    def __init__(self, status: int, message: str) -> None:
        self.status, self.message = status, message
        super().__init__(message)


class StrictJSONResponse(JSONResponse):
    def render(self, content: Any) -> bytes:
        return encode(content).encode()


# ---------------------------------------------------------------------------- the models

class ErrorBody(BaseModel):
    error: str = Field(description="why the request was refused, and what to do")


class Me(BaseModel):
    user: str
    role: Literal["viewer", "floor", "supervisor"]
    may: list[str]
    venue: str
    locale: str | None = None  # the venue's, for dates and times (None: the browser's own)
    time_zone: str | None = None


class Released(BaseModel):
    released: list[str]


class Blinds(BaseModel):
    level: int | None
    sb: int
    bb: int
    ante: int
    minutes: float


class RoomClock(BaseModel):
    venue: str
    now: int  # the hub's time, UTC ms: the page counts down from it
    structure: str | None
    title: str | None = None
    running: bool
    on_break: bool = False
    remaining: float | None = None  # seconds left in the level or break
    current: Blinds | None = None
    next: Blinds | None = None
    break_in: float | None = None  # seconds to the next break
    announcements: list[str] = []
    next_announcements: list[str] = []
    tables: int
    players: int  # seated at the tables in play
    # With a roster: who entered, who is left, and the figures the structure gives.
    entrants: int | None = None
    entries: int | None = None  # buy-ins and re-entries
    add_ons: int | None = None
    players_left: int | None = None
    average_stack: int | None = None  # (starting stack x entries + add-on chips) / left
    prize_pool: int | None = None  # buy-ins and add-ons paid, in ``currency``
    currency: str = ""
    payouts: list[int] = []  # the prize of each place paid, first place first


class TvLink(BaseModel):
    path: str  # "/tv#KEY": the key stays in the fragment, never in a server's logs


class StructureChoice(BaseModel):
    name: str
    title: str | None = None
    levels: int | None = None
    first: str | None = None  # the first level's blinds, "100/200"
    minutes: int | None = None  # the first level's length
    problem: str | None = None  # a house file that does not load: why


class AcknowledgedAll(BaseModel):
    table: str
    acknowledged: list[int]  # the ids of the alerts the dashboards showed


class DealerName(BaseModel):
    model_config = ConfigDict(extra="forbid")
    badge: str = Field(min_length=1, max_length=64)
    name: str = Field(max_length=40)  # "" takes the name off


class TakeBack(BaseModel):
    model_config = ConfigDict(extra="forbid")
    what: Literal["re-entry", "add-on"]


class FinalTable(BaseModel):
    model_config = ConfigDict(extra="forbid")
    table: str = Field(pattern=NAME.pattern)


class NewPlayer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=40)


class RosterCsv(BaseModel):
    model_config = ConfigDict(extra="forbid")
    csv: str = Field(max_length=200_000)


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


class RosterView(BaseModel):
    players: list[RosterPlayer]
    entrants: int
    entries: int
    add_ons: int
    left: int
    waiting: int  # in the game without a seat: the next draw seats them


class ShownAlerts(BaseModel):
    """The alerts a table's group showed when "Acknowledge all" was tapped: only those are
    acknowledged (one raised since stays open). Without a body (a script), every open one."""

    model_config = ConfigDict(extra="forbid")
    alerts: list[Annotated[int, Field(ge=1, le=2**53 - 1)]] | None = Field(
        default=None, max_length=1000)


class Empty(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Rate(BaseModel):
    hands: int
    hours: float
    hands_per_hour: float | None


class TableRate(Rate):
    table: str


class DealerRate(Rate):
    dealer: str


class Stats(BaseModel):
    from_: int = Field(alias="from")
    to: int
    hands: int
    tables: list[TableRate]
    dealers: list[DealerRate]
    irregularities: dict[str, Any]  # kinds, by_table [{table, kind, count}], by_dealer
    durations: dict[str, Any]  # bins [{from, to, hands}] (seconds), median, p90


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


class History(BaseModel):
    table: str
    private: bool
    hands: list[dict[str, Any]]


class LogLine(BaseModel):
    ts: int
    user: str
    action: str
    detail: dict[str, Any]


_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody, "description": text}
    for code, text in ((400, "the request is wrong: the error says how"),
                       (401, "log in first"), (403, "the role may not do this"),
                       (413, "the body is too large"), (415, "send JSON"),
                       (503, "the hub is busy or stopping"))}
TABLE = Annotated[str, Path(pattern=NAME.pattern, description="a table id")]
PLAYER = Annotated[int, Path(ge=1, le=2**31 - 1, description="a roster player's id")]
BUSTOUT = Annotated[str, Path(pattern=NAME.pattern[:-1] + r":\d{1,2}:\d{1,16}$",
                              description="a bust-out: table:seat:when (ms)")]
PERIOD_FROM = Annotated[int | None, Query(alias="from", ge=0, le=2**53 - 1,
                                          description="UTC ms; default: 12 h before the end")]
PERIOD_TO = Annotated[int | None, Query(ge=0, le=2**53 - 1, description="UTC ms; default: now")]
# A command's fields, parsed by the contract (contract/commands.py): its schema in the
# OpenAPI document is the contract's (``document``).
COMMAND_BODY = Annotated[dict[str, Any], Body()]
CONTRACT_BODIES = {
    "/api/clock": fields_schema(HubClockCommand),
    "/api/tables/{table}/cmd/{name}": {
        "anyOf": [{"title": name, **fields_schema(kind)} for name, kind in COMMANDS.items()],
        "description": "the fields of the command named in the path (without a transaction: "
                       "the hub adds one)"},
}


# ---------------------------------------------------------------------------- the app

def create_app(hub: Hub) -> FastAPI:
    app = FastAPI(title="Floor dashboard API", version="1.0.0",
                  description="The venue hub's JSON API for the floor dashboard and scripts. "
                              "Log in with POST /login (form fields user, password): the "
                              "session cookie pkr_session is sent with every call.",
                  openapi_url="/api/openapi.json", docs_url=None, redoc_url=None,
                  default_response_class=StrictJSONResponse)
    streams = StreamRegistry()
    app.state.streams = streams

    def token_of(request: Request) -> str | None:
        return request.cookies.get(COOKIE)

    def needs(permission: str) -> Callable[[Request], User]:
        def check(request: Request) -> User:
            user = hub.sessions.user(token_of(request), time.monotonic())
            if user is None:
                raise Refused(401, "log in first")
            if not user.may(permission):
                raise Refused(403, f"the role {user.role} may not {permission}")
            return user
        return check

    see, command, clock, acknowledge = (Depends(needs(p)) for p in
                                        ("see", "command", "clock", "acknowledge"))

    @app.exception_handler(Refused)
    async def refused(request: Request, exc: Refused) -> Response:
        return StrictJSONResponse({"error": exc.message}, exc.status)

    @app.exception_handler(CommandError)
    async def bad_command(request: Request, exc: CommandError) -> Response:
        return StrictJSONResponse({"error": str(exc)}, 400)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        message = exc.detail if isinstance(exc.detail, str) else "refused"
        if exc.status_code == 404:
            message = f"nothing at {request.url.path}"
        elif exc.status_code == 405:
            message = f"{request.method} is not for {request.url.path}"
        return StrictJSONResponse({"error": message}, exc.status_code,
                                  headers=getattr(exc, "headers", None))  # 405's Allow

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> Response:
        parts = []
        for error in exc.errors()[:5]:
            where = ".".join(str(p) for p in error.get("loc", ()) if p != "body")
            parts.append(f"{where or 'body'}: {error.get('msg', 'invalid')}")
        return StrictJSONResponse({"error": "; ".join(parts)}, 400)

    def staff_error(function: Callable[[], Any]) -> Any:
        try:
            return function()
        except StaffError as exc:
            raise Refused(400, str(exc)) from None
        except TimeoutError:
            raise Refused(503, "the hub did not answer in time: try again") from None

    # -- pages
    @app.get("/login", include_in_schema=False)
    def login_page() -> Response:
        return Response(_static("login.html"), media_type="text/html; charset=utf-8")

    @app.get("/static/{name}", include_in_schema=False)
    def static(name: str) -> Response:
        if name not in STATIC:
            raise Refused(404, f"nothing at /static/{name}")
        return Response(_static(name), media_type=STATIC[name] + "; charset=utf-8")

    @app.get("/", include_in_schema=False)
    def dashboard(request: Request) -> Response:
        if hub.sessions.user(token_of(request), time.monotonic()) is None:
            return RedirectResponse("/login", 303)
        return Response(_static("dashboard.html"), media_type="text/html; charset=utf-8")

    @app.get("/tv", include_in_schema=False)
    def tv_page() -> Response:
        # The room's TV: no login, the page asks /api/tv with the link's key.
        return Response(_static("tv.html"), media_type="text/html; charset=utf-8")

    @app.post("/login", include_in_schema=False)
    async def login(request: Request) -> Response:
        form = urllib.parse.parse_qs((await request.body()).decode("utf-8", "replace"))
        name = (form.get("user") or [""])[0]
        password = (form.get("password") or [""])[0]
        address = request.client.host if request.client else "?"
        try:
            token = await asyncio.to_thread(hub.sessions.login, name, password,
                                            time.monotonic(), address)
        except LoginRefused as exc:
            where = "/login?" + urllib.parse.urlencode({"error": str(exc)})
            return RedirectResponse(where, 303)
        response = RedirectResponse("/", 303)
        response.set_cookie(COOKIE, token, max_age=SESSION_SECONDS, path="/", httponly=True,
                            samesite="strict", secure=request.url.scheme == "https")
        return response

    @app.post("/logout", include_in_schema=False)
    def logout(request: Request) -> Response:
        token = token_of(request)
        hub.sessions.logout(token)
        streams.end_session(token or "")  # its streams end with it
        response = RedirectResponse("/login", 303)
        response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict",
                               secure=request.url.scheme == "https")
        return response

    # -- the API
    @app.get("/api/me", response_model=Me, responses=_ERRORS, tags=["staff"])
    def me(user: User = see) -> Me:
        return Me(user=user.name, role=user.role,  # type: ignore[arg-type]
                  may=sorted(ROLES[user.role]), venue=hub.venue,
                  locale=hub.settings.locale, time_zone=hub.settings.time_zone)

    @app.get("/api/state", responses=_ERRORS, tags=["floor"],
             summary="the floor: tables, alerts, clock, hand-for-hand panel, commands")
    def state(user: User = see) -> dict[str, Any]:
        return dict(staff_error(hub.snapshot))

    @app.get("/api/stream", responses=_ERRORS, tags=["floor"],
             summary="Server-Sent Events: a snapshot, then one update per change",
             response_class=StreamingResponse)
    async def stream(request: Request, user: User = see) -> Response:
        viewer = streams.open(token_of(request) or "", user.name, user.may("command"),
                              asyncio.get_running_loop())
        viewer.reads_log = user.may("command")  # the floor log is the floor's (as /api/log)
        try:
            snapshot = await asyncio.to_thread(hub.subscribe, viewer.offer)
        except TimeoutError:
            streams.close(viewer)
            raise Refused(503, "the hub did not answer in time: try again") from None
        def drop() -> None:
            hub.unsubscribe(viewer.offer)
            streams.close(viewer)

        viewer.on_drop = drop
        return EventStream(_events(hub, streams, viewer, snapshot),
                           media_type="text/event-stream", headers={"X-Accel-Buffering": "no"})

    @app.get("/api/tables/{table}/hands", response_model=History, responses=_ERRORS,
             tags=["floor"], summary="the table's last hands (hole cards for a supervisor)")
    def hands(table: TABLE, n: Annotated[int, Query(ge=1, le=200)] = 20,
              user: User = see) -> History:
        return History(table=table, private=user.may("private"),
                       hands=hub.hand_history(user, table, n))

    @app.get("/api/log", response_model=list[LogLine], responses=_ERRORS, tags=["floor"],
             summary="the floor log: who acknowledged, commanded or changed what")
    def floor_log(user: User = command) -> list[dict[str, Any]]:
        return list(staff_error(hub.floor_log))

    @app.post("/api/alerts/{alert}/ack", response_model=Alert, responses=_ERRORS,
              tags=["floor"], summary="acknowledge an alert")
    def ack(alert: Annotated[int, Path(ge=1, le=2**53 - 1)], body: Empty | None = None,
            user: User = acknowledge) -> dict[str, Any]:
        return dict(staff_error(lambda: hub.acknowledge(user, alert)))

    @app.post("/api/alerts/{alert}/reopen", response_model=Alert, responses=_ERRORS,
              tags=["floor"], summary="open an acknowledged alert again (acknowledged by mistake)")
    def reopen(alert: Annotated[int, Path(ge=1, le=2**53 - 1)], body: Empty | None = None,
               user: User = acknowledge) -> dict[str, Any]:
        return dict(staff_error(lambda: hub.reopen(user, alert)))

    @app.post("/api/tables/{table}/alerts/ack", response_model=AcknowledgedAll,
              responses=_ERRORS, tags=["floor"],
              summary="acknowledge every open alert of a table")
    def ack_table(table: TABLE, body: ShownAlerts | None = None,
                  user: User = acknowledge) -> AcknowledgedAll:
        shown = body.alerts if body is not None else None
        return AcknowledgedAll(table=table, acknowledged=staff_error(
            lambda: hub.acknowledge_table(user, table, shown)))

    @app.get("/api/tv", response_model=RoomClock, responses=_ERRORS, tags=["clock"],
             summary="the room clock for a TV: the viewer link's key, no login")
    def room_clock(key: Annotated[str, Header(alias="X-Room-Key", min_length=1,
                                              max_length=100)]) -> dict[str, Any]:
        try:
            return dict(staff_error(lambda: hub.room_clock(key)))
        except PermissionError as exc:
            raise Refused(403, str(exc)) from None

    @app.get("/api/tv-link", response_model=TvLink, responses=_ERRORS, tags=["clock"],
             summary="the room clock page's viewer link (for the floor to open on a TV)")
    def tv_link(user: User = clock) -> TvLink:
        return TvLink(path=f"/tv#{hub.tv_key}")

    @app.get("/api/structures", response_model=list[StructureChoice], responses=_ERRORS,
             tags=["clock"], summary="the structures the venue clock can start")
    def structures(user: User = see) -> list[dict[str, Any]]:
        return hub.structures()

    @app.post("/api/clock", responses=_ERRORS, tags=["clock"],
              summary="the venue clock's actions, as tablectl clock")
    def clock_action(body: COMMAND_BODY, user: User = clock) -> dict[str, Any]:
        command = command_from_fields(HubClockCommand, body)
        return dict(staff_error(lambda: hub.clock_command(user, command)))

    @app.get("/api/stats", response_model=Stats, responses=_ERRORS, tags=["floor"],
             summary="hands per hour per table and dealer, irregularities by kind, hand "
                     "durations, over a period (the last 12 hours by default)")
    def stats(start: PERIOD_FROM = None, to: PERIOD_TO = None, user: User = see) -> dict[str, Any]:
        return dict(staff_error(lambda: hub.statistics(start, to)))

    @app.get("/api/stats/hands.csv", responses={200: {"content": {"text/csv": {}},
                                                      "description": "one row a hand"},
                                                **_ERRORS},
             tags=["floor"], response_class=Response,
             summary="the hands of a period as CSV (table, hand, dealer, start, seconds, "
                     "outcome, irregularities)")
    def stats_csv(start: PERIOD_FROM = None, to: PERIOD_TO = None, user: User = see) -> Response:
        pieces = staff_error(lambda: hub.hands_csv_stream(start, to))  # the period checked
        return StreamingResponse(pieces, media_type="text/csv; charset=utf-8", headers={
            "Content-Disposition": f'attachment; filename="hands-{hub.venue}.csv"'})

    @app.get("/api/roster", response_model=RosterView, responses=_ERRORS, tags=["roster"],
             summary="the tournament's entrants: seats, entries, add-ons, finishing places")
    def roster(user: User = see) -> dict[str, Any]:
        return dict(staff_error(hub.roster))

    @app.post("/api/roster/players", response_model=RosterView, responses=_ERRORS,
              tags=["roster"], summary="enter a player at the desk (waits for a drawn seat)")
    def roster_add(body: NewPlayer, user: User = command) -> dict[str, Any]:
        return dict(staff_error(lambda: hub.add_player(user, body.name)))

    @app.post("/api/roster/import", response_model=RosterView, responses=_ERRORS,
              tags=["roster"], summary="entrants from a CSV (a name column; entries and "
                                       "add_ons optional): all or none")
    def roster_import(body: RosterCsv, user: User = command) -> dict[str, Any]:
        return dict(staff_error(lambda: hub.import_players(user, body.csv)))

    @app.post("/api/roster/players/{player}/re-entry", response_model=RosterView,
              responses=_ERRORS, tags=["roster"],
              summary="a player out buys in again (waits for a drawn seat)")
    def roster_reentry(player: PLAYER, body: Empty | None = None,
                       user: User = command) -> dict[str, Any]:
        return dict(staff_error(lambda: hub.reentry(user, player)))

    @app.post("/api/roster/players/{player}/add-on", response_model=RosterView,
              responses=_ERRORS, tags=["roster"],
              summary="an add-on for a player in the game (the structure's limit)")
    def roster_add_on(player: PLAYER, body: Empty | None = None,
                      user: User = command) -> dict[str, Any]:
        return dict(staff_error(lambda: hub.add_on(user, player)))

    @app.post("/api/roster/players/{player}/take-back", response_model=RosterView,
              responses=_ERRORS, tags=["roster"],
              summary="take back a re-entry (while the player waits for a seat) or an add-on")
    def roster_take_back(player: PLAYER, body: TakeBack,
                         user: User = command) -> dict[str, Any]:
        return dict(staff_error(lambda: hub.take_back(user, player, body.what)))

    @app.post("/api/roster/draw", responses=_ERRORS, tags=["roster"],
              summary="draw seats for every player waiting: the seating sent to the tables")
    def roster_draw(body: Empty | None = None, user: User = command) -> dict[str, Any]:
        return dict(staff_error(lambda: hub.draw_seats(user)))

    @app.post("/api/roster/final-table", responses=_ERRORS, tags=["roster"],
              summary="the final table: every player left draws a seat there (seeds 001, "
                      "002); every table between hands")
    def roster_final(body: FinalTable, user: User = command) -> dict[str, Any]:
        return dict(staff_error(lambda: hub.final_table_draw(user, body.table)))

    @app.post("/api/roster/clear", response_model=RosterView, responses=_ERRORS,
              tags=["roster"], summary="a new tournament: the roster emptied")
    def roster_clear(body: Empty | None = None, user: User = command) -> dict[str, Any]:
        return dict(staff_error(lambda: hub.clear_roster(user)))

    @app.get("/api/roster/finishing.csv", responses={200: {"content": {"text/csv": {}},
                                                           "description": "one row a place"},
                                                     **_ERRORS},
             tags=["roster"], response_class=Response,
             summary="the finishing order as CSV (place, name, entries, add-ons, when out)")
    def roster_csv(user: User = see) -> Response:
        return Response(staff_error(hub.finishing_csv), media_type="text/csv; charset=utf-8",
                        headers={"Content-Disposition":
                                 f'attachment; filename="finishing-{hub.venue}.csv"'})

    @app.get("/api/dealers", responses=_ERRORS, tags=["dealers"],
             summary="the badge-to-name list of the venue's dealers")
    def dealers(user: User = see) -> dict[str, str]:
        return dict(staff_error(lambda: hub.snapshot()["dealers"]))

    @app.post("/api/dealers", responses=_ERRORS, tags=["dealers"],
              summary="name a dealer's badge (an empty name takes it off): the list")
    def dealers_name(body: DealerName, user: User = command) -> dict[str, str]:
        return dict(staff_error(lambda: hub.name_dealer(user, body.badge, body.name)))

    @app.post("/api/balance/confirm", response_model=BalancePanel, responses=_ERRORS,
              tags=["floor"], summary="confirm the balancing move or table break the house's "
                                      "rule proposes: made when those tables are between hands")
    def balance_confirm(body: BalanceConfirm, user: User = command) -> dict[str, Any]:
        return dict(staff_error(lambda: hub.confirm_balance(user, body.kind, body.tables)))

    @app.post("/api/balance/cancel", response_model=BalancePanel, responses=_ERRORS,
              tags=["floor"], summary="withdraw a confirmed move not made yet")
    def balance_cancel(body: Empty | None = None, user: User = command) -> dict[str, Any]:
        return dict(staff_error(lambda: hub.cancel_balance(user)))

    @app.post("/api/hand-for-hand/release", response_model=Released, responses=_ERRORS,
              tags=["clock"], summary="release the next hand (refused while a table plays)")
    def release(body: Empty | None = None, user: User = clock) -> Released:
        return Released(released=staff_error(lambda: hub.release_hand(user)))

    @app.post("/api/tables/{table}/cmd/{name}", responses=_ERRORS, tags=["tables"],
              summary="a table command (seating, deck-check, replay, status, "
                      "hand-for-hand, clock), checked as the table will")
    def table_command(table: TABLE,
                      name: Annotated[str, Path(pattern=r"^[a-z-]{1,32}$")],
                      body: COMMAND_BODY, user: User = command) -> dict[str, Any]:
        sent = command_from_fields(command_kind(name), body)
        return dict(staff_error(lambda: hub.table_command(user, table, sent)))

    @app.post("/api/bustouts/{bustout}/undo", responses=_ERRORS, tags=["tables"],
              summary="give a bust-out's seat back (within two minutes of the table applying "
                      "it): the seating command sent")
    def undo_bustout(bustout: BUSTOUT, body: Empty | None = None,
                     user: User = command) -> dict[str, Any]:
        return dict(staff_error(lambda: hub.undo_bustout(user, bustout)))

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = document(app)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    return app


def document(app: FastAPI) -> dict[str, Any]:
    """The OpenAPI document of the API as served (``docs/openapi.json`` is this, written by
    ``python -m hub.web``): FastAPI's own, with the cookie that authenticates every call, and
    without the 422 answers it adds by default (a wrong request is a 400 here, with a reason).
    """
    from fastapi.openapi.utils import get_openapi

    spec = get_openapi(title=app.title, version=app.version, description=app.description,
                       routes=app.routes)
    spec["components"].setdefault("securitySchemes", {})["session"] = {
        "type": "apiKey", "in": "cookie", "name": COOKIE,
        "description": "the session cookie POST /login sets"}
    spec["security"] = [{"session": []}]
    for where, path in spec["paths"].items():
        for operation in path.values():
            operation.get("responses", {}).pop("422", None)
            if where in CONTRACT_BODIES:
                operation["requestBody"]["content"]["application/json"]["schema"] = \
                    CONTRACT_BODIES[where]
    for unused in ("HTTPValidationError", "ValidationError"):
        spec["components"]["schemas"].pop(unused, None)
    return spec


# ---------------------------------------------------------------------------- event streams

class Viewer:
    """One event stream: updates offered from the floor's thread wait in a bounded queue on
    the server's loop; a viewer that falls STREAM_QUEUE behind is dropped."""

    def __init__(self, session: str, loop: asyncio.AbstractEventLoop, account: str = "",
                 staff: bool = False) -> None:
        self.session = session
        self.account = account
        self.staff = staff
        self.loop = loop
        self.queue: asyncio.Queue[Update | None] = asyncio.Queue(STREAM_QUEUE)
        self.dropped = False
        self.reads_log = False
        self.on_drop: Callable[[], Any] = lambda: None

    def offer(self, update: Update | None) -> None:
        """From any thread."""
        with contextlib.suppress(RuntimeError):  # a closed loop: the hub is stopping
            self.loop.call_soon_threadsafe(self._put, update)

    def _put(self, update: Update | None) -> None:
        if self.dropped or (update is not None and update.get("kind") == "log"
                            and not self.reads_log):
            return
        try:
            self.queue.put_nowait(update)
        except asyncio.QueueFull:
            # It stopped reading: nothing more is kept for it, and its stream ends (the page
            # reconnects and gets a fresh snapshot).
            self.dropped = True
            self.queue = asyncio.Queue(1)
            self.queue.put_nowait(None)
            self.on_drop()


class StreamRegistry:
    def __init__(self) -> None:
        self.viewers: list[Viewer] = []
        self.lock = threading.Lock()

    def open(self, session: str, account: str, staff: bool,
             loop: asyncio.AbstractEventLoop) -> Viewer:
        with self.lock:
            mine = [v for v in self.viewers if v.session == session]
            if len(mine) >= MAX_STREAMS_PER_SESSION:
                raise Refused(429, f"at most {MAX_STREAMS_PER_SESSION} streams a session: "
                                   "close a tab")
            if sum(v.account == account for v in self.viewers) >= MAX_STREAMS_PER_ACCOUNT:
                raise Refused(429, f"at most {MAX_STREAMS_PER_ACCOUNT} streams an account: "
                                   "close a tab, or log out elsewhere")
            ceiling = MAX_STREAMS if staff else MAX_STREAMS - STAFF_STREAMS
            if len(self.viewers) >= ceiling:
                raise Refused(503, "the hub serves as many streams as it can")
            viewer = Viewer(session, loop, account, staff)
            self.viewers.append(viewer)
            return viewer

    def end_session(self, session: str) -> None:
        """Every stream of a session that ended (logged out) ends."""
        with self.lock:
            ending = [v for v in self.viewers if v.session == session]
        for viewer in ending:
            viewer.offer(None)

    def close(self, viewer: Viewer) -> None:
        with self.lock:
            if viewer in self.viewers:
                self.viewers.remove(viewer)


async def _events(hub: Hub, streams: StreamRegistry, viewer: Viewer,
                  snapshot: dict[str, Any]) -> AsyncIterator[bytes]:
    try:
        yield b"retry: 1000\nevent: snapshot\ndata: " + encode(snapshot).encode() + b"\n\n"
        quiet = 0.0  # seconds since the last write
        while True:
            try:
                update = await asyncio.wait_for(viewer.queue.get(), SESSION_CHECK)
                waited = False
            except TimeoutError:
                update, waited = None, True
            if not hub.sessions.valid(viewer.session, time.monotonic()):
                return  # logged out, expired, or its user removed: the stream ends too
            if waited:
                quiet += SESSION_CHECK
                if quiet >= HEARTBEAT:
                    quiet = 0.0
                    yield b": keep-alive\n\n"
                continue
            quiet = 0.0
            if update is None:
                return
            chunks = [update]
            while len(chunks) < 200 and not viewer.queue.empty():  # what waits: one write
                more = viewer.queue.get_nowait()
                if more is None:
                    break
                chunks.append(more)
            yield b"".join(b"event: update\ndata: " + encode(c).encode() + b"\n\n"
                           for c in chunks)
    finally:
        hub.unsubscribe(viewer.offer)
        streams.close(viewer)


class EventStream(StreamingResponse):
    """A stream whose every write has SEND_TIMEOUT: a viewer whose TCP window stays shut (a
    tablet gone to sleep mid-stream) is dropped, its connection closed."""

    async def stream_response(self, send: Any) -> None:
        async def timed(message: Any) -> None:
            await asyncio.wait_for(send(message), SEND_TIMEOUT)

        try:
            await super().stream_response(timed)
        except TimeoutError:
            log.info("dropped an event stream that stopped reading for %g s", SEND_TIMEOUT)
            await self.body_iterator.aclose()  # type: ignore[attr-defined]


# ---------------------------------------------------------------------------- ASGI guards

ASGIApp = Callable[[Any, Any, Any], Awaitable[None]]


class Guard:
    """Around the whole app: security headers on every answer (errors too), the body cap
    whatever Content-Length says, JSON bodies strictly parsed, and POSTs from another site
    refused."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_guarded(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", [])
                           if k.lower() != b"cache-control"]
                headers += [(k.lower().encode(), v.encode())
                            for k, v in SECURITY_HEADERS.items()]
                if scope.get("scheme") == "https":  # browsers keep to HTTPS from then on
                    headers.append((b"strict-transport-security", HSTS))
                message = {**message, "headers": headers}
            await send(message)

        refusal = _refusal(scope)
        if refusal is not None:
            await _answer(send_guarded, *refusal)
            return
        body = b""
        if scope["method"] in ("POST", "PUT", "PATCH"):
            try:
                body = await _read_body(receive)
            except Refused as exc:
                await _answer(send_guarded, exc.status, exc.message, close=True)
                return
            headers = dict(scope["headers"])
            kind = headers.get(b"content-type", b"").decode("latin-1")
            if scope["path"].startswith("/api/"):
                if not kind.startswith("application/json"):
                    await _answer(send_guarded, 415, "send JSON (application/json)")
                    return
                try:
                    decode(body or b"{}", max_bytes=MAX_BODY)
                except WireError as exc:
                    await _answer(send_guarded, 400, f"not JSON: {exc}")
                    return
        sent = False

        async def replay() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            message: dict[str, Any] = await receive()
            return message

        await self.app(scope, replay if scope["method"] in ("POST", "PUT", "PATCH")
                       else receive, send_guarded)


def _refusal(scope: dict[str, Any]) -> tuple[int, str] | None:
    headers = dict(scope["headers"])
    if scope["method"] == "POST":
        # A browser names the page a POST comes from: another site's page may not log anyone
        # in or out, nor act (the cookie's SameSite=Strict covers the rest).
        origin = headers.get(b"origin", b"").decode("latin-1")
        host = headers.get(b"host", b"").decode("latin-1")
        if origin and urllib.parse.urlsplit(origin).netloc != host:
            return 403, f"a request from {origin[:100]} is refused: use the dashboard's pages"
    length = headers.get(b"content-length")
    if length is not None:
        text = length.decode("latin-1")
        if not (text.isascii() and text.isdigit()):
            return 400, f"Content-Length {text[:20]!r} is not a length"
        if int(text) > MAX_BODY:
            return 413, f"a request body is at most {MAX_BODY} bytes"
    return None


async def _read_body(receive: Any) -> bytes:
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise Refused(400, "the client went away")
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            raise Refused(413, f"a request body is at most {MAX_BODY} bytes")
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)


async def _answer(send: Any, status: int, message: str, *, close: bool = False) -> None:
    body = encode({"error": message}).encode()
    headers = [(b"content-type", b"application/json"),
               (b"content-length", str(len(body)).encode())]
    if close:  # its body may be unread: this connection cannot carry another request
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class DeadlineH11Protocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with a deadline for receiving a whole request (headers
    and body): uvicorn's keep-alive timer starts again with every byte, so a client that
    trickles a byte at a time would hold a connection (and a slot) for ever. It also caps the
    connections, in all (MAX_CONNECTIONS) and per client address (one host re-opening
    half-sent requests as they are cut kept a supervisor out), refusing with a 503 that
    carries the security headers. (A subclass, because uvicorn has no setting for either;
    its own limit_concurrency answers a bare 503, and counts no addresses.)"""

    _deadline: asyncio.TimerHandle | None = None
    _counted: str | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        # An answer goes out as its head and its body: with Nagle's algorithm on, the body
        # waited for the client's delayed ACK, 40 ms an answer (48 ms a request measured,
        # 3-5 ms without).
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        address = self.client[0] if self.client else "?"
        counts = _address_counts(self.server_state)
        if len(self.server_state.connections) > MAX_CONNECTIONS or (
                address not in PROXY_ADDRESSES
                and counts.get(address, 0) >= MAX_CONNECTIONS_PER_ADDRESS):
            self._refuse_busy()
            return
        counts[address] = counts.get(address, 0) + 1
        self._counted = address
        self._arm()

    def _refuse_busy(self) -> None:
        body = encode({"error": "the hub serves as many connections as it can (from this "
                                "address too): try again"}).encode()
        head = [b"HTTP/1.1 503 Service Unavailable", b"content-type: application/json",
                b"connection: close", b"content-length: " + str(len(body)).encode()]
        head += [k.lower().encode() + b": " + v.encode() for k, v in SECURITY_HEADERS.items()]
        self.transport.write(b"\r\n".join(head) + b"\r\n\r\n" + body)
        self.transport.close()

    def data_received(self, data: bytes) -> None:
        if self._deadline is None and self.conn.their_state is h11.IDLE:
            self._arm()  # the next request on a kept-alive connection
        super().data_received(data)
        if self.conn.their_state in (h11.DONE, h11.MUST_CLOSE, h11.CLOSED, h11.ERROR):
            self._disarm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._counted is not None:
            counts = _address_counts(self.server_state)
            counts[self._counted] -= 1
            if counts[self._counted] <= 0:
                del counts[self._counted]
            self._counted = None
        super().connection_lost(exc)

    def send_400_response(self, msg: str) -> None:
        """A request h11 cannot parse (a negative Content-Length, a header too long): said
        as JSON with the security headers, like every other refusal."""
        body = encode({"error": "not an HTTP/1.1 request the hub can read: " + msg}).encode()
        headers = [(b"content-type", b"application/json"), (b"connection", b"close"),
                   (b"content-length", str(len(body)).encode())]
        headers += [(k.lower().encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]
        try:
            output = self.conn.send(h11.Response(status_code=400, headers=headers,
                                                 reason=b"Bad Request"))
            output += self.conn.send(h11.Data(data=body))
            output += self.conn.send(h11.EndOfMessage())
        except h11.LocalProtocolError:  # h11 is past the point of answering: just close
            output = b""
        self.transport.write(output)
        self.transport.close()

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(REQUEST_DEADLINE, self._expired)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expired(self) -> None:
        self._deadline = None
        if self.conn.their_state in (h11.IDLE, h11.SEND_BODY) and \
                not self.transport.is_closing():
            log.info("a request from %s was not received within %g s: connection closed",
                     self.client, REQUEST_DEADLINE)
            self.transport.close()


def _address_counts(state: Any) -> dict[str, int]:
    """Open connections per client address, kept with the server's own state (one per
    server: the event loop's thread alone touches it)."""
    counts: dict[str, int] | None = getattr(state, "per_address", None)
    if counts is None:
        counts = {}
        state.per_address = counts
    return counts


# ---------------------------------------------------------------------------- the server

class WebServer:
    """uvicorn on its own thread and event loop, in the hub's process."""

    def __init__(self, hub: Hub, host: str, port: int, cert: str | None,
                 key: str | None) -> None:
        import uvicorn

        self.app = create_app(hub)
        self.https = bool(cert)
        self.sock = socket.create_server((host, port), reuse_port=False)
        self.server_address = self.sock.getsockname()
        config = uvicorn.Config(
            Guard(self.app), http=DeadlineH11Protocol, ws="none", lifespan="off",
            timeout_keep_alive=int(KEEP_ALIVE), limit_concurrency=None,
            h11_max_incomplete_event_size=MAX_HEADER_BYTES, ssl_certfile=cert,
            ssl_keyfile=key, log_level="warning", access_log=False, server_header=False,
            date_header=False, timeout_graceful_shutdown=2)
        self.server = uvicorn.Server(config)  # off the main thread: it installs no signals
        self.thread = start_worker(lambda: self.server.run(sockets=[self.sock]), "hub-web")
        deadline = time.monotonic() + 10
        while not self.server.started and self.thread.is_alive() and \
                time.monotonic() < deadline:
            time.sleep(0.01)

    @property
    def streams(self) -> StreamRegistry:
        registry: StreamRegistry = self.app.state.streams
        return registry

    def shutdown(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.sock.close()


def serve(hub: Hub, host: str, port: int, *, cert: str | None = None,
          key: str | None = None) -> WebServer:
    """Start the dashboard's server; port 0 picks a free one."""
    return WebServer(hub, host, port, cert, key)


if __name__ == "__main__":  # python -m hub.web > docs/openapi.json
    import json
    import sys
    from typing import cast

    sys.stdout.write(json.dumps(document(create_app(cast("Hub", None))), indent=1,
                                ensure_ascii=False) + "\n")
