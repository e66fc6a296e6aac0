# Stubs for gpiozero 2.0.1.post3 (the parts the project calls), from gpiozero/devices.py and
# gpiozero/mixins.py.
from typing import Any

from gpiozero.pins import Factory

class GPIOMeta(type):
    def __new__(mcls, name: str, bases: tuple[type, ...], cls_dict: dict[str, Any]) -> GPIOMeta: ...
    # a SharedMixin class hands out one instance per key; the others, a new one
    def __call__(cls, *args: Any, **kwargs: Any) -> Any: ...

class Device(metaclass=GPIOMeta):
    def __init__(self, *, pin_factory: Factory | None = None) -> None: ...
    def close(self) -> None: ...
    @property
    def closed(self) -> bool: ...
    @property
    def is_active(self) -> bool: ...

class CompositeDevice(Device):
    # the positional and keyword arguments: the devices it is made of (or their names)
    def __init__(self, *args: Device, _order: list[str] | None = None,
                 pin_factory: Factory | None = None, **kwargs: Device) -> None: ...

class GPIODevice(Device):
    def __init__(self, pin: int | str | None = None, *,
                 pin_factory: Factory | None = None) -> None: ...
