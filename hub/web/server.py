"""The dashboard's server: uvicorn on its own thread and event loop, in the hub's process,
with the limits a venue's Wi-Fi needs (a deadline for receiving a whole request, connections
capped in all and per client address, an unreadable request answered as JSON)."""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from typing import Any

import h11
from fastapi import FastAPI
from uvicorn.protocols.http.h11_impl import H11Protocol

from contract.supervise import start_worker
from contract.wire import encode
from hub.web.guard import SECURITY_HEADERS, Guard
from hub.web.streams import StreamRegistry

log = logging.getLogger("tablectl.web")

REQUEST_DEADLINE = 10.0  # seconds to receive a whole request, headers and body
KEEP_ALIVE = 5.0  # seconds an idle connection is kept
MAX_CONNECTIONS = 256  # over this, 503
MAX_CONNECTIONS_PER_ADDRESS = 32  # one host's share: a tablet needs a few; a flood, not all
# Not capped per address: the reverse proxy uvicorn trusts (X-Forwarded-For from it only), from
# which, behind a proxy, every client comes; the proxy caps its clients (nginx: limit_conn).
PROXY_ADDRESSES = frozenset({"127.0.0.1"})
MAX_HEADER_BYTES = 16 * 1024


# A subclass of uvicorn's HTTP/1.1 protocol, because neither a setting of uvicorn 0.55 nor an
# ASGI middleware does these: timeout_keep_alive is cancelled by every byte received and armed
# only after an answer (a client trickling a request holds its connection for ever), and a
# middleware runs only once a request's head is whole; limit_concurrency counts requests, not
# client addresses, and answers a bare 503 past the app (no security headers); a request h11
# cannot parse gets uvicorn's plain-text 400. (TCP_NODELAY too: asyncio sets it only on a
# socket made with IPPROTO_TCP, and socket.create_server's is not.)
class DeadlineH11Protocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with a deadline for receiving a whole request (headers
    and body), and the connections capped in all (MAX_CONNECTIONS) and per client address
    (one host re-opening half-sent requests as they are cut kept a supervisor out), refused
    with a 503 that carries the security headers."""

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


# The uvicorn whose HTTP/1.1 protocol DeadlineH11Protocol subclasses (pyproject.toml bounds
# it): the subclass reads the protocol's own attributes, which uvicorn may change in any
# release. ``uvicorn_problems`` checks them at the hub's start and in make test.
UVICORN_WRITTEN_FOR = "0.55"
_PROTOCOL_METHODS = ("connection_made", "data_received", "connection_lost",
                     "send_400_response")
_PROTOCOL_ATTRIBUTES = ("conn", "server_state", "loop", "transport", "config")


def uvicorn_problems(protocol: type[Any] = H11Protocol) -> list[str]:
    """What of uvicorn's HTTP/1.1 protocol DeadlineH11Protocol relies on and this uvicorn
    does not give (empty: it gives all of it). A protocol is built as uvicorn builds one, and
    its attributes looked at."""
    from uvicorn.config import Config
    from uvicorn.server import ServerState

    problems = [f"{protocol.__name__}.{name} is gone" for name in _PROTOCOL_METHODS
                if not callable(getattr(protocol, name, None))]
    loop = asyncio.new_event_loop()
    try:
        built = protocol(Config(app=Guard), ServerState(), {}, _loop=loop)
    except TypeError as exc:
        problems.append(f"{protocol.__name__}(config, server_state, app_state, _loop) no "
                        f"longer builds: {exc}")
    else:
        problems += [f"{protocol.__name__} has no {name}" for name in _PROTOCOL_ATTRIBUTES
                     if not hasattr(built, name)]
        if not hasattr(getattr(built, "server_state", None), "connections"):
            problems.append("uvicorn's ServerState has no connections")
        if not isinstance(getattr(built, "conn", None), h11.Connection):
            problems.append(f"{protocol.__name__}.conn is not an h11 Connection")
    finally:
        loop.close()
    return problems


def _address_counts(state: Any) -> dict[str, int]:
    """Open connections per client address, kept with the server's own state (one per
    server: the event loop's thread alone touches it)."""
    counts: dict[str, int] | None = getattr(state, "per_address", None)
    if counts is None:
        counts = {}
        state.per_address = counts
    return counts


class WebServer:
    """uvicorn on its own thread and event loop, in the hub's process."""

    def __init__(self, app: FastAPI, host: str, port: int, *, cert: str | None = None,
                 key: str | None = None) -> None:
        """Listening at once (port 0 picks a free one: ``server_address`` says which)."""
        import uvicorn

        problems = uvicorn_problems()
        if problems:  # loudly, at the start: the deadlines and caps would fail unseen
            raise RuntimeError(
                f"hub/web/server.py's protocol was written for uvicorn {UVICORN_WRITTEN_FOR}, "
                f"and this uvicorn ({uvicorn.__version__}) differs: {'; '.join(problems)}. "
                f"Install uvicorn {UVICORN_WRITTEN_FOR}.x (pip install -e '.[hub]')")
        self.app = app
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

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"{'https' if self.https else 'http'}://{host}:{port}"
