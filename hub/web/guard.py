"""Around the whole app (an ASGI middleware): security headers on every answer (errors too),
the body cap whatever Content-Length says, JSON bodies strictly parsed, and POSTs from
another site refused.

Every call that changes something is a POST with a JSON body: with the session cookie
``SameSite=Strict`` a page of another site can send neither, and a POST whose ``Origin`` is
another site (a login form elsewhere, say) is refused here. The pages load no third-party
code and the Content-Security-Policy allows only the hub's own files.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Awaitable, Callable
from typing import Any

from contract.wire import WireError, decode, encode
from hub.web.errors import Refused

MAX_BODY = 16 * 1024
HSTS = b"max-age=31536000"  # sent over HTTPS only (RFC 6797)
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; "
                               "frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    # same-origin, not no-referrer: with no-referrer a browser sends "Origin: null" on POSTs
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}

ASGIApp = Callable[[Any, Any, Any], Awaitable[None]]


class Guard:
    """See the module's docstring."""

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
