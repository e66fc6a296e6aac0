"""The core's behaviour is what ``tests/behaviour.json`` recorded (see ``tests/behaviour.py``):
a refactor that changes an event, a public view or the scripted dealer's inputs fails here."""

from __future__ import annotations

import json

from tests.behaviour import SNAPSHOT, changed, digests


def test_every_case_replays_exactly_as_recorded():
    problems = changed(json.loads(SNAPSHOT.read_text()), digests())
    assert not problems, "behaviour changed:\n" + "\n".join(problems[:20])
