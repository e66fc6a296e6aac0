"""Adapters between the real (or simulated) hardware and the table core.

Each adapter takes its backend by injection (a gpiozero pin factory, a luma device, a pyserial
port, an nfcpy frontend) and imports heavy libraries lazily; callbacks from their threads only
enqueue inputs for the core.
"""
