"""Statistics over a period (hands per hour per table and dealer, irregularities, hand
durations) and the period's hands as CSV: read-only reports (hub/reports.py), each on a
storage connection of its own, off the floor's worker."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import Response, StreamingResponse
from pydantic import BaseModel, Field

from hub.web.deps import PERIOD_FROM, PERIOD_TO, Context, Seeing
from hub.web.errors import ERRORS

router = APIRouter(responses=ERRORS, tags=["floor"])


class Rate(BaseModel):
    hands: int
    hours: float
    hands_per_hour: float | None


class TableRate(Rate):
    table: str


class DealerRate(Rate):
    dealer: str


class Stats(BaseModel):
    from_: int = Field(alias="from")
    to: int
    hands: int
    tables: list[TableRate]
    dealers: list[DealerRate]
    irregularities: dict[str, Any]  # kinds, by_table [{table, kind, count}], by_dealer
    durations: dict[str, Any]  # bins [{from, to, hands}] (seconds), median, p90


@router.get("/api/stats", response_model=Stats,
            summary="hands per hour per table and dealer, irregularities by kind, hand "
                    "durations, over a period (the last 12 hours by default)")
def stats(user: Seeing, context: Context, start: PERIOD_FROM = None,
          to: PERIOD_TO = None) -> dict[str, Any]:
    return context.reports.statistics(start, to)


@router.get("/api/stats/hands.csv", responses={200: {"content": {"text/csv": {}},
                                                     "description": "one row a hand"}},
            response_class=Response,
            summary="the hands of a period as CSV (table, hand, dealer, start, seconds, "
                    "outcome, irregularities)")
def stats_csv(user: Seeing, context: Context, start: PERIOD_FROM = None,
              to: PERIOD_TO = None) -> Response:
    pieces = context.reports.hands_csv_stream(start, to)  # the period checked at once
    return StreamingResponse(pieces, media_type="text/csv; charset=utf-8", headers={
        "Content-Disposition": f'attachment; filename="hands-{context.settings.venue}.csv"'})
