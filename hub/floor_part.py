"""What each part of the floor's use cases shares (hub/service.py composes them): the floor
view, the storage, the time and the floor log, all the service's, on its one worker thread."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hub.floor import FloorView
    from hub.service import FloorService
    from hub.storage import Storage


class FloorPart:
    """A part of the floor's use cases, by concern; the service it belongs to does the rest
    (the dashboards' streams, the tables' commands, the seating kept and sent)."""

    def __init__(self, service: FloorService) -> None:
        self.service = service

    @property
    def floor(self) -> FloorView:
        return self.service.floor

    @property
    def db(self) -> Storage:
        return self.service.db

    def now_ms(self) -> int:
        return self.service.now_ms()

    def log(self, ts: int, user: str, action: str, detail: dict[str, Any]) -> None:
        """A line in the floor log (hub/floor_log.py)."""
        self.service.log_book.write(ts, user, action, detail)
