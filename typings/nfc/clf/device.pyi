# Stubs for nfcpy 1.0.4 (the parts the project calls), from nfc/clf/device.py.

from typing import Any

class Device:
    # each driver's own (the base class raises NotImplementedError)
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...
    _path: str  # where the device was found ("usb:001:004", a tty's path), set by its finder
    @property
    def path(self) -> str: ...
    def close(self) -> None: ...
