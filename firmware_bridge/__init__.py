"""The shoe's wire protocol: framing, checksums and the sans-I/O codec (bytes in, frames out).

Pure: no serial library, no clock. The transport that moves the bytes lives in ``hardware/``.
The protocol is ``PROTOCOL.md`` (golden frames in ``vectors.json``); the shoe's reference
firmware, MicroPython, is ``firmware/`` (docs/shoe.md).
"""
