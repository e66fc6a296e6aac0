"""A table's display and buzzer in a terminal: a PC without the hardware (``tablectl sim``,
``deploy/pc.toml``). The same screens and sounds as the real devices, written as text lines
that each start with the table's name (several tables share one terminal)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TextIO

from controller.events import Event
from controller.screens import Screen
from controller.sounds import sounds_for


class TerminalDisplay:
    """The display drawn in the terminal: the 20x4 LCD's text, each time it changes."""

    def __init__(self, out: TextIO, table: str) -> None:
        self.out = out
        self.table = table
        self.last: Screen | None = None  # the screen last shown (drawn, or a clock's tick)

    def show(self, screen: Screen) -> bool:
        from hardware.display import render_lcd  # PIL: only once there is something to draw

        if screen == self.last:
            return False
        ticked = (self.last is not None and screen.kind == self.last.kind == "clock"
                  and replace(screen, big=self.last.big) == self.last)
        self.last = screen
        if ticked:
            return True  # the clock ticking every second would flood the terminal
        lines = render_lcd(screen)
        bar = "+" + "-" * 20 + "+"
        self.out.write(f"[{self.table}] {bar}\n" + "".join(
            f"[{self.table}] |{line}|\n" for line in lines) + f"[{self.table}] {bar}\n")
        self.out.flush()
        return True


class TerminalBuzzer:
    """The buzzer's patterns by name, one line each."""

    def __init__(self, out: TextIO, table: str) -> None:
        self.out = out
        self.table = table

    def committed(self, events: Sequence[Event]) -> None:
        for event in events:
            for name in sounds_for(event):
                self.play(name)

    def play(self, name: str) -> None:
        self.out.write(f"[{self.table}] buzzer: {name}\n")
        self.out.flush()

    def close(self) -> None:
        pass
