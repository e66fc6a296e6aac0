"""What the buzzer plays for each event, as data. Pure.

A pattern is a list of notes ``(frequency in Hz or 0 for a rest, seconds)``. An active buzzer
(on/off only) plays every note at its one pitch. Alarms (irregularities, the floor called, a
shot clock run out) sound even in quiet mode; the rest only at normal volume.
"""

from __future__ import annotations

from controller.events import (
    Announcement,
    BreakEnded,
    BreakStarted,
    ClockWarning,
    DeckCheckResult,
    Event,
    FloorCalled,
    Level,
    Ruling,
    RulingAction,
    Seating,
    ShotClock,
)

Note = tuple[int, float]

PATTERNS: dict[str, list[Note]] = {
    "level_up": [(880, 0.15), (0, 0.05), (1047, 0.15), (0, 0.05), (1319, 0.35)],
    "one_minute": [(1047, 0.1), (0, 0.1), (1047, 0.1)],
    "break_start": [(784, 0.3), (659, 0.3), (523, 0.6)],
    "break_end": [(523, 0.2), (659, 0.2), (784, 0.2), (1047, 0.4)],
    "shot_clock_start": [(1319, 0.08)],
    "shot_clock_tick": [(1568, 0.06), (0, 0.94)],
    "shot_clock_expired": [(1568, 1.0)],
    # Rulings sound by what the dealer must do: a misdeal falls, a void hand drones, a ruling
    # that calls the floor is the floor call, anything else (deal on, scrap, burn) three chirps.
    "irregularity": [(1976, 0.15), (0, 0.1), (1976, 0.15), (0, 0.1), (1976, 0.15)],
    "misdeal": [(1568, 0.3), (0, 0.08), (1175, 0.3), (0, 0.08), (784, 0.6)],
    "void_hand": [(659, 0.45), (0, 0.1), (659, 0.45), (0, 0.1), (659, 0.45)],
    "floor_call": [(1319, 0.2), (988, 0.2), (1319, 0.2), (988, 0.2)],
    "deck_ok": [(1047, 0.08), (0, 0.05), (1319, 0.12)],
    "announce": [(988, 0.12), (0, 0.08), (988, 0.12)],
    "held": [(2093, 0.03)],
}

ALARMS = frozenset({"irregularity", "misdeal", "void_hand", "floor_call",
                    "shot_clock_expired"})


def sounds_for(event: Event) -> list[str]:
    """The patterns an event sounds, in order."""
    match event:
        case Level():
            return ["level_up"]
        case ClockWarning(break_=False):
            return ["one_minute"]
        case BreakStarted():
            return ["break_start"]
        case BreakEnded():
            return ["break_end"]
        case ShotClock(state="started"):
            return ["shot_clock_start"]
        case ShotClock(state="countdown", seconds=seconds):
            return ["shot_clock_tick"] * int(seconds or 0)
        case ShotClock(state="expired"):
            return ["shot_clock_expired"]
        case Ruling(action=RulingAction.MISDEAL | RulingAction.VOID_HAND as action):
            return [str(action)]
        case Ruling(action=RulingAction.CALL_FLOOR):
            return ["floor_call"]
        case Ruling():
            return ["irregularity"]
        case FloorCalled():
            return ["floor_call"]
        case DeckCheckResult(ok=ok):
            return ["deck_ok"] if ok else ["irregularity"]
        case Announcement() | Seating(moves=[_, *_]):  # a player moves: the dealer looks up
            return ["announce"]
    return []
