"""JSON on the wire, strictly: what every boundary (MQTT payloads, HTTP bodies, journal and outbox
lines) decodes with, and what everything the project emits is encoded with.

Python's ``json`` accepts ``NaN``, ``Infinity`` and ``1e400`` (read as infinity), integers of any
size, duplicate keys, lone surrogates and ``\\u0000``, and raises ``RecursionError`` on deep
nesting; it writes ``NaN`` and ``Infinity`` by default, which browsers' ``JSON.parse`` refuses.
One infinite clock reading crashed every table's screen code, so here each of these is refused
with a ``WireError`` naming what is wrong. Pure: bytes in, values out.
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
    return value


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > 16:
        raise WireError(f"integer {text[:40]}... is out of range (at most {MAX_INTEGER})")
    value = int(text)
    if abs(value) > MAX_INTEGER:
        raise WireError(f"integer {text} is out of range (at most {MAX_INTEGER})")
    return value


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise WireError(f"key {key[:40]!r} appears twice in one object")
            seen.add(key)
    return result


def _check_text(value: str, where: str) -> None:
    if "\x00" in value:
        raise WireError(f"{where}: text holds a NUL character")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise WireError(f"{where}: text holds a lone surrogate (not UTF-8)") from None


def _check_tree(value: Any, depth: int, where: str) -> None:
    if depth > MAX_DEPTH:
        raise WireError(f"nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, str):
        _check_text(value, where)
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_text(key, where)
            _check_tree(item, depth + 1, f"{where}/{key[:40]}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check_tree(item, depth + 1, f"{where}/{index}")


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
                           parse_int=_bounded_int, object_pairs_hook=_no_duplicates)
    except WireError:
        raise
    except RecursionError:
        raise WireError(f"nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as exc:  # json.JSONDecodeError, and int() of a huge digit string
        raise WireError(f"not JSON: {exc}") from None
    _check_tree(value, 0, "")
    return value


def encode(value: Any) -> str:
    """Compact JSON that every reader can parse: ``ValueError`` rather than write NaN or
    Infinity (a bug of ours, caught here instead of in every browser and table)."""
    return json.dumps(value, separators=(",", ":"), allow_nan=False, ensure_ascii=False)
