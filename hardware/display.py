"""The table's display through luma: a 128x64 OLED (SSD1306 or SH1106 on I2C) or a 20x4
character LCD (HD44780 behind a PCF8574 backpack).

Screens (``controller.screens``) are drawn with luma's own bitmap fonts (CP437, 8x8), scaled
with nearest-neighbour for the big figures a dealer reads from across the table, so the pixels
do not depend on the Pillow version's font rasteriser and golden images stay exact. The luma
device is injected: ``oled_device``/``lcd_device`` build the real ones (a fake bus in tests),
the daemon's ``terminal`` backend draws the LCD's text in a terminal.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

from controller.screens import LCD_WIDTH, Screen

if TYPE_CHECKING:  # luma is imported when a device or a font is first needed
    from luma.core.legacy.font import proportional
    from luma.lcd.device import hd44780
    from luma.oled.device import sh1106, ssd1306

OLED_SIZE = (128, 64)


@lru_cache(maxsize=1)
def _font() -> proportional:
    from luma.core.legacy.font import CP437_FONT, proportional

    return proportional(CP437_FONT)


@lru_cache(maxsize=256)
def _text_image(text: str, scale: int) -> Any:
    """A text's glyphs as a 1-bit mask (cached: titles and status lines rarely change)."""
    from luma.core.legacy import text as legacy_text
    from luma.core.legacy import textsize
    from PIL import Image, ImageDraw

    font = _font()
    width, height = textsize(text, font=font)
    image = Image.new("1", (max(width, 1), height))
    legacy_text(ImageDraw.Draw(image), (0, 0), text, fill=1, font=font)
    if scale > 1:
        image = image.resize((image.width * scale, image.height * scale), Image.Resampling.NEAREST)
    return image


def _paste(draw: Any, glyphs: Any, x: int, y: int, ink: int) -> None:
    draw.bitmap((x, y), glyphs, fill=ink)


def render_oled(screen: Screen) -> Any:
    """The screen as a 1-bit 128x64 PIL image."""
    from PIL import Image, ImageDraw

    width = OLED_SIZE[0]
    image = Image.new("1", OLED_SIZE, 0)
    draw = ImageDraw.Draw(image)
    ink = 1
    if screen.inverted:
        draw.rectangle((0, 0, width - 1, 53), fill=1)
        ink = 0
    title = _text_image(screen.title, 1)
    _paste(draw, title, max(0, (width - title.width) // 2), 0, ink)
    y = 10
    if screen.big:
        for scale in (4, 3, 2, 1):
            big = _text_image(screen.big, scale)
            if big.width <= width - 4 and big.height <= 32:
                break
        _paste(draw, big, (width - big.width) // 2, y + (30 - big.height) // 2, ink)
        y = 42
        room = 1
    else:
        room = 5
    for line in screen.lines[:room]:
        glyphs = _text_image(line, 1)
        _paste(draw, glyphs, max(0, (width - glyphs.width) // 2), y, ink)
        y += 9
    draw.line((0, 55, width - 1, 55), fill=1)
    status = _text_image(screen.status, 1)
    _paste(draw, status, 0, 56, 1)
    return image


def render_lcd(screen: Screen, columns: int = LCD_WIDTH, rows: int = 4) -> list[str]:
    """The screen as ``rows`` lines of ``columns`` characters."""
    if screen.big:
        if len(screen.title) + 1 + len(screen.big) <= columns and screen.kind != "clock":
            first = screen.title + screen.big.rjust(columns - len(screen.title))
            body = [*screen.lines]
        else:
            first = screen.title
            label = {"clock": "TIME", "break": "LEFT"}.get(screen.kind, "")
            body = [(label + screen.big.rjust(columns - len(label))) if label
                    else screen.big.center(columns), *screen.lines]
    else:
        first = screen.title
        body = list(screen.lines)
    lines = [first, *body][:rows - 1]
    lines += [""] * (rows - 1 - len(lines))
    lines.append(screen.status)
    return [line[:columns].ljust(columns) for line in lines]


# A byte's bits in the other order: PIL packs a row's pixels most significant bit first, the
# OLED controllers want the top pixel of a column of eight in the least significant bit.
_REVERSED_BITS = bytes(int(f"{i:08b}"[::-1], 2) for i in range(256))


def page_bytes(image: Any) -> list[bytes]:
    """A 1-bit image as the OLED controller's RAM: one ``bytes`` per page (8 rows), a byte per
    column, the top row in bit 0 (what luma's drivers compute pixel by pixel, here in C: the
    image transposed, so a column becomes a packed row)."""
    from PIL import Image

    height = image.height
    packed = image.transpose(Image.Transpose.TRANSPOSE).tobytes()  # a column per row
    pages = height // 8
    return [packed[page::pages].translate(_REVERSED_BITS) for page in range(pages)]


def _changed_span(old: bytes, new: bytes) -> tuple[int, int] | None:
    """The first and last columns where a page differs, or None."""
    if old == new:
        return None
    first = next(i for i in range(len(new)) if old[i] != new[i])
    last = next(i for i in range(len(new) - 1, -1, -1) if old[i] != new[i])
    return first, last


class Display:
    """Shows screens on a luma device: pixels on a graphic one, text on a character one.

    On an SSD1306 or SH1106 only what changed goes over the bus: luma's driver pushes the first
    frame whole (and after ``force``), then each frame sends the columns that differ from what
    the glass holds (a clock's tick: the seconds' digits, not 1 KB), through the device's own
    ``command``/``data``. Any other luma device gets each frame from its driver."""

    def __init__(self, device: Any) -> None:
        self.device = device
        self.character = hasattr(device, "text") and hasattr(device, "glyph_index")
        self.last: Screen | None = None
        kind = type(device).__name__
        self._partial = kind if kind in ("ssd1306", "sh1106") and \
            getattr(device, "rotate", 0) == 0 else None
        self._glass: list[bytes] | None = None  # the controller's RAM, as last pushed

    def show(self, screen: Screen, *, force: bool = False) -> bool:
        """Push the screen if it changed (``force``: whole, whatever the glass holds); True if
        it was pushed."""
        if screen == self.last and not force:
            return False
        self.last = screen
        if self.character:
            self.device.text = "\n".join(render_lcd(screen, self.device.width // 5,
                                                    self.device.height // 8))
            return True
        image = render_oled(screen).convert(self.device.mode)
        if self._partial is None:
            self.device.display(image)
            return True
        pages = page_bytes(image)
        if self._glass is None or force:
            self.device.display(image)  # luma's driver, the whole frame
        elif self._partial == "ssd1306":
            self._window(pages)
        else:
            self._sh1106_pages(pages)
        self._glass = pages
        return True

    def _window(self, pages: list[bytes]) -> None:
        """SSD1306 (horizontal addressing, as luma sets it up): one window over the changed
        pages and columns, filled row of pages by row."""
        assert self._glass is not None
        spans = {page: span for page, (old, new) in enumerate(zip(self._glass, pages, strict=True))
                 if (span := _changed_span(old, new)) is not None}
        if not spans:
            return
        first_page, last_page = min(spans), max(spans)
        first = min(span[0] for span in spans.values())
        last = max(span[1] for span in spans.values())
        start = self.device._colstart  # 0 on a 128-wide panel; luma's own offset otherwise
        self.device.command(0x21, start + first, start + last,  # column address
                            0x22, first_page, last_page)  # page address
        self.device.data([byte for page in pages[first_page:last_page + 1]
                          for byte in page[first:last + 1]])

    def _sh1106_pages(self, pages: list[bytes]) -> None:
        """SH1106 (page addressing): each changed page from its first changed column."""
        assert self._glass is not None
        offset = self.device._page_address_offset  # RAM column of the glass's first
        for page, (old, new) in enumerate(zip(self._glass, pages, strict=True)):
            span = _changed_span(old, new)
            if span is None:
                continue
            column = offset + span[0]
            self.device.command(0xB0 + page, column & 0x0F, 0x10 | column >> 4)
            self.device.data(list(new[span[0]:span[1] + 1]))


def oled_device(kind: str = "ssd1306", *, bus: Any = None, port: int = 1,
                address: int = 0x3C) -> ssd1306 | sh1106:
    from luma.core.interface.serial import i2c
    from luma.oled.device import sh1106, ssd1306

    if kind not in ("ssd1306", "sh1106"):
        raise ValueError(f"display.kind: {kind!r} is not ssd1306 or sh1106")
    serial = i2c(bus=bus, port=port, address=address) if bus is not None else \
        i2c(port=port, address=address)
    model = ssd1306 if kind == "ssd1306" else sh1106
    return model(serial, width=128, height=64)


def lcd_device(*, bus: Any = None, port: int = 1, address: int = 0x27) -> hd44780:
    from luma.core.interface.serial import pcf8574
    from luma.lcd.device import hd44780

    serial = pcf8574(bus=bus, address=address) if bus is not None else \
        pcf8574(port=port, address=address)
    return hd44780(serial, width=20, height=4)


def lcd_preview(lines: list[str], scale: int = 2) -> Any:
    """A picture of a 20x4 LCD showing ``lines`` (blue backlight, white 5x8-ish cells), for
    documentation; the LCD itself gets the text."""
    from luma.core.legacy import text as legacy_text
    from luma.core.legacy.font import CP437_FONT
    from PIL import Image, ImageDraw

    columns, rows = len(lines[0]), len(lines)
    cell_w, cell_h = 8, 10
    image = Image.new("RGB", (columns * cell_w + 8, rows * cell_h + 8), (20, 60, 170))
    draw = ImageDraw.Draw(image)
    for row, line in enumerate(lines):
        for column, char in enumerate(line):
            x, y = 4 + column * cell_w, 4 + row * cell_h
            draw.rectangle((x, y, x + cell_w - 2, y + cell_h - 2), fill=(30, 75, 190))
            legacy_text(draw, (x, y + 1), char, fill=(235, 240, 255), font=CP437_FONT)
    return image.resize((image.width * scale, image.height * scale), Image.Resampling.NEAREST)
