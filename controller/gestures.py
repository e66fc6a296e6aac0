"""The dealer button's gestures from the raw level of its pin. Pure: edges and times in.

The pin bounces: a level counts only once it has held for ``debounce`` seconds (then it counts
from the moment it began, so durations stay true). From the debounced presses:

- **tap**: a press shorter than ``hold``; reported when the button is released, at once, so that
  it reaches the table core before the next card the dealer draws;
- **double_tap**: a second tap whose press began within ``double_tap`` seconds of the first
  one's release (the first was already reported as a tap: "betting closed, then hand over");
- **hold**: a press of ``hold`` seconds or more, shorter than ``long_hold``;
- **long_hold**: a press of ``long_hold`` seconds or more.

While the button is still down, ``held`` feedback events say when each threshold passes, so the
buzzer can tell the dealer which gesture a release will make.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GestureConfig:
    debounce: float = 0.03
    double_tap: float = 0.4
    hold: float = 1.5
    long_hold: float = 4.0

    def problems(self) -> list[str]:
        found = []
        for name in ("debounce", "double_tap", "hold", "long_hold"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                found.append(f"button.{name}: must be a number of seconds > 0, not {value!r}")
        if not found and self.long_hold <= self.hold:
            found.append(f"button.long_hold: {self.long_hold} s must be longer than "
                         f"button.hold ({self.hold} s)")
        if not found and self.hold <= self.debounce:
            found.append("button.hold: must be longer than button.debounce")
        return found


@dataclass(frozen=True, slots=True)
class GestureEvent:
    kind: str  # tap, double_tap, hold, long_hold; or "held" feedback (detail: hold/long_hold)
    t: float
    detail: str | None = None
    duration: float | None = None


class GestureRecogniser:
    def __init__(self, config: GestureConfig | None = None) -> None:
        self.config = config or GestureConfig()
        problems = self.config.problems()
        if problems:
            raise ValueError("; ".join(problems))
        self.raw = False
        self.raw_since = 0.0
        self.pressed = False
        self.pressed_at = 0.0
        self.last_tap_release: float | None = None
        self.press_is_second = False
        self.feedback_sent = 0  # thresholds announced during the current press

    def edge(self, t: float, pressed: bool) -> list[GestureEvent]:
        """The pin's level changed (True: pressed). Bounces included: they are filtered here."""
        out = self._settle(t)
        if pressed != self.raw:
            self.raw = pressed
            self.raw_since = t
        return out

    def tick(self, t: float) -> list[GestureEvent]:
        """Time passes: settle a level that has held, announce thresholds passed."""
        out = self._settle(t)
        if self.pressed:  # the thresholds as next_deadline computes them (no rounding gap)
            if self.feedback_sent == 0 and t >= self.pressed_at + self.config.hold:
                self.feedback_sent = 1
                out.append(GestureEvent("held", self.pressed_at + self.config.hold, "hold"))
            if self.feedback_sent == 1 and t >= self.pressed_at + self.config.long_hold:
                self.feedback_sent = 2
                out.append(GestureEvent("held", self.pressed_at + self.config.long_hold,
                                        "long_hold"))
        return out

    def next_deadline(self) -> float | None:
        """When ``tick`` next has something to do (a level to settle, a threshold to announce),
        or None while nothing can happen before the next edge: a timer waits for this, not
        polling."""
        if self.raw != self.pressed:
            return self.raw_since + self.config.debounce
        if self.pressed and self.feedback_sent == 0:
            return self.pressed_at + self.config.hold
        if self.pressed and self.feedback_sent == 1:
            return self.pressed_at + self.config.long_hold
        return None

    def _settle(self, t: float) -> list[GestureEvent]:
        if self.raw == self.pressed or t < self.raw_since + self.config.debounce:
            return []
        at = self.raw_since
        self.pressed = self.raw
        if self.pressed:
            self.pressed_at = at
            self.feedback_sent = 0
            self.press_is_second = (self.last_tap_release is not None
                                    and at - self.last_tap_release <= self.config.double_tap)
            return []
        duration = at - self.pressed_at
        if duration >= self.config.long_hold:
            self.last_tap_release = None
            return [GestureEvent("long_hold", at, duration=duration)]
        if duration >= self.config.hold:
            self.last_tap_release = None
            return [GestureEvent("hold", at, duration=duration)]
        if self.press_is_second:
            self.last_tap_release = None  # a third tap starts afresh
            return [GestureEvent("double_tap", at, duration=duration)]
        self.last_tap_release = at
        return [GestureEvent("tap", at, duration=duration)]
