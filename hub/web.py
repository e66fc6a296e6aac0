"""The floor dashboard's web side: pages, a JSON API and a Server-Sent Events stream, on the
standard library's threading HTTP server (a venue has a handful of tablets, not thousands).

Every page and call but the login needs a staff session; each call checks the role's
permission (hub/auth.py). Calls that change something are POSTs with a JSON body: with the
session cookie ``SameSite=Strict`` a page of another site can send neither, and a POST whose
``Origin`` is another site (a login form elsewhere, say) is refused. The pages load
no third-party code and the Content-Security-Policy allows only the hub's own files.
"""

from __future__ import annotations

import queue
import re
import ssl
import threading
import time
import urllib.parse
from http import HTTPStatus
from http.cookies import SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import TYPE_CHECKING, Any

from controller.wire import WireError, decode, encode
from hardware.supervise import start_worker
from hub.auth import ROLES, SESSION_SECONDS

if TYPE_CHECKING:
    from hub.auth import User
    from hub.service import Hub

COOKIE = "pkr_session"
HEARTBEAT = 15.0  # seconds between keep-alive comments on an idle event stream
MAX_BODY = 16 * 1024
STATIC = {"dashboard.js": "text/javascript", "dashboard.css": "text/css",
          "dashboard.html": "text/html", "login.html": "text/html"}
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; "
                               "frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    # same-origin, not no-referrer: with no-referrer a browser sends "Origin: null" on POSTs
    "Referrer-Policy": "same-origin",
}


def _static(name: str) -> bytes:
    return resources.files("hub").joinpath("static", name).read_bytes()


class _Refused(Exception):
    def __init__(self, status: HTTPStatus, message: str) -> None:
        self.status, self.message = status, message
        super().__init__(message)


class FloorHandler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the hub's own log says what staff did; request lines would drown it

    # ------------------------------------------------------------------ plumbing
    @property
    def hub(self) -> Hub:
        return self.server.hub

    def _token(self) -> str | None:
        cookie = SimpleCookie(self.headers.get("Cookie", ""))
        return cookie[COOKIE].value if COOKIE in cookie else None

    def _user(self) -> User | None:
        return self.hub.sessions.user(self._token(), time.monotonic())

    def _require(self, permission: str) -> User:
        user = self._user()
        if user is None:
            raise _Refused(HTTPStatus.UNAUTHORIZED, "log in first")
        if not user.may(permission):
            raise _Refused(HTTPStatus.FORBIDDEN,
                           f"the role {user.role} may not {permission}")
        return user

    def _send(self, status: HTTPStatus, body: bytes, content_type: str,
              headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        for key, value in {**SECURITY_HEADERS, **(headers or {})}.items():
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, value: Any, status: HTTPStatus = HTTPStatus.OK) -> None:
        self._send(status, encode(value).encode(), "application/json")

    def _redirect(self, where: str, headers: dict[str, str] | None = None) -> None:
        self._send(HTTPStatus.SEE_OTHER, b"", "text/plain", {"Location": where,
                                                            **(headers or {})})

    def _body(self) -> bytes:
        text = self.headers.get("Content-Length") or "0"
        if not (text.isascii() and text.isdigit()):
            raise _Refused(HTTPStatus.BAD_REQUEST, f"Content-Length {text[:20]!r} is not a "
                                                   "length")
        length = int(text)
        if length > MAX_BODY:
            raise _Refused(HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                           f"a request body is at most {MAX_BODY} bytes")
        return self.rfile.read(length)

    def _json_body(self) -> Any:
        if not self.headers.get("Content-Type", "").startswith("application/json"):
            raise _Refused(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "send JSON (application/json)")
        try:
            return decode(self._body() or b"{}", max_bytes=MAX_BODY)
        except WireError as exc:
            raise _Refused(HTTPStatus.BAD_REQUEST, f"not JSON: {exc}") from None

    def _cookie(self, token: str, max_age: int) -> dict[str, str]:
        secure = "; Secure" if self.server.https else ""
        return {"Set-Cookie": f"{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict; "
                              f"Max-Age={max_age}{secure}"}

    def _guarded(self, action: Any) -> None:
        from hub.service import StaffError

        try:
            action()
        except _Refused as exc:
            # A refused request's body may be unread: this connection cannot carry another.
            self.close_connection = True
            self._json({"error": exc.message}, exc.status)
        except StaffError as exc:
            self._json({"error": str(exc)}, HTTPStatus.BAD_REQUEST)
        except (BrokenPipeError, ConnectionResetError):
            pass

    # ------------------------------------------------------------------ GET
    def do_GET(self) -> None:
        self._guarded(self._get)

    def _get(self) -> None:
        url = urllib.parse.urlsplit(self.path)
        path, query = url.path, urllib.parse.parse_qs(url.query)
        if path == "/login":
            self._send(HTTPStatus.OK, _static("login.html"), "text/html; charset=utf-8")
        elif path.startswith("/static/") and path[8:] in STATIC:
            self._send(HTTPStatus.OK, _static(path[8:]), STATIC[path[8:]] + "; charset=utf-8")
        elif path == "/":
            if self._user() is None:
                self._redirect("/login")
            else:
                self._send(HTTPStatus.OK, _static("dashboard.html"),
                           "text/html; charset=utf-8")
        elif path == "/api/me":
            user = self._require("see")
            self._json({"user": user.name, "role": user.role,
                        "may": sorted(ROLES[user.role]),
                        "venue": self.hub.venue})
        elif path == "/api/state":
            self._require("see")
            self._json(self.hub.snapshot())
        elif path == "/api/stream":
            self._require("see")
            self._stream()
        elif (match := re.fullmatch(r"/api/tables/([^/]+)/hands", path)):
            user = self._require("see")
            text = (query.get("n") or ["20"])[0]
            if not (text.isascii() and text.isdigit() and len(text) < 6):
                raise _Refused(HTTPStatus.BAD_REQUEST, f"n={text!r}: a number of hands")
            hands = int(text)
            self._json({"table": match[1], "private": user.may("private"),
                        "hands": self.hub.hand_history(user, match[1], hands)})
        elif path == "/api/log":
            self._require("command")
            self._json(self.hub.floor_log())
        else:
            raise _Refused(HTTPStatus.NOT_FOUND, f"nothing at {path}")

    def _stream(self) -> None:
        """Server-Sent Events: a ``snapshot``, then one ``update`` per change."""
        snapshot, stream = self.hub.subscribe()
        try:
            self.send_response(HTTPStatus.OK)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Accel-Buffering", "no")
            for key, value in SECURITY_HEADERS.items():
                self.send_header(key, value)
            self.end_headers()
            self.close_connection = True
            self.wfile.write(b"retry: 1000\nevent: snapshot\ndata: " +
                             encode(snapshot).encode() + b"\n\n")
            self.wfile.flush()
            while not self.server.stopping.is_set():
                try:
                    update = stream.get(timeout=HEARTBEAT)
                except queue.Empty:
                    self.wfile.write(b": keep-alive\n\n")
                    self.wfile.flush()
                    continue
                if update is None:
                    break
                chunks = [update]
                while len(chunks) < 200:  # what waits goes out in one write
                    try:
                        more = stream.get_nowait()
                    except queue.Empty:
                        break
                    if more is None:
                        break
                    chunks.append(more)
                self.wfile.write(b"".join(b"event: update\ndata: " + encode(c).encode() +
                                          b"\n\n" for c in chunks))
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
            pass
        finally:
            self.hub.unsubscribe(stream)

    # ------------------------------------------------------------------ POST
    def do_POST(self) -> None:
        self._guarded(self._post)

    def _post(self) -> None:
        path = urllib.parse.urlsplit(self.path).path
        # A browser names the page a POST comes from: another site's page may not log anyone
        # in or out, nor act (the cookie's SameSite=Strict covers the rest).
        origin = self.headers.get("Origin")
        if origin and urllib.parse.urlsplit(origin).netloc != self.headers.get("Host"):
            raise _Refused(HTTPStatus.FORBIDDEN, f"a request from {origin} is refused: use "
                                                 "the dashboard's own pages")
        if path == "/login":
            form = urllib.parse.parse_qs(self._body().decode("utf-8", "replace"))
            name = (form.get("user") or [""])[0]
            password = (form.get("password") or [""])[0]
            try:
                token = self.hub.sessions.login(name, password, time.monotonic())
            except ValueError as exc:
                where = "/login?" + urllib.parse.urlencode({"error": str(exc)})
                self._redirect(where)
                return
            self._redirect("/", self._cookie(token, SESSION_SECONDS))
            return
        if path == "/logout":
            self.hub.sessions.logout(self._token())
            self._redirect("/login", self._cookie("", 0))
            return
        if (match := re.fullmatch(r"/api/alerts/(\d+)/ack", path)):
            user = self._require("acknowledge")
            self._json_body()
            self._json(self.hub.acknowledge(user, int(match[1])))
        elif path == "/api/clock":
            user = self._require("clock")
            body = self._json_body()
            if not isinstance(body, dict) or not isinstance(body.get("action"), str):
                raise _Refused(HTTPStatus.BAD_REQUEST, "a clock command has an action")
            self._json(self.hub.clock_command(user, body["action"], body.get("value")))
        elif path == "/api/hand-for-hand/release":
            user = self._require("clock")
            self._json_body()
            self._json({"released": self.hub.release_hand(user)})
        elif (match := re.fullmatch(r"/api/tables/([^/]+)/cmd/([a-z-]+)", path)):
            user = self._require("command")
            self._json(self.hub.table_command(user, urllib.parse.unquote(match[1]), match[2],
                                              self._json_body()))
        else:
            raise _Refused(HTTPStatus.NOT_FOUND, f"nothing at {path}")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    hub: Hub
    https = False
    stopping: threading.Event

    def shutdown(self) -> None:
        self.stopping.set()
        super().shutdown()


def serve(hub: Hub, host: str, port: int, *, cert: str | None = None,
          key: str | None = None) -> _Server:
    """Start the dashboard's server in a thread of its own; port 0 picks a free one."""
    server = _Server((host, port), FloorHandler)
    server.hub = hub
    server.stopping = threading.Event()
    if cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        server.https = True
    start_worker(server.serve_forever, "hub-web")
    return server
