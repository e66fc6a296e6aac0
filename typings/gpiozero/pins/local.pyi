# Stubs for gpiozero 2.0.1.post3 (the parts the project calls), from gpiozero/pins/local.py.
from gpiozero.pins.pi import PiFactory

class LocalPiFactory(PiFactory): ...
