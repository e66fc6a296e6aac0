"""The MQTT contract: every payload validates against docs/asyncapi.json, and the public
events never carry a hole or burn card that the table did not see."""

from __future__ import annotations

import json
import random
import re
import zlib

import pytest

from contract.commands import (
    ClockCommand,
    DeckCheckCommand,
    HandForHandCommand,
    ReplayCommand,
    SeatingCommand,
    StatusCommand,
    parse_command,
)
from contract.envelope import envelope
from contract.schema import document, problems
from contract.views import public_envelope, public_event
from controller.replay import replay
from houses.loaders import builtin_names, load_profile, load_structure
from simulators.dealer_script import session_lines
from tests.privacy import private_leaks, shown_cards


def test_the_document_is_asyncapi_3_with_the_spec_channels():
    doc = document()
    assert doc["asyncapi"].startswith("3.")
    addresses = {c["address"] for c in doc["channels"].values()}
    for leaf in ("events", "private", "status", "state", "cmd/{command}", "cmd-resp", "ack"):
        assert f"pkr/v1/{{venue}}/tables/{{table}}/{leaf}" in addresses
    assert "pkr/v1/{venue}/clock" in addresses


@pytest.mark.parametrize("profile", sorted(builtin_names()))
def test_every_event_validates_and_the_public_view_leaks_nothing(profile):
    rng = random.Random(zlib.crc32(profile.encode()))
    lines = [json.dumps(x) for x in session_lines(
        rng, load_profile(profile), hands=40, irregularity_rate=0.6, game="mixed",
        clock="tda-2024")]
    hand_events: dict[int, list[dict]] = {}
    public_texts: dict[int, list[str]] = {}
    events = replay(lines, load_profile(profile), structure_loader=load_structure)
    for seq, event in enumerate(events, start=1):
        private = envelope(event, venue="v1", table="t1", seq=seq, boot=1, ts_ms=seq)
        assert problems("Envelope", private) == [], event
        shown = public_event(event)
        if shown is not None:
            public = envelope(shown, venue="v1", table="t1", seq=seq, boot=1, ts_ms=seq)
            assert problems("PublicEnvelope", public) == [], shown
        hand = event.get("hand")
        if isinstance(hand, int):
            hand_events.setdefault(hand, []).append(event)
            if shown is not None:
                public_texts.setdefault(hand, []).append(json.dumps(shown))
        if event["type"] == "hand.ended":
            leaks = private_leaks(public_texts.get(hand, []), event,
                                  shown_cards(hand_events[hand]))
            assert leaks == [], (hand, leaks)
            hand_events.pop(hand)
            public_texts.pop(hand, None)


def test_public_views_hide_hole_and_burn_cards():
    hole = {"type": "card", "hand": 1, "n": 1, "card": "As", "deck": "R1", "role": "hole",
            "seat": 3, "street": "preflop", "tag": "04AA", "t": 1.0}
    assert public_event(hole)["card"] is None and "tag" not in public_event(hole)
    exposed = {**hole, "face": "up"}
    assert public_event(exposed)["card"] == "As"
    ended = {"type": "hand.ended", "hand": 1, "outcome": "void", "hole": {"3": ["As", "Kd"]},
             "board": [], "burns": ["2c"], "scrap": [], "out": ["Kd", "B2x"], "level": None,
             "t": 9.0}
    view = public_event(ended)
    assert "hole" not in view and "burns" not in view and view["out"] == ["B2x"]
    assert view["hole_counts"] == {"3": 2}
    ruling = {"type": "ruling", "hand": 1, "action": "void_hand",
              "text": "VOID HAND: Kd twice - deck fouled", "t": 9.0}
    assert "Kd" not in public_event(ruling)["text"]
    assert public_event({"type": "hand.record", "hand": 1}) is None


def test_the_hub_derives_the_very_view_the_table_publishes():
    """One decision, on the typed event: the table's link publishes the view of its outbox's
    JSON; the hub derives it from the private envelope it stored; both are the event's own."""
    lines = [json.dumps(x) for x in session_lines(
        random.Random(11), load_profile("tda-2024"), hands=30, irregularity_rate=0.6,
        game="mixed", clock="tda-2024")]
    for seq, event in enumerate(replay(lines, load_profile("tda-2024"),
                                       structure_loader=load_structure), start=1):
        shown = public_event(event)
        private = envelope(event, venue="v1", table="t1", seq=seq, boot=1, ts_ms=seq)
        published = envelope(shown, venue="v1", table="t1", seq=seq, boot=1,
                             ts_ms=seq) if shown is not None else None
        assert public_envelope(private) == published, event


def test_a_quarantined_journal_line_is_shown_and_an_event_of_no_class_is_not():
    quarantined = {"type": "journal.quarantined", "line": 3, "reason": "ValueError: x",
                   "hand": None, "t": 4.0}
    assert public_event(quarantined) == quarantined
    assert public_event({"type": "mystery", "hand": 1, "card": "As"}) is None


@pytest.mark.parametrize("name,payload,needle", [
    ("seating", b'{"transaction": "a1", "seats": [1, 2]', "not a JSON object"),
    ("seating", b'["a", 1]', "JSON object"),
    ("seating", b'{"seats": [1, 2]}', "transaction"),
    ("teleport", b'{"transaction": "a2"}', "unknown command"),
    ("seating", b'{"transaction": "a3", "seats": "1,2"}', 'seats: "1,2" is not of type "array"'),
    ("seating", b'{"transaction": "a6"}', '"seats" is a required property'),
    ("replay", b'{"transaction": "a4", "from_seq": true}', 'from_seq: true is not of type'),
    ("clock", b'{"transaction": "a5", "action": "pause", "speed": 2}',
     "'speed' was unexpected"),
    ("status", b'{"transaction": "' + b"x" * 5000 + b'"}', "over the 4096-byte limit"),
])
def test_bad_commands_are_refused_with_a_reason(name, payload, needle):
    from contract.commands import CommandError

    with pytest.raises(CommandError, match=needle):
        parse_command(name, payload)


def test_a_replayed_transaction_is_refused():
    from contract.commands import CommandError

    command = parse_command("status", b'{"transaction": "t-1"}')
    with pytest.raises(CommandError, match="already handled") as info:
        parse_command("status", b'{"transaction": "t-1"}', {command.transaction})
    assert info.value.transaction == "t-1"


_COMMANDS = [
    SeatingCommand(seats=[1, 3], moves=[{"seat": 2, "to_table": "t2", "to_seat": 5,
                                         "player": "Anna"}]),
    SeatingCommand(seats=[]),
    ClockCommand(action="sync", structure="tda-2024", elapsed=12.5, running=False),
    DeckCheckCommand(action="start", deck="R1"),
    ReplayCommand(from_seq=3, to_seq=9),
    StatusCommand(),
    HandForHandCommand(state="release"),
]


@pytest.mark.parametrize("command", _COMMANDS, ids=lambda c: c.name)
def test_each_command_keeps_to_its_schema_and_reads_back_as_it_was_sent(command):
    """One class per command, its schema of the same name: what the hub sends validates, and
    the table's parser gives back the same command (an optional field not given stays out)."""
    from contract.wire import encode

    sent = command.to_json()
    assert problems(type(command).__name__, sent) == []
    assert None not in sent.values()
    assert parse_command(command.name, encode(sent).encode()) == command


def test_the_dashboard_sends_a_command_s_fields_and_the_hub_adds_the_transaction():
    from contract.commands import CommandError, command_from_fields, command_kind

    made = command_from_fields(command_kind("seating"), {"seats": [1, 2]})
    again = command_from_fields(command_kind("seating"), {"seats": [1, 2]})
    assert made.seats == [1, 2] and made.transaction != again.transaction
    for fields, needle in (({"transaction": "mine", "seats": [1]}, "without a transaction"),
                           ([1, 2], "a JSON object"), ({"seats": 5}, "seats: 5 is not of type")):
        with pytest.raises(CommandError, match=needle):
            command_from_fields(SeatingCommand, fields)
    with pytest.raises(CommandError, match="unknown command 'launch'"):
        command_kind("launch")
    with pytest.raises(CommandError, match="over the 4096-byte limit a table takes"):
        command_from_fields(SeatingCommand, {"seats": [1], "moves": [
            {"seat": 1, "from_table": "t2", "from_seat": 2, "player": "x" * 16}] * 100})
    with pytest.raises(CommandError, match="greater than the maximum of 10"):
        command_from_fields(SeatingCommand, {"seats": list(range(1, 1500))})


def test_a_field_typed_whole_is_a_whole_number_not_one_written_as_a_float():
    """JSON Schema's integer takes 3.0; the class says int, so 3.0 is refused (a number
    written as a float where a count is meant), and a float field keeps its floats."""
    from contract.commands import CommandError

    with pytest.raises(CommandError, match=r"from_seq: 3\.0 is not a whole number"):
        parse_command("replay", b'{"transaction": "a", "from_seq": 3.0}')
    with pytest.raises(CommandError, match=r"to_seq: 9\.0 is not a whole number"):
        parse_command("replay", b'{"transaction": "a", "from_seq": 3, "to_seq": 9.0}')
    assert parse_command("replay", b'{"transaction": "a", "from_seq": 3}').from_seq == 3
    assert parse_command("clock", b'{"transaction": "a", "action": "sync", "elapsed": 3.0}'
                         ).elapsed == 3.0


def test_a_venue_clock_reading_reads_back_as_the_hub_published_it():
    from contract.snapshots import VenueClockReading
    from contract.wire import encode

    for published in ({"structure": "tda-2024", "elapsed": 61.5, "running": True,
                       "hand_for_hand": False, "level": None, "on_break": True,
                       "remaining": 300.0, "at": 1_700_000_000.25},
                      {"structure": None, "elapsed": 0.0, "running": False,
                       "hand_for_hand": True}):
        assert VenueClockReading.parse(encode(published)).to_json() == published


def test_venue_clock_readings_are_ordered_by_one_rule_of_incarnation_and_revision():
    """The table (``ReadingAges``) and the hub (its echo) order readings by the contract's
    one rule: of the same incarnation, a lower revision is older and a higher one newer;
    readings of different incarnations, or without a version, are not ordered."""
    from contract.snapshots import VenueClockReading

    def reading(incarnation: str | None, revision: int | None) -> VenueClockReading:
        return VenueClockReading(structure=None, elapsed=0.0, running=False,
                                 hand_for_hand=False, incarnation=incarnation,
                                 revision=revision)

    one, two, other, bare = reading("a", 1), reading("a", 2), reading("b", 5), reading(None, None)
    assert one.older_than(two) and two.newer_than(one)
    assert not two.older_than(one) and not one.newer_than(two)
    assert not one.older_than(one) and not one.newer_than(one)  # a republication
    for x, y in ((one, other), (other, one), (one, bare), (bare, one), (one, None)):
        assert not x.older_than(y) and not x.newer_than(y)
    assert one.older_than_version("a", 2) and not two.older_than_version("a", 2)
    assert not one.older_than_version("b", 9) and not bare.older_than_version("a", 2)


def test_the_core_takes_the_table_ids_the_contract_allows():
    """A seating change names other tables by id: the core (which imports no contract) checks
    them with the contract's own pattern."""
    from contract.schema import NAME
    from controller.inputs import TABLE_ID

    assert TABLE_ID.pattern == NAME.pattern


def test_a_topic_parses_back_to_what_built_it():
    """``topics.parse`` is the builders' inverse for every name the contract allows, and
    names nothing for a topic of another shape or with a name the contract refuses."""
    from hypothesis import given
    from hypothesis import strategies as st

    from contract import topics

    names = st.from_regex(r"\A[A-Za-z0-9_-]{1,32}\Z")
    leaves = st.sampled_from(["events", "private", "status", "state", "ack", "cmd-resp",
                              "cmd/seating", "cmd/hand-for-hand"])

    @given(names, names, leaves)
    def round_trip(venue, table, leaf):
        assert topics.parse(topics.table(venue, table, leaf)) == topics.Topic(venue, leaf, table)
        assert topics.parse(topics.venue_clock(venue)) == topics.Topic(venue, "clock")
        assert topics.parse(topics.hub(venue, "cmd/clock")) == topics.Topic(venue, "hub/cmd/clock")
        assert topics.parse(topics.uplink_counts(venue)) == topics.Topic(venue, "uplink/sent")
        assert topics.parse(topics.group_resend(venue)) == topics.Topic(venue, "group/resend")

    round_trip()
    for foreign in ("pkr/v2/v/tables/t1/events", "pkr/v1/v/tables/t1", "pkr/v1/v/tables/t1/",
                    "pkr/v1/v/tables/../events", "pkr/v1/v/tables/t 1/events", "pkr/v1/+/clock",
                    "pkr/v1/v/uplink", "pkr/v1/v/clock/x", "pkr/v1/v/hub", "other/v1/v/clock",
                    "pkr/v1/" + "v" * 33 + "/clock", ""):
        assert topics.parse(foreign) is None, foreign


def test_a_worker_is_subscribed_when_the_broker_says_so_not_when_it_asked():
    """A worker that called itself ready on sending SUBSCRIBE lost a command published at
    once (the broker took the PUBLISH ahead of the SUBSCRIBE): a fresh clone's run saw it.
    Its ``subscribed`` runs on the SUBACK of what it asked, not on another's."""
    import threading

    from contract.mqtt import Connected, Endpoint, MqttWorker, Subscribed

    class Client:
        def subscribe(self, topic, qos=0):
            return 0, 41

    class Worker(MqttWorker):
        def __init__(self):
            super().__init__(Endpoint())
            self.client = Client()
            self.ready, self.marked = threading.Event(), threading.Event()

        def handle(self, item):
            if isinstance(item, Connected):
                self.subscribe("pkr/v1/v1/hub/cmd/clock", 1)
            elif item == "marker":
                self.marked.set()

        def subscribed(self):
            self.ready.set()

    worker = Worker()
    worker._start_thread()
    try:
        worker.put(Connected(False, "Success"))
        worker.put(Subscribed(40))  # another subscription's SUBACK
        worker.put("marker")  # a barrier: handled after both
        assert worker.marked.wait(5) and not worker.ready.is_set()
        worker.put(Subscribed(41))
        assert worker.ready.wait(5)
    finally:
        worker.stop()


@pytest.mark.parametrize(("first", "second", "meet"), [
    ("pkr/v1/v/tables/+/events", "pkr/v1/v/tables/+/events", True),
    ("pkr/v1/v/tables/+/events", "pkr/v1/v/tables/t1/events", True),
    ("pkr/v1/v/tables/+/events", "pkr/v1/v/tables/t1/#", True),  # neither holds the other
    ("pkr/v1/v/tables/+/events", "pkr/v1/v/#", True),
    ("pkr/v1/v/tables/+/events", "+/+/+/+/+/+", True),
    ("pkr/v1/v/tables/+/events", "#", True),
    ("pkr/v1/v/tables/t1/#", "pkr/v1/v/tables/t1", True),  # "#" takes its parent too
    ("pkr/v1/v/tables/+/events", "pkr/v1/v/tables/+/state", False),
    ("pkr/v1/v/tables/+/events", "pkr/v1/v/tables/+", False),
    ("pkr/v1/v/tables/+/events", "pkr/v1/v/tables/+/events/more", False),
    ("pkr/v1/v/tables/+/events", "pkr/v1/w/#", False),
    ("#", "$SYS/broker/load", False),  # no wildcard first matches a "$" topic
    ("+/broker/#", "$SYS/broker/load", False),
    ("$SYS/#", "$SYS/broker/+", True),
])
def test_two_topic_filters_overlap_when_a_topic_matches_both(first, second, meet):
    from contract.mqtt import filters_overlap

    assert filters_overlap(first, second) is meet
    assert filters_overlap(second, first) is meet


def test_a_worker_refuses_to_subscribe_where_a_retired_subscription_drops_messages():
    """A retired subscription's messages are dropped unseen (an older version made it in the
    session): a later version subscribing again to what it matches would lose live messages
    without a word. ``subscribe`` refuses, before anything is sent to the broker."""
    from contract.mqtt import Endpoint, MqttWorker, Retired

    class Client:
        def __init__(self):
            self.asked = []

        def subscribe(self, topic, qos=0):
            self.asked.append(topic)
            return 0, len(self.asked)

    class Worker(MqttWorker):
        def retired(self):
            return (Retired("pkr/v1/v/tables/+/events", "abc1234: events no more"),)

    worker = Worker(Endpoint())
    worker.client = client = Client()
    for meeting in ("pkr/v1/v/tables/t1/events", "pkr/v1/v/tables/t1/#", "pkr/v1/v/#"):
        with pytest.raises(ValueError, match=re.escape(
                f"{meeting} meets pkr/v1/v/tables/+/events, which retired() lists (dropped "
                "in abc1234")):
            worker.subscribe(meeting, 1)
        with pytest.raises(ValueError, match=re.escape(meeting)):
            worker.subscribe([("pkr/v1/v/clock", 1), (meeting, 1)])
    assert client.asked == []
    worker.subscribe([("pkr/v1/v/tables/+/state", 1), ("pkr/v1/v/clock", 1)])
    worker.subscribe("pkr/v1/v/hub/cmd/clock", 1)
    assert client.asked == [[("pkr/v1/v/tables/+/state", 1), ("pkr/v1/v/clock", 1)],
                            "pkr/v1/v/hub/cmd/clock"]


def test_what_follows_stop_in_a_worker_s_batch_is_left_for_finish():
    """A worker takes what waits in one batch: an answer queued just after ``Stop`` (a
    storage thread's commit, whose acknowledgements ``finish`` sends) was dropped with the
    batch. It is put back, ahead of what came later, for ``finish`` to take."""
    import queue
    import threading

    from contract.mqtt import Endpoint, MqttWorker, Stop

    class Worker(MqttWorker):
        def __init__(self):
            super().__init__(Endpoint())
            self.handled, self.left = [], []

        def handle(self, item):
            self.handled.append(item)

        def finish(self):
            while True:
                try:
                    self.left.append(self.queue.get_nowait())
                except queue.Empty:
                    return

    worker = Worker()
    done = threading.Event()
    for item in ("before", Stop(done), "answer", "later"):
        worker.put(item)  # all in the queue before the worker's first batch
    worker._start_thread()
    assert done.wait(5)
    assert worker.handled == ["before"] and worker.left == ["answer", "later"]


def test_a_large_malformed_batch_is_refused_in_a_few_words():
    """A hostile batch as large as the cluster lets through (18,000 malformed elements): the
    refusal names the first problem, its start and its end, in a few hundred characters,
    not every problem with the whole batch quoted in each (which cost the centre 3.4 s and
    400 MB a message, and its log the message whole)."""
    from contract.schema import ContractError, receive_events

    payload = b'{"v": 1, "batch": [' + b'{"seq": "x"},' * 18_000 + b'{}]}'
    with pytest.raises(ContractError) as refused:
        receive_events("Envelope", payload)
    text = str(refused.value)
    assert len(text) < 500, len(text)
    assert text.startswith("not a EnvelopeBatch: batch: [{") and "has more than 100 items" in text


def test_the_commands_schemas_are_as_strict_as_the_code_that_takes_them():
    """A command's closed fields are closed in the contract too, with the code's own values
    (a value the table would refuse is refused at the gate, by the schema, for every reader
    of the AsyncAPI document); seats are distinct seat numbers."""
    from controller.inputs import CLOCK_ACTIONS, DECK_CHECK_ACTIONS, HAND_FOR_HAND
    from hub.venue_clock import ACTIONS

    schemas = document()["components"]["schemas"]
    assert schemas["ClockCommand"]["properties"]["action"]["enum"] == list(CLOCK_ACTIONS)
    assert schemas["DeckCheckCommand"]["properties"]["action"]["enum"] == list(
        DECK_CHECK_ACTIONS)
    assert schemas["HandForHandCommand"]["properties"]["state"]["enum"] == list(HAND_FOR_HAND)
    assert schemas["HubClockCommand"]["properties"]["action"]["enum"] == list(ACTIONS)
    assert problems("SeatingCommand", {"transaction": "x", "seats": [1, 1]})
    assert problems("SeatingCommand", {"transaction": "x", "seats": [0]})
    assert problems("SeatingCommand", {"transaction": "x", "seats": [11]})
    assert problems("SeatingCommand", {"transaction": "x", "seats": ["1"]})
    assert not problems("SeatingCommand", {"transaction": "x", "seats": [1, 10], "version": 3})
    assert problems("HandForHandCommand", {"transaction": "x", "state": "maybe"})


def test_a_busy_worker_says_what_it_is_on_and_what_waits_behind_it():
    """``QueueWorker.busy``, logged when a web request waits for the floor in vain: the item
    it is on, and every item behind it, those of its batch (off the queue already) too."""
    import threading

    from contract.worker import QueueWorker

    release = threading.Event()
    started = threading.Event()

    class Stuck(QueueWorker):
        worker_name = "stuck"

        def handle(self, item: object) -> None:
            if item == "the long one":
                started.set()
                release.wait(10)

    worker = Stuck()
    # Queued before the thread starts: it takes all three in one batch.
    for item in ("the long one", "next", "last"):
        worker.put(item)
    worker._start_thread()
    try:
        assert started.wait(10)
        said = worker.busy()
        assert said.startswith("the stuck worker has been on the long one for "), said
        assert ", 2 waiting; its stack, innermost last:" in said, said
        assert "release.wait(10)" in said, said
    finally:
        release.set()
        worker._stop_thread(5)
    assert worker.busy() == "the stuck worker is between items, 0 waiting"

