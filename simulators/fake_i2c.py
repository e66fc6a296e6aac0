"""Fake I2C buses that behave as the display controllers on them, for the tests.

luma's real driver code (``luma.oled.device.ssd1306`` / ``sh1106``, ``luma.lcd.device.hd44780``
behind a PCF8574 backpack) writes to these objects exactly as it writes to an smbus2 bus on a Pi;
each emulates its controller's memory from the bytes it receives, so a test sees what the glass
would show: the OLED's pixels, the LCD's characters.
"""

from __future__ import annotations

from typing import Any

# SSD1306/SH1106 commands and how many bytes each takes (the command included).
_COMMAND_LENGTHS = {0x20: 2, 0x21: 3, 0x22: 3, 0x81: 2, 0x8D: 2, 0xA8: 2, 0xAD: 2, 0xD3: 2,
                    0xD5: 2, 0xD8: 2, 0xD9: 2, 0xDA: 2, 0xDB: 2, 0x26: 7, 0x27: 7, 0x29: 6,
                    0x2A: 6, 0xA3: 3}


class OledBus:
    """An SSD1306 (or, with ``sh1106=True``, an SH1106) on an I2C bus: commands (control byte
    0x00) set addressing, data (0x40) fills the display RAM, one byte per 8 vertical pixels."""

    def __init__(self, width: int = 128, height: int = 64, address: int = 0x3C,
                 sh1106: bool = False) -> None:
        self.width = width
        self.pages = height // 8
        self.address = address
        self.sh1106 = sh1106
        self.ram_width = 132 if sh1106 else width
        self.ram = [bytearray(self.ram_width) for _ in range(self.pages)]
        self.column = self.page = 0
        self.col_range = (0, width - 1)
        self.page_range = (0, self.pages - 1)
        self.display_on = False
        self.contrast: int | None = None
        self.writes = 0
        self.bytes = 0

    def write_i2c_block_data(self, address: int, control: int, data: list[int]) -> None:
        if address != self.address:
            raise OSError(121, f"no device at 0x{address:02X}")  # EREMOTEIO, as smbus2
        self.writes += 1
        self.bytes += len(data) + 1
        if control == 0x00:
            self._commands(list(data))
        elif control == 0x40:
            for value in data:
                self._write(value)
        else:
            raise OSError(5, f"control byte 0x{control:02X} is neither command nor data")

    def _commands(self, data: list[int]) -> None:
        i = 0
        while i < len(data):
            code = data[i]
            size = _COMMAND_LENGTHS.get(code, 1)
            args = data[i + 1:i + size]
            i += size
            if code == 0x21:
                self.col_range = (args[0], args[1])
                self.column = args[0]
            elif code == 0x22:
                self.page_range = (args[0], args[1])
                self.page = args[0]
            elif 0xB0 <= code <= 0xB7:
                self.page = code - 0xB0
            elif code <= 0x0F:
                self.column = (self.column & 0xF0) | code
            elif 0x10 <= code <= 0x1F:
                self.column = (self.column & 0x0F) | ((code & 0x0F) << 4)
            elif code == 0xAF:
                self.display_on = True
            elif code == 0xAE:
                self.display_on = False
            elif code == 0x81:
                self.contrast = args[0]

    def _write(self, value: int) -> None:
        if self.page < self.pages and self.column < self.ram_width:
            self.ram[self.page][self.column] = value
        if self.sh1106:
            self.column += 1  # page addressing: the column advances, the page does not
            return
        if self.column >= self.col_range[1]:
            self.column = self.col_range[0]
            self.page = self.page + 1 if self.page < self.page_range[1] else self.page_range[0]
        else:
            self.column += 1

    def image(self) -> Any:
        """The pixels on the glass as a 1-bit PIL image."""
        from PIL import Image

        offset = 2 if self.sh1106 else 0  # the SH1106 shows RAM columns 2..129
        image = Image.new("1", (self.width, self.pages * 8))
        pixels = image.load()
        assert pixels is not None
        for page in range(self.pages):
            for x in range(self.width):
                byte = self.ram[page][x + offset]
                for bit in range(8):
                    if byte >> bit & 1:
                        pixels[x, page * 8 + bit] = 1
        return image


class LcdBus:
    """An HD44780 behind a PCF8574 backpack (P0 RS, P2 E, P3 backlight, P4-P7 D4-D7): nibbles
    latched on E's falling edge; 8-bit mode until a function set switches to 4 bits."""

    ROWS = (0x00, 0x40, 0x14, 0x54)

    def __init__(self, columns: int = 20, rows: int = 4, address: int = 0x27) -> None:
        self.columns = columns
        self.rows = rows
        self.address = address
        self.ddram = bytearray(b" " * 0x80)
        self.cgram = bytearray(64)
        self.address_counter = 0
        self.in_cgram = False
        self.four_bit = False
        self.pending: int | None = None
        self.last = 0
        self.backlight = False
        self.writes = 0

    def write_byte(self, address: int, value: int) -> None:
        if address != self.address:
            raise OSError(121, f"no device at 0x{address:02X}")
        self.writes += 1
        self.backlight = bool(value & 0x08)
        if self.last & 0x04 and not value & 0x04:  # E fell: latch
            self._nibble(value >> 4 & 0x0F, bool(value & 0x01))
        self.last = value

    def _nibble(self, nibble: int, rs: bool) -> None:
        if not self.four_bit:
            self._byte(nibble << 4, rs)
            return
        if self.pending is None:
            self.pending = nibble
            return
        value = self.pending << 4 | nibble
        self.pending = None
        self._byte(value, rs)

    def _byte(self, value: int, rs: bool) -> None:
        if rs:
            if self.in_cgram:
                self.cgram[self.address_counter & 0x3F] = value
            else:
                self.ddram[self.address_counter & 0x7F] = value
            self.address_counter += 1
            return
        if value & 0x80:
            self.address_counter = value & 0x7F
            self.in_cgram = False
        elif value & 0x40:
            self.address_counter = value & 0x3F
            self.in_cgram = True
        elif value & 0x20:
            self.four_bit = not value & 0x10
            self.pending = None
        elif value == 0x01:
            self.ddram[:] = b" " * 0x80
            self.address_counter = 0
            self.in_cgram = False
        elif value & 0xFE == 0x02:
            self.address_counter = 0

    def lines(self) -> list[str]:
        """What the glass shows, row by row."""
        out = []
        for row in range(self.rows):
            start = self.ROWS[row]
            raw = self.ddram[start:start + self.columns]
            out.append("".join(chr(c) if 32 <= c < 127 else "?" for c in raw))
        return out
