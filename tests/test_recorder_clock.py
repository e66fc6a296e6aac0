"""The recorder measures each table's clock against the hub's by a status question, timed
both ways (hub/recorder.py). An answer too slow to measure by (a loaded hub, a link
retransmitting) asks again, a few times; once measured, or past the tries, nothing more is
asked."""

from __future__ import annotations

import json
from typing import Any

from contract.envelope import Stream
from hub import recorder as recorder_module
from hub.recorder import CLOCK_ROUND_TRIP_S, CLOCK_TRIES, Recorder


class Wall:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


class Asked:
    """The broker's side: the status questions the recorder publishes."""

    def __init__(self) -> None:
        self.questions: list[str] = []

    def publish(self, topic: str, payload: str, qos: int = 0) -> None:
        assert topic.endswith("/cmd/status")
        self.questions.append(json.loads(payload)["transaction"])


class Offsets:
    def __init__(self) -> None:
        self.set: list[tuple[Stream, int]] = []

    def set_clock_offset(self, stream: Stream, offset_ms: int) -> int:
        self.set.append((stream, offset_ms))
        return 0

    def commit(self) -> None:
        """(The recorder commits a measured offset at once.)"""


def _recorder(tmp_path: Any) -> tuple[Recorder, Wall, Asked, Offsets]:
    wall = Wall()
    recorder = Recorder(tmp_path / "rec.db", venue="v", wall=wall)
    asked, offsets = Asked(), Offsets()
    recorder.client = asked  # type: ignore[assignment]
    recorder._db = offsets  # type: ignore[assignment]
    return recorder, wall, asked, offsets


def _answer(recorder: Recorder, stream: Stream, transaction: str, table_ms: int) -> None:
    recorder._clock_answer(stream.table, {"transaction": transaction, "ts": table_ms,
                                          "incarnation": stream.incarnation})


def test_an_answer_too_slow_to_measure_by_asks_again_and_the_next_one_measures(tmp_path):
    recorder, wall, asked, offsets = _recorder(tmp_path)
    stream = Stream("t1", "a" * 32)
    recorder._ask_status(stream)
    recorder._ask_status(stream)  # heard online again: asked once a run
    assert len(asked.questions) == 1
    wall.now += CLOCK_ROUND_TRIP_S + 1  # the answer comes too late to tell anything
    _answer(recorder, stream, asked.questions[0], 0)
    assert offsets.set == [] and len(asked.questions) == 2  # asked again, at once
    wall.now += 0.2
    _answer(recorder, stream, asked.questions[1], int(wall.now * 1000) - 2_000)
    assert offsets.set == [(stream, 2_000 - 100)]  # the hub 2 s ahead, less half the trip
    assert len(asked.questions) == 2


def test_a_link_always_too_slow_is_asked_a_few_times_and_then_left(tmp_path):
    recorder, wall, asked, offsets = _recorder(tmp_path)
    stream = Stream("t1", "b" * 32)
    recorder._ask_status(stream)
    for answered in range(CLOCK_TRIES + 2):
        if answered < len(asked.questions):
            wall.now += CLOCK_ROUND_TRIP_S + 1
            _answer(recorder, stream, asked.questions[answered], 0)
    assert len(asked.questions) == recorder_module.CLOCK_TRIES and offsets.set == []
