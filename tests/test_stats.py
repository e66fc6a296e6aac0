"""The floor's statistics (hub/stats.py) on a night whose figures are known."""

from __future__ import annotations

import csv
import io

from hub.stats import hands_csv, hands_csv_rows, hands_of, statistics
from tests.bench.stats_memory import T0 as NIGHT_T0
from tests.bench.stats_memory import store_night

MINUTE = 60_000
T0 = 1_790_000_000_000  # a night in 2026, UTC ms
assert NIGHT_T0 == T0  # the stored nights start then too


def _event(table, seq, type_, ts, hand=None, dealer=None, **data):
    return {"table": table, "seq": seq, "type": type_, "ts": ts, "hand": hand,
            "dealer": dealer, "data": data}


def known_night(t0=T0):
    """t1: Ann deals 3 hands of 2 minutes, one a minute apart (slots of 3 minutes), then Bob
    2 hands, the first after a 30-minute break; a misdeal and an exposed card. t2: Bob deals
    one hand of 10 minutes with a boxed card."""
    events, seq = [], 0

    def hand(table, number, dealer, start, minutes, outcome="complete", irregular=()):
        nonlocal seq
        seq += 1
        events.append(_event(table, seq, "hand.started", start, number, dealer))
        for kind in irregular:
            seq += 1
            events.append(_event(table, seq, "irregularity", start + MINUTE, number, dealer,
                                 kind=kind))
        seq += 1
        events.append(_event(table, seq, "hand.ended", start + minutes * MINUTE, number,
                             dealer, outcome=outcome))

    hand("t1", 1, "ann", t0, 2)
    hand("t1", 2, "ann", t0 + 3 * MINUTE, 2, "misdeal", ("exposed_two_cards",))
    hand("t1", 2, "ann", t0 + 6 * MINUTE, 2, irregular=("exposed_card",))
    hand("t1", 3, "bob", t0 + 38 * MINUTE, 2)  # after a 30-minute break
    hand("t1", 4, "bob", t0 + 41 * MINUTE, 2)
    hand("t2", 1, "bob", t0, 10, irregular=("boxed_card",))
    return events


def test_hands_per_hour_by_table_and_dealer_leave_breaks_out():
    figures = statistics(known_night(), T0, T0 + 60 * MINUTE)
    assert figures["hands"] == 6
    # t1: slots 3 + 3 + 2 (the break is not dealing time) + 3 + 2 = 13 minutes for 5 hands.
    assert figures["tables"] == [
        {"table": "t1", "hands": 5, "hours": round(13 / 60, 3), "hands_per_hour": 23.1},
        {"table": "t2", "hands": 1, "hours": round(10 / 60, 3), "hands_per_hour": 6.0}]
    # ann: 3 + 3 + 2 = 8 minutes for 3 hands; bob: 3 + 2 at t1 and 10 at t2 for 3 hands.
    assert figures["dealers"] == [
        {"dealer": "ann", "hands": 3, "hours": round(8 / 60, 3), "hands_per_hour": 22.5},
        {"dealer": "bob", "hands": 3, "hours": 0.25, "hands_per_hour": 12.0}]


def test_irregularities_by_kind_per_table_and_dealer_and_the_durations():
    figures = statistics(known_night(), T0, T0 + 60 * MINUTE)
    irregular = figures["irregularities"]
    assert irregular["kinds"] == ["boxed_card", "exposed_card", "exposed_two_cards"]
    assert irregular["by_table"] == [
        {"table": "t1", "kind": "exposed_card", "count": 1},
        {"table": "t1", "kind": "exposed_two_cards", "count": 1},
        {"table": "t2", "kind": "boxed_card", "count": 1}]
    assert irregular["by_dealer"] == [
        {"dealer": "ann", "kind": "exposed_card", "count": 1},
        {"dealer": "ann", "kind": "exposed_two_cards", "count": 1},
        {"dealer": "bob", "kind": "boxed_card", "count": 1}]
    bins = {(b["from"], b["to"]): b["hands"] for b in figures["durations"]["bins"]}
    assert bins[(120, 180)] == 5 and bins[(600, None)] == 1
    assert sum(bins.values()) == 6
    assert figures["durations"]["median"] == 120.0


def test_a_period_counts_the_hands_started_in_it():
    later = statistics(known_night(), T0 + 30 * MINUTE, T0 + 60 * MINUTE)
    assert later["hands"] == 2 and [t["table"] for t in later["tables"]] == ["t1"]
    assert later["irregularities"]["by_table"] == []


def test_the_csv_has_a_row_a_hand_and_no_cell_a_spreadsheet_would_run():
    events = known_night()
    events.append(_event("t3", 1, "hand.started", T0, 1, "=HYPERLINK(1)"))
    rows = list(csv.reader(io.StringIO(hands_csv(events, T0, T0 + 60 * MINUTE))))
    assert rows[0] == ["table", "hand", "dealer", "started_utc", "seconds", "outcome",
                       "irregularities", "dealer_name"]
    assert len(rows) == 1 + 7
    assert rows[1] == ["t1", "1", "ann", "2026-09-21T14:13:20Z", "120.0", "complete", "", ""]
    named = list(csv.reader(io.StringIO(hands_csv(events, T0, T0 + 60 * MINUTE,
                                                  {"ann": "Ann Lee"}))))
    assert named[1][2] == "ann" and named[1][7] == "Ann Lee"  # the floor's name for the badge
    assert rows[2][5:7] == ["misdeal", "exposed_two_cards"]
    assert rows[-1][2] == "'=HYPERLINK(1)" and rows[-1][4] == ""  # never ended


def test_a_window_opened_mid_hand_and_events_without_a_time_are_skipped():
    events = [_event("t1", 1, "hand.ended", T0, 1, "ann", outcome="complete"),
              _event("t1", 2, "hand.started", None, 2, "ann"),
              _event("t1", 3, "hand.started", T0 + MINUTE, 3, None)]
    (hand,) = hands_of(events)
    assert hand.hand == 3 and hand.dealer == "(none)" and hand.ended is None


def test_every_text_cell_is_quoted_so_a_separator_in_a_badge_makes_no_formula():
    """A badge `dealer:x;=1+1`: where ";" separates lists (Excel in DE/FR/NL, LibreOffice) an
    unquoted `x;=1+1` is two cells, the second a formula."""
    events = [_event("t1", 1, "hand.started", T0, 1, "x;=1+1"),
              _event("t1", 2, "hand.ended", T0 + MINUTE, 1, "x;=1+1", outcome="complete"),
              _event("t2", 3, "hand.started", T0, 1, "\uff1dSUM(1)")]
    text = hands_csv(events, T0, T0 + 60 * MINUTE)
    lines = text.splitlines()
    assert lines[1] == '"t1",1,"x;\'=1+1","2026-09-21T14:13:20Z",60.0,"complete","",""'
    for separator in (";", ","):  # read as such a spreadsheet reads it
        for row in csv.reader(io.StringIO(text), delimiter=separator):
            assert not any(cell.startswith(("=", "+", "@", "\uff1d")) for cell in row), row
    assert list(csv.reader(io.StringIO(text)))[2][2] == "'\uff1dSUM(1)"


def test_a_time_past_the_calendar_is_written_as_its_milliseconds():
    events = [_event("t1", 1, "hand.started", 2**53 - 1, 1, "ann")]
    assert list(csv.reader(io.StringIO(hands_csv(events, 0, 2**53))))[1][3] == str(2**53 - 1)


def test_statistics_stream_the_period_instead_of_holding_its_events(tmp_path):
    """300,000 events took 790 MB a request, read whole. Streamed and summed as each table's
    hands go by, the same figures come in a small fraction of the memory (both measured here:
    tracemalloc's peak, the events read whole against streamed)."""
    import tracemalloc

    from hub.stats import STATS_TYPES
    from hub.storage import open_storage

    storage = open_storage(str(tmp_path / "hub.db"))
    store_night(storage, tables=10, hands=600)
    end = T0 + 1800 * MINUTE

    def peak(run):
        tracemalloc.start()
        try:
            result = run()
            return result, tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    whole, whole_peak = peak(lambda: statistics(storage.events_since(T0, STATS_TYPES, end),
                                                T0, end))
    streamed, streamed_peak = peak(lambda: statistics(
        storage.stream_events(T0, STATS_TYPES, end), T0, end))
    rows, rows_peak = peak(lambda: sum(len(piece) for piece in hands_csv_rows(
        storage.stream_events(T0, STATS_TYPES, end), T0, end)))
    storage.close()
    assert streamed == whole and streamed["hands"] == 6_000
    assert streamed_peak < whole_peak / 10, (streamed_peak, whole_peak)
    assert rows_peak < whole_peak / 10, (rows_peak, whole_peak)
    assert rows > 6_000 * 40


def test_postgresql_streams_the_events_through_a_server_side_cursor(postgres):
    from hub.stats import STATS_TYPES
    from hub.storage import open_storage

    storage = open_storage(postgres)
    store_night(storage, tables=3, hands=900)  # over the cursor's batch of 2,000
    end = T0 + 2700 * MINUTE
    streamed = list(storage.stream_events(T0, STATS_TYPES, end))
    assert streamed == storage.events_since(T0, STATS_TYPES, end)
    assert len(streamed) == 8100
    storage.close()


def test_a_period_that_opens_in_the_middle_of_a_hand_counts_the_hands_it_saw_begin():
    """The default 12-hour view opens at any moment: a table whose hand began just before it
    has that hand's irregularity and end in the period, without its start (this once made
    /api/stats and hands.csv answer 500). The hand is left out; the next one counts."""
    events = [_event("t3", 7, "irregularity", T0 + MINUTE, 4, "cy", kind="boxed_card"),
              _event("t3", 8, "hand.ended", T0 + 2 * MINUTE, 4, "cy", outcome="complete"),
              _event("t3", 9, "hand.started", T0 + 3 * MINUTE, 5, "cy"),
              _event("t3", 10, "hand.ended", T0 + 5 * MINUTE, 5, "cy", outcome="complete")]
    figures = statistics(events, T0, T0 + 60 * MINUTE)
    assert figures["hands"] == 1
    assert figures["tables"] == [{"table": "t3", "hands": 1, "hours": round(2 / 60, 3),
                                  "hands_per_hour": 30.0}]
    rows = list(csv.reader(io.StringIO(hands_csv(events, T0, T0 + 60 * MINUTE))))
    assert [row[:2] for row in rows[1:]] == [["t3", "5"]]
    assert rows[1][6] == ""  # the boxed card was the hand before's
