"""Buzzer patterns, asserted through gpiozero's mock pins."""

from __future__ import annotations

from datetime import datetime
from datetime import time as daytime

import pytest
from gpiozero.pins.mock import MockFactory, MockPWMPin

from controller.events import (
    BreakEnded,
    BreakStarted,
    ClockWarning,
    DeckCheckResult,
    FloorCalled,
    Level,
    Ruling,
    ShotClock,
)
from controller.sounds import PATTERNS, sounds_for
from hardware.buzzer import BuzzerPlayer


class Recorder:
    """A fake sleep that samples the pin while each note holds."""

    def __init__(self, pin):
        self.pin = pin
        self.notes = []

    def __call__(self, seconds):
        frequency = self.pin.frequency if self.pin.state else 0
        self.notes.append((round(frequency or 0), seconds))


def _player(kind="tonal", **kwargs):
    factory = MockFactory(pin_class=MockPWMPin)
    pin = factory.pin(18)
    recorder = Recorder(pin)
    player = BuzzerPlayer(18, kind=kind, pin_factory=factory, sleep=recorder, threaded=False,
                          **kwargs)
    return player, pin, recorder


def test_level_up_plays_its_notes_on_the_pin():
    player, pin, recorder = _player()
    player.handle_event(Level(level=2, sb=100, bb=200, ante=0, minutes=20.0, t=0.0))
    player.run_pending()
    assert recorder.notes == [(f, s) for f, s in PATTERNS["level_up"]]
    assert pin.state == 0  # silent afterwards
    values = [s.state for s in pin.states]
    assert values.count(0.5) >= 3  # three tones, each a 50 % duty square wave


def test_active_buzzer_switches_on_and_off():
    player, pin, _ = _player(kind="active")
    player.play("irregularity")
    player.run_pending()
    pin.assert_states([False, True, False, True, False, True, False])


def test_shot_clock_countdown_ticks_once_a_second():
    countdown = ShotClock(state="countdown", seconds=5, hand=1, t=0.0)
    assert sounds_for(countdown) == ["shot_clock_tick"] * 5
    player, _, recorder = _player()
    player.handle_event(countdown)
    player.run_pending()
    # What the pin did, not what the player meant to do: five tones at the tick's pitch,
    # each followed by silence, filling five seconds.
    assert recorder.notes == PATTERNS["shot_clock_tick"] * 5
    assert sum(s for _, s in recorder.notes) == pytest.approx(5.0)


def _ruling(action: str) -> Ruling:
    return Ruling(hand=1, action=action, text="x", profile="tda-2024", t=0.0)


def _checked(ok: bool) -> DeckCheckResult:
    return DeckCheckResult(deck="R1", ok=ok, count=52, missing=[], duplicates=[], foreign=[],
                           unknown=[], jokers=0, text="", t=0.0)


@pytest.mark.parametrize("event,pattern", [
    (_ruling("misdeal"), "misdeal"),
    (_ruling("void_hand"), "void_hand"),
    (_ruling("call_floor"), "floor_call"),
    (_ruling("replace_exposed"), "irregularity"),
    (FloorCalled(hand=1, t=0.0), "floor_call"),
    (ClockWarning(seconds_left=60.0, level=3, break_=False, t=0.0), "one_minute"),
    (BreakStarted(minutes=10.0, note=None, t=0.0), "break_start"),
    (BreakEnded(t=0.0), "break_end"),
    (ShotClock(state="expired", hand=1, t=0.0), "shot_clock_expired"),
    (_checked(True), "deck_ok"),
    (_checked(False), "irregularity"),
])
def test_events_have_their_sounds(event, pattern):
    assert sounds_for(event) == [pattern]


def test_a_misdeal_a_void_a_floor_call_and_a_clock_warning_sound_different():
    tunes = {name: tuple(PATTERNS[name]) for name in
             ("misdeal", "void_hand", "floor_call", "irregularity", "one_minute")}
    assert len(set(tunes.values())) == len(tunes)


def test_quiet_volume_keeps_only_alarms_and_off_is_silent():
    player, _, recorder = _player(volume="quiet")
    for name in ("level_up", "irregularity", "one_minute", "floor_call"):
        player.play(name)
    player.run_pending()
    assert player.played == ["irregularity", "floor_call"]
    assert recorder.notes == PATTERNS["irregularity"] + PATTERNS["floor_call"]  # on the pin
    player, pin, recorder = _player(volume="off")
    player.play("irregularity")
    player.run_pending()
    assert player.played == [] and recorder.notes == []
    assert all(not s.state for s in pin.states)  # the pin never sounded


def test_quiet_hours_apply_only_once_the_wall_clock_is_known():
    now = {"value": None}
    player, _, _ = _player(quiet_hours=(daytime(23, 0), daytime(8, 0)),
                           wall_clock=lambda: now["value"])
    assert player.effective_volume() == "normal"  # no trusted wall clock yet
    now["value"] = datetime(2026, 11, 29, 23, 30)
    assert player.effective_volume() == "quiet"
    now["value"] = datetime(2026, 11, 30, 9, 0)
    assert player.effective_volume() == "normal"


def test_bad_settings_name_the_key():
    with pytest.raises(ValueError, match=r"buzzer\.volume"):
        _player(volume="loud")
