"""The floor's use cases of alerts: acknowledged (one, or a table's at once) and re-opened,
each kept in the database, logged and on every dashboard. A part of the floor's use cases
(hub/service.py), on its one worker thread; the alerts themselves are hub/alerts.py's."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from hub.floor_part import FloorPart
from hub.refused import StaffError

if TYPE_CHECKING:
    from hub.auth import User
    from hub.updates import AlertUpdate


class AlertCases(FloorPart):
    def acknowledge(self, user: User, alert_id: int) -> dict[str, Any]:
        return self._on_alert(user, alert_id, "acknowledge", self.floor.alert_desk.acknowledge,
                              f"no alert {alert_id}")

    def reopen(self, user: User, alert_id: int) -> dict[str, Any]:
        """An acknowledged alert open again, on every dashboard and in the database."""
        return self._on_alert(user, alert_id, "re-open", self.floor.alert_desk.reopen,
                              f"no alert {alert_id} (only recent ones can be re-opened)")

    def _on_alert(self, user: User, alert_id: int, action: str,
                  act: Callable[[int, str, int], list[AlertUpdate]],
                  missing: str) -> dict[str, Any]:
        """One alert acknowledged or re-opened: saved, logged, on every dashboard."""
        try:
            updates = act(alert_id, user.name, self.now_ms())
        except KeyError:
            raise StaffError(missing) from None
        alert = updates[0]["alert"]
        self.db.save_alert(alert)
        self.log(self.now_ms(), user.name, action,
                 {"alert": alert_id, "table": alert["table"], "kind": alert["kind"]})
        self.service.broadcast(updates)
        return dict(alert)

    def acknowledge_table(self, user: User, table: str,
                          shown: list[int] | None = None) -> list[int]:
        """The open alerts of a table that the dashboard showed (``shown``; None: every
        open one) acknowledged, and the older ones it counted as not shown; the ids."""
        self.service.heard(table)
        now = self.now_ms()
        updates, below = self.floor.alert_desk.acknowledge_table(table, user.name, now, shown)
        acked = [u["alert"]["id"] for u in updates if u["kind"] == "alert"]
        for update in updates:
            if update["kind"] == "alert":
                self.db.save_alert(update["alert"])
        closed = (self.db.acknowledge_open(table, user.name, now, below)
                  if below is not None else 0)
        self.log(now, user.name, "acknowledge all",
                 {"table": table, "alerts": len(acked) + closed})
        self.service.broadcast(updates)
        return acked

