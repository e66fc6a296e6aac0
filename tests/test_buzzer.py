"""Buzzer patterns, asserted through gpiozero's mock pins."""

from __future__ import annotations

from datetime import datetime
from datetime import time as daytime

import pytest
from gpiozero.pins.mock import MockFactory, MockPWMPin

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
    player.handle_event({"type": "level", "level": 2})
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
    assert sounds_for({"type": "shot_clock", "state": "countdown", "seconds": 5}) == \
        ["shot_clock_tick"] * 5
    player, _, recorder = _player()
    player.handle_event({"type": "shot_clock", "state": "countdown", "seconds": 5})
    player.run_pending()
    # What the pin did, not what the player meant to do: five tones at the tick's pitch,
    # each followed by silence, filling five seconds.
    assert recorder.notes == PATTERNS["shot_clock_tick"] * 5
    assert sum(s for _, s in recorder.notes) == pytest.approx(5.0)


@pytest.mark.parametrize("event,pattern", [
    ({"type": "ruling", "action": "misdeal"}, "misdeal"),
    ({"type": "ruling", "action": "void_hand"}, "void_hand"),
    ({"type": "ruling", "action": "call_floor"}, "floor_call"),
    ({"type": "ruling", "action": "replace_exposed"}, "irregularity"),
    ({"type": "floor.called"}, "floor_call"),
    ({"type": "clock.warning", "break": False}, "one_minute"),
    ({"type": "break", "state": "started"}, "break_start"),
    ({"type": "break", "state": "ended"}, "break_end"),
    ({"type": "shot_clock", "state": "expired"}, "shot_clock_expired"),
    ({"type": "deck_check.result", "ok": True}, "deck_ok"),
    ({"type": "deck_check.result", "ok": False}, "irregularity"),
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
