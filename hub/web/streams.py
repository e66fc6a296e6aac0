"""The dashboard's live updates as Server-Sent Events: a snapshot, then one event per change,
a busy stream's in a few writes a second (WRITE_EVERY).

The floor's worker offers each update to every stream (``Viewer.offer``, from its thread); the
update waits in a bounded queue on the server's loop. A viewer that falls STREAM_QUEUE behind
is dropped (its page reconnects and gets a fresh snapshot), never buffered for; a write that
waits SEND_TIMEOUT (a tablet asleep mid-stream) drops it too; streams are capped per
session, per account and in all, with room kept for the floor's staff.

A stream checks its session's user at each delivery, and every SESSION_CHECK when idle: it
ends with the session (a logout, its expiry, the user's password changed or the user taken
out), and carries only what the user's role now may see (``may_see``: a user demoted to
viewer gets no more floor log lines, even those already waiting for it, once the stream's
look at the users file, up to USERS_FILE_AGE old, has seen the change).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

from fastapi.responses import StreamingResponse

from contract.wire import encode
from hub.auth import User
from hub.updates import Update
from hub.web.errors import Refused

log = logging.getLogger("tablectl.web")

HEARTBEAT = 15.0  # seconds between keep-alive comments on an idle event stream
STREAM_QUEUE = 2000  # updates waiting for one viewer before it is dropped
SEND_TIMEOUT = 20.0  # seconds a write to a viewer may wait (its TCP window shut): then dropped
MAX_STREAMS_PER_SESSION = 4
MAX_STREAMS_PER_ACCOUNT = 8  # however many times one account logs in
MAX_STREAMS = 200
STAFF_STREAMS = 40  # of MAX_STREAMS, kept for the floor and supervisors: viewers never take them
SESSION_CHECK = 2.0  # seconds: an idle stream ends this soon after its session ended
# Seconds: a look at the users file this old does for a stream's check, so that many streams
# delivering many updates look at the file a few times a second at most (each request looks).
USERS_FILE_AGE = 0.5
# Seconds: a busy stream writes at most this often, what came meanwhile in one write. A room
# of 200 tables makes about 200 updates a second; a write each cost a tablet's page a network
# task each (a quarter of its main thread at 4x CPU throttling, `python -m
# tests.bench.dashboard`). A quiet stream's update goes at once.
WRITE_EVERY = 0.1
MAX_WRITE = 500  # updates in one write


def may_see(user: User, update: Update) -> bool:
    """Whether ``user``'s role may see ``update``: the floor log is the floor's (as
    /api/log)."""
    return update["kind"] != "log" or user.may("command")


class Viewer:
    """One event stream: updates offered from the floor's thread wait in a bounded queue on
    the server's loop; a viewer that falls STREAM_QUEUE behind is dropped."""

    def __init__(self, session: str, loop: asyncio.AbstractEventLoop, user: User) -> None:
        self.session = session
        self.user = user  # as the stream last checked it: what it may see
        self.loop = loop
        self.queue: asyncio.Queue[Update | None] = asyncio.Queue(STREAM_QUEUE)
        self.dropped = False
        self.on_drop: Callable[[], Any] = lambda: None

    @property
    def account(self) -> str:
        return self.user.name

    def offer(self, update: Update | None) -> None:
        """From any thread."""
        with contextlib.suppress(RuntimeError):  # a closed loop: the hub is stopping
            self.loop.call_soon_threadsafe(self._put, update)

    def _put(self, update: Update | None) -> None:
        if self.dropped or (update is not None and not may_see(self.user, update)):
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
    """The open streams. Touched on the server's event loop only (the stream's route and
    generator, a logout, a drop): no lock."""

    def __init__(self) -> None:
        self.viewers: list[Viewer] = []

    def open(self, session: str, user: User, loop: asyncio.AbstractEventLoop) -> Viewer:
        account, staff = user.name, user.may("command")
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
        viewer = Viewer(session, loop, user)
        self.viewers.append(viewer)
        return viewer

    def end_session(self, session: str) -> None:
        """Every stream of a session that ended (logged out) ends."""
        for viewer in [v for v in self.viewers if v.session == session]:
            viewer.offer(None)

    def close(self, viewer: Viewer) -> None:
        if viewer in self.viewers:
            self.viewers.remove(viewer)


async def events(viewer: Viewer, snapshot: dict[str, Any], *, streams: StreamRegistry,
                 session_user: Callable[[str], User | None],
                 unsubscribe: Callable[[], None]) -> AsyncIterator[bytes]:
    """A viewer's stream: the snapshot, then the updates its user's role may see (a few at a
    time when they wait), until the update None, its session ends or the client goes.
    ``session_user``: the session's user now (None: the session ended)."""
    try:
        yield b"retry: 1000\nevent: snapshot\ndata: " + encode(snapshot).encode() + b"\n\n"
        quiet = 0.0  # seconds since the last write
        loop = asyncio.get_running_loop()
        written_at = -WRITE_EVERY
        while True:
            try:
                update = await asyncio.wait_for(viewer.queue.get(), SESSION_CHECK)
                waited = False
            except TimeoutError:
                update, waited = None, True
            user = session_user(viewer.session)
            if user is None:
                return  # logged out, expired, a new password, the user taken out: it ends
            viewer.user = user  # its role now: what is offered to it next is sorted by it
            if waited:
                quiet += SESSION_CHECK
                if quiet >= HEARTBEAT:
                    quiet = 0.0
                    yield b": keep-alive\n\n"
                continue
            quiet = 0.0
            if update is None:
                return
            if (wait := written_at + WRITE_EVERY - loop.time()) > 0:
                await asyncio.sleep(wait)  # what comes meanwhile goes in the same write
            chunks = [update]
            ending = False
            while len(chunks) < MAX_WRITE and not viewer.queue.empty():  # what waits: one write
                more = viewer.queue.get_nowait()
                if more is None:
                    ending = True  # what came before it is still sent
                    break
                chunks.append(more)
            if wait > 0:  # the role may have changed while the write waited: looked at again
                user = session_user(viewer.session)
                if user is None:
                    return
                viewer.user = user
            # What waited was sorted by the role as it was then: sorted again by this one.
            shown = [c for c in chunks if may_see(user, c)]
            if shown:
                yield b"".join(b"event: update\ndata: " + encode(c).encode() + b"\n\n"
                               for c in shown)
                written_at = loop.time()
            if ending:
                return
    finally:
        unsubscribe()
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
