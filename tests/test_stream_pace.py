"""The dashboard's event stream on a busy room: what comes while a write is recent goes in the
next write, in order, nothing lost; a quiet stream's update goes at once; the end of a stream
that came among waiting updates still ends it, after them (issue 50)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from contract.wire import encode
from hub import auth

if TYPE_CHECKING:  # each test imports it: the web's stack only in the worker that runs them
    from hub.web import streams

FLOOR = auth.User("maria", "floor", "hash")


def _table(n: int) -> dict:
    return {"kind": "table", "table": {"name": f"t{n}", "hand": n}}


def _updates(written: bytes) -> list[bytes]:
    return [part for part in written.split(b"\n\n") if part]


async def _stream() -> tuple[streams.Viewer, object]:
    from hub.web import streams

    registry = streams.StreamRegistry()
    viewer = registry.open("session", FLOOR, asyncio.get_running_loop())
    stream = streams.events(viewer, {}, streams=registry, session_user=lambda s: FLOOR,
                            unsubscribe=lambda: None)
    await anext(stream)  # the snapshot
    return viewer, stream


def test_a_busy_room_is_written_a_few_times_a_second_every_update_in_order():
    from hub.web import streams

    async def run() -> tuple[list[bytes], float]:
        viewer, stream = await _stream()
        loop = asyncio.get_running_loop()
        try:
            viewer._put(_table(0))
            first = await anext(stream)

            async def room() -> None:  # 200 updates a second
                for n in range(1, 101):
                    viewer._put(_table(n))
                    await asyncio.sleep(0.005)

            began = loop.time()
            feeding = asyncio.ensure_future(room())
            writes = []
            while sum(len(_updates(w)) for w in writes) < 100:
                writes.append(await anext(stream))
            await feeding
            return [first, *writes], loop.time() - began
        finally:
            await stream.aclose()

    writes, seconds = asyncio.run(run())
    sent = [u for w in writes for u in _updates(w)]
    expected = [b"event: update\ndata: " + encode(_table(n)).encode() for n in range(101)]
    assert sent == expected  # each once, in order
    # Writes WRITE_EVERY apart at least, however long the updates took to come (a loaded
    # machine's 100 updates may take longer than half a second): a handful, not a hundred.
    assert len(writes) - 1 <= seconds / streams.WRITE_EVERY + 1, (len(writes), seconds)


def test_a_quiet_streams_update_is_written_without_waiting_for_company(monkeypatch):
    from hub.web import streams

    monkeypatch.setattr(streams, "WRITE_EVERY", 20.0)  # a pause this long would show

    async def run() -> bytes:
        viewer, stream = await _stream()
        try:
            viewer._put(_table(1))
            return await asyncio.wait_for(anext(stream), 10.0)
        finally:
            await stream.aclose()

    assert _updates(asyncio.run(run())) == [b"event: update\ndata: " + encode(_table(1)).encode()]


def test_a_stream_ended_among_waiting_updates_sends_them_and_ends():
    async def run() -> list[bytes]:
        viewer, stream = await _stream()
        viewer._put(_table(1))
        await anext(stream)
        for n in (2, 3):
            viewer._put(_table(n))
        viewer._put(None)  # the session ended, or the viewer was dropped
        viewer._put(_table(4))  # not read: the stream has ended

        async def rest() -> list[bytes]:
            return [w async for w in stream]

        return await asyncio.wait_for(rest(), 10.0)  # (it waited on: the end was lost)

    writes = asyncio.run(run())
    assert [u for w in writes for u in _updates(w)] == [
        b"event: update\ndata: " + encode(_table(n)).encode() for n in (2, 3)]


def test_a_role_changed_while_a_write_waits_sorts_what_that_write_carries(monkeypatch):
    """A floor user demoted to viewer while the stream holds updates back for its next write:
    the floor log lines in that write are sorted by the role as it is when the write goes
    (the line came while the stream still took the user for the floor's)."""
    from hub.web import streams

    monkeypatch.setattr(streams, "WRITE_EVERY", 0.5)
    viewer_role = auth.User("maria", "viewer", "hash")
    role = {"now": FLOOR}
    log_line = {"kind": "log", "line": {"action": "dealers/name", "user": "maria"}}

    async def run() -> list[bytes]:
        registry = streams.StreamRegistry()
        viewer = registry.open("session", FLOOR, asyncio.get_running_loop())
        stream = streams.events(viewer, {}, streams=registry,
                                session_user=lambda s: role["now"], unsubscribe=lambda: None)
        await anext(stream)  # the snapshot
        try:
            viewer._put(_table(1))
            written = [await anext(stream)]  # at once: the stream was quiet
            viewer._put(_table(2))  # the next write now waits up to WRITE_EVERY

            async def demote_then_log() -> None:
                await asyncio.sleep(0.05)  # the stream is waiting to write table 2
                role["now"] = viewer_role  # the users file changed
                viewer._put(log_line)  # offered while the stream still holds the floor role
                viewer._put(_table(3))

            demoting = asyncio.ensure_future(demote_then_log())
            while b'"t3"' not in b"".join(written):
                written.append(await asyncio.wait_for(anext(stream), 10.0))
            await demoting
            return written
        finally:
            await stream.aclose()

    sent = [u for w in asyncio.run(run()) for u in _updates(w)]
    assert sent == [b"event: update\ndata: " + encode(_table(n)).encode() for n in (1, 2, 3)]
