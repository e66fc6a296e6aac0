"""The tests' stand-ins held to the Protocols they replace, by mypy (``make typecheck``: this
module is in ``[tool.mypy] files``; the test modules it imports are read, not checked).

A stand-in that drifts from its Protocol (a method renamed, one missing, an argument added)
fails here, not in a test that passes against a fake the real code would not accept. Each
stand-in's class is assigned to the Protocol it replaces (mypy checks its instances against
it); everything is under TYPE_CHECKING: importing this module runs nothing.

Not held here yet: the stand-ins made inside a test function, which no module can name (the
paho clients of tests/test_contract.py and tests/test_reporting.py, partial: a ``subscribe``
and a ``publish`` that answers no ``Receipt``; the central recorder of
tests/test_multi_venue.py that overrides NATS's ``publish``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hub.service import FloorLink
    from tablectl.parts import Buzzer, Display, HubLink
    from tests import (
        conftest,
        test_daemon_parts,
        test_hub,
        test_seating_truth,
        test_security_exports,
    )

    # The hub's MQTT connection, as the floor's use cases see it (hub/floor_worker.py).
    _hub: type[FloorLink] = test_hub._Link
    _seating: type[FloorLink] = test_seating_truth._Link
    _exports: type[FloorLink] = test_security_exports._Link
    _quiet: type[FloorLink] = conftest.QuietLink

    # The daemon's parts (tablectl/parts.py): the display, the buzzer, the link to the hub.
    _display: type[Display] = test_daemon_parts.FakeDisplay
    _buzzer: type[Buzzer] = test_daemon_parts.FakeBuzzer
    _link: type[HubLink] = test_daemon_parts.FakeLink
