# Stubs for nfcpy 1.0.4 (the parts the project calls), from nfc/clf/__init__.py.
from typing import Any

from nfc.clf import device as device
from nfc.clf import transport as transport
from nfc.clf.device import Device

class ContactlessFrontend:
    device: Device | None  # None until opened, and after close
    def __init__(self, path: str | None = None) -> None: ...
    # True if a reader was found at the search path ("usb", "tty:AMA0:pn532", "udp"...)
    def open(self, path: str) -> bool: ...
    def close(self) -> None: ...
    # options: rdwr, llcp, card (dicts of their own options), terminate (a callable)...;
    # returns None (terminated or no options), a bool, or the activated object
    def connect(self, **options: Any) -> Any: ...
