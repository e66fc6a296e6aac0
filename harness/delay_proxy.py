"""A TCP proxy that holds every chunk for a delay set from outside: a table's Wi-Fi with
latency spikes, on a kernel without ``netem``. Run it in the table's host, between its daemon
and the broker; the harness sends the delay in seconds ("0.4", "0") as a datagram to the
control socket. Order is kept: a chunk never overtakes the one before it, so when a spike ends
the queue drains in order as a real link's does.

    python -m harness.delay_proxy --listen 127.0.0.1:1883 --to 10.77.0.1:1883 \\
        --control /tmp/t2-delay.sock
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import math
import socket
import sys
from pathlib import Path

CHUNK = 65536


class DelayProxy:
    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.delay = 0.0

    def set_delay(self, text: bytes) -> None:
        try:
            delay = float(text.decode("ascii"))
        except (UnicodeDecodeError, ValueError):
            return  # not a number: the harness's mistake, the link goes on as it was
        if math.isfinite(delay) and 0.0 <= delay <= 60.0:
            self.delay = delay

    async def connection(self, reader: asyncio.StreamReader,
                         writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.close()  # the broker is unreachable: the daemon sees a refused connection
            return
        pumps = [asyncio.create_task(self._pump(reader, up_writer)),
                 asyncio.create_task(self._pump(up_reader, writer))]
        await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
        for task in pumps:
            task.cancel()
        for end in (writer, up_writer):
            end.close()

    async def _pump(self, source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        loop = asyncio.get_running_loop()
        held: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

        async def send() -> None:
            while True:
                due, data = await held.get()
                if (wait := due - loop.time()) > 0:
                    await asyncio.sleep(wait)
                if not data:
                    return  # the other end closed: so does this one, after what came before
                try:
                    sink.write(data)
                    await sink.drain()
                except OSError:
                    return  # the far end is gone (a broker killed): the connection ends

        sender = asyncio.create_task(send())
        try:
            while True:
                data = await source.read(CHUNK)
                held.put_nowait((loop.time() + self.delay, data))
                if not data:
                    break
            await sender
        except OSError:
            pass  # this end is gone: the connection ends
        finally:
            sender.cancel()


class _Control(asyncio.DatagramProtocol):
    def __init__(self, proxy: DelayProxy) -> None:
        self.proxy = proxy

    def datagram_received(self, data: bytes, addr: object) -> None:
        self.proxy.set_delay(data)


async def serve(listen: tuple[str, int], target: tuple[str, int], control: Path) -> None:
    proxy = DelayProxy(target)
    loop = asyncio.get_running_loop()
    with contextlib.suppress(FileNotFoundError):
        control.unlink()
    await loop.create_datagram_endpoint(lambda: _Control(proxy), local_addr=str(control),
                                        family=socket.AF_UNIX)
    server = await asyncio.start_server(proxy.connection, *listen)
    print(f"delay proxy on {listen[0]}:{listen[1]} to {target[0]}:{target[1]}", flush=True)
    async with server:
        await server.serve_forever()


def _address(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r}: HOST:PORT")
    return host, int(port)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--listen", type=_address, required=True, metavar="HOST:PORT")
    parser.add_argument("--to", type=_address, required=True, metavar="HOST:PORT")
    parser.add_argument("--control", type=Path, required=True,
                        help="a datagram socket: send the delay in seconds to it")
    args = parser.parse_args(argv)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(args.listen, args.to, args.control))
    return 0


if __name__ == "__main__":
    sys.exit(main())
