# Stubs for luma.oled 3.16.0 (the parts the project calls), from luma/oled/device/__init__.py.
from typing import Any

from luma.core.device import device
from luma.core.interface.serial import i2c

class sh1106(device):
    _page_address_offset: int  # the RAM column of the glass's first
    def __init__(self, serial_interface: i2c | None = None, width: int = 128,
                 height: int = 64, rotate: int = 0, page_address_offset: int = 0x02,
                 **kwargs: Any) -> None: ...

class ssd1306(device):
    _colstart: int  # the RAM column of the glass's first
    def __init__(self, serial_interface: i2c | None = None, width: int = 128,
                 height: int = 64, rotate: int = 0, **kwargs: Any) -> None: ...
