# Stubs for gpiozero 2.0.1.post3 (the parts the project calls), from
# gpiozero/input_devices.py and gpiozero/mixins.py (the events).
from collections.abc import Callable

from gpiozero.devices import GPIODevice
from gpiozero.pins import Factory

# mixins.event: a callable taking nothing or the device (gpiozero inspects which), or None.
_Handler = Callable[..., object] | None

class InputDevice(GPIODevice):
    # pull_up None: floating, active_state then says which level is active
    def __init__(self, pin: int | str | None = None, *, pull_up: bool | None = False,
                 active_state: bool | None = None,
                 pin_factory: Factory | None = None) -> None: ...

class DigitalInputDevice(InputDevice):
    when_activated: _Handler
    when_deactivated: _Handler
    def __init__(self, pin: int | str | None = None, *, pull_up: bool | None = False,
                 active_state: bool | None = None, bounce_time: float | None = None,
                 pin_factory: Factory | None = None) -> None: ...

class Button(DigitalInputDevice):
    def __init__(self, pin: int | str | None = None, *, pull_up: bool | None = True,
                 active_state: bool | None = None, bounce_time: float | None = None,
                 hold_time: float = 1, hold_repeat: bool = False,
                 pin_factory: Factory | None = None) -> None: ...
    # Button.is_pressed = Button.is_active
    @property
    def is_pressed(self) -> bool: ...
