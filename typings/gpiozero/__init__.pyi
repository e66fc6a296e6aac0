# Stubs for gpiozero 2.0.1.post3 (the parts the project calls), from gpiozero/__init__.py.
from gpiozero.devices import CompositeDevice as CompositeDevice
from gpiozero.devices import Device as Device
from gpiozero.devices import GPIODevice as GPIODevice
from gpiozero.exc import BadPinFactory as BadPinFactory
from gpiozero.exc import GPIOZeroError as GPIOZeroError
from gpiozero.input_devices import Button as Button
from gpiozero.input_devices import DigitalInputDevice as DigitalInputDevice
from gpiozero.input_devices import InputDevice as InputDevice
from gpiozero.output_devices import Buzzer as Buzzer
from gpiozero.output_devices import DigitalOutputDevice as DigitalOutputDevice
from gpiozero.output_devices import OutputDevice as OutputDevice
from gpiozero.output_devices import TonalBuzzer as TonalBuzzer
from gpiozero.pins import Factory as Factory
from gpiozero.pins import Pin as Pin
