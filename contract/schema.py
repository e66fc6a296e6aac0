"""The AsyncAPI document (``contract/asyncapi.json``, shipped in the package; ``docs/`` links
to it) as the gate of every MQTT boundary.

``receive(schema, payload)`` is what a table daemon or the hub calls on every message it
consumes, before acting on it: strict JSON (``contract/wire.py``) that keeps to the named
schema of the document, or ``ContractError`` saying what is wrong. The validators are
jsonschema-rs: with the reference ``jsonschema`` package a checked envelope cost 69-97 times
parsing it, with jsonschema-rs 2.4-3.7 times (``tablectl bench contract``), and the recorder
takes thousands a second.
``validate`` and ``problems`` serve the tests with the same validators.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from importlib import resources
from typing import Any

from contract.wire import WireError, decode

# A table id or venue as a topic level: what make-certs.sh issues (no MQTT wildcards, no '/').
NAME = re.compile(r"^[A-Za-z0-9_-]{1,32}$")


class ContractError(ValueError):
    """A message that breaks the contract: the sender's fault; it is refused, never acted on."""


@lru_cache(maxsize=1)
def document() -> dict[str, Any]:
    text = resources.files("contract").joinpath("asyncapi.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


@lru_cache(maxsize=32)
def _validator(schema: str) -> Any:
    import jsonschema_rs

    if schema not in document()["components"]["schemas"]:
        raise KeyError(f"no schema {schema!r} in the AsyncAPI document")
    root = {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "$ref": f"#/components/schemas/{schema}", "components": document()["components"]}
    return jsonschema_rs.validator_for(root)


def problems(schema: str, payload: Any) -> list[str]:
    """Every way ``payload`` breaks ``schema``, each with where (empty: it keeps to it)."""
    return [f"{'/'.join(map(str, e.instance_path)) or '(root)'}: {e.message}"
            for e in _validator(schema).iter_errors(payload)]


PROBLEM_CHARS = 200  # of a problem a refusal names: a problem quotes the value it found
LISTED_UP_TO = 16 * 1024  # a message up to this size: its first five problems, else the first


def validate(schema: str, payload: Any, *, size: int = 0) -> None:
    """Raise ``ContractError`` naming what is wrong if ``payload`` breaks ``schema``: its
    first five problems when the message was small (``size`` bytes as it came; 0: not
    known), else the first only. Listing every problem of a large hostile message costs as
    much as the message is large, each time (18,000 malformed elements in 256 kB: 3.4 s and
    400 MB; the first problem alone 23 ms), and a problem quotes the value it is about: each
    is cut short."""
    validator = _validator(schema)
    if validator.is_valid(payload):
        return
    import jsonschema_rs

    if 0 < size <= LISTED_UP_TO:
        found = [(e.instance_path, e.message) for e in validator.iter_errors(payload)][:5]
    else:
        try:
            validator.validate(payload)
        except jsonschema_rs.ValidationError as exc:
            found = [(exc.instance_path, exc.message)]
        else:
            found = []  # (is_valid and validate disagree: never)
    raise ContractError(f"not a {schema}: " + "; ".join(
        f"{'/'.join(map(str, path)) or '(root)'}: {shortened(message)}" for path, message in found))


def shortened(text: str, most: int = PROBLEM_CHARS) -> str:
    """``text`` as it is, or its start and its end ("... has more than 100 items") when it
    is longer than ``most``: a problem quotes what it found, and a sender controls that."""
    if len(text) <= most:
        return text
    return f"{text[:most - 80]} ...({len(text)} characters)... {text[-80:]}"


def _decoded(payload: bytes | str, max_bytes: int) -> Any:
    try:
        return decode(payload, max_bytes=max_bytes)
    except WireError as exc:
        raise ContractError(str(exc)) from None


def receive(schema: str, payload: bytes | str, *, max_bytes: int = 256 * 1024) -> Any:
    """A consumed message: strict JSON that keeps to ``schema``, or ``ContractError``."""
    value = _decoded(payload, max_bytes)
    validate(schema, value, size=len(payload))
    return value


# An event topic carries one envelope, or a table's backlog several to a message.
BATCH_OF = {"Envelope": "EnvelopeBatch", "PublicEnvelope": "PublicEnvelopeBatch"}


def receive_events(schema: str, payload: bytes | str, *,
                   max_bytes: int = 256 * 1024) -> list[Any]:
    """The envelopes of one message on ``private`` (``Envelope``) or ``events``
    (``PublicEnvelope``): one, or a backlog batch's in order; ``ContractError`` if the
    message keeps to neither (a batch is refused whole)."""
    value = _decoded(payload, max_bytes)
    if isinstance(value, dict) and "batch" in value:
        validate(BATCH_OF[schema], value, size=len(payload))
        return list(value["batch"])
    validate(schema, value, size=len(payload))
    return [value]


def is_name(text: str) -> bool:
    """A table id or venue the contract allows as a topic level."""
    return bool(NAME.match(text))
