# Stubs for gpiozero 2.0.1.post3 (the parts the project calls), from gpiozero/pins/rpigpio.py.
from gpiozero.pins.local import LocalPiFactory

class RPiGPIOFactory(LocalPiFactory):
    def __init__(self) -> None: ...
