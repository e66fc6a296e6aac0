"""The shoe's reference firmware (MicroPython on an RP2040), kept importable from CPython so
that the simulated shoe runs this very code. See README.md beside it."""
