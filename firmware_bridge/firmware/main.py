# The shoe firmware's boot script: the board runs main.py, from source, at power-up. The
# firmware is shoe_main.py and the modules beside it, compiled by mpy-cross (README.md).

# First of all, Ctrl-C off: the host's frames are binary, and a byte 0x03 in them (an ACK for
# seq 3, a COBS code byte; the host sends one as soon as it opens the port) would raise
# KeyboardInterrupt on USB CDC stdin, even while the imports below run.
import micropython

micropython.kbd_intr(-1)

from shoe_main import run  # noqa: E402

# On a board main.py runs as __main__; a test imports it (tests/micropython/board.py).
if __name__ == "__main__":
    run()
