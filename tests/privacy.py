"""What the tests check the dashboard's feed with: no hole or burn card leaks."""

from __future__ import annotations

import re
from typing import Any


def private_leaks(public_texts: list[str], ended: dict[str, Any], shown: set[str]) -> list[str]:
    """Hole or burn cards of a hand (its ``hand.ended``) that appear in what the dashboard
    received for it, other than cards the table saw anyway (used by the tests)."""
    secret = {c for cards in ended.get("hole", {}).values() for c in cards}
    secret.update(ended.get("burns", []))
    secret -= shown | {"??", "JK"}
    text = "\n".join(public_texts)
    return sorted(card for card in secret if re.search(rf"\b{card}\b", text))
