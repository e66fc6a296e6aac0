"""What the hub refuses a member of staff, said to them."""

from __future__ import annotations


class StaffError(Exception):
    """A staff request the hub refuses: the message says why (shown in the dashboard)."""
