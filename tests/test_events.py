"""The core's typed events (``controller/events.py``): JSON only at the edges, exactly as the
replay contract writes it, and the same shape as the AsyncAPI document's schemas say."""

from __future__ import annotations

import dataclasses
import enum
import json
import random
import types
import typing

import pytest

from contract.schema import document
from controller import events as ev
from controller.replay import replay_events
from houses.loaders import builtin_names, load_profile, load_structure
from simulators.dealer_script import session_lines
from tests.conftest import SCENARIOS

# The envelope carries these itself (contract/envelope.py): they are not in its data.
ENVELOPE_KEYS = {"type", "hand", "dealer"}
# The public view (contract/views.py) adds these to what the core wrote.
PUBLIC_VIEW_KEYS = {"hole_counts"}
SCHEMAS = {"hand.started": "HandStartedData", "card": "CardData",
           "irregularity": "IrregularityData", "ruling": "RulingData",
           "hand.ended": "HandEndedData", "hand.record": "HandRecordData",
           "level": "LevelData", "clock.hold": "ClockHoldData",
           "journal.quarantined": "JournalQuarantinedData"}
JSON_TYPES = {int: {"integer", "number"}, float: {"number"}, str: {"string"},
              bool: {"boolean"}, list: {"array"}, dict: {"object"}, type(None): {"null"}}


def _sessions():
    import json

    for profile in builtin_names():
        lines = session_lines(random.Random(3), load_profile(profile), hands=40, game="mixed",
                              irregularity_rate=0.4, clock="tda-2024")
        yield profile, [json.dumps(line) for line in lines]
    for path in sorted(SCENARIOS.glob("*.jsonl")):
        yield "tda-2024", path.read_text().splitlines()


def test_every_event_goes_to_json_and_back_unchanged():
    seen = set()
    for profile, lines in _sessions():
        for event in replay_events(lines, load_profile(profile),
                                   structure_loader=load_structure):
            data = event.to_json()
            assert ev.from_json(data) == event
            assert ev.from_json(data).to_json() == data
            seen.add(type(event))
    assert {ev.HandStarted, ev.Card, ev.Ruling, ev.HandEnded, ev.HandRecord, ev.Level} <= seen
    # every kind of irregularity and ruling, each its own class (a wrong game is dealt in
    # tests/test_table_features.py)
    kinds = {cls for cls in ev.EVENT_CLASSES if issubclass(cls, ev.Irregularity | ev.Ruling)}
    assert kinds - {ev.WrongGame} <= seen


def test_a_json_object_that_is_no_event_is_refused():
    with pytest.raises(ev.EventDataError, match="no event of type"):
        ev.from_json({"type": "nonsense"})
    with pytest.raises(ev.EventDataError, match="not a card event"):
        ev.from_json({"type": "card", "hand": 1})


def _json_types(annotation: object) -> set[str]:
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return set().union(*(_json_types(a) for a in args))
    origin = typing.get_origin(annotation) or annotation
    if isinstance(origin, type) and issubclass(origin, enum.StrEnum):
        return {"string"}
    if origin is typing.Any:
        return {"integer", "number", "string", "boolean", "array", "object", "null"}
    return JSON_TYPES[origin]  # type: ignore[index]


def _schema_types(schema: dict) -> set[str]:
    if "type" in schema:
        kinds = schema["type"]
        return {kinds} if isinstance(kinds, str) else set(kinds)
    values = schema.get("enum", [schema["const"]] if "const" in schema else [])
    names = {bool: "boolean", int: "integer", str: "string", type(None): "null"}
    return {names[type(v)] for v in values} if values else set()


def _written_always(f: dataclasses.Field) -> bool:
    return not f.metadata.get("omit_none")


def _described(cls: type[ev.Event]) -> tuple[dict[str, dict], list[str]]:
    """The data keys the class's schema gives it, each with its schema (for an irregularity
    or a ruling, those of its kind's shape), and the keys the schema requires."""
    schema = document()["components"]["schemas"][SCHEMAS[cls.TYPE]]
    properties = {k: v for k, v in schema["properties"].items() if k not in PUBLIC_VIEW_KEYS}
    required = list(schema.get("required", []))
    keys: typing.Iterable[str] = properties
    if issubclass(cls, ev.Irregularity):
        shape = next(s for s in schema["oneOf"] if s["properties"]["kind"]["const"] == cls.KIND)
        keys, required = shape["propertyNames"]["enum"], required + shape["required"]
    elif issubclass(cls, ev.Ruling):
        shapes = _ruling_shapes(schema)
        if cls.RULES_ON:
            (then,) = {json.dumps(shapes[pair]): shapes[pair] for pair in cls.RULES_ON}.values()
            keys, required = then["propertyNames"]["enum"], required + then.get("required", [])
        else:  # any other ruling: what every shape has
            keys = set.intersection(*(set(t["propertyNames"]["enum"]) for t in shapes.values()))
    return {k: properties[k] for k in keys}, required


def _ruling_shapes(schema: dict) -> dict[tuple[str, str | None], dict]:
    return {(c["if"]["properties"]["action"]["const"],
             c["if"]["properties"].get("reason", {}).get("const")): c["then"]
            for c in schema["allOf"]}


def test_the_schema_has_a_shape_for_every_kind_of_irregularity_and_ruling():
    schemas = document()["components"]["schemas"]
    kinds = [s["properties"]["kind"]["const"] for s in schemas["IrregularityData"]["oneOf"]]
    assert kinds == list(ev.IrregularityKind) == schemas["IrregularityData"]["properties"][
        "kind"]["enum"]
    assert set(_ruling_shapes(schemas["RulingData"])) == set(ev._RULINGS)
    assert schemas["RulingData"]["properties"]["action"]["enum"] == list(ev.RulingAction)
    assert schemas["RulingData"]["properties"]["reason"]["enum"] == list(ev.RulingReason)


def test_a_cards_role_street_and_face_and_the_shoes_state_are_the_schemas_enums():
    """Closed vocabularies, one list each: the core's StrEnums are the contract's enums, so a
    value the core never writes is refused at every boundary that validates."""
    schemas = document()["components"]["schemas"]
    card, state = schemas["CardData"]["properties"], schemas["State"]["properties"]
    assert card["role"]["enum"] == list(ev.CardRole)
    assert card["face"] == {"const": ev.Face.UP}  # a card seen face down is written without
    for name, key in (("CardData", "street"), ("RulingData", "street"),
                      ("IrregularityData", "street"), ("IrregularityData", "betting")):
        assert schemas[name]["properties"][key]["enum"] == list(ev.Street), (name, key)
    assert state["street"]["enum"] == [*ev.Street, None]
    assert state["shoe"]["enum"] == [s for s in ev.ShoeState if s != ev.ShoeState.READS_LOST]
    assert schemas["IrregularityData"]["properties"]["state"]["enum"] == [
        s for s in ev.ShoeState if s != ev.ShoeState.OK]


def test_the_public_schema_shows_the_card_of_the_kinds_whose_class_shows_it():
    (rule,) = [part for part in document()["components"]["schemas"]["PublicEnvelope"]["allOf"]
               if part.get("if", {}).get("properties", {}).get("type") == {
                   "const": "irregularity"}]
    hidden_unless = rule["if"]["properties"]["data"]["properties"]["kind"]["not"]["enum"]
    assert set(hidden_unless) == {cls.KIND for cls in ev.EVENT_CLASSES
                                  if issubclass(cls, ev.Irregularity) and cls.CARD_SEEN}


@pytest.mark.parametrize("cls", [c for c in ev.EVENT_CLASSES if c.TYPE in SCHEMAS],
                         ids=lambda c: c.__name__)
def test_each_event_class_is_what_its_asyncapi_schema_says(cls):
    hints = typing.get_type_hints(cls)
    fields = {ev._JSON_NAME.get(f.name, f.name): f for f in dataclasses.fields(cls)}
    data_fields = {k: f for k, f in fields.items() if k not in ENVELOPE_KEYS}
    described, required = _described(cls)
    assert set(described) == set(data_fields), (
        f"{SCHEMAS[cls.TYPE]} describes {sorted(set(described) - set(data_fields))} that "
        f"{cls.__name__} lacks, and lacks {sorted(set(data_fields) - set(described))}")
    for key, f in data_fields.items():
        allowed = _schema_types(described[key])
        python = _json_types(hints[f.name])
        if not _written_always(f):
            python.discard("null")  # None is not written
        if allowed:
            assert python <= allowed | ({"number"} if "integer" in allowed else set()) | (
                {"integer"} if "number" in allowed else set()), (key, python, allowed)
        vocabulary = ev._vocabulary(hints[f.name])
        if vocabulary is not None:  # closed in the schema too, to values the class has
            schema = described[key]
            closed = schema.get("enum", [schema["const"]] if "const" in schema else None)
            assert closed is not None, f"{SCHEMAS[cls.TYPE]}.{key} is open: {vocabulary}"
            assert set(closed) - {None} <= set(vocabulary), (key, closed, list(vocabulary))
    for key in required:
        assert key in data_fields and _written_always(data_fields[key]), key


def test_every_event_class_has_a_type_and_every_type_one_class():
    types_ = [cls.TYPE for cls in ev.EVENT_CLASSES]
    assert all(types_)
    shared = {t for t in types_ if types_.count(t) > 1}
    # two shapes each, told apart by their state; a shape a kind
    assert shared == {"shoe", "break", "irregularity", "ruling"}
