"""A private PostgreSQL for the tests and the benchmarks: a temporary cluster started from
Debian's postgresql package (initdb and pg_ctl as the postgres user) on a free port, stopped
when done."""

from __future__ import annotations

import atexit
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import time
import uuid

from simulators.broker import free_port


def _connect(url: str) -> bool:
    try:
        import psycopg

        psycopg.connect(url, connect_timeout=3).close()
        return True
    except Exception:
        return False


class TemporaryCluster:
    """``durable=False``: a throwaway cluster for the tests, which nothing in it must outlive
    a crash of the machine: neither initdb nor the server waits for the disk (--no-sync, fsync
    and synchronous commits off), up in a second and a half rather than four here. The benches
    keep a durable one, so that what they measure is what a venue's server does."""

    def __init__(self, durable: bool = True) -> None:
        binaries = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
        if not binaries:
            raise RuntimeError("no PostgreSQL server: apt-get install postgresql")
        self.bin = os.path.dirname(binaries[-1])
        self.directory = tempfile.mkdtemp(prefix="tablectl-pg-")
        self.port = free_port()
        self.as_postgres = os.geteuid() == 0
        if self.as_postgres:
            user = pwd.getpwnam("postgres")
            os.chown(self.directory, user.pw_uid, user.pw_gid)
        quick = [] if durable else ["--no-sync"]
        self._run([f"{self.bin}/initdb", "-D", f"{self.directory}/data", "-A", "trust",
                   "-U", "postgres", *quick])
        settings = "" if durable else \
            " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        self._run([f"{self.bin}/pg_ctl", "-D", f"{self.directory}/data", "-w", "-l",
                   f"{self.directory}/log", "-o", f"-p {self.port} -k {self.directory} "
                   f"-c listen_addresses=127.0.0.1{settings}", "start"])
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, command: list[str]) -> None:
        if self.as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        subprocess.run(command, check=True, capture_output=True, timeout=120)

    def stop(self) -> None:
        self._run([f"{self.bin}/pg_ctl", "-D", f"{self.directory}/data", "-m", "immediate",
                   "stop"])
        shutil.rmtree(self.directory, ignore_errors=True)


_shared: TemporaryCluster | None = None


def shared_cluster(durable: bool = True) -> TemporaryCluster:
    """This process's own PostgreSQL, started at the first call (durable or not, as that call
    says) and stopped at its exit (the machine's own server, if it runs one, is never used:
    its state is not ours)."""
    global _shared
    if _shared is None:
        _shared = TemporaryCluster(durable)
        deadline = time.monotonic() + 30
        while not _connect(_shared.url) and time.monotonic() < deadline:
            time.sleep(0.2)
        atexit.register(_shared.stop)
    return _shared


class Database:
    """A database of its own in this process's PostgreSQL, dropped afterwards."""

    def __init__(self, durable: bool = True) -> None:
        import psycopg

        self.admin = shared_cluster(durable).url
        self.name = f"tablectl_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.admin, autocommit=True) as db:
            db.execute(f"CREATE DATABASE {self.name}")
        self.url = self.admin.rsplit("/", 1)[0] + f"/{self.name}"

    def drop(self) -> None:
        import psycopg

        with psycopg.connect(self.admin, autocommit=True) as db:
            db.execute(f"DROP DATABASE IF EXISTS {self.name} WITH (FORCE)")
