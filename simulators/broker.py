"""A private Mosquitto: its own config, a free port on loopback, killed by its PID.

Used by `tablectl sim` (a broker for the simulated venue) and by the tests."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path


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
                 name: str = "broker", address: str = "127.0.0.1",
                 prefix: list[str] | None = None) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.port = port or free_port()
        self.name = name
        self.config_text = config
        # On a host of a simulated network (harness.netns): its address, and the command
        # that runs mosquitto there. A Unix socket beside is how this process reaches it then
        # (a socket's path is the same in every network namespace).
        self.address = address
        self.prefix = prefix or []
        self.socket = self.directory / f"{name}.sock" if prefix else None
        self.process: subprocess.Popen[bytes] | None = None
        self.log = self.directory / f"{name}.log"

    def config(self) -> str:
        if self.config_text is not None:
            return self.config_text.replace("{port}", str(self.port))
        local = f"listener 0 {self.socket}\n" if self.socket else ""
        # As root, mosquitto becomes the user mosquitto, who may not open the log or the
        # socket in a test's private folder: a test's broker stays its starter's.
        user = "user root\n" if os.geteuid() == 0 else ""
        return (f"listener {self.port} {self.address}\n{local}{user}"
                "allow_anonymous true\n"
                "persistence false\n"
                "max_queued_messages 200000\n"
                "max_inflight_messages 100\n"
                f"log_dest file {self.log}\n"
                "log_type error\nlog_type warning\nlog_type notice\n")

    def start(self) -> Broker:
        conf = self.directory / f"{self.name}.conf"
        conf.write_text(self.config())
        self.process = subprocess.Popen([*self.prefix, mosquitto_binary(), "-c", str(conf)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"mosquitto exited: {self.process.stderr.read().decode()}"
                                   if self.process.stderr else "mosquitto exited")
            try:
                if self.socket is not None:
                    with socket.socket(socket.AF_UNIX) as probe:
                        probe.settimeout(0.2)
                        probe.connect(str(self.socket))
                        return self
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
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
