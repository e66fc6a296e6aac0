# Stubs for luma.core 2.6.0 (the parts the project calls), from luma/core/legacy/font.py.
from typing import Protocol

class _Font(Protocol):
    """A font: each ASCII code's glyph, a byte per column (bit 0 the top row)."""
    def __getitem__(self, ascii_code: int, /) -> list[int]: ...

CP437_FONT: list[list[int]]

class proportional:
    font: _Font
    def __init__(self, font: _Font) -> None: ...
    def __getitem__(self, ascii_code: int) -> list[int]: ...
