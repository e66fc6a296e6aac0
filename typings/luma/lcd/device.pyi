# Stubs for luma.lcd 2.13.0 (the parts the project calls), from luma/lcd/device.py.
from typing import Any

from luma.core.device import parallel_device
from luma.core.interface.serial import i2c

class hd44780(parallel_device):
    # the text shown, lines separated by "\n" (luma.core.virtual.character)
    text: str
    def __init__(self, serial_interface: i2c | None = None, width: int = 16, height: int = 2,
                 undefined: str = "_", selected_font: int = 0, exec_time: float = 0.000001,
                 framebuffer: Any = None, backlight: Any = None, **kwargs: Any) -> None: ...
