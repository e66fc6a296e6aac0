"""The dashboard's pages and their files (``hub/static/``): the login page, the dashboard and
the printable results (for a staff session), the room clock's TV page (no login: it asks
/api/tv with its key), the broadcast overlay for OBS Studio (no login: it reads
/api/overlay/stream with its link's key), the broadcast operator's desk (a broadcast
session: its page asks /api/broadcast...); the players' screen and the seat cards are
hub/web/players.py's."""

from __future__ import annotations

import time
from importlib import resources

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response

from hub.web.deps import Context, session_of
from hub.web.errors import Refused

STATIC = {"dashboard.js": "text/javascript", "dashboard.css": "text/css",
          "dashboard.html": "text/html", "login.html": "text/html",
          "tv.html": "text/html", "tv.js": "text/javascript", "tv.css": "text/css",
          "players.html": "text/html", "players.js": "text/javascript",
          "players.css": "text/css", "seat-cards.html": "text/html",
          "seat-cards.js": "text/javascript", "seat-cards.css": "text/css",
          "players-desk.js": "text/javascript",
          "payouts.js": "text/javascript", "chips.js": "text/javascript",
          "results.html": "text/html",
          "results.js": "text/javascript",
          "overlay.html": "text/html", "overlay.js": "text/javascript",
          "overlay.css": "text/css",
          "broadcast.html": "text/html", "broadcast.js": "text/javascript",
          "broadcast.css": "text/css",
          "chart.umd.min.js": "text/javascript"}  # vendored: hub/static/VENDORED.md

router = APIRouter(include_in_schema=False)


def _static(name: str) -> bytes:
    return resources.files("hub").joinpath("static", name).read_bytes()


def page(name: str) -> Response:
    return Response(_static(name), media_type="text/html; charset=utf-8")


@router.get("/login")
def loginpage() -> Response:
    return page("login.html")


@router.get("/static/{name}")
def static(name: str) -> Response:
    if name not in STATIC:
        raise Refused(404, f"nothing at /static/{name}")
    return Response(_static(name), media_type=STATIC[name] + "; charset=utf-8")


@router.get("/")
def dashboard(request: Request, context: Context) -> Response:
    user = context.sessions.user(session_of(request), time.monotonic())
    if user is None:
        return RedirectResponse("/login", 303)
    if not user.may("see"):  # a production's login: the feed is all it may read
        return RedirectResponse("/broadcast", 303)
    return page("dashboard.html")


@router.get("/results")
def results_page(request: Request, context: Context) -> Response:
    # The printable results: a staff session's, as the dashboard (the page asks the API).
    if context.sessions.user(session_of(request), time.monotonic()) is None:
        return RedirectResponse("/login", 303)
    return page("results.html")


@router.get("/broadcast")
def broadcast_desk(request: Request, context: Context) -> Response:
    # The broadcast operator's desk: a broadcast session's (the page holds no data: it asks
    # /api/broadcast..., which no other role reaches); a floor login is sent to its own
    # dashboard.
    user = context.sessions.user(session_of(request), time.monotonic())
    if user is None:
        return RedirectResponse("/login", 303)
    if not user.may("broadcast"):
        return RedirectResponse("/", 303)
    return page("broadcast.html")


@router.get("/tv")
def tvpage() -> Response:
    # The room's TV: no login, the page asks /api/tv with the link's key.
    return page("tv.html")


@router.get("/overlay")
def overlaypage() -> Response:
    # OBS Studio's browser source: no login, the page reads /api/overlay/stream with the
    # overlay link's key (a broadcast login's).
    return page("overlay.html")
