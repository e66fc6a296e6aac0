"""Validation of payloads against the AsyncAPI document (``docs/asyncapi.json``).

Used by the tests on every payload they capture; the recorder can use it too.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

DOCUMENT = Path(__file__).resolve().parents[1] / "docs" / "asyncapi.json"


@lru_cache(maxsize=1)
def document() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(DOCUMENT.read_text(encoding="utf-8"))
    return data


@lru_cache(maxsize=16)
def _validator(schema: str) -> Any:
    import jsonschema

    root = {"$ref": f"#/components/schemas/{schema}", "components": document()["components"]}
    return jsonschema.Draft202012Validator(root)


def validate(schema: str, payload: Any) -> None:
    """Raise ``jsonschema.ValidationError`` if ``payload`` breaks ``schema``."""
    _validator(schema).validate(payload)


def problems(schema: str, payload: Any) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}"
            for e in _validator(schema).iter_errors(payload)]
