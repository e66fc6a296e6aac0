"""The shoe's wire protocol: framing, checksums and the sans-I/O codec (bytes in, frames out).

Pure: no serial library, no clock. The transport that moves the bytes lives in ``hardware/``.
The protocol and the reference firmware arrive with the shoe-link work (issue 3).
"""
