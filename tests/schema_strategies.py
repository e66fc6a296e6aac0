"""Hypothesis strategies built from the AsyncAPI document's schemas (the subset of JSON Schema
the document uses), for the hostile-input tests: valid messages first, then mutated.

hypothesis-jsonschema, the library for this, no longer runs with current Hypothesis, and the
document's schemas keep to a small subset: type, enum, const, properties/required, items
(minItems, maxItems, uniqueItems), a map's keys and values (patternProperties, propertyNames,
additionalProperties), anyOf over required fields, bounds, pattern, $ref. An allOf/if-then
refinement is met by filtering on the real validator. What the strategies leave to that filter
must stay rare: a message drawn three times without meeting it discards the whole example (a
hostile test's 40 messages with it), and the tests' health checks say so
(``HealthCheck.filter_too_much``), instead of hypothesis spending minutes on discards.
"""

from __future__ import annotations

import functools
import json
import math
from typing import Any

from hypothesis import strategies as st

from contract.schema import document, problems

_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-1000, 1000),
                     st.floats(-1e6, 1e6, allow_nan=False), st.text(max_size=12))


def _components() -> dict[str, Any]:
    return dict(document()["components"]["schemas"])


def _strategy(schema: dict[str, Any], depth: int = 0) -> st.SearchStrategy[Any]:
    if "$ref" in schema:
        return _strategy(_components()[schema["$ref"].rsplit("/", 1)[-1]], depth)
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if "allOf" in schema:  # the shape is beside it or its first part; the rest refine it
        # (met by filtering on the validator)
        shape = {k: v for k, v in schema.items() if k != "allOf"}
        return _strategy(shape if "type" in shape else schema["allOf"][0], depth)
    if "anyOf" in schema and all(set(b) == {"required"} for b in schema["anyOf"]):
        # one of several sets of fields required (a table's counts or its streams): each
        # set in turn, so that no draw lacks them all
        shape = {k: v for k, v in schema.items() if k != "anyOf"}
        return st.one_of([_strategy({**shape, "required": [*shape.get("required", ()),
                                                           *branch["required"]]}, depth)
                          for branch in schema["anyOf"]])
    kind = schema.get("type")
    if isinstance(kind, list):
        return st.one_of([_strategy({**schema, "type": k}, depth) for k in kind])
    if kind == "object":
        properties = schema.get("properties", {})
        required = set(schema.get("required", ()))
        if not properties:
            return _map(schema, depth)
        return st.fixed_dictionaries(
            {k: _strategy(v, depth + 1) for k, v in properties.items() if k in required},
            optional={k: _strategy(v, depth + 1) for k, v in properties.items()
                      if k not in required})
    if kind == "array":
        items = schema.get("items", {})
        least = schema.get("minItems", 0)
        return st.lists(_strategy(items, depth + 1) if items else _SCALARS, min_size=least,
                        max_size=max(least, min(4, schema.get("maxItems", 4))),
                        unique_by=_canonical if schema.get("uniqueItems") else None)
    if kind == "string":
        if "pattern" in schema:
            return st.from_regex(schema["pattern"], fullmatch=True).filter(
                lambda s: len(s) <= schema.get("maxLength", 64))
        return st.text(min_size=schema.get("minLength", 0),
                       max_size=min(20, schema.get("maxLength", 20)))
    if kind == "integer":
        return st.integers(int(schema.get("minimum", -(2**31))),
                           int(schema.get("maximum", 2**31)))
    if kind == "number":
        return st.floats(schema.get("minimum", -1e9), schema.get("maximum", 1e9),
                         allow_nan=False, allow_infinity=False)
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    return _SCALARS


def _map(schema: dict[str, Any], depth: int) -> st.SearchStrategy[Any]:
    """An object without named properties: its keys as ``patternProperties`` or
    ``propertyNames`` say, its values as their schema or ``additionalProperties`` says (a
    map of table to count, of seat to cards); none at all where nothing is allowed."""
    least = schema.get("minProperties", 0)
    most = max(least, min(3, schema.get("maxProperties", 3)))
    patterns = schema.get("patternProperties") or {}
    extra = schema.get("additionalProperties", True)
    if patterns:
        pattern, values = next(iter(patterns.items()))
        keys: st.SearchStrategy[str] = st.from_regex(pattern, fullmatch=True)
    elif isinstance(extra, dict):
        names = schema.get("propertyNames", {})
        keys = (st.from_regex(names["pattern"], fullmatch=True) if "pattern" in names
                else st.text(min_size=1, max_size=8))
        values = extra
    elif extra is False:
        return st.just({})
    else:
        return st.dictionaries(st.text(min_size=1, max_size=8), _SCALARS, min_size=least,
                               max_size=most)
    return st.dictionaries(keys, _strategy(values, depth + 1), min_size=least, max_size=most)


def _canonical(value: Any) -> str:
    """An item as ``uniqueItems`` compares it (JSON's equality, not Python's hash)."""
    return json.dumps(value, sort_keys=True)


@functools.cache
def valid(name: str) -> st.SearchStrategy[Any]:
    """Messages that keep to the named schema (checked by the validator the parts use): one
    strategy a schema, built once (building it again for every message drawn, hypothesis
    worked out each new strategy's properties anew: most of a hostile test's time)."""
    return _strategy({"$ref": f"#/components/schemas/{name}"}).filter(
        lambda value: not problems(name, value))


# What a careless or hostile peer puts in a field.
POISON = [math.nan, math.inf, -math.inf, 10**23, -(10**23), 2**64, "x" * 200_000, "\x00",
          "\u202etable", [], {}, None, True, "abc", {"clock": "x"}, [[[[[[1]]]]]], -1, 1e308]


@st.composite
def mutated(draw: st.DrawFn, name: str) -> Any:
    """A valid message of ``name`` with one field, at any depth, replaced by poison (or a
    required field dropped)."""
    value = draw(valid(name))
    if not isinstance(value, dict) or not value:
        return draw(st.sampled_from(POISON))
    target = value
    while True:
        key = draw(st.sampled_from(sorted(target)))
        if isinstance(target[key], dict) and target[key] and draw(st.booleans()):
            target = target[key]
            continue
        break
    if draw(st.integers(0, 4)) == 0:
        del target[key]
    else:
        target[key] = draw(st.sampled_from(POISON))
    return value
