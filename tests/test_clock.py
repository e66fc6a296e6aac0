"""The blind clock, the level each hand is played at, and the shot clock."""

from __future__ import annotations

import pytest

from controller.clock import BlindClock, StructureError, structure_from_data
from controller.events import ClockChanged, Level
from houses.loaders import load_structure
from tests.conftest import of_type, run


def test_corner_pocket_structure_is_the_seeds():
    s = load_structure("corner-pocket")
    levels = [p for p in s.periods if not p.is_break]
    assert len(levels) == 13 and all(p.seconds == 900 for p in levels)
    assert [p.ante > 0 for p in levels] == [False] * 7 + [True] * 6
    assert (levels[0].sb, levels[0].bb) == (50, 100)
    assert (levels[12].sb, levels[12].bb, levels[12].ante) == (30000, 60000, 10000)


def test_levels_warnings_and_pause():
    clock = BlindClock(load_structure("corner-pocket"), 0.0)
    events = clock.advance(0.0)
    assert [(e.type, e.level) for e in events] == [("level", 1)]
    events = clock.advance(850.0)
    assert [(e.type, e.t) for e in events] == [("clock.warning", 840.0)]
    clock.pause(850.0)
    assert clock.advance(5000.0) == []  # paused: no time passes
    events = clock.resume(5000.0) + clock.advance(5100.0)
    levels = [e for e in events if isinstance(e, Level)]
    assert [(e.level, e.t) for e in levels] == [(2, 5050.0)]
    assert [e.state for e in clock.stop(5200.0) if isinstance(e, ClockChanged)] == ["stopped"]
    assert clock.stop(5205.0) == []  # a stopped clock told to stop again says nothing


def test_breaks_in_the_default_structure():
    clock = BlindClock(load_structure("tda-2024"), 0.0)
    events = [e.to_json() for e in clock.advance(4 * 1200 + 10 * 60 + 1)]
    kinds = [(e["type"], e.get("state"), e.get("level")) for e in events]
    assert ("break", "started", None) in kinds and ("break", "ended", None) in kinds
    assert kinds[-1] == ("level", None, 5)
    assert clock.current_level() == 5


def test_the_last_level_runs_on():
    clock = BlindClock(load_structure("corner-pocket"), 0.0)
    clock.advance(10**7)
    assert clock.current_level() == 13


def test_bad_structure_lists_every_problem():
    with pytest.raises(StructureError) as info:
        structure_from_data({"name": "x", "schedule": [
            {"level": 1, "sb": 200, "bb": 100, "minutes": 10},
            {"level": 3, "sb": 100, "bb": 200, "minutes": 0, "speed": 2},
            {"break_minutes": -5},
        ]}, "x.toml")
    text = "\n".join(info.value.problems)
    for needle in ("schedule[0].sb", "schedule[1].level", "schedule[1].minutes",
                   "schedule[1].speed", "schedule[2].break_minutes"):
        assert needle in text


def _hand_at(t_deck, t_card):
    return [{"type": "setup", "game": "holdem", "seats": [1, 2], "button": 1},
            {"type": "clock", "structure": "corner-pocket", "t": 0},
            {"type": "deck_in", "deck": "R1", "t": t_deck},
            {"type": "card", "card": "As", "t": t_card},
            {"type": "button", "gesture": "double_tap", "t": t_card + 1000}]


def test_level_timing_by_profile():
    # Deck in during level 1, first card dealt after level 2 began.
    tda = run(_hand_at(890, 905), "tda-2024")
    assert of_type(tda, "hand.ended")[0]["level"] == 1  # TDA 23: the riffle (deck) counts
    cp = run(_hand_at(890, 905), "corner-pocket")
    assert of_type(cp, "hand.level")[0]["level"] == 2  # seed 000: the first card counts
    assert of_type(cp, "hand.ended")[0]["level"] == 2
    # The hand's record carries the amounts, so its history reads "SB seat 2 100".
    assert of_type(tda, "hand.started")[0]["blinds"] == {"sb": 50, "bb": 100, "ante": 0}
    assert of_type(cp, "hand.started")[0]["blinds"] == {"sb": 50, "bb": 100, "ante": 0}
    assert of_type(cp, "hand.level")[0]["blinds"] == {"sb": 100, "bb": 200, "ante": 0}
    # A level that ends during the hand applies from the next hand only.
    assert of_type(run(_hand_at(10, 20), "corner-pocket"), "hand.ended")[0]["level"] == 1


@pytest.mark.parametrize("profile,seconds,countdown", [("tda-2024", 25, 5),
                                                       ("corner-pocket", 60, 10)])
def test_shot_clock(profile, seconds, countdown):
    lines = [{"type": "setup", "game": "holdem", "seats": [1, 2], "button": 1},
             {"type": "button", "gesture": "hold", "t": 100},
             {"type": "button", "gesture": "long_hold", "t": 500}]
    shots = of_type(run(lines, profile), "shot_clock")
    assert [(s["state"], s["t"]) for s in shots] == [
        ("started", 100), ("countdown", 100 + seconds), ("expired", 100 + seconds + countdown)]
    lines[2] = {"type": "button", "gesture": "hold", "t": 110}
    shots = of_type(run(lines, profile), "shot_clock")
    assert [s["state"] for s in shots] == ["started", "cancelled"]


def test_clock_lines_in_replay():
    lines = [{"type": "setup", "game": "holdem", "seats": [1, 2], "button": 1},
             {"type": "clock", "structure": "corner-pocket", "t": 0},
             {"type": "clock", "action": "pause", "t": 600},
             {"type": "clock", "action": "resume", "t": 1600},
             {"type": "deck_in", "deck": "R1", "t": 1950}]
    events = run(lines)
    assert [e["level"] for e in of_type(events, "level")] == [1, 2]
    assert of_type(events, "level")[1]["t"] == 1900
    assert of_type(events, "hand.started")[0]["level"] == 2


def test_a_hub_outage_the_table_counts_alone_and_reconciles():
    lines = [{"type": "setup", "game": "holdem", "seats": [1, 2], "button": 1},
             {"type": "clock", "action": "sync", "structure": "corner-pocket", "elapsed": 0,
              "t": 0},
             # The hub is lost for 20 minutes: the table keeps counting on its own.
             {"type": "deck_in", "deck": "R1", "t": 1200},
             {"type": "clock", "action": "sync", "structure": "corner-pocket", "elapsed": 1203,
              "t": 1200}]
    events = run(lines)
    assert of_type(events, "hand.started")[0]["level"] == 2
    assert of_type(events, "clock")[-1]["drift"] == 3.0


def test_the_hubs_repeated_clock_is_news_only_when_the_table_disagrees():
    clock = BlindClock(load_structure("corner-pocket"), 0.0)
    first = clock.sync(0.0, True, 0.0)
    assert of_type(first, "clock")[0]["state"] == "synced"  # a new clock: level 1 announced
    assert of_type(first, "level")[0]["level"] == 1
    assert clock.sync(5.2, True, 5.0) == []  # 0.2 s apart: nothing to say
    assert of_type(clock.sync(12.0, True, 10.0), "clock")[0]["drift"] == 1.8
    assert of_type(clock.sync(15.0, False, 13.0), "clock")[0]["running"] is False  # paused
    assert clock.sync(15.0, False, 20.0) == []  # still paused at the same time
    moved = clock.sync(900.0, True, 21.0)  # the floor moved to level 2
    assert of_type(moved, "level")[0]["level"] == 2 and of_type(moved, "clock")


def test_a_reading_late_by_its_trip_does_not_set_the_table_back():
    clock = BlindClock(load_structure("corner-pocket"), 0.0)
    clock.sync(100.0, True, 50.0)
    # Read at the hub 0.4 s before it arrived (a Wi-Fi stall): the table keeps its own time,
    # the freshest it has.
    assert clock.sync(109.6, True, 60.0) == []
    assert clock.elapsed(60.0) == 110.0
    clock.sync(110.2, True, 60.0)  # a reading ahead is always taken
    assert clock.elapsed(60.0) == 110.2
    # The floor adding time sets it back by seconds: followed, and said.
    back = clock.sync(50.2, True, 60.0)
    assert clock.elapsed(60.0) == 50.2 and of_type(back, "clock")[0]["drift"] == -60.0
    # A paused reading is followed however close (the hub stopped the time).
    clock.sync(50.0, False, 60.0)
    assert clock.running_since is None


def test_the_period_at_any_time_is_the_one_a_walk_through_the_periods_finds():
    def walk(structure, elapsed):
        total = 0.0
        for index, period in enumerate(structure.periods):
            total += period.seconds
            if elapsed < total:
                return index
        return len(structure.periods) - 1

    import random

    rng = random.Random(11)
    for name in ("corner-pocket", "tda-2024"):
        structure = load_structure(name)
        bounds = [p.seconds for p in structure.periods]
        edges = [sum(bounds[:i]) for i in range(len(bounds) + 1)]
        times = [*edges, *(e - 1e-9 for e in edges), *(rng.uniform(-10, edges[-1] + 5000)
                                                        for _ in range(2000))]
        assert [structure.index_at(t) for t in times] == [walk(structure, t) for t in times]
