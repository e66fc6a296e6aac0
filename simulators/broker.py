"""A private Mosquitto: its own config, a free port on loopback, killed by its PID.

Used by `tablectl sim` (a broker for the simulated venue), the benchmarks `tablectl bench`
runs and the tests: installed for the first two. The lab's broker on a host of a simulated
network is the harness's (``HostBroker``, in harness/net_venue.py)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Self


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def mosquitto_binary() -> str:
    found = shutil.which("mosquitto") or shutil.which("mosquitto", path="/usr/sbin:/usr/bin")
    if found is None:
        raise RuntimeError("mosquitto is not installed (apt-get install mosquitto; `make test` "
                           "and `make demo` install it)")
    return found


class Broker:
    def __init__(self, directory: Path, *, port: int | None = None, config: str | None = None,
                 name: str = "broker") -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.port = port or free_port()
        self.name = name
        self.config_text = config
        self.process: subprocess.Popen[bytes] | None = None
        self.log = self.directory / f"{name}.log"

    def listeners(self) -> str:
        return f"listener {self.port} 127.0.0.1\n"

    def command(self, conf: Path) -> list[str]:
        return [mosquitto_binary(), "-c", str(conf)]

    def probe(self) -> None:
        """Connect once and leave (OSError while it does not listen yet)."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
            pass

    def config(self) -> str:
        if self.config_text is not None:
            return self.config_text.replace("{port}", str(self.port))
        # As root, mosquitto becomes the user mosquitto, who may not open the log or the
        # socket in a test's private folder: a test's broker stays its starter's.
        user = "user root\n" if os.geteuid() == 0 else ""
        return (f"{self.listeners()}{user}"
                "allow_anonymous true\n"
                "persistence false\n"
                "max_queued_messages 200000\n"
                "max_inflight_messages 100\n"
                f"log_dest file {self.log}\n"
                "log_type error\nlog_type warning\nlog_type notice\n")

    def start(self) -> Self:
        conf = self.directory / f"{self.name}.conf"
        conf.write_text(self.config())
        self.process = subprocess.Popen(self.command(conf), stdout=subprocess.DEVNULL,
                                        stderr=subprocess.PIPE)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"mosquitto exited: {self.process.stderr.read().decode()}"
                                   if self.process.stderr else "mosquitto exited")
            try:
                self.probe()
                return self
            except OSError:
                time.sleep(0.02)
        raise RuntimeError(f"mosquitto did not listen on {self.port}")

    def kill(self) -> None:
        """SIGKILL, by PID: the broker vanishes with whatever it held in memory."""
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()
