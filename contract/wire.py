"""JSON on the wire, strictly: what every boundary (MQTT payloads, HTTP bodies, journal and outbox
lines) decodes with, and what everything the project emits is encoded with.

Python's ``json`` accepts ``NaN``, ``Infinity`` and ``1e400`` (read as infinity), integers of any
size, lone surrogates and ``\\u0000``, and raises ``RecursionError`` on deep nesting; it writes
``NaN`` and ``Infinity`` by default, which browsers' ``JSON.parse`` refuses. One infinite clock
reading crashed every table's screen code, so here each of these is refused with a
``WireError`` naming what is wrong. (A key given twice is not refused: every reader here keeps
the last, so it cannot mean two things.) Pure: bytes in, values out.
"""

from __future__ import annotations

import json
import math
from typing import Any

MAX_DEPTH = 32  # no message of the contract nests deeper than a few levels
MAX_INTEGER = 2**53 - 1  # what a browser's JSON.parse and a BIGINT column both hold exactly
DEFAULT_MAX_BYTES = 256 * 1024


class WireError(ValueError):
    """A payload that is not the strict JSON the contract allows: the sender's fault."""


def _refuse_constant(name: str) -> Any:
    raise WireError(f"{name} is not a JSON number (NaN and Infinity are refused)")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise WireError(f"number {text[:40]} is out of range (it is not finite as a float)")
    # 1e308 keeps to a schema's "integer" (its fraction is zero) and int() of it has 309
    # digits: a number past what an integer may be is refused however it is written.
    if abs(value) > MAX_INTEGER:
        raise WireError(f"number {text[:40]} is out of range (at most {MAX_INTEGER})")
    return value


def _bounded_int(text: str) -> int:
    if len(text) > 17:  # the sign and 16 digits: more can only be out of range
        raise WireError(f"integer {text[:40]}... is out of range (at most {MAX_INTEGER})")
    value = int(text)
    if not -MAX_INTEGER <= value <= MAX_INTEGER:
        raise WireError(f"integer {text} is out of range (at most {MAX_INTEGER})")
    return value


def _check_tree(value: Any, depth: int, surrogates: bool) -> None:
    """What the parser lets through in strings (NUL, lone surrogates: only from escapes) and
    nesting past MAX_DEPTH."""
    kind = type(value)
    if kind is str:
        _check_text(value, surrogates)
    elif kind is dict or kind is list:
        if depth >= MAX_DEPTH:
            raise WireError(f"nested deeper than {MAX_DEPTH} levels")
        if kind is dict:
            for key, item in value.items():
                _check_text(key, surrogates)
                _check_tree(item, depth + 1, surrogates)
        else:
            for item in value:
                _check_tree(item, depth + 1, surrogates)


def _check_text(text: str, surrogates: bool) -> None:
    if "\x00" in text:
        raise WireError("text holds a NUL character")
    if surrogates:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise WireError("text holds a lone surrogate (not UTF-8)") from None


def decode(payload: bytes | bytearray | memoryview | str, *,
           max_bytes: int = DEFAULT_MAX_BYTES) -> Any:
    """The JSON value in ``payload``; ``WireError`` if it is not strict, bounded JSON in UTF-8."""
    if isinstance(payload, str):
        text = payload
        size = len(text.encode("utf-8", "surrogatepass"))
    else:
        size = len(payload)
        if size > max_bytes:
            raise WireError(f"{size} bytes is over the {max_bytes}-byte limit")
        try:
            text = bytes(payload).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise WireError(f"not UTF-8 ({exc.reason} at byte {exc.start})") from None
    if size > max_bytes:
        raise WireError(f"{size} bytes is over the {max_bytes}-byte limit")
    try:
        value = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float,
                           parse_int=_bounded_int)
    except WireError:
        raise
    except RecursionError:
        raise WireError(f"nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as exc:  # json.JSONDecodeError, and int() of a huge digit string
        raise WireError(f"not JSON: {exc}") from None
    escapes = "\\u" in text
    if escapes or text.count("{") + text.count("[") > MAX_DEPTH:
        # NUL and lone surrogates can only come from escapes, deep nesting only from many
        # brackets: most messages have neither and skip this walk.
        _check_tree(value, 0, escapes)
    return value


def encode(value: Any) -> str:
    """Compact JSON that every reader can parse: ``ValueError`` rather than write NaN or
    Infinity (a bug of ours, caught here instead of in every browser and table)."""
    return json.dumps(value, separators=(",", ":"), allow_nan=False, ensure_ascii=False)
