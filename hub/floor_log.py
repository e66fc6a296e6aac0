"""The floor log: each line written with what the floor changed (committed together) and
shown live on the dashboards of staff who may read it; the lines read back for the log's page.
A part of the floor's use cases (hub/service.py), on its one worker thread."""

from __future__ import annotations

from typing import Any

from hub.floor_part import FloorPart
from hub.updates import LogLine, LogUpdate


class FloorLog(FloorPart):
    def write(self, ts: int, user: str, action: str, detail: dict[str, Any]) -> None:
        """A line in the floor log (committed with what the caller wrote before it), shown
        live on the dashboards of staff who may read the log."""
        self.db.log(ts, user, action, detail)
        self.db.commit()
        self.show(ts, user, action, detail)

    def show(self, ts: int, user: str, action: str, detail: dict[str, Any]) -> None:
        """A floor log line the database holds, sent to the dashboards that may read it."""
        self.service.broadcast([LogUpdate(kind="log", line=LogLine(
            ts=ts, user=user, action=action, detail=detail))])

    def lines(self, limit: int = 100) -> list[dict[str, Any]]:
        lines = self.db.floor_log(limit)
        self.db.commit()  # ends the reading transaction (PostgreSQL keeps one open)
        return lines
