# Stubs for luma.core 2.6.0 (the parts the project calls), from luma/core/legacy/__init__.py.
from luma.core.legacy.font import _Font
from PIL.ImageDraw import ImageDraw

# The width the text's glyphs take and the font's height (8).
def textsize(txt: str, font: _Font | None = None) -> tuple[int, int]: ...

# fill: what PIL's ImageDraw.point takes (a colour name, a value, a tuple)
def text(draw: ImageDraw, xy: tuple[int, int], txt: str,
         fill: float | tuple[int, ...] | str | None = None,
         font: _Font | None = None) -> None: ...
