"""What the dashboards are sent after their snapshot: one typed update a change, by its
``kind``. Each is the JSON the page reads as it is (hub/static/dashboard.js; the event stream
writes it with ``contract.wire.encode``): typed dictionaries, so that what the page receives
is the dictionary itself, key for key, and the code that makes or reads one is checked."""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict


class TableUpdate(TypedDict):
    """A table's line (hub/floor.py's TableView) and the hand-for-hand panel with it."""

    kind: Literal["table"]
    table: dict[str, Any]
    hand_for_hand: dict[str, Any]


class AlertUpdate(TypedDict):
    """An alert raised (``new``), acknowledged or re-opened (hub/alerts.py's Alert)."""

    kind: Literal["alert"]
    alert: dict[str, Any]
    new: NotRequired[bool]


class AlertHiddenUpdate(TypedDict):
    """An open alert past its table's cap: it leaves the view (still open, counted)."""

    kind: Literal["alert_hidden"]
    id: int


class BustoutUpdate(TypedDict):
    """A bust-out made or undone (hub/seating_desk.py's BustOut)."""

    kind: Literal["bustout"]
    bustout: dict[str, Any]


class RosterUpdate(TypedDict):
    """The roster's view (hub/roster.py)."""

    kind: Literal["roster"]
    roster: dict[str, Any]


class BalanceUpdate(TypedDict):
    """The balancing desk's panel (hub/balance_desk.py)."""

    kind: Literal["balance"]
    balance: dict[str, Any]


class ClockUpdate(TypedDict):
    """The venue clock as the broker holds it, and the hand-for-hand panel."""

    kind: Literal["clock"]
    clock: dict[str, Any] | None
    hand_for_hand: dict[str, Any]


class HubUpdate(TypedDict):
    """The hub's own link to the broker: ``ok`` or ``lost`` (``connecting`` at first)."""

    kind: Literal["hub"]
    broker: str
    since: int | None


class CommandUpdate(TypedDict):
    """A floor command sent, or its reply (hub/floor.py's CommandView)."""

    kind: Literal["command"]
    command: dict[str, Any]


class DealersUpdate(TypedDict):
    """The dealers' names by badge."""

    kind: Literal["dealers"]
    dealers: dict[str, str]


class PayoutsUpdate(TypedDict):
    """The prize money's figures (hub/payout_cases.py): sent when they change."""

    kind: Literal["payouts"]
    payouts: dict[str, Any]


class LogLine(TypedDict):
    ts: int
    user: str
    action: str
    detail: dict[str, Any]


class LogUpdate(TypedDict):
    """A floor log line (only staff who may read the log see it: hub/web/streams.py)."""

    kind: Literal["log"]
    line: LogLine


Update = (TableUpdate | AlertUpdate | AlertHiddenUpdate | BustoutUpdate | RosterUpdate
          | BalanceUpdate | ClockUpdate | HubUpdate | CommandUpdate | DealersUpdate
          | PayoutsUpdate | LogUpdate)
