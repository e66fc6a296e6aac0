# Stubs for gpiozero 2.0.1.post3 (the parts the project calls), from gpiozero/pins/lgpio.py.
from gpiozero.pins.local import LocalPiFactory

class LGPIOFactory(LocalPiFactory):
    def __init__(self, chip: int | None = None) -> None: ...
