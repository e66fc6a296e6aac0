"""``tablectl hub``: the venue hub, what a poker room runs once next to Mosquitto, built from
its settings (hub/settings.py). The composition root of the hub's parts:

    recorder      private events -> storage, acks, replay requests (hub/recorder.py)
    floor         public topics -> the floor's worker (hub/floor_worker.py) -> the floor's
                  use cases (hub/service.py): the floor view, the venue clock, the floor's
                  storage, the dashboards' streams, all on that worker's one thread
    dashboard     pages, API and streams (hub/web/), each use case through the floor's
                  worker; read-only reports on their own connections (hub/reports.py)

Each part has its own MQTT identity: the recorder reads ``private``; the floor's client (role
``hub`` in the ACL) reads only public topics and writes commands and the venue clock, so what
the dashboard shows cannot contain hole cards.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

from controller.clock import Structure
from hub.auth import Sessions, UsersFile
from hub.floor import FloorView
from hub.floor_worker import FloorWorker, Recorded, TableNews
from hub.recorder import Recorder
from hub.reports import Reports
from hub.service import FloorService
from hub.settings import HubSettings
from hub.storage import open_storage
from tablectl.secret_files import loose_secret

if TYPE_CHECKING:
    from hub.web.server import WebServer

__all__ = ["ClockControl", "Hub", "HubSettings", "users_file_mode"]

CALL_TIMEOUT = 10.0  # seconds another thread waits for the floor's worker
P = ParamSpec("P")
T = TypeVar("T")


def users_file_mode(path: Path) -> str | None:
    """What is wrong with the users file's mode (others may read or change it), or None: at
    the start and at every change of the file while the hub runs (hub.auth.UsersFile)."""
    return loose_secret(path, "the staff's password hashes")


class Hub:
    """The hub's parts, built (a bad profile or users file is refused here, saying which
    key), then started and stopped together."""

    def __init__(self, settings: HubSettings, *, wall: Callable[[], float] = time.time) -> None:
        self.settings = settings
        self.worker = FloorWorker(settings, wall=wall)
        self.service = FloorService(settings, self.worker, wall=wall)
        self.worker.feed(self.service)
        self.sessions = Sessions(UsersFile(settings.users, loose=users_file_mode))
        self.reports = Reports(settings.db, wall=wall)
        self.recorder = Recorder(settings.db, venue=settings.venue, host=settings.host,
                                 port=settings.port, tls=settings.recorder_tls or settings.tls,
                                 client_id=f"recorder-{settings.venue}",
                                 reorder_timeout=settings.reorder_timeout,
                                 on_stored=lambda table, rows: self.worker.put(
                                     Recorded(table, rows)),
                                 on_news=lambda table, kind, text: self.worker.put(
                                     TableNews(table, kind, text)), wall=wall)
        self.web: WebServer | None = None
        self._stopping = False

    def start(self) -> Hub:
        # The schema (and its migrations) first, in this thread: the recorder and the floor
        # then open a migrated database.
        open_storage(self.settings.db).close()
        self.recorder.start()
        self.worker.start()  # the floor is as it was left (setup) before paho delivers anything
        # The web's stack (FastAPI, Starlette, pydantic, uvicorn: most of a second of imports)
        # when the dashboard starts, not with this module: the tests import it to build hubs,
        # and each of the suite's workers imports every test module before running any.
        from hub.web.app import create_app
        from hub.web.deps import WebContext
        from hub.web.server import WebServer

        context = WebContext(self.worker, self.reports, self.sessions, self.settings)
        self.web = WebServer(create_app(context), self.settings.http_host,
                             self.settings.http_port, cert=self.settings.web_cert,
                             key=self.settings.web_key)
        return self

    def stop(self, timeout: float = 5.0) -> None:
        if self._stopping:
            return  # stopped already
        self._stopping = True
        with contextlib.suppress(TimeoutError):  # the streams end first: the server then
            self.worker.submit(FloorService.end_streams).result(2)  # stops at once
        if self.web is not None:
            self.web.shutdown()
        self.worker.stop(timeout)  # says offline, closes the floor's storage
        self.recorder.stop()

    def call(self, use_case: Callable[Concatenate[FloorService, P], T], /,
             *args: P.args, **kwargs: P.kwargs) -> T:
        """A use case of the floor run on its worker (from this thread), its result."""
        return self.worker.submit(use_case, *args, **kwargs).result(CALL_TIMEOUT)

    def unhealthy(self, timeout: float = 5.0) -> str | None:
        """Why the hub cannot do its work now (None: it can): for the systemd watchdog."""
        for name, worker in (("floor", self.worker.thread), ("recorder", self.recorder.thread)):
            if worker is None or not worker.is_alive():
                return f"the {name} worker is not running"
        if time.monotonic() - self.recorder.last_turn > timeout:
            return f"the recorder has not turned for {timeout:g} s"
        answered = self.worker.submit(lambda service: None)
        try:
            answered.result(timeout)
        except TimeoutError:
            answered.cancel()
            return f"the floor did not answer within {timeout:g} s"
        return None

    @property
    def url(self) -> str:
        assert self.web is not None, "started"
        return self.web.url

    @property
    def clock(self) -> ClockControl:
        return ClockControl(self)

    # What tests and benchmarks look at (read from their thread, as a dashboard would not).
    @property
    def floor(self) -> FloorView:
        return self.service.floor

    @property
    def connected(self) -> threading.Event:
        """Set while the floor's connection to the broker is up."""
        return self.worker.connected

    @property
    def tv_key(self) -> str:
        return self.service.clock_cases.tv_key


class ClockControl:
    """The venue clock from a thread other than the floor's (``tablectl hub --start``, a
    simulator, a test), through the floor's worker."""

    def __init__(self, hub: Hub) -> None:
        self._hub = hub

    @property
    def connected(self) -> threading.Event:
        """The floor's connection, which the venue clock is published on."""
        return self._hub.worker.connected

    def apply(self, action: str, value: Any = None) -> dict[str, Any]:
        """A clock action (not in the floor log); ClockError says what is wrong."""
        return self._hub.call(FloorService.set_clock, action, value)

    def reading(self) -> tuple[Structure | None, float, bool]:
        return self._hub.call(FloorService.clock_reading)

    @property
    def known(self) -> bool:
        """Whether the venue has a clock (one was started, or resumed at the start)."""
        return self._hub.call(lambda service: service.clock.known)
