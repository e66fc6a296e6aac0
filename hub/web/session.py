"""Logging in and out (a form, the session cookie ``pkr_session``: HttpOnly, SameSite=Strict,
Secure over HTTPS) and who the session is (``/api/me``)."""

from __future__ import annotations

import asyncio
import time
import urllib.parse
from typing import Literal

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response
from pydantic import BaseModel

from hub.auth import ROLES, SESSION_SECONDS, LoginRefused
from hub.web.deps import COOKIE, Context, LoggedIn, Streams, session_of
from hub.web.errors import ERRORS

router = APIRouter()


class Me(BaseModel):
    user: str
    role: Literal["viewer", "floor", "supervisor", "broadcast"]
    may: list[str]
    venue: str
    locale: str | None = None  # the venue's, for dates and times (None: the browser's own)
    time_zone: str | None = None


@router.post("/login", include_in_schema=False)
async def login(request: Request, context: Context) -> Response:
    form = urllib.parse.parse_qs((await request.body()).decode("utf-8", "replace"))
    name = (form.get("user") or [""])[0]
    password = (form.get("password") or [""])[0]
    address = request.client.host if request.client else "?"
    try:  # scrypt takes a while: not on the server's loop
        token = await asyncio.to_thread(context.sessions.login, name, password,
                                        time.monotonic(), address)
    except LoginRefused as exc:
        where = "/login?" + urllib.parse.urlencode({"error": str(exc)})
        return RedirectResponse(where, 303)
    response = RedirectResponse("/", 303)
    response.set_cookie(COOKIE, token, max_age=SESSION_SECONDS, path="/", httponly=True,
                        samesite="strict", secure=request.url.scheme == "https")
    return response


@router.post("/logout", include_in_schema=False)
async def logout(request: Request, context: Context, streams: Streams) -> Response:
    token = session_of(request)
    context.sessions.logout(token)
    streams.end_session(token or "")  # its streams end with it
    response = RedirectResponse("/login", 303)
    response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict",
                           secure=request.url.scheme == "https")
    return response


@router.get("/api/me", response_model=Me, responses=ERRORS, tags=["staff"])
def me(user: LoggedIn, context: Context) -> Me:
    settings = context.settings
    return Me(user=user.name, role=user.role,  # type: ignore[arg-type]
              may=sorted(ROLES[user.role]), venue=settings.venue,
              locale=settings.locale, time_zone=settings.time_zone)
