"""A member of staff for the tests and the venue benchmark: logs in to the hub and uses its JSON
API and event stream as the dashboard page does (the browser tests drive the page itself).
Installed for ``tablectl bench venue``, which follows the dashboard's stream with it."""

from __future__ import annotations

import http.client
import http.cookiejar
import json
import ssl
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

# A call's deadline: with none, a hub that never answers (a lost packet, a wedged worker) held
# the caller for ever (a bench's floor member went quiet a whole run); a hub on a busy machine
# answers well within it.
CALL_TIMEOUT = 60.0


class Staff:
    def __init__(self, url: str, user: str, password: str,
                 context: ssl.SSLContext | None = None) -> None:
        self.url = url
        self.context = context  # HTTPS: a context that trusts the venue's CA
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar),
                                                  urllib.request.HTTPSHandler(context=context))
        form = urllib.parse.urlencode({"user": user, "password": password}).encode()
        response = self.opener.open(url + "/login", data=form, timeout=CALL_TIMEOUT)
        if "error=" in response.url:
            raise PermissionError(urllib.parse.unquote_plus(response.url.split("error=")[1]))
        self.received: list[str] = []  # the raw text of every stream message
        self.updates: list[dict[str, Any]] = []
        self.stream_ended = threading.Event()  # the hub ended the stream, or it was closed
        self._stream: http.client.HTTPConnection | None = None

    def cookie(self) -> str:
        return "; ".join(f"{c.name}={c.value}" for c in self.jar)

    def get(self, path: str) -> tuple[int, Any]:
        return self._call(urllib.request.Request(self.url + path))

    def post(self, path: str, body: Any = None, content_type: str = "application/json"
             ) -> tuple[int, Any]:
        data = json.dumps(body if body is not None else {}).encode()
        request = urllib.request.Request(self.url + path, data=data, method="POST",
                                         headers={"Content-Type": content_type})
        return self._call(request)

    def _call(self, request: urllib.request.Request) -> tuple[int, Any]:
        try:
            with self.opener.open(request, timeout=CALL_TIMEOUT) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read() or b"null")

    def listen(self) -> Staff:
        """Follow the event stream in a thread: ``received`` and ``updates`` fill up."""
        host, port = urllib.parse.urlsplit(self.url).netloc.split(":")
        connection = (http.client.HTTPSConnection(host, int(port), timeout=60,
                                                  context=self.context)
                      if self.url.startswith("https:") else
                      http.client.HTTPConnection(host, int(port), timeout=60))
        connection.request("GET", "/api/stream", headers={"Cookie": self.cookie()})
        response = connection.getresponse()
        assert response.status == 200, response.status
        self._stream = connection
        ready = threading.Event()

        def read() -> None:
            kind = None
            try:
                for raw in response:
                    line = raw.decode().rstrip("\n")
                    if line.startswith("event: "):
                        kind = line[7:]
                    elif line.startswith("data: "):
                        self.received.append(line[6:])
                        if kind == "snapshot":
                            self.snapshot = json.loads(line[6:])
                            ready.set()
                        else:  # "at": when it arrived here (UTC ms), for delays
                            self.updates.append({**json.loads(line[6:]),
                                                 "at": time.time() * 1000})
            except (OSError, ValueError, AttributeError, http.client.HTTPException):
                pass  # the stream closed (by close(), or the hub stopping)
            finally:
                self.stream_ended.set()

        threading.Thread(target=read, daemon=True).start()
        assert ready.wait(10), "no snapshot on the event stream"
        return self

    def alerts(self, kind: str | None = None) -> list[dict[str, Any]]:
        latest: dict[int, dict[str, Any]] = {a["id"]: a for a in self.snapshot["alerts"]}
        for update in list(self.updates):
            if update["kind"] == "alert":
                latest[update["alert"]["id"]] = update["alert"]
        return [a for a in latest.values() if kind is None or a["kind"] == kind]

    def close(self) -> None:
        if self._stream is not None:
            # Shut the socket first: the reading thread holds the response's buffer while it
            # waits, and a plain close would wait for the next heartbeat.
            if self._stream.sock is not None:
                import contextlib
                import socket

                with contextlib.suppress(OSError):
                    self._stream.sock.shutdown(socket.SHUT_RDWR)
            self._stream.close()
