# Stubs for gpiozero 2.0.1.post3 (the parts the project calls), from gpiozero/tones.py.
from typing import Self

class Tone(float):
    def __new__(cls, value: float | str | None = None, *, frequency: float | None = None,
                midi: int | None = None, note: str | None = None) -> Self: ...
    @classmethod
    def from_frequency(cls, freq: float) -> Self: ...
    @property
    def frequency(self) -> float: ...
