"""JSON on the wire, strictly: what every boundary (MQTT payloads, HTTP bodies, journal and outbox
lines) decodes with, and what everything the project emits is encoded with.

Python's ``json`` accepts ``NaN``, ``Infinity`` and ``1e400`` (read as infinity), integers of any
size, lone surrogates and ``\\u0000``, and raises ``RecursionError`` on deep nesting; it writes
``NaN`` and ``Infinity`` by default, which browsers' ``JSON.parse`` refuses. One infinite clock
reading crashed every table's screen code, so here each of these is refused with a
``WireError`` naming what is wrong: orjson parses and refuses NaN, Infinity, ``1e400``, lone
surrogates and text that is not UTF-8; one walk then refuses numbers past 2^53 - 1, an escaped
NUL and nesting past 32 levels. (A key given twice is not refused: every reader here keeps
the last, so it cannot mean two things.) Pure: bytes in, values out.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

MAX_DEPTH = 32  # no message of the contract nests deeper than a few levels
MAX_INTEGER = 2**53 - 1  # what a browser's JSON.parse and a BIGINT column both hold exactly
DEFAULT_MAX_BYTES = 256 * 1024


class WireError(ValueError):
    """A payload that is not the strict JSON the contract allows: the sender's fault."""


def _out_of_range(number: int | float) -> WireError:
    text = str(number)
    if len(text) > 40:
        text = text[:40] + "..."
    return WireError(f"number {text} is out of range (at most {MAX_INTEGER})")


def _check_tree(value: Any, nul: bool) -> None:
    """What orjson lets through: numbers past MAX_INTEGER (an integer past 64 bits comes as a
    float), nesting past MAX_DEPTH and, when the text escapes one (``nul``), NUL in strings
    and keys. One walk with a stack of its own."""
    if type(value) is not dict and type(value) is not list:
        _check_item(value, nul)
        return
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        container, depth = stack.pop()
        if depth >= MAX_DEPTH:
            raise WireError(f"nested deeper than {MAX_DEPTH} levels")
        if type(container) is dict:
            if nul:
                for key in container:
                    _check_item(key, nul)
            items = container.values()
        else:
            items = container
        for item in items:
            kind = type(item)
            if kind is dict or kind is list:
                stack.append((item, depth + 1))
            elif kind is int or kind is float:  # (inlined: this is most of the walk)
                # 1e308 keeps to a schema's "integer" (its fraction is zero): a number past
                # what an integer may be is refused however it is written.
                if not -MAX_INTEGER <= item <= MAX_INTEGER:
                    raise _out_of_range(item)
            elif nul and kind is str:
                _check_item(item, nul)


def _check_item(value: Any, nul: bool) -> None:
    kind = type(value)
    if (kind is int or kind is float) and not -MAX_INTEGER <= value <= MAX_INTEGER:
        raise _out_of_range(value)
    if nul and kind is str and "\x00" in value:
        raise WireError("text holds a NUL character")


def decode(payload: bytes | bytearray | memoryview | str, *,
           max_bytes: int = DEFAULT_MAX_BYTES) -> Any:
    """The JSON value in ``payload``; ``WireError`` if it is not strict, bounded JSON in UTF-8."""
    if isinstance(payload, memoryview):
        payload = payload.tobytes()
    size = (len(payload.encode("utf-8", "surrogatepass")) if isinstance(payload, str)
            else len(payload))
    if size > max_bytes:
        raise WireError(f"{size} bytes is over the {max_bytes}-byte limit")
    try:
        # orjson refuses NaN and Infinity, numbers not finite as a float, lone surrogates,
        # text that is not UTF-8 and nesting past 1024 levels; it parses a backlog batch in
        # a third of the time of Python's json with the hooks these checks took there.
        value = orjson.loads(payload)
    except orjson.JSONDecodeError as exc:
        if not isinstance(payload, str):  # orjson says "not valid UTF-8" without where
            try:
                bytes(payload).decode("utf-8")
            except UnicodeDecodeError as bad:
                raise WireError(f"not UTF-8 ({bad.reason} at byte {bad.start})") from None
        raise WireError(f"not JSON: {exc}") from None
    # NUL can only come from an escape: most texts have none, and their strings are not
    # looked at.
    escaped_nul = ("\\u0000" in payload if isinstance(payload, str)
                   else b"\\u0000" in payload)
    _check_tree(value, escaped_nul)
    return value


def encode(value: Any) -> str:
    """Compact JSON that every reader can parse: ``ValueError`` rather than write NaN or
    Infinity (a bug of ours, caught here instead of in every browser and table)."""
    return json.dumps(value, separators=(",", ":"), allow_nan=False, ensure_ascii=False)
