# Stubs for gpiozero 2.0.1.post3 (the parts the project calls), from gpiozero/pins/pi.py.
from typing import Any

from gpiozero.pins import Factory, Pin

class PiFactory(Factory): ...

class PiPin(Pin):
    # info: the pin's gpiozero.pins.PinInfo (a named tuple)
    def __init__(self, factory: PiFactory, info: Any) -> None: ...
